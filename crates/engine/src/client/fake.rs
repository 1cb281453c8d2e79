//! A scripted fake server for the state machine's unit tests: [`FakeConn`]
//! implements [`ClientConn`] and [`FakeNetwork`] implements [`Network`].
//!
//! The fake answers what a client flushes at once, as a tiny PostgreSQL would:
//! simple Query, Parse/Bind/Describe/Execute/Sync (skipping to Sync after an
//! error), named statements, and the transaction status (BEGIN, END/COMMIT,
//! ROLLBACK, an error inside a block). Statements answer `SELECT 1` with no rows
//! unless a [`Rule`] matching their text says otherwise (rows, or an error a
//! given number of times). Everything the server received is kept in
//! [`FakeServer::received`], one line per message.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::rc::Rc;

use pgrush_script::{SqlCommand, Variables};
use pgrush_wire::{
    BackendMessage, BindHead, ClientEncoding, Error, PlainStop, PlainTally, ReadOutcome,
    TransactionStatus,
};

use crate::conn::{ClientConn, Network};

/// What a statement answers.
#[derive(Debug, Clone)]
pub(super) enum Reply {
    /// Rows of text columns (`None` = NULL).
    Rows {
        /// Column names.
        columns: Vec<&'static str>,
        /// Rows.
        rows: Vec<Vec<Option<&'static str>>>,
    },
    /// An ERROR with this SQLSTATE.
    Fail {
        /// SQLSTATE.
        code: &'static str,
        /// Message.
        message: &'static str,
    },
    /// The session ends: a FATAL error first (as `pg_terminate_backend`) or not
    /// (a backend that dies), then the server closes the connection.
    EndSession {
        /// Whether a FATAL error comes first.
        fatal: bool,
    },
}

/// Statements whose text contains `contains` answer `reply`, `times` times (None = always).
#[derive(Debug, Clone)]
pub(super) struct Rule {
    contains: Vec<u8>,
    reply: Reply,
    times: Option<u32>,
}

/// The server side shared by every connection of a test.
#[derive(Debug, Default)]
pub(super) struct FakeServer {
    rules: Vec<Rule>,
    /// What the server received, one line per message (`Q <sql>`, `P <name> <sql>`,
    /// `B <stmt>`, `E`, `S`), and `cancel`/`close`.
    pub(super) received: Vec<String>,
    /// The target (`--target`) of the connection each line of `received` came on.
    pub(super) received_on: Vec<usize>,
    /// SQL texts containing this are refused by `queue_*` (as the wire crate
    /// refuses a NUL byte).
    refuse: Option<Vec<u8>>,
    /// Every flush fails (a dead socket).
    pub(super) flush_fails: bool,
    /// This many flushes write nothing (a full socket buffer): the client keeps
    /// its output pending until the socket is writable again.
    pub(super) stalled_flushes: u32,
    /// Connections opened.
    pub(super) connects: u32,
    /// The target of each connection opened, in order.
    pub(super) connect_targets: Vec<usize>,
    /// Connections closed.
    pub(super) closes: u32,
    /// Connections refused from this number of connects on.
    pub(super) refuse_connects_after: Option<u32>,
    /// Parse of a text containing this fails (a syntax error).
    pub(super) bad_syntax: Option<Vec<u8>>,
    /// `next_plain` declines every message: results are read by the general path only
    /// (to compare it with the fast path).
    pub(super) general_only: bool,
    /// Calls of `next_plain` that consumed messages.
    pub(super) plain_reads: u32,
}

impl FakeServer {
    /// A server answering with defaults; shared by the test and its connections.
    pub(super) fn new() -> Rc<RefCell<FakeServer>> {
        Rc::new(RefCell::new(FakeServer::default()))
    }

    /// Statements containing `contains` return `rows` (always).
    pub(super) fn rows(
        &mut self,
        contains: &str,
        columns: Vec<&'static str>,
        rows: Vec<Vec<Option<&'static str>>>,
    ) {
        self.rules.push(Rule {
            contains: contains.as_bytes().to_vec(),
            reply: Reply::Rows { columns, rows },
            times: None,
        });
    }

    /// Statements containing `contains` fail with `code`, `times` times (None = always).
    pub(super) fn fail(&mut self, contains: &str, code: &'static str, times: Option<u32>) {
        self.rules.push(Rule {
            contains: contains.as_bytes().to_vec(),
            reply: Reply::Fail {
                code,
                message: "injected failure",
            },
            times,
        });
    }

