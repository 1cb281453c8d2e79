//! The sampling thread: one connection of its own; the wait query every wait period,
//! the counters query every interval; stops when told, or when its connection fails
//! (keeping what it has and saying so).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pgrush_stats::server::ServerInterval;
use pgrush_wire::Connection;

use crate::catalog::Capabilities;
use crate::snapshot::{Snapshot, database_delta, io_delta};
use crate::waits::{EventTracker, WaitCounts, WaitSample};

/// What the thread hands back.
#[derive(Debug, Default)]
pub struct Sampled {
    /// The counter intervals.
    pub intervals: Vec<ServerInterval>,
    /// All wait samples of the run.
    pub waits: WaitCounts,
    /// Checkpoints and autovacuum runs seen in the wait samples.
    pub tracker: EventTracker,
    /// The counters when sampling began and when it ended.
    pub first: Snapshot,
    /// The last counters read.
    pub last: Snapshot,
    /// The counters at the start of the last interval.
    before_last: Option<Snapshot>,
    /// The wait samples of the last interval.
    last_waits: WaitCounts,
    /// Why sampling stopped early, if it did.
    pub failure: Option<String>,
    /// The connection, for the final reads (None after a failure).
    pub conn: Option<Connection>,
}

/// Timing of the sampling.
#[derive(Debug, Clone, Copy)]
pub struct Periods {
    /// Counter interval.
    pub interval: Duration,
    /// Wait sampling period.
    pub wait: Duration,
}

/// Runs the sampling loop on `conn` until `stop` is set; `start` is the run's start.
pub fn run(
    mut conn: Connection,
    caps: &Capabilities,
    application_name: &str,
    periods: Periods,
    start: Instant,
    stop: &Arc<AtomicBool>,
) -> Sampled {
    let counters_sql = caps.counters_query();
    let waits_sql = caps.waits_query(application_name);
    let mut out = Sampled::default();
    match conn.simple_query(&counters_sql) {
        Ok(r) => out.first = Snapshot::parse(&r),
        Err(e) => {
            out.failure = Some(format!("could not read the server's statistics: {e}"));
            return out;
        }
    }
    out.last = out.first.clone();
    let mut current = WaitCounts::default();
    let mut interval_start = 0.0f64;
    let mut next_wait = start;
    let mut next_counters = start + periods.interval;
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let now = Instant::now();
        if !stopping && now < next_wait.min(next_counters) {
            std::thread::park_timeout(next_wait.min(next_counters) - now);
            continue;
        }
        let t = now.saturating_duration_since(start).as_secs_f64();
        if !stopping && now >= next_wait {
            next_wait += periods.wait;
            match conn.simple_query(&waits_sql) {
                Ok(r) => {
                    let sample = WaitSample::parse(&r);
                    current.add(&sample);
                    out.tracker.observe(t, periods.wait.as_secs_f64(), &sample);
                }
                Err(e) => {
                    out.failure = Some(lost(t, &e));
                    return out;
                }
            }
        }
        if stopping || now >= next_counters {
            next_counters += periods.interval;
            let snap = match conn.simple_query(&counters_sql) {
                Ok(r) => Snapshot::parse(&r),
                Err(e) => {
                    out.failure = Some(lost(t, &e));
                    return out;
                }
            };
            let short_tail = stopping
                && t - interval_start < periods.interval.as_secs_f64() / 2.0
                && !out.intervals.is_empty();
            if short_tail {
                // The end of sampling just after an interval: the fragment's counters
                // join the last interval rather than make a misleading short one.
                let last = out.intervals.len() - 1;
                let start_s = out.intervals[last].start_s;
                let before = out.before_last.take().unwrap_or_else(|| out.last.clone());
                let mut waits = out.last_waits.clone();
                waits.merge(&current);
                out.intervals[last] = interval(start_s, t, &before, &snap, &waits);
            } else {
                out.before_last = Some(out.last.clone());
                out.last_waits = current.clone();
                out.intervals
                    .push(interval(interval_start, t, &out.last, &snap, &current));
            }
            out.waits.merge(&current);
            current = WaitCounts::default();
            interval_start = t;
            out.last = snap;
        }
        if stopping {
            out.conn = Some(conn);
            return out;
        }
    }
}

/// The warning for a connection lost at `t`.
fn lost(t: f64, e: &pgrush_wire::Error) -> String {
    format!(
        "server statistics: the sampling connection failed at {t:.1} s ({}); \
         the later intervals are missing",
        e.libpq_message(None).trim_end()
    )
}

/// The interval from `start_s` to `end_s` between two snapshots.
fn interval(
    start_s: f64,
    end_s: f64,
    before: &Snapshot,
    after: &Snapshot,
    waits: &WaitCounts,
) -> ServerInterval {
    ServerInterval {
        start_s,
        duration_s: (end_s - start_s).max(0.0),
        waits: waits.shares(),
        database: database_delta(&after.database, &before.database),
        wal_records: after.wal[0].saturating_sub(before.wal[0]),
        wal_fpi: after.wal[1].saturating_sub(before.wal[1]),
        wal_bytes: after.wal[2].saturating_sub(before.wal[2]),
        checkpoints: after.checkpoints[0].saturating_sub(before.checkpoints[0]),
        checkpoint_buffers: after.checkpoints[1].saturating_sub(before.checkpoints[1]),
        io: io_delta(&after.io, &before.io),
        lock_waits: waits.locks.clone(),
    }
}
