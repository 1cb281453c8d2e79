//! The timeline's intervals: edges at `k * interval` from the run's start (the
//! client's interval edges), the lagging counters rebuilt at those edges
//! ([`crate::counter_curve`]), WAL bytes from the live insert position, the interval
//! counters from the readings nearest each edge, the wait samples by interval.

use pgrush_stats::server::{DatabaseActivity, ServerInterval};

use crate::counter_curve::{LAGGING, StepWindow, lagging_at, wal_insert_at};
use crate::sampler::{CoarseReading, Sampled};
use crate::snapshot::{database_delta, database_from_array, io_delta};
use crate::waits::WaitCounts;

/// The edges from 0 to `end_s`: every `interval_s`, the last one moved to `end_s`
/// (a tail shorter than half an interval joins the last interval).
pub fn edges(interval_s: f64, end_s: f64) -> Vec<f64> {
    let mut out = vec![0.0];
    if interval_s <= 0.0 || end_s <= 0.0 {
        return out;
    }
    let mut k = 1u32;
    while f64::from(k) * interval_s <= end_s {
        out.push(f64::from(k) * interval_s);
        k += 1;
    }
    let tail = end_s - out[out.len() - 1];
    if out.len() > 1 && tail < interval_s / 2.0 {
        out.pop();
    }
    if end_s > out[out.len() - 1] {
        out.push(end_s);
    }
    out
}

/// The coarse reading taken nearest `t`.
fn nearest(coarse: &[CoarseReading], t: f64) -> CoarseReading {
    coarse
        .iter()
        .min_by(|a, b| (a.t - t).abs().total_cmp(&(b.t - t).abs()))
        .cloned()
        .unwrap_or_default()
}

/// The database counters rebuilt at an edge (rounded).
fn database_at(lagging: &[f64; LAGGING]) -> DatabaseActivity {
    let mut a = [0u64; 12];
    for (v, l) in a.iter_mut().zip(lagging) {
        *v = l.round().max(0.0) as u64;
    }
    database_from_array(&a)
}

/// The intervals of `s`, sampled every `interval_s`, and the database totals; `window`
/// says how the read-only transaction count's steps are placed in time.
pub fn build(
    s: &Sampled,
    interval_s: f64,
    window: StepWindow,
) -> (Vec<ServerInterval>, DatabaseActivity) {
    let Some(end) = s.readings.last().map(|r| r.t) else {
        return (Vec::new(), DatabaseActivity::default());
    };
    let edges = edges(interval_s, end);
    let lagging = lagging_at(&s.readings, &edges, window);
    let wal = wal_insert_at(&s.readings, &edges);
    let coarse: Vec<CoarseReading> = edges.iter().map(|&e| nearest(&s.coarse, e)).collect();
    let round = |v: f64| v.round().max(0.0) as u64;
    let mut intervals = Vec::with_capacity(edges.len().saturating_sub(1));
    for i in 0..edges.len().saturating_sub(1) {
        let (a, b) = (i, i + 1);
        let waits = interval_waits(&s.interval_waits, i, edges.len() - 1);
        let (before, after) = (&coarse[a], &coarse[b]);
        let lag_delta = |c: usize| round(lagging[b][c]).saturating_sub(round(lagging[a][c]));
        intervals.push(ServerInterval {
            start_s: edges[a],
            duration_s: edges[b] - edges[a],
            waits: waits.shares(),
            database: database_delta(&database_at(&lagging[b]), &database_at(&lagging[a])),
            wal_records: lag_delta(12),
            wal_fpi: lag_delta(13),
            wal_bytes: match &wal {
                Some(w) => round(w[b]).saturating_sub(round(w[a])),
                None => after.wal[2].saturating_sub(before.wal[2]),
            },
            checkpoints: after.checkpoints[0].saturating_sub(before.checkpoints[0]),
            checkpoint_buffers: after.checkpoints[1].saturating_sub(before.checkpoints[1]),
            io: io_delta(&after.io, &before.io),
            lock_waits: waits.locks.clone(),
        });
    }
    let last = lagging.len() - 1;
    let total = database_delta(&database_at(&lagging[last]), &database_at(&lagging[0]));
    (intervals, total)
}

/// The wait samples of interval `i` of `count` (the last one takes all later samples:
/// the joined tail and the final moments).
fn interval_waits(by_interval: &[WaitCounts], i: usize, count: usize) -> WaitCounts {
    let mut w = by_interval.get(i).cloned().unwrap_or_default();
    if i + 1 == count {
        for later in by_interval.iter().skip(i + 1) {
            w.merge(later);
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_follow_the_interval_and_join_a_short_tail() {
        assert_eq!(edges(1.0, 5.03), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.03]);
        assert_eq!(edges(1.0, 4.7), vec![0.0, 1.0, 2.0, 3.0, 4.0, 4.7]);
        assert_eq!(edges(1.0, 0.3), vec![0.0, 0.3]);
        assert_eq!(edges(1.0, 1.2), vec![0.0, 1.2]);
    }
}