    /// Statements containing `contains` end the session (always), with a FATAL
    /// error first when `fatal`.
    pub(super) fn end_session(&mut self, contains: &str, fatal: bool) {
        self.rules.push(Rule {
            contains: contains.as_bytes().to_vec(),
            reply: Reply::EndSession { fatal },
            times: None,
        });
    }

    /// `queue_*` refuses SQL containing `contains`.
    pub(super) fn refuse_sql_containing(&mut self, contains: &str) {
        self.refuse = Some(contains.as_bytes().to_vec());
    }

    /// The lines received that start with `prefix`.
    pub(super) fn received_starting(&self, prefix: &str) -> Vec<String> {
        self.received
            .iter()
            .filter(|l| l.starts_with(prefix))
            .cloned()
            .collect()
    }

    fn reply_for(&mut self, sql: &[u8]) -> Option<Reply> {
        let rule = self.rules.iter_mut().find(|r| {
            r.times != Some(0) && sql.windows(r.contains.len()).any(|w| w == r.contains)
        })?;
        if let Some(n) = rule.times.as_mut() {
            *n -= 1;
        }
        Some(rule.reply.clone())
    }
}

/// A frontend message queued by the client, not flushed yet.
#[derive(Debug)]
enum Frontend {
    Query(Vec<u8>),
    Parse(String, Vec<u8>),
    Bind(String),
    Describe,
    Execute,
    Sync,
}

/// One fake connection.
pub(super) struct FakeConn {
    server: Rc<RefCell<FakeServer>>,
    /// The target it was opened for.
    target: usize,
    queued: Vec<Frontend>,
    /// Encoded backend messages the socket will deliver at the next read.
    in_flight: Vec<u8>,
    /// Delivered bytes, decoded by `next_message`.
    input: Vec<u8>,
    input_pos: usize,
    status: TransactionStatus,
    /// After an error in the extended protocol: ignore messages up to Sync.
    skipping: bool,
    statements: HashMap<String, Vec<u8>>,
    portal: Option<Vec<u8>>,
    /// The server ended the session: nothing more is answered, and once what
    /// was sent is read the socket reads as closed.
    closed: bool,
}

impl FakeConn {
    fn new(server: Rc<RefCell<FakeServer>>, target: usize) -> Self {
        FakeConn {
            server,
            target,
            queued: Vec::new(),
            in_flight: Vec::new(),
            input: Vec::new(),
            input_pos: 0,
            status: TransactionStatus::Idle,
            skipping: false,
            statements: HashMap::new(),
            portal: None,
            closed: false,
        }
    }

    /// Whether the socket has something to read (epoll's readable).
    pub(super) fn readable(&self) -> bool {
        !self.in_flight.is_empty() || self.closed
    }

    fn check(&self, sql: &[u8]) -> Result<(), Error> {
        match &self.server.borrow().refuse {
            Some(r) if sql.windows(r.len()).any(|w| w == r.as_slice()) => {
                Err(Error::Usage("string contains embedded null".to_string()))
            }
            _ => Ok(()),
        }
    }

    fn note(&self, line: String) {
        let mut server = self.server.borrow_mut();
        server.received.push(line);
        server.received_on.push(self.target);
    }

    fn answer(&mut self, msg: Frontend) {
        if self.closed {
            return;
        }
        match msg {
            Frontend::Query(sql) => {
                self.note(format!("Q {}", String::from_utf8_lossy(&sql)));
                self.run_statement(&sql);
                self.ready_for_query();
            }
            Frontend::Sync => {
                self.note("S".to_string());
                self.skipping = false;
                self.ready_for_query();
            }
            _ if self.skipping => {}
            Frontend::Parse(name, sql) => {
                self.note(format!("P {name} {}", String::from_utf8_lossy(&sql)));
                let bad = self.server.borrow().bad_syntax.clone();
                if bad.is_some_and(|b| sql.windows(b.len()).any(|w| w == b.as_slice())) {
                    self.error("42601", "syntax error");
                    self.skipping = true;
                    return;
                }
                if !name.is_empty() && self.statements.contains_key(&name) {
                    // As PostgreSQL: a named statement is prepared once per session.
                    self.error("42P05", "prepared statement already exists");
                    self.skipping = true;
                    return;
                }
                self.statements.insert(name, sql);
                self.push(b'1', &[]);
            }
            Frontend::Bind(stmt) => {
                self.note(format!("B {stmt}"));
                match self.statements.get(&stmt) {
                    Some(sql) => {
                        self.portal = Some(sql.clone());
                        self.push(b'2', &[]);
                    }
                    None => {
                        self.error("26000", "prepared statement does not exist");
                    }
                }
            }
            Frontend::Describe => {}
            Frontend::Execute => {
                self.note("E".to_string());
                if let Some(sql) = self.portal.take() {
                    self.run_statement(&sql);
                }
            }
        }
    }

