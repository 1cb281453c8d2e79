//! pgbench's logging prefixes (`<progname>: error: ...`) for the option parser.

use std::io::Write;

/// Writes diagnostics the way PostgreSQL's frontend logging does.
pub struct Diag<'w> {
    progname: Vec<u8>,
    out: &'w mut dyn Write,
}

impl<'w> Diag<'w> {
    /// A writer using `progname` (basename of argv[0]) as prefix.
    pub fn new(progname: &[u8], out: &'w mut dyn Write) -> Self {
        Diag {
            progname: progname.to_vec(),
            out,
        }
    }

    fn line(&mut self, level: &[u8], msg: &[u8]) {
        let mut buf = self.progname.clone();
        buf.extend_from_slice(b": ");
        buf.extend_from_slice(level);
        // The logging layer drops one trailing newline of the message.
        buf.extend_from_slice(msg.strip_suffix(b"\n").unwrap_or(msg));
        buf.push(b'\n');
        // Nothing sensible can be done when stderr is gone.
        let _ = self.out.write_all(&buf);
        let _ = self.out.flush();
    }

    /// `progname: msg` (pgbench's `pg_log_info`).
    pub fn info(&mut self, msg: &[u8]) {
        self.line(b"", msg);
    }

    /// `progname: error: msg`.
    pub fn error(&mut self, msg: &[u8]) {
        self.line(b"error: ", msg);
    }

    /// `progname: detail: msg`.
    pub fn detail(&mut self, msg: &[u8]) {
        self.line(b"detail: ", msg);
    }

    /// `progname: hint: msg`.
    pub fn hint(&mut self, msg: &[u8]) {
        self.line(b"hint: ", msg);
    }

    /// pgbench's `Try "progname --help" for more information.` hint.
    pub fn try_help(&mut self) {
        let mut msg = b"Try \"".to_vec();
        msg.extend_from_slice(&self.progname);
        msg.extend_from_slice(b" --help\" for more information.");
        self.hint(&msg);
    }

    /// Raw bytes (getopt's own messages, the builtin list).
    pub fn raw(&mut self, bytes: &[u8]) {
        let _ = self.out.write_all(bytes);
        let _ = self.out.flush();
    }
}

/// Concatenates message pieces (text and raw argument bytes).
pub fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}
