//! The sampling thread: one connection of its own; every wait period the wait query
//! with the fine counters, every interval the other counters; when told to stop it
//! waits for the benchmark's backends to exit (their exit flushes their statistics)
//! and reads everything once more. It stops early when its connection fails, keeping
//! what it has and saying so.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pgrush_stats::server::IoCounts;
use pgrush_wire::{Connection, QueryResult};

use crate::catalog::Capabilities;
use crate::counter_curve::{COMMITS, FineReading};
use crate::latest::{LatestSlot, publish};
use crate::snapshot::{Snapshot, fine_counters};
use crate::waits::{EventTracker, WaitCounts, WaitSample};

/// The interval counters at one instant (the ones not read every wait period).
#[derive(Debug, Clone, Default)]
pub struct CoarseReading {
    /// Seconds from the run's start.
    pub t: f64,
    /// WAL records, full-page images, bytes (as `pg_stat_wal` reports them).
    pub wal: [u64; 3],
    /// Checkpoints started, buffers written by checkpoints.
    pub checkpoints: [u64; 2],
    /// `pg_stat_io` totals.
    pub io: IoCounts,
}

impl CoarseReading {
    fn of(t: f64, s: &Snapshot) -> CoarseReading {
        CoarseReading {
            t,
            wal: s.wal,
            checkpoints: s.checkpoints,
            io: s.io.clone(),
        }
    }
}

