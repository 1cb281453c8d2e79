//! [`Session`] over `pgrush_wire::Connection`, a [`Connector`] from resolved parameters,
//! and the Ctrl-C [`Interrupt`] shared by every connection of one initialization.

use crate::session::{Connector, CopyFailure, CopySink, DbFailure, Session};
use crate::steps::INTERRUPTED;
use pgrush_wire::conninfo::ConnParams;
use pgrush_wire::{CancelToken, Connection, CopyIn};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a COPY keeps sending rows after Ctrl-C while waiting for the server to act
/// on the cancel request (see [`InterruptibleCopy`]).
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// The longest [`Interrupt::settle`] waits for the cancel requests to be sent.
const SETTLE_LIMIT: Duration = Duration::from_secs(5);

fn failure(e: &pgrush_wire::Error, sql: &str) -> DbFailure {
    DbFailure {
        message: e.libpq_message_bytes(Some(sql.as_bytes())),
    }
}

/// The user's request to stop (Ctrl-C) and the means to pass it on to the server.
///
/// pgbench sends a cancel request for its one connection when SIGINT arrives during
/// `-i`; the running statement then fails with the server's `canceling statement due to
/// user request`. pgrush does the same for every connection of a parallel load, stops
/// generating COPY rows at once, and starts no further statement.
#[derive(Debug, Default)]
pub struct Interrupt {
    /// When [`Interrupt::request`] was first called.
    requested_at: OnceLock<Instant>,
    tokens: Mutex<Vec<CancelToken>>,
    /// Held while a request is being handled (cancels sent, message printed), so that
    /// the failure it causes is reported after the `Cancel request sent` line.
    handling: Mutex<()>,
}

impl Interrupt {
    /// Remembers `token` so that [`Interrupt::request`] cancels its connection's query.
    pub fn register(&self, token: CancelToken) {
        self.lock_tokens().push(token);
    }

    /// Marks the initialization as interrupted, sends a cancel request on every
    /// registered connection and then calls `report` with the first failure to send one
    /// (libpq wording), or `None`. Until `report` returns, [`Interrupt::settle`] waits.
    pub fn request(&self, report: impl FnOnce(Option<&pgrush_wire::Error>)) {
        let _handling = self.handling.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.requested_at.set(Instant::now());
        let tokens = self.lock_tokens().clone();
        let mut first_error = None;
        for token in &tokens {
            if let Err(e) = token.cancel() {
                first_error.get_or_insert(e);
            }
        }
        report(first_error.as_ref());
    }

    /// Waits until a request being handled has been reported (call before reporting a
    /// failure, which may be the cancel's effect), but not longer than [`SETTLE_LIMIT`]:
    /// a cancel request to an unreachable server must not keep the program from ending.
    pub fn settle(&self) {
        let deadline = Instant::now() + SETTLE_LIMIT;
        loop {
            match self.handling.try_lock() {
                Ok(_) | Err(std::sync::TryLockError::Poisoned(_)) => return,
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::sync::TryLockError::WouldBlock) => return,
            }
        }
    }

    /// True once [`Interrupt::request`] was called.
    pub fn requested(&self) -> bool {
        self.requested_at.get().is_some()
    }

    /// True once [`CANCEL_GRACE`] has passed since the request.
    fn grace_over(&self) -> bool {
        self.requested_at
            .get()
            .is_some_and(|at| at.elapsed() >= CANCEL_GRACE)
    }

    fn lock_tokens(&self) -> std::sync::MutexGuard<'_, Vec<CancelToken>> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One connection of an initialization.
pub struct WireSession {
    conn: Connection,
    interrupt: Arc<Interrupt>,
}

impl WireSession {
    fn new(conn: Connection, interrupt: Arc<Interrupt>) -> WireSession {
        interrupt.register(conn.cancel_token());
        WireSession { conn, interrupt }
    }
}

/// A COPY in progress that stops taking rows once the user interrupted.
///
/// A backend reading COPY data only acts on a cancel request while it processes rows,
/// not while it waits for more, so after Ctrl-C the rows keep flowing until the server
/// reports the cancel's error (normally at once), for at most [`CANCEL_GRACE`]. The
/// COPY is then failed; the error reported is the server's first, which is the
/// cancel's, as with pgbench.
struct InterruptibleCopy<'c, 'i> {
    copy: CopyIn<'c>,
    interrupt: &'i Interrupt,
}

impl CopySink for InterruptibleCopy<'_, '_> {
    fn send(&mut self, data: &[u8]) -> Result<(), DbFailure> {
        self.copy.send(data).map_err(|e| DbFailure {
            message: e.libpq_message_bytes(None),
        })
    }

    fn interrupted(&mut self) -> bool {
        self.interrupt.requested()
            && (self.interrupt.grace_over() || self.copy.server_failed().unwrap_or(true))
    }
}

