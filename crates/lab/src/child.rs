//! Child `pgrush` processes (a sweep's initializations and measured runs, a capacity
//! search's steps), their output appended to the workflow's log file, and Ctrl-C:
//! SIGINT and SIGTERM only raise a flag in the workflow; the running child is sent one
//! SIGINT and waited for, so the workflow can clean up (restore the server's settings,
//! report what it found so far) before it exits.

use pgrush_wire::conninfo::redact_argv;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use thiserror::Error;

/// How often a running child is checked.
const POLL: Duration = Duration::from_millis(20);

/// Why a child could not be run, or failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ChildError {
    /// The log could not be written, the signals caught or the process started.
    #[error("{0}")]
    Io(String),
    /// The child exited with a failure status.
    #[error("{what} failed ({status}); the end of its output:\n{log_tail}")]
    Failed {
        /// Which step.
        what: String,
        /// Its exit status.
        status: String,
        /// The last lines it wrote.
        log_tail: String,
    },
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEnd {
    /// Exit status 0, no interruption.
    Success,
    /// Ctrl-C arrived while it ran (whatever its status).
    Interrupted,
}

/// Runs the `pgrush` binary with arguments, output to a log file, watching Ctrl-C.
pub struct Launcher {
    exe: PathBuf,
    log: PathBuf,
    interrupted: Arc<AtomicBool>,
    hooks: Vec<signal_hook::SigId>,
}

impl Launcher {
    /// A launcher of `exe` writing to `log`; catches SIGINT and SIGTERM until dropped.
    pub fn new(exe: &Path, log: &Path) -> Result<Launcher, ChildError> {
        let interrupted = Arc::new(AtomicBool::new(false));
        let mut hooks = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let id = signal_hook::flag::register(sig, Arc::clone(&interrupted))
                .map_err(|e| ChildError::Io(format!("cannot catch signals: {e}")))?;
            hooks.push(id);
        }
        Ok(Launcher {
            exe: exe.to_path_buf(),
            log: log.to_path_buf(),
            interrupted,
            hooks,
        })
    }

    /// True once Ctrl-C (or SIGTERM) arrived.
    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Runs `pgrush ARGS`, its output appended to the log under a `== title` line.
    /// A non-zero exit status is an error quoting the end of the log.
    pub fn run(&self, title: &str, args: &[String]) -> Result<ChildEnd, ChildError> {
        let io = |e: std::io::Error| ChildError::Io(format!("{}: {e}", self.log.display()));
        let mut log = File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(io)?;
        let shown = redact_argv(args);
        writeln!(log, "== {title}\n$ pgrush {}", shown.join(" ")).map_err(io)?;
        let mut child = Command::new(&self.exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(io)?)
            .stderr(log)
            .spawn()
            .map_err(|e| ChildError::Io(format!("cannot run {}: {e}", self.exe.display())))?;
        let mut forwarded = false;
        let status = loop {
            if let Some(status) = child.try_wait().map_err(io)? {
                break status;
            }
            if self.interrupted() && !forwarded {
                forwarded = true;
                if let Ok(pid) = i32::try_from(child.id()) {
                    // SAFETY: sending a signal to our own child process by its id.
                    unsafe {
                        libc::kill(pid, libc::SIGINT);
                    }
                }
            }
            std::thread::sleep(POLL);
        };
        if self.interrupted() {
            return Ok(ChildEnd::Interrupted);
        }
        if status.success() {
            return Ok(ChildEnd::Success);
        }
        Err(ChildError::Failed {
            what: title.to_string(),
            status: status.to_string(),
            log_tail: log_tail(&self.log, 15),
        })
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        for id in self.hooks.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// The last `lines` lines of the log.
fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
