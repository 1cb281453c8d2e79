//! A recording fake connection for unit tests.

use crate::session::{Connector, CopyFailure, CopySink, DbFailure, Session};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default, Debug)]
pub struct Log {
    /// (connection number, statement) in the order received.
    pub statements: Vec<(usize, String)>,
    /// (COPY statement, all data sent) per COPY.
    pub copies: Vec<(String, Vec<u8>)>,
}

pub struct FakeConnector {
    pub inner: Arc<FakeConfig>,
}

pub struct FakeConfig {
    pub log: Mutex<Log>,
    pub fail_on: Option<String>,
    pub fail_copy_end: bool,
    pub version: u32,
    pub partitioned: bool,
    pub fk_count: &'static str,
    pub layout: Option<String>,
    conns: AtomicUsize,
}

impl FakeConnector {
    pub fn config() -> FakeConfig {
        FakeConfig {
            log: Mutex::default(),
            fail_on: None,
            fail_copy_end: false,
            version: 180_000,
            partitioned: false,
            fk_count: "0",
            layout: None,
            conns: AtomicUsize::new(0),
        }
    }
}

impl FakeConfig {
    pub fn build(self) -> FakeConnector {
        FakeConnector {
            inner: Arc::new(self),
        }
    }
}

impl FakeConnector {
    pub fn statements(&self) -> Vec<String> {
        self.inner
            .log
            .lock()
            .unwrap()
            .statements
            .iter()
            .map(|s| s.1.clone())
            .collect()
    }

    pub fn connections(&self) -> usize {
        self.inner.conns.load(Ordering::SeqCst)
    }
}

pub struct FakeSession {
    id: usize,
    c: Arc<FakeConfig>,
}

impl FakeSession {
    fn record(&self, sql: &str) -> Result<(), DbFailure> {
        self.c
            .log
            .lock()
            .unwrap()
            .statements
            .push((self.id, sql.to_string()));
        if self.c.fail_on.as_deref() == Some(sql) {
            return Err(DbFailure {
                message: "ERROR:  injected failure".into(),
            });
        }
        Ok(())
    }
}

struct Sink<'b>(&'b mut Vec<u8>);

impl CopySink for Sink<'_> {
    fn send(&mut self, data: &[u8]) -> Result<(), DbFailure> {
        self.0.extend_from_slice(data);
        Ok(())
    }
}

impl Session for FakeSession {
    fn execute(&mut self, sql: &str) -> Result<(), DbFailure> {
        self.record(sql)
    }

    fn query_value(&mut self, sql: &str, params: &[&str]) -> Result<Option<String>, DbFailure> {
        self.record(&format!("{sql} {params:?}"))?;
        if sql.starts_with("SELECT relkind") {
            let p = params.first().copied().unwrap_or("");
            let kind = if self.c.partitioned && p == "pgbench_accounts" {
                "p"
            } else {
                "r"
            };
            return Ok(Some(kind.into()));
        }
        if sql.contains("pg_get_expr") {
            return Ok(self.c.layout.clone());
        }
        Ok(Some(self.c.fk_count.into()))
    }

    fn server_version_num(&self) -> u32 {
        self.c.version
    }

    fn copy_in(
        &mut self,
        sql: &str,
        body: &mut dyn FnMut(&mut dyn CopySink) -> Result<(), DbFailure>,
    ) -> Result<(), CopyFailure> {
        self.record(sql)
            .map_err(|e| CopyFailure::Start(e.message))?;
        let mut data = Vec::new();
        body(&mut Sink(&mut data)).map_err(|e| CopyFailure::Send(e.message))?;
        self.c
            .log
            .lock()
            .unwrap()
            .copies
            .push((sql.to_string(), data));
        if self.c.fail_copy_end {
            return Err(CopyFailure::End("ERROR:  copy rejected".into()));
        }
        Ok(())
    }
}

impl Connector for FakeConnector {
    type Session = FakeSession;

    fn connect(&self) -> Result<FakeSession, String> {
        let id = self.inner.conns.fetch_add(1, Ordering::SeqCst);
        Ok(FakeSession {
            id,
            c: Arc::clone(&self.inner),
        })
    }
}