/// What the thread hands back.
#[derive(Debug, Default)]
pub struct Sampled {
    /// The fine readings: one when sampling began, then every wait period from
    /// [`LEAD`] before the run's start (negative times), the last one after the
    /// backends exited.
    pub readings: Vec<FineReading>,
    /// The interval readings: one when sampling began, one at the run's start when
    /// that came later (after a warm-up), one every interval, the last at the end.
    pub coarse: Vec<CoarseReading>,
    /// All wait samples of the run.
    pub waits: WaitCounts,
    /// The wait samples of each interval (by start: `k * interval`).
    pub interval_waits: Vec<WaitCounts>,
    /// Checkpoints and autovacuum runs seen in the wait samples.
    pub tracker: EventTracker,
    /// The counters at the run's start (when sampling began, or at the end of a
    /// warm-up).
    pub first: Snapshot,
    /// The last counters read.
    pub last: Snapshot,
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

/// How long the end of sampling waits for the benchmark's backends to exit.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// The sampler's connection, counting its own transactions (each query is one, and
/// a commit in `pg_stat_database`) and, where the server allows, flushing its own
/// statistics after each so that they can be subtracted exactly.
struct Session {
    conn: Connection,
    own_flush: Option<&'static str>,
    transactions: u64,
}

impl Session {
    /// Runs one of the [`Queries`] (its flush already appended).
    fn query(&mut self, sql: &str) -> Result<Vec<QueryResult>, pgrush_wire::Error> {
        let r = self.conn.simple_query(sql);
        self.transactions += 1;
        r
    }
}

/// The queries of one sampler, as sent: each followed by the session's own flush
/// where there is one, and built once (a sample costs its round trip, not the
/// formatting of its text).
struct Queries {
    /// The wait query and the fine counters, in one round trip.
    waits_and_fine: String,
    fine: String,
    counters: String,
    backends: String,
}

impl Queries {
    fn new(caps: &Capabilities, application_name: &str) -> Queries {
        let flushed = |sql: String| match caps.own_flush() {
            Some(flush) => format!("{sql}; {flush}"),
            None => sql,
        };
        Queries {
            waits_and_fine: flushed(format!(
                "{}; {}",
                caps.waits_query(application_name),
                caps.fine_query()
            )),
            fine: flushed(caps.fine_query()),
            counters: flushed(caps.counters_query()),
            backends: flushed(Capabilities::backends_query(application_name)),
        }
    }
}

/// How long before the run's start (the end of a `--warmup`) the fine readings begin:
/// a backend flushes its statistics at most once a second, so readings from this
/// far back hold the flushes around the start, and the counters are interpolated at
/// the start as at any other edge instead of counting a second of the warm-up.
const LEAD: Duration = Duration::from_secs(2);

/// The next instant (s from the run's start) after `t` on the grid `k * period` that
/// is not before `from`: sampling keeps to the grid and never catches up in a burst
/// after a slow query.
fn next_on_grid(t: f64, period: f64, from: f64) -> f64 {
    if t < from {
        from
    } else {
        ((t / period).floor() + 1.0) * period
    }
}

/// Runs the sampling loop on `conn` until `stop` is set; `start` is the run's start
/// (the origin of the client's time series; it may lie ahead, after a `--warmup`).
///
/// The counters are read once at once: the reading before anything of the run (the
/// anchor of the transaction curve). Before `start` only the fine counters are read,
/// from [`LEAD`] before it on (readings with negative times); from `start` on, the
/// waits with them, and the interval counters at `start` (when it lies ahead) and
/// every interval after it.
pub fn run(
    conn: Connection,
    caps: &Capabilities,
    (application_name, latest): (&str, Option<&LatestSlot>),
    periods: Periods,
    start: Instant,
    stop: &Arc<AtomicBool>,
) -> Sampled {
    let q = Queries::new(caps, application_name);
    let mut s = Session {
        conn,
        own_flush: caps.own_flush(),
        transactions: 0,
    };
    let mut out = Sampled::default();
    let since = |now: Instant| match now.checked_duration_since(start) {
        Some(d) => d.as_secs_f64(),
        None => -start.duration_since(now).as_secs_f64(),
    };
    let t = since(Instant::now());
    match s.query(&q.counters) {
        Ok(r) => out.first = Snapshot::parse(&r),
        Err(e) => {
            out.failure = Some(format!("could not read the server's statistics: {e}"));
            return out;
        }
    }
    out.coarse.push(CoarseReading::of(t, &out.first));
    out.last = out.first.clone();
    publish(latest, |l| l.set_counters(&out.first));
    let own_base = s.transactions;
    let (wait_s, interval_s) = (periods.wait.as_secs_f64(), periods.interval.as_secs_f64());
    let lead_s = (LEAD.as_secs_f64() / wait_s).ceil() * wait_s;
    // The anchor is read at once.
    let mut next_fine = f64::NEG_INFINITY;
    let mut next_counters = next_on_grid(t, interval_s, 0.0);
    loop {
        if stop.load(Ordering::Acquire) {
            return finish(s, &q, out, own_base, since);
        }
        let now = Instant::now();
        let t = since(now);
        let due = next_fine.min(next_counters);
        if t < due {
            let left = Duration::from_secs_f64(due - t);
            std::thread::park_timeout(left);
            continue;
        }
        let result = if t >= next_fine {
            next_fine = next_on_grid(t, wait_s, -lead_s);
            if t < 0.0 {
                fine_sample(&mut s, &q, &mut out, t, own_base)
            } else {
                wait_sample(&mut s, &q, &mut out, t, periods, own_base)
                    .map(|sample| publish(latest, |l| l.set_waits(&sample)))
            }
        } else {
            next_counters = next_on_grid(t, interval_s, 0.0);
            coarse_sample(&mut s, &q, &mut out, t)
                .map(|()| publish(latest, |l| l.set_counters(&out.last)))
        };
        if let Err(e) = result {
            out.failure = Some(lost(t, &e));
            return out;
        }
    }
}

/// The fine counters alone, read at `t`, before the run's start.
fn fine_sample(
    s: &mut Session,
    q: &Queries,
    out: &mut Sampled,
    t: f64,
    own_base: u64,
) -> Result<(), pgrush_wire::Error> {
    let own = s.transactions - own_base;
    let r = s.query(&q.fine)?;
    out.readings
        .push(fine_reading(t, &r, own, s.own_flush.is_some()));
    Ok(())
}

/// One wait sample with the fine counters, taken at `t`.
fn wait_sample(
    s: &mut Session,
    q: &Queries,
    out: &mut Sampled,
    t: f64,
    periods: Periods,
    own_base: u64,
) -> Result<WaitSample, pgrush_wire::Error> {
    let own = s.transactions - own_base;
    let r = s.query(&q.waits_and_fine)?;
    let sample = WaitSample::parse(&r);
    out.readings.push(fine_reading(
        t,
        r.get(2..).unwrap_or_default(),
        own,
        s.own_flush.is_some(),
    ));
    let index = (t / periods.interval.as_secs_f64()) as usize;
    if out.interval_waits.len() <= index {
        out.interval_waits
            .resize_with(index + 1, WaitCounts::default);
    }
    out.interval_waits[index].add(&sample);
    out.waits.add(&sample);
    out.tracker.observe(t, periods.wait.as_secs_f64(), &sample);
    Ok(sample)
}

/// The fine counters read at `t`, less the sampler's own `own` transactions when its
/// statistics were flushed after each (they are then all counted already).
fn fine_reading(t: f64, results: &[QueryResult], own: u64, own_flushed: bool) -> FineReading {
    let (mut lagging, next_xid, wal_insert, other_samplers) = fine_counters(results);
    if own_flushed {
        lagging[COMMITS] = lagging[COMMITS].saturating_sub(own);
    }
    FineReading {
        t,
        lagging,
        next_xid,
        wal_insert,
        own_transactions: own,
        other_samplers,
    }
}

/// The interval counters, read at `t`.
fn coarse_sample(
    s: &mut Session,
    q: &Queries,
    out: &mut Sampled,
    t: f64,
) -> Result<(), pgrush_wire::Error> {
    let snap = Snapshot::parse(&s.query(&q.counters)?);
    if out.coarse.iter().all(|c| c.t < 0.0) {
        // The first reading was taken in the warm-up: the run's totals start here.
        out.first = snap.clone();
    }
    out.coarse.push(CoarseReading::of(t, &snap));
    out.last = snap;
    Ok(())
}

/// The end of sampling: waits (a while) for the benchmark's backends to exit, then
/// reads the fine and the interval counters once more.
fn finish(
    mut s: Session,
    q: &Queries,
    mut out: Sampled,
    own_base: u64,
    since: impl Fn(Instant) -> f64,
) -> Sampled {
    let deadline = Instant::now() + EXIT_WAIT;
    while Instant::now() < deadline {
        let left = s
            .query(&q.backends)
            .ok()
            .and_then(|r| r.first()?.get(0, 0)?.parse::<u64>().ok());
        if left.is_none_or(|n| n == 0) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // An exiting backend leaves pg_stat_activity just before it flushes.
    std::thread::sleep(Duration::from_millis(20));
    let t = since(Instant::now());
    let own = s.transactions - own_base;
    match s.query(&q.fine) {
        Ok(r) => out
            .readings
            .push(fine_reading(t, &r, own, s.own_flush.is_some())),
        Err(e) => {
            out.failure = Some(lost(t, &e));
            return out;
        }
    }
    if let Err(e) = coarse_sample(&mut s, q, &mut out, t) {
        out.failure = Some(lost(t, &e));
        return out;
    }
    out.conn = Some(s.conn);
    out
}

/// The warning for a connection lost at `t`.
fn lost(t: f64, e: &pgrush_wire::Error) -> String {
    format!(
        "server statistics: the sampling connection failed at {t:.1} s ({}); \
         the later intervals are missing",
        e.libpq_message(None).trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::next_on_grid;

    #[test]
    fn the_grid_starts_at_its_first_point_and_skips_what_was_missed() {
        // Before the lead: its first point.
        assert_eq!(next_on_grid(-5.0, 0.1, -2.0), -2.0);
        // In the lead, the next point after now (negative times included).
        assert!((next_on_grid(-1.95, 0.1, -2.0) - -1.9).abs() < 1e-9);
        // After a slow query, the next point after now, not the missed ones.
        assert!((next_on_grid(0.73, 0.1, -2.0) - 0.8).abs() < 1e-9);
        assert_eq!(next_on_grid(-0.5, 1.0, 0.0), 0.0);
        assert_eq!(next_on_grid(1.0, 1.0, 0.0), 2.0);
    }
}
