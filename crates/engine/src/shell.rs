//! Running `\shell` and `\setshell` command lines as C's `system()` and
//! `popen()` do: `/bin/sh` started as `sh -c LINE` (the command line itself and
//! the output rules come from `pgrush-script`).

use std::ffi::OsStr;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// How much one read of the command's output asks for: a stdio buffer's worth
/// (a pipe's block size), as `fgets` on `popen`'s stream reads.
const READ_CHUNK: usize = 4096;

/// The shell both run: `/bin/sh` with `argv[0]` `sh`, as `system()` and
/// `popen()` start it (so its messages read `sh: 1: ...` and `$0` is `sh`).
fn shell(command: &[u8]) -> Command {
    let mut sh = Command::new("/bin/sh");
    sh.arg0("sh").arg("-c").arg(OsStr::from_bytes(command));
    sh
}

/// Runs `command` (bytes, as pgbench passes them) like C `system()`: true when it
/// ran and exited with status 0.
pub fn system(command: &[u8]) -> bool {
    flush_stdio();
    shell(command)
        .stdin(Stdio::inherit())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Runs `command` like `popen(command, "r")`, reads the first line of its output
/// as `fgets` into a 64-byte buffer does (see `pgrush_script::setshell_line_len`),
/// then closes the pipe and waits for the command, as `pclose`: the rest of the
/// output is never read, and a command still writing gets SIGPIPE. Returns the
/// line, at most 63 bytes (empty when nothing could be read), or `None` when the
/// command could not be started.
pub fn capture(command: &[u8]) -> Option<Vec<u8>> {
    flush_stdio();
    let mut child = shell(command).stdout(Stdio::piped()).spawn().ok()?;
    let line = match child.stdout.take() {
        // Dropping the pipe closes it before the wait.
        Some(pipe) => first_line(pipe),
        None => Vec::new(),
    };
    // Reaps the child; its exit status does not matter to `\setshell` (as pclose's
    // status in pgbench), and a wait that fails leaves nothing to clean up.
    let _status = child.wait();
    Some(line)
}

/// Reads from `pipe` until it holds the line `fgets(buf, 64, fp)` returns (or
/// the output ends) and returns that line: the memory used is bounded whatever
/// the command prints. A read error gives nothing, as `fgets` returns NULL then.
fn first_line(mut pipe: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunk = [0u8; READ_CHUNK];
    loop {
        let n = match pipe.read(&mut chunk) {
            Ok(0) => return out,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Vec::new(),
        };
        out.extend_from_slice(&chunk[..n]);
        if let Some(len) = pgrush_script::setshell_line_len(&out) {
            // The rest of what was read is dropped, as stdio's buffer is.
            out.truncate(len);
            return out;
        }
    }
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

    #[test]
    fn starts_the_shell_as_sh() {
        assert_eq!(capture(b"echo $0").as_deref(), Some(&b"sh\n"[..]));
        assert!(system(b"test \"$0\" = sh"));
    }

    #[test]
    fn keeps_only_the_first_line() {
        // An endless writer: the pipe is closed after the first line and the
        // command ends by SIGPIPE.
        assert_eq!(capture(b"yes 7").as_deref(), Some(&b"7\n"[..]));
        assert_eq!(capture(b"echo 1; echo 2").as_deref(), Some(&b"1\n"[..]));
        // A line arriving in pieces is put together.
        assert_eq!(
            capture(b"printf 1; sleep 0.05; printf '2\\n3'").as_deref(),
            Some(&b"12\n"[..])
        );
        // Without a newline, 63 bytes.
        assert_eq!(capture(b"printf '%070d' 5"), Some(vec![b'0'; 63]));
    }

    #[test]
    fn reads_a_bounded_amount() {
        struct Endless(usize);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0 += buf.len();
                buf.fill(b'9');
                Ok(buf.len())
            }
        }
        let mut endless = Endless(0);
        assert_eq!(first_line(&mut endless), vec![b'9'; 63]);
        assert_eq!(endless.0, READ_CHUNK);
    }
}
