//! A blocking SQL session for the steps' own queries (sizes, LSNs, checks, REINDEX).

use pgrush_wire::Connection;
use pgrush_wire::conninfo::{ConnectRequest, resolve};

use crate::ops::error::OpsError;

/// One connection, with helpers that turn failures into [`OpsError`].
pub struct Db {
    conn: Connection,
}

impl Db {
    /// Connects as `request` says, to database `dbname` when given (a keyword that
    /// overrides the request's database name, so that a connection string given as
    /// the name still supplies its host, port, user and password).
    pub fn connect(request: &ConnectRequest, dbname: Option<&str>) -> Result<Db, OpsError> {
        let mut request = request.clone();
        if let Some(name) = dbname {
            request.extra.push(("dbname".to_string(), name.to_string()));
        }
        let params = resolve(&request).map_err(|e| OpsError::Connect(e.to_string()))?;
        let conn = Connection::connect(&params).map_err(|e| OpsError::Connect(e.to_string()))?;
        Ok(Db { conn })
    }

    /// Runs statements, ignoring their results.
    pub fn exec(&mut self, sql: &str) -> Result<(), OpsError> {
        self.query(sql).map(drop)
    }

    /// Runs cleanup statements (dropping scratch databases) even after Ctrl-C, which
    /// they must not be cancelled by.
    pub fn exec_cleanup(&mut self, sql: &str) -> Result<(), OpsError> {
        self.conn
            .simple_query(sql)
            .map(drop)
            .map_err(|e| OpsError::sql(sql, e.libpq_message(Some(sql))))
    }

    /// Runs `sql`; Ctrl-C cancels it (then the error is [`OpsError::Interrupted`]).
    fn query(&mut self, sql: &str) -> Result<Vec<pgrush_wire::QueryResult>, OpsError> {
        if crate::ops::interrupt::requested() {
            return Err(OpsError::Interrupted);
        }
        crate::ops::interrupt::set_running(Some(self.conn.cancel_token()));
        let result = self.conn.simple_query(sql);
        crate::ops::interrupt::set_running(None);
        match result {
            Ok(results) => Ok(results),
            Err(_) if crate::ops::interrupt::requested() => Err(OpsError::Interrupted),
            Err(e) => Err(OpsError::sql(sql, e.libpq_message(Some(sql)))),
        }
    }

    /// The rows of the last result of `sql` (text values, NULL as empty).
    pub fn rows(&mut self, sql: &str) -> Result<Vec<Vec<String>>, OpsError> {
        let results = self.query(sql)?;
        let last = results.last().map(|r| r.rows()).unwrap_or_default();
        Ok(last
            .iter()
            .map(|row| row.iter().map(|v| v.clone().unwrap_or_default()).collect())
            .collect())
    }

    /// The single value `sql` returns.
    pub fn value(&mut self, sql: &str) -> Result<String, OpsError> {
        self.rows(sql)?
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .ok_or_else(|| OpsError::Unexpected(format!("{sql}: no value")))
    }

    /// The single number `sql` returns.
    pub fn number(&mut self, sql: &str) -> Result<u64, OpsError> {
        let text = self.value(sql)?;
        text.trim()
            .parse()
            .map_err(|_| OpsError::Unexpected(format!("{sql}: not a number: {text:?}")))
    }

    /// `server_version` and `server_version_num`.
    pub fn version(&self) -> (String, u32) {
        (
            self.conn.server_version().to_string(),
            self.conn.server_version_num(),
        )
    }

    /// The host (or socket directory) and port of the connection, as `PQhost`/`PQport`.
    pub fn host_port(&self) -> (String, String) {
        (self.conn.host().to_string(), self.conn.port().to_string())
    }

    /// The current WAL insert position in bytes.
    pub fn wal_position(&mut self) -> Result<u64, OpsError> {
        let text = self.value("SELECT pg_current_wal_lsn()")?;
        crate::ops::lsn::parse(&text)
    }
}