impl Session for WireSession {
    fn execute(&mut self, sql: &str) -> Result<(), DbFailure> {
        self.conn
            .simple_query(sql)
            .map(|_| ())
            .map_err(|e| failure(&e, sql))
    }

    fn query_value(&mut self, sql: &str, params: &[&str]) -> Result<Option<String>, DbFailure> {
        let params: Vec<Option<&str>> = params.iter().map(|p| Some(*p)).collect();
        let result = self
            .conn
            .exec_params(sql, &params)
            .map_err(|e| failure(&e, sql))?;
        Ok(result.get(0, 0).map(str::to_string))
    }

    fn server_version_num(&self) -> u32 {
        self.conn.server_version_num()
    }

    fn interrupted(&self) -> bool {
        self.interrupt.requested()
    }

    fn copy_in(
        &mut self,
        sql: &str,
        body: &mut dyn FnMut(&mut dyn CopySink) -> Result<(), DbFailure>,
    ) -> Result<(), CopyFailure> {
        let copy = self
            .conn
            .copy_in(sql)
            .map_err(|e| CopyFailure::Start(e.libpq_message_bytes(Some(sql.as_bytes()))))?;
        let mut sink = InterruptibleCopy {
            copy,
            interrupt: &self.interrupt,
        };
        let sent = body(&mut sink);
        let InterruptibleCopy { copy, .. } = sink;
        match sent {
            // Interrupted: fail the COPY rather than end it, so that rows sent so far are
            // never committed, even when the cancel request lost a race with the COPY's
            // end. The server's error (normally the cancel's) is reported as pgbench
            // reports a failed COPY.
            Err(_) if self.interrupt.requested() => match copy.fail(INTERRUPTED) {
                Ok(db) => Err(CopyFailure::End(db.libpq_message_bytes(None))),
                Err(e) => Err(CopyFailure::End(e.libpq_message_bytes(None))),
            },
            Err(e) => Err(CopyFailure::Send(e.message)),
            Ok(()) => copy
                .finish()
                .map(|_| ())
                .map_err(|e| CopyFailure::End(e.libpq_message_bytes(Some(sql.as_bytes())))),
        }
    }
}

/// Opens wire connections with fixed, already resolved parameters.
pub struct WireConnector {
    params: ConnParams,
    /// A connection opened beforehand (e.g. after a password prompt), handed out by
    /// the first `connect` so that it is not opened twice.
    first: Mutex<Option<Connection>>,
    interrupt: Arc<Interrupt>,
}

impl WireConnector {
    /// A connector for `params`.
    pub fn new(params: ConnParams) -> WireConnector {
        WireConnector {
            params,
            first: Mutex::new(None),
            interrupt: Arc::default(),
        }
    }

    /// A connector for `params` whose first `connect` returns `first`.
    pub fn with_connection(params: ConnParams, first: Connection) -> WireConnector {
        WireConnector {
            first: Mutex::new(Some(first)),
            ..WireConnector::new(params)
        }
    }

    /// The interrupt shared by every connection this connector opens: call
    /// [`Interrupt::request`] on Ctrl-C.
    pub fn interrupt(&self) -> Arc<Interrupt> {
        Arc::clone(&self.interrupt)
    }
}

impl Connector for WireConnector {
    type Session = WireSession;

    fn connect(&self) -> Result<WireSession, String> {
        let opened = self.first.lock().ok().and_then(|mut first| first.take());
        let conn = match opened {
            Some(conn) => conn,
            None => Connection::connect(&self.params).map_err(|e| e.to_string())?,
        };
        Ok(WireSession::new(conn, Arc::clone(&self.interrupt)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn settle_waits_for_the_report_but_not_forever() {
        let interrupt = Arc::new(Interrupt::default());
        let reported = Arc::new(AtomicBool::new(false));
        let (i2, r2) = (Arc::clone(&interrupt), Arc::clone(&reported));
        let handler = std::thread::spawn(move || {
            i2.request(|failure| {
                assert!(
                    failure.is_none(),
                    "no connection registered, nothing to fail"
                );
                std::thread::sleep(Duration::from_millis(200));
                r2.store(true, Ordering::SeqCst);
            })
        });
        while !interrupt.requested() {
            std::thread::sleep(Duration::from_millis(1));
        }
        interrupt.settle();
        assert!(reported.load(Ordering::SeqCst), "settled before the report");
        handler.join().unwrap();

        // A handler that never finishes (an unreachable server) is not waited for.
        let stuck = Arc::new(Interrupt::default());
        let s2 = Arc::clone(&stuck);
        std::thread::spawn(move || s2.request(|_| std::thread::sleep(Duration::from_secs(60))));
        while !stuck.requested() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let start = Instant::now();
        stuck.settle();
        let waited = start.elapsed();
        assert!(waited >= SETTLE_LIMIT && waited < SETTLE_LIMIT + Duration::from_secs(2));
    }
}
