//! Blocking helpers for setup work: simple queries, one-shot extended queries, COPY FROM STDIN.

use crate::backend::BackendMessage;
use crate::conn::Connection;
use crate::error::{DbError, Error};

/// The result of one statement: columns, rows as text, and the command tag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryResult {
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
    command_tag: String,
}

impl QueryResult {
    /// Column names (empty for commands that return no rows).
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Rows; `None` is SQL NULL.
    pub fn rows(&self) -> &[Vec<Option<String>>] {
        &self.rows
    }

    /// Value at (`row`, `col`); `None` for NULL or out of range.
    pub fn get(&self, row: usize, col: usize) -> Option<&str> {
        self.rows.get(row)?.get(col)?.as_deref()
    }

    /// Command tag (`SELECT 3`, `INSERT 0 1`; empty for an empty query).
    pub fn command_tag(&self) -> &str {
        &self.command_tag
    }

    /// Rows affected/returned as the tag reports it (last number of the tag).
    pub fn rows_affected(&self) -> Option<u64> {
        self.command_tag.rsplit(' ').next()?.parse().ok()
    }
}

fn text(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

impl Connection {
    /// Runs `sql` (may contain several statements) with the simple query protocol and
    /// returns one result per statement. The first server error is returned after the
    /// server is ready again; like every error of the blocking helpers it is read in the
    /// client encoding (see [`crate::DbError::parse_in`]): print it with
    /// [`Error::libpq_message_bytes`].
    pub fn simple_query(&mut self, sql: &str) -> Result<Vec<QueryResult>, Error> {
        self.queue_query(crate::lossless::to_bytes(sql))?;
        self.send_blocking()?;
        self.collect_results()
    }

    /// Runs one statement with the extended protocol (unnamed statement and portal),
    /// text parameters (`None` = NULL) and text results.
    pub fn exec_params(
        &mut self,
        sql: &str,
        params: &[Option<&str>],
    ) -> Result<QueryResult, Error> {
        self.queue_parse("", sql, 0)?;
        self.queue_bind("", "", params.iter().map(|p| p.map(str::as_bytes)))?;
        self.queue_describe_portal("")?;
        self.queue_execute("", 0)?;
        self.queue_sync();
        self.send_blocking()?;
        let mut results = self.collect_results()?;
        Ok(results.pop().unwrap_or_default())
    }

    /// Reads results until ReadyForQuery.
    fn collect_results(&mut self) -> Result<Vec<QueryResult>, Error> {
        let mut results = Vec::new();
        let mut current = QueryResult::default();
        let mut error: Option<DbError> = None;
        let mut copy_refused = false;
        loop {
            // Server texts are in the client encoding as of the messages read so far.
            let encoding = self.client_encoding();
            match self.recv().map_err(|e| e.after(&error))? {
                BackendMessage::RowDescription(desc) => {
                    current.columns = desc
                        .fields()
                        .map(|f| String::from_utf8_lossy(f.name).into_owned())
                        .collect();
                }
                BackendMessage::DataRow(row) => {
                    current
                        .rows
                        .push(row.fields().map(|f| f.map(text)).collect());
                }
                BackendMessage::CommandComplete(tag) => {
                    current.command_tag = tag.to_string();
                    results.push(std::mem::take(&mut current));
                }
                BackendMessage::EmptyQueryResponse => {
                    results.push(std::mem::take(&mut current));
                }
                BackendMessage::ErrorResponse(fields) => {
                    if error.is_none() {
                        error = Some(fields.to_db_error_in(encoding));
                    }
                    current = QueryResult::default();
                }
                BackendMessage::CopyInResponse => {
                    copy_refused = true;
                    postgres_protocol::message::frontend::copy_fail(
                        "COPY FROM STDIN is not supported by simple_query; use copy_in",
                        self.out_buf(),
                    )
                    .map_err(|e| Error::Usage(e.to_string()))?;
                    self.send_blocking()?;
                }
                BackendMessage::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(e.into()),
            None if copy_refused => Err(Error::Usage("COPY FROM STDIN requires copy_in".into())),
            None => Ok(results),
        }
    }

    /// Starts `COPY ... FROM STDIN` (text or binary) and returns the writer.
    pub fn copy_in(&mut self, sql: &str) -> Result<CopyIn<'_>, Error> {
        self.queue_query(crate::lossless::to_bytes(sql))?;
        self.send_blocking()?;
        loop {
            let encoding = self.client_encoding();
            match self.recv()? {
                BackendMessage::CopyInResponse => break,
                BackendMessage::ErrorResponse(fields) => {
                    let e = fields.to_db_error_in(encoding);
                    self.drain_until_ready()?;
                    return Err(e.into());
                }
                BackendMessage::ReadyForQuery(_) => {
                    return Err(Error::Usage("the command is not COPY FROM STDIN".into()));
                }
                _ => {}
            }
        }
        Ok(CopyIn {
            conn: self,
            done: false,
        })
    }
}

/// An open `COPY FROM STDIN`.
#[derive(Debug)]
pub struct CopyIn<'c> {
    conn: &'c mut Connection,
    done: bool,
}

/// Queued COPY data is sent once it exceeds this size.
const COPY_FLUSH_AT: usize = 64 * 1024;

impl CopyIn<'_> {
    /// Sends `data` as one CopyData message (buffered; written when large enough).
    pub fn send(&mut self, data: &[u8]) -> Result<(), Error> {
        self.conn.queue_copy_data(data)?;
        if self.conn.out_buf().len() >= COPY_FLUSH_AT {
            self.conn.send_blocking()?;
        }
        Ok(())
    }

    /// True once the server has given up on this COPY with an error (after a cancel
    /// request, say); never blocks. [`CopyIn::fail`] then returns that error.
    pub fn server_failed(&mut self) -> Result<bool, Error> {
        self.conn.error_arrived()
    }

    /// Sends CopyDone and returns the number of rows copied.
    pub fn finish(mut self) -> Result<u64, Error> {
        self.done = true;
        postgres_protocol::message::frontend::copy_done(self.conn.out_buf());
        self.conn.send_blocking()?;
        let mut rows = 0;
        let mut error: Option<DbError> = None;
        loop {
            let encoding = self.conn.client_encoding();
            match self.conn.recv().map_err(|e| e.after(&error))? {
                BackendMessage::CommandComplete(tag) => {
                    rows = tag
                        .rsplit(' ')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                }
                BackendMessage::ErrorResponse(f) if error.is_none() => {
                    error = Some(f.to_db_error_in(encoding));
                }
                BackendMessage::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(e.into()),
            None => Ok(rows),
        }
    }

    /// Aborts the COPY with CopyFail; returns the server's resulting error.
    pub fn fail(mut self, message: &str) -> Result<DbError, Error> {
        self.done = true;
        postgres_protocol::message::frontend::copy_fail(message, self.conn.out_buf())
            .map_err(|e| Error::Usage(e.to_string()))?;
        self.conn.send_blocking()?;
        match self.conn.drain_until_ready() {
            Err(Error::Db(db)) => Ok(*db),
            Err(e) => Err(e),
            Ok(()) => Err(Error::protocol("server accepted a failed COPY")),
        }
    }
}

impl Drop for CopyIn<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = postgres_protocol::message::frontend::copy_fail(
                "COPY aborted",
                self.conn.out_buf(),
            );
            if self.conn.send_blocking().is_ok() {
                let _ = self.conn.drain_until_ready();
            }
        }
    }
}
