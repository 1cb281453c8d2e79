//! Run-time helpers for `\sleep`, `\shell` and `\setshell` (the engine only runs
//! `sh -c` and sleeps).

use crate::error::MetaError;
use crate::vars::{VarRef, Variables};
use pgrush_cconv::{atoi, strtol};

/// `\sleep` time unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SleepUnit {
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds (default).
    S,
}

/// `\sleep` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SleepArg {
    /// A literal number (the word as written; pgbench applies `atoi` to it).
    Const(Vec<u8>),
    /// `:name`.
    Var(VarRef),
}

/// A parsed `\sleep`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SleepSpec {
    /// The command word as written (`sleep`, `SLEEP`), used in messages.
    pub cmd: Vec<u8>,
    /// The duration.
    pub arg: SleepArg,
    /// The unit.
    pub unit: SleepUnit,
}

impl SleepSpec {
    /// The sleep in microseconds, computed in C `int` arithmetic as pgbench does
    /// (wrapping); zero or negative means no sleep.
    pub fn micros(&self, vars: &Variables) -> Result<i32, MetaError> {
        let n = match &self.arg {
            SleepArg::Const(s) => atoi(s),
            SleepArg::Var(r) => {
                let Some(v) = vars.get(r.id) else {
                    return Err(MetaError::UndefinedVariable {
                        cmd: self.cmd.clone(),
                        name: r.name.to_vec(),
                    });
                };
                let mut text = Vec::new();
                v.write_text(&mut text);
                let n = atoi(&text);
                if n == 0 && !text.first().is_some_and(|c| c.is_ascii_digit()) {
                    return Err(MetaError::InvalidSleepTime {
                        cmd: self.cmd.clone(),
                        value: text,
                        name: r.name.to_vec(),
                    });
                }
                n
            }
        };
        Ok(match self.unit {
            SleepUnit::Us => n,
            SleepUnit::Ms => n.wrapping_mul(1000),
            SleepUnit::S => n.wrapping_mul(1_000_000),
        })
    }
}

/// pgbench's `SHELL_COMMAND_SIZE`.
pub const SHELL_COMMAND_SIZE: usize = 256;

/// Build the command line of `\shell`/`\setshell` from its words (after the meta
/// command and, for `\setshell`, the variable): words joined by one space, `:name`
/// replaced by the variable's value, `::x` written as `:x`. Bytes throughout, as
/// pgbench passes them to `system`/`popen`.
pub fn build_shell_command(words: &[Vec<u8>], vars: &Variables) -> Result<Vec<u8>, MetaError> {
    let prog = words.first().cloned().unwrap_or_default();
    let mut cmd = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let mut owned = Vec::new();
        let arg: &[u8] = if !w.starts_with(b":") {
            w
        } else if w[1..].starts_with(b":") {
            &w[1..]
        } else {
            match crate::vars::lookup_id(&w[1..]).and_then(|id| vars.get(id)) {
                Some(v) => {
                    v.write_text(&mut owned);
                    &owned
                }
                None => {
                    return Err(MetaError::UndefinedVariable {
                        cmd: prog,
                        name: w.clone(),
                    });
                }
            }
        };
        let sep = usize::from(i > 0);
        if cmd.len() + arg.len() + sep >= SHELL_COMMAND_SIZE - 1 {
            return Err(MetaError::ShellTooLong(prog));
        }
        if i > 0 {
            cmd.push(b' ');
        }
        cmd.extend_from_slice(arg);
    }
    Ok(cmd)
}

/// The most bytes of a `\setshell` command's output pgbench keeps: what
/// `fgets` reads into its 64-byte buffer (the rest of the output is never read).
pub const SETSHELL_LINE_MAX: usize = 63;

/// The length of the line `fgets(res, 64, fp)` takes from the start of `output`
/// once `output` holds it: up to and including the first newline, or
/// [`SETSHELL_LINE_MAX`] bytes. `None` while neither is there (more output is
/// needed, or, at the end of the output, the line is all of it).
pub fn setshell_line_len(output: &[u8]) -> Option<usize> {
    let lim = output.len().min(SETSHELL_LINE_MAX);
    match output[..lim].iter().position(|&c| c == b'\n') {
        Some(i) => Some(i + 1),
        None if lim == SETSHELL_LINE_MAX => Some(lim),
        None => None,
    }
}

/// What `fgets(res, 64, fp)` reads from the command's output: up to 63 bytes, or
/// up to and including the first newline; `None` when the output is empty.
pub fn setshell_first_line(output: &[u8]) -> Option<&[u8]> {
    if output.is_empty() {
        return None;
    }
    Some(&output[..setshell_line_len(output).unwrap_or(output.len())])
}

