//! [`Session`] for `pgrush_wire::Connection`, and a [`Connector`] from resolved parameters.

use crate::session::{Connector, CopyFailure, CopySink, DbFailure, Session};
use pgrush_wire::conninfo::ConnParams;
use pgrush_wire::{Connection, CopyIn};
use std::sync::Mutex;

fn failure(e: &pgrush_wire::Error, sql: &str) -> DbFailure {
    DbFailure {
        message: e.libpq_message(Some(sql)),
    }
}

impl CopySink for CopyIn<'_> {
    fn send(&mut self, data: &[u8]) -> Result<(), DbFailure> {
        CopyIn::send(self, data).map_err(|e| DbFailure {
            message: e.libpq_message(None),
        })
    }
}

impl Session for Connection {
    fn execute(&mut self, sql: &str) -> Result<(), DbFailure> {
        self.simple_query(sql)
            .map(|_| ())
            .map_err(|e| failure(&e, sql))
    }

    fn query_value(&mut self, sql: &str, params: &[&str]) -> Result<Option<String>, DbFailure> {
        let params: Vec<Option<&str>> = params.iter().map(|p| Some(*p)).collect();
        let result = self
            .exec_params(sql, &params)
            .map_err(|e| failure(&e, sql))?;
        Ok(result.get(0, 0).map(str::to_string))
    }

    fn server_version_num(&self) -> u32 {
        Connection::server_version_num(self)
    }

    fn copy_in(
        &mut self,
        sql: &str,
        body: &mut dyn FnMut(&mut dyn CopySink) -> Result<(), DbFailure>,
    ) -> Result<(), CopyFailure> {
        let mut copy = Connection::copy_in(self, sql)
            .map_err(|e| CopyFailure::Start(e.libpq_message(Some(sql))))?;
        body(&mut copy).map_err(|e| CopyFailure::Send(e.message))?;
        copy.finish()
            .map(|_| ())
            .map_err(|e| CopyFailure::End(e.libpq_message(Some(sql))))
    }
}

/// Opens wire connections with fixed, already resolved parameters.
pub struct WireConnector {
    params: ConnParams,
    /// A connection opened beforehand (e.g. after a password prompt), handed out by
    /// the first `connect` so that it is not opened twice.
    first: Mutex<Option<Connection>>,
}

impl WireConnector {
    /// A connector for `params`.
    pub fn new(params: ConnParams) -> WireConnector {
        WireConnector {
            params,
            first: Mutex::new(None),
        }
    }

    /// A connector for `params` whose first `connect` returns `first`.
    pub fn with_connection(params: ConnParams, first: Connection) -> WireConnector {
        WireConnector {
            params,
            first: Mutex::new(Some(first)),
        }
    }
}

impl Connector for WireConnector {
    type Session = Connection;

    fn connect(&self) -> Result<Connection, String> {
        let opened = self.first.lock().ok().and_then(|mut first| first.take());
        match opened {
            Some(conn) => Ok(conn),
            None => Connection::connect(&self.params).map_err(|e| e.to_string()),
        }
    }
}
