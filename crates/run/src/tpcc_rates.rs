//! The server's side of the TPC-C-like workload's rates, counted as HammerDB counts them:
//! the sum of the districts' `d_next_o_id` (New-Orders committed) and of
//! `pg_stat_database`'s `xact_commit + xact_rollback` (every database's transactions),
//! read just before the clients start and again after they end.

use std::time::{Duration, Instant};

use pgrush_report::document::TpccServerDoc;
use pgrush_wire::Connection;
use pgrush_wire::conninfo::ConnParams;

/// Both sums in one row.
const COUNTERS_QUERY: &str = "SELECT (SELECT sum(d_next_o_id) FROM district), \
     (SELECT sum(xact_commit + xact_rollback) FROM pg_catalog.pg_stat_database)";

/// How often, and how many times, the after-run reading is taken again while the
/// ended sessions' statistics still reach `pg_stat_database`.
const SETTLE_PAUSE: Duration = Duration::from_millis(50);
const SETTLE_TRIES: u32 = 40;

/// One reading of the counters.
#[derive(Debug, Clone, Copy)]
pub struct ServerReading {
    /// (Σ d_next_o_id, Σ xact_commit + xact_rollback).
    counts: (i64, i64),
    at: Instant,
}

impl ServerReading {
    /// Reads the counters on `con`; `None` when they cannot be read.
    pub fn take(con: &mut Connection) -> Option<ServerReading> {
        let results = con.simple_query(COUNTERS_QUERY).ok()?;
        let row = results.first()?;
        let number = |col| row.get(0, col)?.parse::<i64>().ok();
        Some(ServerReading {
            counts: (number(0)?, number(1)?),
            at: Instant::now(),
        })
    }

    /// The counts from this reading to one taken now on a new connection: read again
    /// (every 50 ms, for at most 2 s) until `pg_stat_database` stops growing, since the
    /// clients' sessions report their last transactions as they end.
    pub fn until_now(&self, params: &ConnParams) -> Option<TpccServerDoc> {
        let mut con = Connection::connect(params).ok()?;
        let mut after = ServerReading::take(&mut con)?;
        // The interval ends at the first reading; the later ones only catch up.
        let end = after.at;
        for _ in 0..SETTLE_TRIES {
            std::thread::sleep(SETTLE_PAUSE);
            let _ = con.simple_query("SELECT pg_catalog.pg_stat_clear_snapshot()");
            let again = ServerReading::take(&mut con)?;
            if again.counts == after.counts {
                break;
            }
            after = again;
        }
        let _ = con.close();
        let seconds = end.duration_since(self.at).as_secs_f64();
        Some(TpccServerDoc::between(self.counts, after.counts, seconds))
    }
}
