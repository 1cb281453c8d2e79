//! An unsuccessful end as a value: what to print on stderr and the exit status.
//!
//! Functions that fail return a [`Failure`] instead of printing where the error
//! happens; the binary prints it once, at the top, with the program's name as
//! invoked ([`Failure::print`]). The lines keep pgbench's logging prefixes
//! (`<prog>: error: `, `<prog>: detail: `, `<prog>: hint: `), so pgbench's
//! messages stay byte-identical.

use std::io::Write;

/// One line of a failure's message, without the program name (added when printed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// `<prog>: error: <msg>`.
    Error(Vec<u8>),
    /// `<prog>: detail: <msg>`.
    Detail(Vec<u8>),
    /// `<prog>: hint: <msg>`.
    Hint(Vec<u8>),
    /// `<prog>: <msg>` (pgbench's info level).
    Info(Vec<u8>),
    /// `<argv0>: <msg>`: glibc getopt's complaints name the program as typed.
    Getopt(Vec<u8>),
    /// `<prog>: hint: Try "<prog>[ <subcommand>] --help" for more information.`
    TryHelp(Option<String>),
    /// Written as it is (a block of text that is not a log line).
    Verbatim(Vec<u8>),
}

/// What ends a command unsuccessfully: the lines to print, then the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    status: i32,
    lines: Vec<Line>,
}

impl Failure {
    /// `<prog>: error: <msg>`, exit status 1.
    pub fn error(msg: impl AsRef<[u8]>) -> Failure {
        Failure::exit(1).then(Line::Error(msg.as_ref().to_vec()))
    }

    /// A usage error of `subcommand` (`None`: the main command): the error line,
    /// then the hint naming its `--help`; exit status 1.
    pub fn usage(subcommand: Option<&str>, msg: impl AsRef<[u8]>) -> Failure {
        Failure::error(msg).then(Line::TryHelp(subcommand.map(str::to_string)))
    }

    /// Nothing more to print (what there was to say is on stderr already), exit `status`.
    pub fn exit(status: i32) -> Failure {
        Failure {
            status,
            lines: Vec::new(),
        }
    }

    /// The same failure with one more line after the others.
    pub fn then(mut self, line: Line) -> Failure {
        self.lines.push(line);
        self
    }

    /// The same failure followed by `<prog>: detail: <msg>`.
    pub fn detail(self, msg: impl AsRef<[u8]>) -> Failure {
        self.then(Line::Detail(msg.as_ref().to_vec()))
    }

    /// The same failure followed by `<prog>: hint: <msg>`.
    pub fn hint(self, msg: impl AsRef<[u8]>) -> Failure {
        self.then(Line::Hint(msg.as_ref().to_vec()))
    }

    /// The same failure with exit status `status`.
    pub fn with_status(mut self, status: i32) -> Failure {
        self.status = status;
        self
    }

    /// The exit status.
    pub fn status(&self) -> i32 {
        self.status
    }

    /// The lines, in print order.
    pub fn lines(&self) -> &[Line] {
        &self.lines
    }

    /// Writes the lines on stderr: `prog` is the program's name as pgbench's logging
    /// shows it (the base name), `argv0` the name as typed (glibc's getopt lines).
    pub fn print(&self, prog: &str, argv0: &str) {
        self.write_to(prog, argv0, &mut std::io::stderr().lock());
    }

    /// Writes the lines on `out` as [`Failure::print`] does, one write per line (a line
    /// that cannot be written is lost, as pgbench's logging loses it).
    pub fn write_to(&self, prog: &str, argv0: &str, out: &mut dyn Write) {
        for line in &self.lines {
            let _lost = out.write_all(&line.render(prog, argv0));
        }
    }
}

impl Line {
    /// The line's bytes as printed, with its prefix and final newline.
    pub fn render(&self, prog: &str, argv0: &str) -> Vec<u8> {
        match self {
            Line::Error(m) => logged(prog, "error: ", m),
            Line::Detail(m) => logged(prog, "detail: ", m),
            Line::Hint(m) => logged(prog, "hint: ", m),
            Line::Info(m) => logged(prog, "", m),
            Line::Getopt(m) => logged(argv0, "", m),
            Line::TryHelp(sub) => {
                let command = match sub {
                    Some(sub) => format!("{prog} {sub}"),
                    None => prog.to_string(),
                };
                let hint = format!("Try \"{command} --help\" for more information.");
                logged(prog, "hint: ", hint.as_bytes())
            }
            Line::Verbatim(text) => text.clone(),
        }
    }
}

/// `<name>: <level><msg>` and a newline: PostgreSQL's frontend logging, which drops one
/// trailing newline of the message.
fn logged(name: &str, level: &str, msg: &[u8]) -> Vec<u8> {
    let msg = msg.strip_suffix(b"\n").unwrap_or(msg);
    [name.as_bytes(), b": ", level.as_bytes(), msg, b"\n"].concat()
}

/// The exit status of a command that ended with `result`; a failure is printed first
/// ([`Failure::print`]).
pub fn exit_status(result: Result<i32, Failure>, prog: &str, argv0: &str) -> i32 {
    match result {
        Ok(status) => status,
        Err(failure) => {
            failure.print(prog, argv0);
            failure.status()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_end_with_the_subcommands_help_hint_and_status_1() {
        let f = Failure::usage(Some("ops"), "unexpected argument");
        assert_eq!(f.status(), 1);
        assert_eq!(
            f.lines(),
            [
                Line::Error(b"unexpected argument".to_vec()),
                Line::TryHelp(Some("ops".to_string()))
            ]
        );
    }

    #[test]
    fn lines_are_rendered_with_the_logging_prefixes() {
        let f = Failure::usage(None, "bad\n")
            .hint("h")
            .then(Line::Getopt(b"invalid option -- 'x'".to_vec()))
            .then(Line::Verbatim(b"raw".to_vec()));
        let mut out = Vec::new();
        f.write_to("pgbench", "/usr/bin/pgbench", &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "pgbench: error: bad\n\
             pgbench: hint: Try \"pgbench --help\" for more information.\n\
             pgbench: hint: h\n\
             /usr/bin/pgbench: invalid option -- 'x'\n\
             raw"
        );
    }

    #[test]
    fn lines_keep_their_order_and_the_status_can_change() {
        let f = Failure::error("a").detail("b").hint("c").with_status(2);
        assert_eq!(f.status(), 2);
        assert_eq!(f.lines().len(), 3);
        assert_eq!(f.lines()[2], Line::Hint(b"c".to_vec()));
    }
}
