//! A client's outage under `--reconnect`: from the failure that lost its
//! connection to its first success after it, with the state of its reconnection
//! (backoff, timeout) and what the statistics keep of it.

use pgrush_stats::{ClientOutage, ServerIdentity};

use crate::clock::Micros;

/// The first wait between two attempts, µs; it doubles after each failed one.
const FIRST_BACKOFF_US: Micros = 10_000;
/// The longest wait between two attempts, µs.
const MAX_BACKOFF_US: Micros = 1_000_000;

/// A client's outage, from the failure that lost its connection to its first
/// success after it.
#[derive(Debug)]
pub(crate) struct Outage {
    /// When the first failure of the outage happened (engine clock).
    since: Micros,
    /// When the connection was last lost (the timeout counts from it).
    pub(super) lost_at: Micros,
    /// When the next attempt may start.
    pub(super) next_try: Micros,
    /// The wait after the next failed attempt.
    backoff: Micros,
    /// An attempt is in progress.
    pub(super) connecting: bool,
    /// Connection failures in the outage.
    failures: u64,
    /// SQLSTATE of the error that ended the session first (None: the socket closed).
    sqlstate: Option<String>,
    /// The server before the outage.
    before: Option<ServerIdentity>,
    /// libpq's message of the last failed attempt.
    pub(super) last_error: String,
}

impl Outage {
    /// An outage that begins at `t`, caused by `sqlstate` (None: the socket
    /// closed), on server `before`.
    pub(super) fn new(t: Micros, sqlstate: Option<String>, before: Option<ServerIdentity>) -> Self {
        Outage {
            since: t,
            lost_at: t,
            next_try: t,
            backoff: FIRST_BACKOFF_US,
            connecting: false,
            failures: 0,
            sqlstate,
            before,
            last_error: String::new(),
        }
    }

    /// The connection is lost at `t` (one more failure): try again at once.
    pub(super) fn lost(&mut self, t: Micros) {
        self.lost_at = t;
        self.next_try = t;
        self.backoff = FIRST_BACKOFF_US;
        self.failures += 1;
    }

    /// The attempt failed at `t` with libpq's message `error`: wait the backoff,
    /// which doubles up to its cap.
    pub(super) fn attempt_failed(&mut self, t: Micros, error: String) {
        self.connecting = false;
        self.last_error = error;
        self.next_try = t + self.backoff;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF_US);
    }

    /// The statistics' record of the outage (engine clock): it ended at `end`
    /// (None: the client stopped first) on server `after`.
    pub(super) fn into_record(
        self,
        client: u32,
        end: Option<Micros>,
        after: Option<ServerIdentity>,
    ) -> ClientOutage {
        ClientOutage {
            client,
            start_us: self.since,
            end_us: end,
            failures: self.failures,
            sqlstate: self.sqlstate,
            before: self.before,
            after,
        }
    }
}
