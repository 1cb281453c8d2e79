//! Running `\shell` and `\setshell` command lines with `sh -c` (the command
//! line itself and the output rules come from `pgrush-script`).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};

/// Runs `command` (bytes, as pgbench passes them) like C `system()`: true when it
/// ran and exited with status 0.
pub fn system(command: &[u8]) -> bool {
    flush_stdio();
    Command::new("/bin/sh")
        .arg("-c")
        .arg(OsStr::from_bytes(command))
        .stdin(Stdio::inherit())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Runs `command` like `popen(command, "r")` and returns everything it printed on
/// stdout, as bytes (`None` when it could not be started).
pub fn capture(command: &[u8]) -> Option<Vec<u8>> {
    flush_stdio();
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(OsStr::from_bytes(command))
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut out = Vec::new();
    if let Some(mut so) = child.stdout.take() {
        // As pgbench's fgets: what could be read is the output (an empty or
        // unfinished line is reported by the caller as unreadable).
        let _partial = so.read_to_end(&mut out);
    }
    // Reaps the child; its exit status does not matter to `\setshell` (as pclose's
    // status in pgbench), and a wait that fails leaves nothing to clean up.
    let _status = child.wait();
    Some(out)
}

/// Flushes our buffered output first, as C's `system`/`popen` callers do, so the
/// command's output comes after it. Nothing to do if stdout or stderr is gone.
fn flush_stdio() {
    let _stdout = std::io::stdout().flush();
    let _stderr = std::io::stderr().flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_commands() {
        assert!(system(b"true"));
        assert!(!system(b"false"));
        assert!(!system(b"exit 3"));
        assert_eq!(capture(b"echo 42").as_deref(), Some(&b"42\n"[..]));
        assert_eq!(capture(b"true").as_deref(), Some(&b""[..]));
        // Bytes that are not UTF-8 pass both ways unchanged.
        assert_eq!(
            capture(b"printf '\\351'; echo '\xe8'").as_deref(),
            Some(&b"\xe9\xe8\n"[..])
        );
    }
}
