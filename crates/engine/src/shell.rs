//! `\shell` and `\setshell`: build the command line and run it with `sh -c`.
//!
//! Arguments are joined with single spaces; an argument starting with exactly
//! one colon is a variable reference, one starting with `::` stands for the
//! text after the first colon. The whole command must stay under 256 bytes.
//! `\setshell` reads the first line of the output (at most 63 bytes, as
//! pgbench's `fgets` into a 64-byte buffer) and requires an integer.

use std::io::Read;
use std::process::{Command, Stdio};

/// pgbench's `SHELL_COMMAND_SIZE`.
const SHELL_COMMAND_SIZE: usize = 256;

/// Why a shell command failed; `Display` is pgbench's message (without prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellError {
    /// The message.
    pub message: String,
    /// Whether pgbench suppresses it once the `-T` timer has fired.
    pub quiet_after_timer: bool,
}

impl std::fmt::Display for ShellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn err(message: String, quiet_after_timer: bool) -> ShellError {
    ShellError {
        message,
        quiet_after_timer,
    }
}

/// Joins `args` into the command line, resolving `:var` references with `lookup`.
pub fn build_command(
    args: &[String],
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, ShellError> {
    let argv0 = args.first().map(String::as_str).unwrap_or("");
    let mut command = String::new();
    for (i, a) in args.iter().enumerate() {
        let value: String = if let Some(rest) = a.strip_prefix(':') {
            if rest.starts_with(':') {
                rest.to_string()
            } else {
                match lookup(rest) {
                    Some(v) => v,
                    None => {
                        return Err(err(
                            format!("{argv0}: undefined variable \"{a}\""),
                            false,
                        ));
                    }
                }
            }
        } else {
            a.clone()
        };
        let sep = usize::from(i > 0);
        if command.len() + value.len() + sep >= SHELL_COMMAND_SIZE - 1 {
            return Err(err(format!("{argv0}: shell command is too long"), false));
        }
        if i > 0 {
            command.push(' ');
        }
        command.push_str(&value);
    }
    Ok(command)
}

/// Parses `\setshell` output as C `strtol` followed by trailing white space only.
pub fn parse_integer_output(res: &str) -> Option<i64> {
    let bytes = res.as_bytes();
    let mut i = 0;
    while i < bytes.len() && (bytes[i] as char).is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i == digits_start {
        // No conversion: endptr = res, which is not empty here.
        return None;
    }
    let mut end = i;
    while end < bytes.len() && (bytes[end] as char).is_ascii_whitespace() {
        end += 1;
    }
    if end != bytes.len() {
        return None;
    }
    // strtol saturates at the long range; the result is then cast to int.
    let text = &res[start..i];
    let v: i64 = text.parse::<i64>().unwrap_or(if text.starts_with('-') {
        i64::MIN
    } else {
        i64::MAX
    });
    Some(i64::from(v as i32))
}

/// Runs `command` with `sh -c`. With `capture`, returns the integer printed on
/// the first output line (for `\setshell`); `argv0` names the command in messages.
pub fn run_command(command: &str, argv0: &str, capture: bool) -> Result<Option<i64>, ShellError> {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    if !capture {
        let status = Command::new("/bin/sh").arg("-c").arg(command).status();
        return match status {
            Ok(s) if s.success() => Ok(None),
            _ => Err(err(
                format!("{argv0}: could not launch shell command"),
                true,
            )),
        };
    }
    let mut child = match Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(_) => {
            return Err(err(
                format!("{argv0}: could not launch shell command"),
                false,
            ));
        }
    };
    let mut out = Vec::new();
    if let Some(mut so) = child.stdout.take() {
        let _ = so.read_to_end(&mut out);
    }
    let status = child.wait();
    // First line, at most 63 bytes, newline included (fgets).
    let mut line: Vec<u8> = Vec::new();
    for &b in out.iter().take(63) {
        line.push(b);
        if b == b'\n' {
            break;
        }
    }
    if line.is_empty() {
        return Err(err(
            format!("{argv0}: could not read result of shell command"),
            true,
        ));
    }
    if let Err(e) = status {
        return Err(err(
            format!(
                "{argv0}: could not run shell command: {}",
                pgrush_wire::strerror(&e)
            ),
            false,
        ));
    }
    let res = String::from_utf8_lossy(&line).into_owned();
    match parse_integer_output(&res) {
        Some(v) => Ok(Some(v)),
        None => Err(err(
            format!("{argv0}: shell command must return an integer (not \"{res}\")"),
            false,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn builds_with_variables_and_escapes() {
        let lookup = |n: &str| (n == "x").then(|| "42".to_string());
        assert_eq!(
            build_command(&args(&["echo", ":x", "::y", "z"]), lookup).as_deref(),
            Ok("echo 42 :y z")
        );
        let e = build_command(&args(&["echo", ":nosuch"]), lookup).unwrap_err();
        assert_eq!(e.message, "echo: undefined variable \":nosuch\"");
        let long = "a".repeat(300);
        let e = build_command(&args(&["echo", &long]), lookup).unwrap_err();
        assert_eq!(e.message, "echo: shell command is too long");
    }

    #[test]
    fn parses_like_strtol() {
        assert_eq!(parse_integer_output("42\n"), Some(42));
        assert_eq!(parse_integer_output("  -7  \n"), Some(-7));
        assert_eq!(parse_integer_output("abc\n"), None);
        assert_eq!(parse_integer_output("12x\n"), None);
        assert_eq!(parse_integer_output(""), None);
        assert_eq!(parse_integer_output("4294967297\n"), Some(1));
    }

    #[test]
    fn runs_commands() {
        assert_eq!(run_command("echo 5", "echo", true), Ok(Some(5)));
        assert_eq!(run_command("true", "true", false), Ok(None));
        let e = run_command("false", "false", false).unwrap_err();
        assert_eq!(e.message, "false: could not launch shell command");
        let e = run_command("echo abc", "echo", true).unwrap_err();
        assert_eq!(e.message, "echo: shell command must return an integer (not \"abc\n\")");
    }
}
