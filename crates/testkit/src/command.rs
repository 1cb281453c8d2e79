//! Small helpers for black-box tests that compare pgrush with pgbench.

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
    use std::os::unix::process::ExitStatusExt;
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()));
    let code = out
        .status
        .code()
        .unwrap_or_else(|| 128 + out.status.signal().unwrap_or(0));
    Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code,
    }
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