/// Parse `\setshell`'s output (all of the command's stdout) into the integer to
/// store: `(int) strtol(...)` followed only by whitespace. `prog` is the shell
/// command's first word, used in messages.
pub fn parse_setshell_output(prog: &[u8], output: &[u8]) -> Result<i64, MetaError> {
    let Some(line) = setshell_first_line(output) else {
        return Err(MetaError::CouldNotRead(prog.to_vec()));
    };
    // fgets stops at a NUL byte as far as C string functions are concerned.
    let line = &line[..line.iter().position(|&c| c == 0).unwrap_or(line.len())];
    let r = strtol(line);
    if line.is_empty() || !r.rest_is_space(line) {
        return Err(MetaError::NotAnInteger {
            cmd: prog.to_vec(),
            output: line.to_vec(),
        });
    }
    Ok(i64::from(r.value as i32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RawMessage;
    use crate::value::Value;

    #[test]
    fn shell_building() {
        let mut vars = Variables::new();
        vars.put_value("set", "sh", Value::Int(42)).unwrap();
        let words = |ws: &[&[u8]]| ws.iter().map(|s| s.to_vec()).collect::<Vec<_>>();
        vars.put_text("option", "lat", b"\xe9").unwrap();
        let w = words(&[b"echo", b":sh", b"::lit", b"\xe9", b":lat"]);
        assert_eq!(
            build_shell_command(&w, &vars).unwrap(),
            b"echo 42 :lit \xe9 \xe9".to_vec()
        );
        let w = words(&[b"echo", b":nosuch_var_x"]);
        assert_eq!(
            build_shell_command(&w, &vars).unwrap_err().to_string(),
            "echo: undefined variable \":nosuch_var_x\""
        );
        let w = vec![b"echo".to_vec(), b"x".repeat(250)];
        assert_eq!(
            build_shell_command(&w, &vars).unwrap_err().to_string(),
            "echo: shell command is too long"
        );
    }

    #[test]
    fn setshell_output() {
        assert_eq!(parse_setshell_output(b"echo", b"42\n"), Ok(42));
        assert_eq!(parse_setshell_output(b"echo", b" -7 \nmore"), Ok(-7));
        assert_eq!(
            parse_setshell_output(b"echo", b"abc\n")
                .unwrap_err()
                .to_string(),
            "echo: shell command must return an integer (not \"abc\n\")"
        );
        assert_eq!(
            parse_setshell_output(b"printf", b"\xe9\n")
                .unwrap_err()
                .to_bytes(),
            b"printf: shell command must return an integer (not \"\xe9\n\")".to_vec()
        );
        assert_eq!(parse_setshell_output(b"echo", b"4294967297\n"), Ok(1));
        assert!(matches!(
            parse_setshell_output(b"x", b""),
            Err(MetaError::CouldNotRead(_))
        ));
    }

    #[test]
    fn setshell_line_rule() {
        assert_eq!(setshell_line_len(b""), None);
        assert_eq!(setshell_line_len(b"12"), None);
        assert_eq!(setshell_line_len(b"12\n34\n"), Some(3));
        assert_eq!(setshell_line_len(&[b'0'; 62]), None);
        assert_eq!(setshell_line_len(&[b'0'; 63]), Some(63));
        assert_eq!(setshell_line_len(&[b'0'; 4096]), Some(63));
        let mut line = vec![b'0'; 62];
        line.extend_from_slice(b"\n5\n");
        assert_eq!(setshell_line_len(&line), Some(63));
        assert_eq!(setshell_first_line(b"7"), Some(&b"7"[..]));
        assert_eq!(setshell_first_line(b"7\n8\n"), Some(&b"7\n"[..]));
    }

    #[test]
    fn sleep_units() {
        let mut vars = Variables::new();
        let s = |a: &str, u| SleepSpec {
            cmd: b"sleep".to_vec(),
            arg: SleepArg::Const(a.into()),
            unit: u,
        };
        assert_eq!(s("10", SleepUnit::Ms).micros(&vars), Ok(10_000));
        assert_eq!(s("5000", SleepUnit::S).micros(&vars), Ok(705_032_704));
        vars.put_text("option", "slp", "abc").unwrap();
        let v = SleepSpec {
            cmd: b"sleep".to_vec(),
            arg: SleepArg::Var(VarRef::new("slp")),
            unit: SleepUnit::Us,
        };
        assert_eq!(
            v.micros(&vars).unwrap_err().to_string(),
            "sleep: invalid sleep time \"abc\" for variable \"slp\""
        );
    }
}