    fn run_statement(&mut self, sql: &[u8]) {
        let upper = String::from_utf8_lossy(sql).trim().to_ascii_uppercase();
        let ends_block = upper.starts_with("END") || upper.starts_with("COMMIT");
        if upper.starts_with("ROLLBACK") || (ends_block && self.status == TransactionStatus::Failed)
        {
            self.status = TransactionStatus::Idle;
            return self.complete("ROLLBACK");
        }
        if self.status == TransactionStatus::Failed {
            return self.error("25P02", "current transaction is aborted");
        }
        let reply = self.server.borrow_mut().reply_for(sql);
        match reply {
            Some(Reply::Fail { code, message }) => self.error(code, message),
            Some(Reply::EndSession { fatal }) => {
                if fatal {
                    self.error_with("FATAL", "57P01", "terminating connection");
                }
                self.closed = true;
            }
            Some(Reply::Rows { columns, rows }) => {
                let mut body = (columns.len() as i16).to_be_bytes().to_vec();
                for c in &columns {
                    body.extend_from_slice(c.as_bytes());
                    body.push(0);
                    body.extend_from_slice(&[0; 4]); // table oid
                    body.extend_from_slice(&[0; 2]); // column number
                    body.extend_from_slice(&25i32.to_be_bytes()); // text
                    body.extend_from_slice(&(-1i16).to_be_bytes());
                    body.extend_from_slice(&(-1i32).to_be_bytes());
                    body.extend_from_slice(&[0; 2]); // text format
                }
                self.push(b'T', &body);
                for row in &rows {
                    let mut body = (row.len() as i16).to_be_bytes().to_vec();
                    for v in row {
                        match v {
                            Some(v) => {
                                body.extend_from_slice(&(v.len() as i32).to_be_bytes());
                                body.extend_from_slice(v.as_bytes());
                            }
                            None => body.extend_from_slice(&(-1i32).to_be_bytes()),
                        }
                    }
                    self.push(b'D', &body);
                }
                self.complete(&format!("SELECT {}", rows.len()));
            }
            None if upper.starts_with("BEGIN") => {
                self.status = TransactionStatus::InTransaction;
                self.complete("BEGIN");
            }
            None if ends_block => {
                self.status = TransactionStatus::Idle;
                self.complete("COMMIT");
            }
            None => self.complete("SELECT 0"),
        }
    }

    fn complete(&mut self, tag: &str) {
        let mut body = tag.as_bytes().to_vec();
        body.push(0);
        self.push(b'C', &body);
    }

    fn error(&mut self, code: &str, message: &str) {
        self.error_with("ERROR", code, message);
    }

    fn error_with(&mut self, severity: &str, code: &str, message: &str) {
        let mut body = Vec::new();
        for (field, value) in [
            (b'S', severity),
            (b'V', severity),
            (b'C', code),
            (b'M', message),
        ] {
            body.push(field);
            body.extend_from_slice(value.as_bytes());
            body.push(0);
        }
        body.push(0);
        self.push(b'E', &body);
        if self.status == TransactionStatus::InTransaction {
            self.status = TransactionStatus::Failed;
        }
        self.skipping = true;
    }

    fn ready_for_query(&mut self) {
        if self.closed {
            return;
        }
        let status = match self.status {
            TransactionStatus::Idle => b'I',
            TransactionStatus::InTransaction => b'T',
            TransactionStatus::Failed => b'E',
        };
        self.push(b'Z', &[status]);
    }

    fn push(&mut self, tag: u8, body: &[u8]) {
        self.in_flight.push(tag);
        self.in_flight
            .extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        self.in_flight.extend_from_slice(body);
    }
}

impl ClientConn for FakeConn {
    fn queue_query(&mut self, sql: &[u8], holds_nul: bool) -> Result<(), Error> {
        // The caller's word stands in for the wire crate's search: it must be right.
        assert_eq!(holds_nul, sql.contains(&0), "holds_nul of {sql:?}");
        if holds_nul {
            return Err(Error::Usage("string contains embedded null".to_string()));
        }
        self.check(sql)?;
        self.queued.push(Frontend::Query(sql.to_vec()));
        Ok(())
    }

