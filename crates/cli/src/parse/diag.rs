//! pgbench's logging prefixes (`<progname>: error: ...`) for the option parser: the
//! `setting random seed` lines are written at once; the complaint that ends the parse is
//! collected as the lines of a [`Failure`], printed once by the caller.

use std::io::Write;

use pgrush_run::{Failure, Line};

/// Where the parser's messages go.
pub struct Diag<'w> {
    progname: Vec<u8>,
    out: &'w mut dyn Write,
    complaint: Vec<Line>,
}

impl<'w> Diag<'w> {
    /// A writer using `progname` (basename of argv[0]) as prefix; `out` gets the
    /// messages that do not end the parse.
    pub fn new(progname: &[u8], out: &'w mut dyn Write) -> Self {
        Diag {
            progname: progname.to_vec(),
            out,
            complaint: Vec::new(),
        }
    }

    /// `progname: msg` (pgbench's `pg_log_info`), written at once.
    pub fn info(&mut self, msg: &[u8]) {
        let mut buf = self.progname.clone();
        buf.extend_from_slice(b": ");
        // The logging layer drops one trailing newline of the message.
        buf.extend_from_slice(msg.strip_suffix(b"\n").unwrap_or(msg));
        buf.push(b'\n');
        // Nothing sensible can be done when stderr is gone.
        let _ = self.out.write_all(&buf);
        let _ = self.out.flush();
    }

    /// `progname: error: msg`.
    pub fn error(&mut self, msg: &[u8]) {
        self.complaint.push(Line::Error(msg.to_vec()));
    }

    /// `progname: detail: msg`.
    pub fn detail(&mut self, msg: &[u8]) {
        self.complaint.push(Line::Detail(msg.to_vec()));
    }

    /// `progname: hint: msg`.
    pub fn hint(&mut self, msg: &[u8]) {
        self.complaint.push(Line::Hint(msg.to_vec()));
    }

    /// pgbench's `Try "progname --help" for more information.` hint.
    pub fn try_help(&mut self) {
        self.complaint.push(Line::TryHelp(None));
    }

    /// glibc getopt's complaint, naming the program as typed (`argv0: msg`).
    pub fn getopt(&mut self, msg: &[u8]) {
        self.complaint.push(Line::Getopt(msg.to_vec()));
    }

    /// Raw bytes (the builtin list after an unknown builtin name).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.complaint.push(Line::Verbatim(bytes.to_vec()));
    }

    /// The complaint collected so far, ending the parse with `status`.
    pub fn failure(&mut self, status: i32) -> Failure {
        std::mem::take(&mut self.complaint)
            .into_iter()
            .fold(Failure::exit(status), Failure::then)
    }
}

/// Concatenates message pieces (text and raw argument bytes).
pub fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}
