//! Terminal progress for long steps: `scale 10: dump 12 s` on standard error, redrawn
//! every half second and erased when the step ends. Nothing when stderr is not a
//! terminal (logs stay clean).

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(500);

/// A progress line, drawn while it lives.
pub struct Ticker {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts drawing `label` and the seconds elapsed (when stderr is a terminal).
    pub fn start(label: String) -> Ticker {
        let done = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let start = Instant::now();
                while !done.load(Ordering::SeqCst) {
                    let _ = write!(
                        std::io::stderr(),
                        "\r\x1b[K{label} {:.0} s",
                        start.elapsed().as_secs_f64()
                    );
                    std::thread::sleep(TICK);
                }
                let _ = write!(std::io::stderr(), "\r\x1b[K");
            })
        });
        Ticker { done, thread }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
