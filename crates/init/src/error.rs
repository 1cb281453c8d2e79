//! Initialization failures, rendered with pgbench's exact messages.

use thiserror::Error;

/// Why `pgrush -i` stopped. Every variant maps to exit status 1.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum InitError {
    /// A `-I` character that is not a step.
    #[error("unrecognized initialization step \"{0}\"")]
    UnknownStep(char),
    /// The connection could not be opened; `0` is libpq's message.
    #[error("{0}")]
    Connect(String),
    /// A statement failed: libpq's message and the statement.
    #[error("query failed: {message}")]
    Query {
        /// libpq's error text (no final newline).
        message: String,
        /// The statement that failed.
        sql: String,
    },
    /// The server did not enter COPY IN mode.
    #[error("unexpected copy in result: {0}")]
    CopyStart(String),
    /// Sending COPY data failed.
    #[error("PQputline failed")]
    CopySend(String),
    /// The COPY failed when it was finished; `0` is libpq's message (printed like a notice).
    #[error("PQendcopy failed")]
    CopyEnd(String),
    /// Ctrl-C arrived between statements: the next one was not started.
    #[error("initialization canceled by a signal")]
    Interrupted,
    /// A parallel worker stopped without a result (it panicked).
    #[error("a parallel loading worker failed")]
    Worker,
}

impl InitError {
    /// The complete stderr text pgbench prints for this error (each line ends with `\n`).
    pub fn render(&self, progname: &str) -> String {
        match self {
            InitError::Connect(msg) => format!(
                "{progname}: error: {}\n{progname}: error: could not create connection for initialization\n",
                strip_nl(msg)
            ),
            InitError::Query { message, sql } => format!(
                "{progname}: error: query failed: {}\n{progname}: detail: Query was: {}\n",
                strip_nl(message),
                strip_nl(sql)
            ),
            InitError::CopyEnd(msg) => {
                format!("{}\n{progname}: error: PQendcopy failed\n", strip_nl(msg))
            }
            other => format!("{progname}: error: {}\n", strip_nl(&other.to_string())),
        }
    }
}

/// pgbench's logging strips one trailing newline from a message.
fn strip_nl(s: &str) -> &str {
    s.strip_suffix('\n').unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_query_failure() {
        let e = InitError::Query {
            message: "ERROR:  relation \"pgbench_branches\" does not exist".into(),
            sql: "truncate table x".into(),
        };
        assert_eq!(
            e.render("pgrush"),
            "pgrush: error: query failed: ERROR:  relation \"pgbench_branches\" does not exist\npgrush: detail: Query was: truncate table x\n"
        );
    }

    #[test]
    fn renders_connect_and_copy_end() {
        assert_eq!(
            InitError::Connect("connection to server failed: boom\n".into()).render("pgrush"),
            "pgrush: error: connection to server failed: boom\npgrush: error: could not create connection for initialization\n"
        );
        assert_eq!(
            InitError::CopyEnd("ERROR:  bad\nCONTEXT:  COPY x, line 1".into()).render("p"),
            "ERROR:  bad\nCONTEXT:  COPY x, line 1\np: error: PQendcopy failed\n"
        );
        assert_eq!(
            InitError::UnknownStep('x').render("p"),
            "p: error: unrecognized initialization step \"x\"\n"
        );
    }
}
