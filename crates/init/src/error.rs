//! Initialization failures, rendered with pgbench's exact messages.

use thiserror::Error;

/// Why `pgrush -i` stopped. Every variant maps to exit status 1.
///
/// Server messages are libpq's bytes (a LATIN1 or SQL_ASCII client encoding keeps the
/// server's bytes); [`InitError::render`] prints them as they are, `Display` replaces
/// invalid UTF-8.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum InitError {
    /// A `-I` character that is not a step.
    #[error("unrecognized initialization step \"{0}\"")]
    UnknownStep(char),
    /// The connection could not be opened; `0` is libpq's message.
    #[error("{0}")]
    Connect(String),
    /// A statement failed: libpq's message and the statement.
    #[error("query failed: {}", String::from_utf8_lossy(message))]
    Query {
        /// libpq's error text (no final newline).
        message: Vec<u8>,
        /// The statement that failed.
        sql: String,
    },
    /// The server did not enter COPY IN mode.
    #[error("unexpected copy in result: {}", String::from_utf8_lossy(.0))]
    CopyStart(Vec<u8>),
    /// Sending COPY data failed.
    #[error("PQputline failed")]
    CopySend(Vec<u8>),
    /// The COPY failed when it was finished; `0` is libpq's message (printed like a notice).
    #[error("PQendcopy failed")]
    CopyEnd(Vec<u8>),
    /// Ctrl-C arrived between statements: the next one was not started.
    #[error("initialization canceled by a signal")]
    Interrupted,
    /// An option or step the chosen workload does not have.
    #[error("{0}")]
    Unsupported(String),
    /// A parallel worker stopped without a result (it panicked).
    #[error("a parallel loading worker failed")]
    Worker,
}

impl InitError {
    /// The complete stderr bytes pgbench prints for this error (each line ends with
    /// `\n`; server messages as their bytes).
    pub fn render(&self, progname: &str) -> Vec<u8> {
        let line = |head: &str, text: &[u8], tail: &str| {
            [head.as_bytes(), strip_nl(text), tail.as_bytes()].concat()
        };
        match self {
            InitError::Connect(msg) => line(
                &format!("{progname}: error: "),
                &pgrush_wire::lossless::to_bytes(msg),
                &format!("\n{progname}: error: could not create connection for initialization\n"),
            ),
            InitError::Query { message, sql } => line(
                &format!("{progname}: error: query failed: "),
                message,
                &format!(
                    "\n{progname}: detail: Query was: {}\n",
                    sql.strip_suffix('\n').unwrap_or(sql)
                ),
            ),
            InitError::CopyStart(msg) => line(
                &format!("{progname}: error: unexpected copy in result: "),
                msg,
                "\n",
            ),
            InitError::CopyEnd(msg) => {
                line("", msg, &format!("\n{progname}: error: PQendcopy failed\n"))
            }
            other => line(
                &format!("{progname}: error: "),
                other.to_string().as_bytes(),
                "\n",
            ),
        }
    }
}

/// pgbench's logging strips one trailing newline from a message.
fn strip_nl(s: &[u8]) -> &[u8] {
    s.strip_suffix(b"\n").unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(b: &[u8]) -> String {
        String::from_utf8(b.to_vec()).unwrap_or_else(|e| panic!("not UTF-8: {e}"))
    }

    #[test]
    fn renders_server_bytes_raw() {
        let e = InitError::Query {
            message: b"ERROR:  tronqu\xe9\n".to_vec(),
            sql: "truncate table x".into(),
        };
        assert_eq!(
            e.render("p"),
            b"p: error: query failed: ERROR:  tronqu\xe9\np: detail: Query was: truncate table x\n"
        );
        assert_eq!(e.to_string(), "query failed: ERROR:  tronqu\u{fffd}\n");
        assert_eq!(
            InitError::CopyStart(b"ERROR:  \xe9".to_vec()).render("p"),
            b"p: error: unexpected copy in result: ERROR:  \xe9\n"
        );
    }

    #[test]
    fn renders_query_failure() {
        let e = InitError::Query {
            message: "ERROR:  relation \"pgbench_branches\" does not exist".into(),
            sql: "truncate table x".into(),
        };
        assert_eq!(
            text(&e.render("pgrush")),
            "pgrush: error: query failed: ERROR:  relation \"pgbench_branches\" does not exist\npgrush: detail: Query was: truncate table x\n"
        );
    }

    #[test]
    fn renders_connect_and_copy_end() {
        assert_eq!(
            text(
                &InitError::Connect("connection to server failed: boom\n".into()).render("pgrush")
            ),
            "pgrush: error: connection to server failed: boom\npgrush: error: could not create connection for initialization\n"
        );
        assert_eq!(
            text(&InitError::CopyEnd("ERROR:  bad\nCONTEXT:  COPY x, line 1".into()).render("p")),
            "ERROR:  bad\nCONTEXT:  COPY x, line 1\np: error: PQendcopy failed\n"
        );
        assert_eq!(
            text(&InitError::UnknownStep('x').render("p")),
            "p: error: unrecognized initialization step \"x\"\n"
        );
    }
}