    fn queue_parse(&mut self, name: &str, sql: &[u8], _n_params: usize) -> Result<(), Error> {
        self.check(sql)?;
        self.queued
            .push(Frontend::Parse(name.to_string(), sql.to_vec()));
        Ok(())
    }

    fn queue_bind_execute(
        &mut self,
        head: &BindHead,
        sql: &SqlCommand,
        vars: &Variables,
        sync: bool,
    ) -> Result<(), Error> {
        let mut text = Vec::new();
        for i in 0..sql.params().len() {
            sql.write_param(vars, i, &mut text);
        }
        assert_eq!(
            head.n_params(),
            sql.params().len(),
            "the head of another statement"
        );
        self.queued
            .push(Frontend::Bind(head.statement().to_string()));
        self.queued.push(Frontend::Describe);
        self.queued.push(Frontend::Execute);
        if sync {
            self.queue_sync();
        }
        Ok(())
    }

    fn queue_sync(&mut self) {
        self.queued.push(Frontend::Sync);
    }

    fn flush(&mut self) -> io::Result<bool> {
        {
            let mut server = self.server.borrow_mut();
            if server.flush_fails {
                return Err(io::Error::from(io::ErrorKind::BrokenPipe));
            }
            if server.stalled_flushes > 0 && !self.queued.is_empty() {
                server.stalled_flushes -= 1;
                return Ok(false);
            }
        }
        for msg in std::mem::take(&mut self.queued) {
            self.answer(msg);
        }
        Ok(true)
    }

    fn wait_socket(&self, _writable: bool) -> io::Result<()> {
        // The fake answers at once: there is never anything to wait for.
        Ok(())
    }

    fn read_some(&mut self) -> io::Result<ReadOutcome> {
        if self.in_flight.is_empty() {
            return Ok(if self.closed {
                ReadOutcome::Closed
            } else {
                ReadOutcome::WouldBlock
            });
        }
        let n = self.in_flight.len();
        self.input.drain(..self.input_pos);
        self.input_pos = 0;
        self.input.append(&mut self.in_flight);
        Ok(ReadOutcome::Data(n))
    }

    fn next_message(&mut self) -> Result<Option<BackendMessage<'_>>, Error> {
        let rest = &self.input[self.input_pos..];
        if rest.len() < 5 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let start = self.input_pos + 5;
        let end = self.input_pos + 1 + len;
        self.input_pos = end;
        pgrush_wire::decode_backend_message(self.input[start - 5], &self.input[start..end])
            .map(Some)
    }

    fn next_plain(&mut self, tally: &mut PlainTally) -> PlainStop {
        if self.server.borrow().general_only {
            return PlainStop::Other;
        }
        let (used, stop) = pgrush_wire::scan_plain(&self.input[self.input_pos..], tally);
        self.input_pos += used;
        if used > 0 {
            self.server.borrow_mut().plain_reads += 1;
        }
        stop
    }

    fn client_encoding(&self) -> ClientEncoding {
        ClientEncoding::Utf8
    }

    fn cancel(&self) {
        self.note("cancel".to_string());
    }

    fn close(self) {
        self.note("close".to_string());
        self.server.borrow_mut().closes += 1;
    }
}

/// Opens [`FakeConn`]s to one [`FakeServer`].
pub(super) struct FakeNetwork {
    server: Rc<RefCell<FakeServer>>,
    /// Tokens registered and not deregistered yet.
    pub(super) registered: usize,
}

impl FakeNetwork {
    /// Connections to `server`.
    pub(super) fn new(server: &Rc<RefCell<FakeServer>>) -> Self {
        FakeNetwork {
            server: Rc::clone(server),
            registered: 0,
        }
    }
}

impl Network for FakeNetwork {
    type Conn = FakeConn;

    fn connect(&mut self, target: usize) -> Option<FakeConn> {
        let mut server = self.server.borrow_mut();
        if server
            .refuse_connects_after
            .is_some_and(|n| server.connects >= n)
        {
            return None;
        }
        server.connects += 1;
        server.connect_targets.push(target);
        Some(FakeConn::new(Rc::clone(&self.server), target))
    }

    fn register(&mut self, _token: usize, _conn: &FakeConn) -> io::Result<()> {
        self.registered += 1;
        Ok(())
    }

    fn watch_writable(
        &mut self,
        _token: usize,
        _conn: &FakeConn,
        _writable: bool,
    ) -> io::Result<()> {
        Ok(())
    }

    fn deregister(&mut self, _conn: &FakeConn) {
        self.registered -= 1;
    }
}
