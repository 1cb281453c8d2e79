//! Watching a child process of a test: its output as it comes, and its end.

#![allow(dead_code)]

use std::process::Child;
use std::time::{Duration, Instant};

/// Waits up to `limit` for `child` to end; returns its exit code (128 + signal when
/// killed), or kills it and returns `None` when it did not end in time.
pub fn wait_with_timeout(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            use std::os::unix::process::ExitStatusExt;
            return Some(
                status
                    .code()
                    .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
            );
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Collects the child's stdout and stderr in background threads; `wait_for` blocks
/// until stderr shows a line starting with a prefix.
pub struct Streams {
    stdout: std::thread::JoinHandle<String>,
    stderr: std::thread::JoinHandle<String>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Streams {
    /// Starts collecting `child`'s piped stdout and stderr.
    pub fn new(child: &mut Child) -> Streams {
        use std::io::{BufRead, BufReader, Read};
        let mut out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let stderr = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                all.push_str(&line);
                all.push('\n');
                let _ = tx.send(line);
            }
            all
        });
        Streams {
            stdout,
            stderr,
            lines,
        }
    }

    /// Blocks until a stderr line starts with `prefix`; false after `limit`.
    pub fn wait_for(&self, prefix: &str, limit: Duration) -> bool {
        let start = Instant::now();
        while let Some(left) = limit.checked_sub(start.elapsed()) {
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// Waits for both streams to end; returns (stdout, stderr).
    pub fn finish(self) -> (String, String) {
        (
            self.stdout.join().unwrap_or_default(),
            self.stderr.join().unwrap_or_default(),
        )
    }
}
