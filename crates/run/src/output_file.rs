//! The files pgrush promises (`--json`, `--html`, `--junit`, `merge`'s and `report`'s
//! outputs, `ops` results): checked before a run starts, written whole or not at all
//! (through a temporary file in the same directory, renamed over the target), and
//! standard output whose reader went away ends the process as it ends pgbench.

use std::io::{self, Write};
use std::path::Path;

use crate::failure::Failure;

pub use pgrush_cluster::{check_writable, write_atomically};

/// `could not write file "PATH": REASON`, the message of every output file that cannot
/// be written (before or after the run).
pub fn write_error(path: &str, e: &io::Error) -> String {
    format!(
        "could not write file \"{path}\": {}",
        pgrush_wire::strerror(e)
    )
}

/// Checks every output file given (`-` is standard output: nothing to check); the first
/// that cannot be written fails with [`write_error`]'s message.
pub fn check_outputs<'a>(paths: impl IntoIterator<Item = Option<&'a str>>) -> Result<(), Failure> {
    for path in paths.into_iter().flatten().filter(|p| *p != "-") {
        if let Err(e) = check_writable(Path::new(path)) {
            return Err(Failure::error(write_error(path, &e)));
        }
    }
    Ok(())
}

/// Writes `text` to `path` (`-` = standard output, see [`stdout_failure`]), whole or not
/// at all ([`write_atomically`]).
pub fn write_output(path: &str, text: &str) -> Result<(), Failure> {
    if path == "-" {
        let mut out = io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| stdout_failure(&e));
    }
    write_atomically(Path::new(path), text.as_bytes())
        .map_err(|e| Failure::error(write_error(path, &e)))
}

/// What a failed write to standard output means: when its reader is gone (`EPIPE`),
/// the process dies of SIGPIPE, as pgbench does (a shell shows status 141); otherwise
/// an error with exit status 1 (output was lost).
pub fn stdout_failure(e: &io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        // SAFETY: restoring SIGPIPE's default action (Rust ignores it) and raising it
        // ends the process, as the write would have in a C program.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
        }
    }
    Failure::error(format!(
        "could not write to standard output: {}",
        pgrush_wire::strerror(e)
    ))
}
