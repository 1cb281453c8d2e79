//! The small slice of a PostgreSQL connection the initialization needs.
//!
//! Implemented for `pgrush_wire::Connection` in [`crate::wire_session`]; tests use a
//! recording fake. Messages are libpq's error texts (without the final newline).

/// A failure reported by a session: libpq's error message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbFailure {
    /// libpq's default-verbosity error text, as the bytes libpq prints (the server's
    /// bytes in a client encoding other than UTF8).
    pub message: Vec<u8>,
}

/// Where a COPY went wrong; each holds libpq's message bytes (see [`DbFailure`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyFailure {
    /// The COPY statement did not start COPY IN (`unexpected copy in result`).
    Start(Vec<u8>),
    /// Sending data failed (`PQputline failed`).
    Send(Vec<u8>),
    /// The server rejected the data when the COPY ended (`PQendcopy failed`).
    End(Vec<u8>),
}

/// Receives the data of a running COPY.
pub trait CopySink {
    /// Sends one CopyData message.
    fn send(&mut self, data: &[u8]) -> Result<(), DbFailure>;
    /// True once the user asked to stop (Ctrl-C) and the COPY should end: the generator
    /// stops sending rows.
    fn interrupted(&mut self) -> bool {
        false
    }
}

/// A connection able to run the initialization statements.
pub trait Session {
    /// Runs one statement with the simple query protocol; fails unless it completes.
    fn execute(&mut self, sql: &str) -> Result<(), DbFailure>;
    /// Runs `sql` with the extended protocol and text parameters; returns the first
    /// column of the first row (`None` when there is no row or it is NULL).
    fn query_value(&mut self, sql: &str, params: &[&str]) -> Result<Option<String>, DbFailure>;
    /// The server's `server_version_num`.
    fn server_version_num(&self) -> u32;
    /// True once the user asked to stop (Ctrl-C): no further statement is started.
    fn interrupted(&self) -> bool {
        false
    }
    /// Runs a `COPY ... FROM STDIN` statement, lets `body` send the data, then ends it.
    fn copy_in(
        &mut self,
        sql: &str,
        body: &mut dyn FnMut(&mut dyn CopySink) -> Result<(), DbFailure>,
    ) -> Result<(), CopyFailure>;
}

/// Opens sessions (used from several threads at once by parallel loads).
pub trait Connector: Sync {
    /// The session type.
    type Session: Session;
    /// Opens one connection; the error is libpq's connection failure message.
    fn connect(&self) -> Result<Self::Session, String>;
}
