//! Small helpers for black-box tests that compare pgrush with pgbench.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// What a finished command printed and how it exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
    /// Exit status; `128 + signal` when killed by a signal.
    pub code: i32,
}

/// Runs a command to completion with no input, capturing its output.
///
/// Panics (with the program's name) when it cannot be started: this is for tests.
#[track_caller]
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()));
    Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: exit_code(out.status),
    }
}

/// Starts a command with no input and its output piped, for [`finish`] to collect
/// (several at once: shards of one benchmark). Panics when it cannot be started.
#[track_caller]
pub fn spawn(cmd: &mut Command) -> std::process::Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()))
}

/// Waits for a child started by [`spawn`] and captures its output.
#[track_caller]
pub fn finish(child: std::process::Child) -> Output {
    let out = child.wait_with_output().expect("wait for the child");
    Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: exit_code(out.status),
    }
}

/// A process's exit status as a shell reports it: `128 + signal` when killed by one.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Runs `cmd` with its output in files of `dir`; returns the output and the peak resident
/// set size of the process and of the children it waited for, in KiB (`ru_maxrss` from
/// `wait4`). Panics when it cannot be started: this is for tests.
#[allow(clippy::zombie_processes)] // reaped by wait4, which also reports its peak RSS
pub fn run_peak_rss(mut cmd: Command, dir: &Path) -> (Output, u64) {
    let file = |name: &str| std::fs::File::create(dir.join(name)).expect("output file");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(file("rss.out"))
        .stderr(file("rss.err"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()));
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: rusage is plain data, filled in by wait4 for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child spawned above, which nothing else waits for.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4: {}", std::io::Error::last_os_error());
    let status = std::process::ExitStatus::from_raw(status);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect("read output");
    let out = Output {
        stdout: read("rss.out"),
        stderr: read("rss.err"),
        code: exit_code(status),
    };
    (out, u64::try_from(usage.ru_maxrss).unwrap_or(u64::MAX))
}

/// Replaces every number (`12`, `3.25`) with `N`, leaving digits that are part of a word
/// (`pgbench_accounts`, `s1`, `x86_64`) alone: for lines whose numbers depend on timing.
///
/// ```
/// use pgrush_testkit::mask_numbers;
/// assert_eq!(
///     mask_numbers("latency average = 1.234 ms, 0.0% of t1"),
///     "latency average = N ms, N% of t1"
/// );
/// ```
pub fn mask_numbers(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit() && (i == 0 || !is_word(chars[i - 1]));
        if !starts_number {
            out.push(c);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
        if j + 1 < chars.len() && chars[j] == '.' && chars[j + 1].is_ascii_digit() {
            j += 1;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
        }
        if j < chars.len() && is_word(chars[j]) {
            // Digits leading a word (`2nd`, `10ms`): keep the word.
            while j < chars.len() && is_word(chars[j]) {
                j += 1;
            }
            out.extend(&chars[i..j]);
        } else {
            out.push('N');
        }
        i = j;
    }
    out
}

/// [`mask_numbers`] on bytes that need not be UTF-8 (a Latin-1 script's name or SQL
/// echoed in a report): each byte is read as one character (ISO-8859-1), so every byte
/// other than the masked digits comes back unchanged.
///
/// ```
/// use pgrush_testkit::mask_numbers_bytes;
/// assert_eq!(
///     mask_numbers_bytes(b"  0.043  SELECT 'caf\xe9', 12;"),
///     b"  N  SELECT 'caf\xe9', N;"
/// );
/// ```
pub fn mask_numbers_bytes(bytes: &[u8]) -> Vec<u8> {
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    mask_numbers(&text)
        .chars()
        // Every character is one byte's (masking adds only `N`).
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_plain_and_decimal_numbers() {
        assert_eq!(
            mask_numbers("progress: 1.0 s, 523.9 tps, lat 1.903 ms stddev 0.412, 0 failed"),
            "progress: N s, N tps, lat N ms stddev N, N failed"
        );
        assert_eq!(mask_numbers("tps = 1234.567890 (x)"), "tps = N (x)");
        assert_eq!(mask_numbers("1/10"), "N/N");
        assert_eq!(mask_numbers("-1.5"), "-N");
    }

    #[test]
    fn keeps_digits_inside_words() {
        assert_eq!(
            mask_numbers("pgbench_accounts s1 x86_64"),
            "pgbench_accounts s1 x86_64"
        );
        assert_eq!(mask_numbers("10ms 2nd"), "10ms 2nd");
        assert_eq!(mask_numbers("v1.2"), "v1.N");
    }

    #[test]
    fn masks_bytes_keeping_the_others() {
        assert_eq!(
            mask_numbers_bytes(
                b"SQL script 2: \xe9t\xe9.sql\n - 10 transactions (5.0% of total)\n"
            ),
            b"SQL script N: \xe9t\xe9.sql\n - N transactions (N% of total)\n"
        );
        // A byte >= 0x80 is a letter in ISO-8859-1 (é), so it joins the word.
        assert_eq!(mask_numbers_bytes(b"\xe91 \xff 2"), b"\xe91 \xff N");
    }

    #[test]
    fn run_captures_output_and_status() {
        let out = run(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]));
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(out.code, 3);
        let out = run(Command::new("sh").args(["-c", "kill -TERM $$"]));
        assert_eq!(out.code, 128 + libc::SIGTERM);
    }
}
