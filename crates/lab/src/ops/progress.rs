//! Progress of the steps on standard error. On a terminal: `scale 10: dump 12 s`,
//! redrawn every half second and erased when the step ends. Elsewhere (a log, a pipe):
//! one line as each step starts, `pgrush ops: scale 10: dump`, so that a log shows
//! where a run was when it stopped.

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
    /// Starts drawing `label` and the seconds elapsed when stderr is a terminal and
    /// `draw` (a step with progress of its own is not drawn over); writes `label` as a
    /// line when stderr is not a terminal.
    pub fn start(label: String, draw: bool) -> Ticker {
        let done = Arc::new(AtomicBool::new(false));
        let terminal = std::io::stderr().is_terminal();
        if !terminal {
            let _ = writeln!(std::io::stderr(), "pgrush ops: {label}");
        }
        let thread = (terminal && draw).then(|| {
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
