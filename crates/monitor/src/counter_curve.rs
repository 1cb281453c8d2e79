//! The server's cumulative counters rebuilt at the client's interval edges.
//!
//! Since PostgreSQL 15 a backend adds its pending statistics to the shared counters
//! only when it goes idle and at least a second has passed since its last flush (and
//! not at all while it waits on a lock), so `pg_stat_database` and `pg_stat_wal` lag
//! the truth by up to a second, in per-backend bursts. The sampler reads them every
//! wait period together with two live positions: the next transaction id
//! (`pg_snapshot_xmax(pg_current_snapshot())`) and the WAL insert position.
//!
//! The counters are rebuilt in two steps. First the transactions (commits and
//! rollbacks): when the transactions write (at least half as many ids were assigned
//! as transactions ended over the run), the count at `t` is the live count of ids
//! assigned by `t` times the run's transactions per id, and at least what the server
//! had counted by `t` (no upper bound from the next *corner*, a reading where the count
//! stepped: another session's flush makes corners that do not carry the benchmark's
//! pending counts); otherwise each step is spread evenly over the time its transactions
//! were made ([`StepWindow`]): the flush period before it for connections that stay
//! (a backend's flush carries its last second; spreading steps only back to the
//! previous corner would count every step as if it were made just before it, half a
//! second late on average when many backends flush at their own times), or back to the
//! previous corner where each backend flushes as it exits (`-C`). A step no larger than
//! two transactions per other sampler connected (other shards' samplers flush their
//! own transactions every wait period) makes no corner. The first corner is the first
//! reading, the last the final reading, taken after the clients' backends exited (and
//! flushed). Then
//! every lagging counter is read at the same point of the flushes: interpolated
//! between the corners around that transaction count (a backend's flush carries all
//! its counters together). WAL bytes come from the live insert position alone.

/// How many lagging counters a reading holds: the 12 of `pg_stat_database`, then WAL
/// records and full-page images.
pub const LAGGING: usize = 14;

/// Index of `xact_commit` among the lagging counters.
pub const COMMITS: usize = 0;
/// Index of `xact_rollback` among the lagging counters.
pub const ROLLBACKS: usize = 1;

/// One fine reading of the counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FineReading {
    /// Seconds from the run's start.
    pub t: f64,
    /// The lagging cumulative counters.
    pub lagging: [u64; LAGGING],
    /// The next transaction id to be assigned (live).
    pub next_xid: u64,
    /// The WAL insert position in bytes (live); 0 where it cannot be read (a standby).
    pub wal_insert: u64,
    /// The sampler's own transactions before this reading (each is a commit too).
    pub own_transactions: u64,
    /// Other samplers connected (other shards'): each commits a transaction, counted
    /// at once, every wait period.
    pub other_samplers: u64,
}

/// `field` of the readings, linearly interpolated at `t` (clamped to the ends).
fn live_at(readings: &[FineReading], t: f64, field: impl Fn(&FineReading) -> u64) -> f64 {
    let after = readings.partition_point(|r| r.t <= t);
    match (
        after.checked_sub(1).map(|i| &readings[i]),
        readings.get(after),
    ) {
        (None, Some(first)) => field(first) as f64,
        (Some(last), None) => field(last) as f64,
        (Some(a), Some(b)) => {
            let (va, vb) = (field(a) as f64, field(b) as f64);
            let span = b.t - a.t;
            if span <= 0.0 {
                vb
            } else {
                va + (vb - va) * (t - a.t) / span
            }
        }
        (None, None) => 0.0,
    }
}

/// The WAL insert position at each of `edges` (sorted), `None` when it was not read.
pub fn wal_insert_at(readings: &[FineReading], edges: &[f64]) -> Option<Vec<f64>> {
    if readings.is_empty() || readings.iter().all(|r| r.wal_insert == 0) {
        return None;
    }
    Some(
        edges
            .iter()
            .map(|&e| live_at(readings, e, |r| r.wal_insert))
            .collect(),
    )
}

/// The sampler's own transactions before each of `edges`.
pub fn own_transactions_at(readings: &[FineReading], edges: &[f64]) -> Vec<f64> {
    edges
        .iter()
        .map(|&e| live_at(readings, e, |r| r.own_transactions))
        .collect()
}

/// Over what time before it a step of the transaction count was made (the read-only
/// case, where no live signal places it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepWindow {
    /// The backends stay connected and flush at most once every this many seconds:
    /// a step holds the transactions of the flush period before it.
    FlushPeriod(f64),
    /// Each backend flushes as it exits after one transaction (`-C`): a step holds
    /// the transactions since the previous corner.
    SincePreviousCorner,
}

/// The transactions (commits and rollbacks) a reading counts.
fn transactions(r: &FineReading) -> u64 {
    r.lagging[COMMITS] + r.lagging[ROLLBACKS]
}

/// Transactions per transaction id over the readings, when the transactions write
/// (at least half as many ids were assigned as transactions ended).
fn per_id(readings: &[FineReading]) -> Option<f64> {
    let (first, last) = (readings.first()?, readings.last()?);
    let ids = last.next_xid.saturating_sub(first.next_xid);
    let done = transactions(last).saturating_sub(transactions(first));
    (ids > 0 && ids.saturating_mul(2) >= done).then(|| done as f64 / ids as f64)
}

/// The transaction count at `t`: from the live transaction ids when the transactions
/// write, at least what the server had counted by `t`; else each step spread over its
/// window.
fn transactions_at(
    readings: &[FineReading],
    corners: &[usize],
    (per_id, window): (Option<f64>, StepWindow),
    t: f64,
) -> f64 {
    let first = &readings[corners[0]];
    let k = corners.partition_point(|&i| readings[i].t <= t);
    let before = &readings[corners[k.saturating_sub(1)]];
    if k == corners.len() {
        return transactions(before) as f64;
    }
    match per_id {
        Some(r) => {
            let ids = live_at(readings, t, |r| r.next_xid) - first.next_xid as f64;
            (transactions(first) as f64 + r * ids).max(transactions(before) as f64)
        }
        None => spread_steps_at(readings, corners, window, t),
    }
}

/// The transaction count at `t` with every step between corners spread evenly over
/// its [`StepWindow`] (never before the first reading). Only the steps seen after `t`
/// whose windows begin before it are visited: a flush period's worth of readings.
fn spread_steps_at(readings: &[FineReading], corners: &[usize], window: StepWindow, t: f64) -> f64 {
    let first = &readings[corners[0]];
    let k = corners.partition_point(|&i| readings[i].t <= t);
    let Some(seen) = k.checked_sub(1) else {
        return transactions(first) as f64;
    };
    let mut done = transactions(&readings[corners[seen]]) as f64;
    for pair in corners[seen..].windows(2) {
        let (a, b) = (&readings[pair[0]], &readings[pair[1]]);
        let from = match window {
            StepWindow::FlushPeriod(p) => (b.t - p).max(first.t),
            StepWindow::SincePreviousCorner => a.t,
        };
        if from >= t {
            break;
        }
        let step = transactions(b).saturating_sub(transactions(a)) as f64;
        done += step * ((t - from) / (b.t - from)).min(1.0);
    }
    done
}

/// Each lagging counter rebuilt at each of `edges` (sorted ascending): the
/// transactions first ([`transactions_at`]), then every counter at the same point of
/// its flushes, interpolated between corners by the transaction count (a backend's
/// flush carries all its counters together).
pub fn lagging_at(
    readings: &[FineReading],
    edges: &[f64],
    window: StepWindow,
) -> Vec<[f64; LAGGING]> {
    let mut out = vec![[0.0; LAGGING]; edges.len()];
    let Some(last) = readings.len().checked_sub(1) else {
        return out;
    };
    // A step no larger than the other samplers' own transactions (two per wait period
    // each, at most) is theirs, not a flush of the benchmark's backends.
    let corners: Vec<usize> = (0..=last)
        .filter(|&i| {
            i == 0
                || i == last
                || transactions(&readings[i]).saturating_sub(transactions(&readings[i - 1]))
                    > 2 * readings[i].other_samplers
        })
        .collect();
    let per_id = per_id(readings);
    for (j, &e) in edges.iter().enumerate() {
        let done = transactions_at(readings, &corners, (per_id, window), e);
        let k = corners.partition_point(|&i| (transactions(&readings[i]) as f64) < done);
        let b = &readings[corners[k.min(corners.len() - 1)]];
        let a = &readings[corners[k.saturating_sub(1)]];
        let (ta, tb) = (transactions(a) as f64, transactions(b) as f64);
        let share = if tb > ta {
            ((done - ta) / (tb - ta)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        for ((v, &va), &vb) in out[j].iter_mut().zip(&a.lagging).zip(&b.lagging) {
            *v = va as f64 + (vb as f64 - va as f64).max(0.0) * share;
        }
        let tx = out[j][COMMITS] + out[j][ROLLBACKS];
        if tx > 0.0 {
            // Commits and rollbacks add up to the transactions exactly.
            let scale = done / tx;
            out[j][COMMITS] *= scale;
            out[j][ROLLBACKS] *= scale;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(t: f64, commits: u64, next_xid: u64) -> FineReading {
        let mut lagging = [0; LAGGING];
        lagging[COMMITS] = commits;
        FineReading {
            t,
            lagging,
            next_xid,
            wal_insert: next_xid * 100,
            own_transactions: 0,
            other_samplers: 0,
        }
    }

    /// 100 tps of writing transactions, flushed at 1.05 s, 2.05 s..., a lock from
    /// 2.0 s to 3.0 s: the flush after the lock (3.05 s) carries the commits made
    /// from 1.05 s to 2.0 s, and the rebuilt counters put them there (a lone commit
    /// of another session, counted at 2.0 s, makes a corner in between).
    #[test]
    fn a_stall_is_placed_by_the_live_transaction_ids() {
        let truth = |t: f64| -> f64 {
            if t < 2.0 {
                100.0 * t
            } else if t < 3.0 {
                200.0
            } else {
                200.0 + 100.0 * (t - 3.0)
            }
        };
        let flushes = [0.0, 1.05, 3.05, 4.05];
        let readings: Vec<FineReading> = (0..=50)
            .map(|i| {
                let t = f64::from(i) / 10.0;
                let flushed = flushes
                    .iter()
                    .rev()
                    .find(|&&f| f <= t)
                    .copied()
                    .unwrap_or(0.0);
                let commits = if i == 50 { truth(t) } else { truth(flushed) };
                // Another session commits one transaction at 2 s, counted at once.
                let other = u64::from(t >= 2.0);
                reading(t, commits as u64 + other, truth(t) as u64 + other)
            })
            .collect();
        let edges: Vec<f64> = (0..=5).map(f64::from).collect();
        let at = lagging_at(&readings, &edges, StepWindow::FlushPeriod(1.0));
        let per_second: Vec<f64> = at
            .windows(2)
            .map(|w| w[1][COMMITS] - w[0][COMMITS])
            .collect();
        let expected = [100.0, 100.0, 0.0, 100.0, 100.0];
        for (got, want) in per_second.iter().zip(expected) {
            assert!((got - want).abs() <= 10.0, "{per_second:?}");
        }
        let wal = wal_insert_at(&readings, &edges).expect("wal");
        assert_eq!(wal[1] - wal[0], 10_000.0);
    }

    /// Another shard's sampler commits one transaction a reading, counted at once:
    /// its steps make no corners, so a read-only run's flush at 1.05 s (100
    /// transactions since 0 s) is still spread over the second before it.
    #[test]
    fn other_samplers_make_no_corners() {
        let readings: Vec<FineReading> = (0..=20)
            .map(|i| {
                let t = f64::from(i) / 10.0;
                let flushed = if t >= 1.05 { 100 } else { 0 };
                FineReading {
                    other_samplers: 1,
                    ..reading(t, i as u64 + flushed, 7)
                }
            })
            .collect();
        let at = lagging_at(&readings, &[0.0, 0.5, 1.1], StepWindow::SincePreviousCorner);
        // Evenly from (0 s, 0) to the corner (1.1 s, 111).
        assert!((at[1][COMMITS] - 111.0 * 0.5 / 1.1).abs() < 1e-9, "{at:?}");
        assert_eq!(at[2][COMMITS], 111.0);
    }

    /// Read-only transactions assign no ids: with `-C` a step is spread evenly back to
    /// the previous corner, else over the flush period before it.
    #[test]
    fn without_writes_steps_are_spread_over_time() {
        let readings = vec![reading(0.0, 0, 7), reading(1.0, 0, 7), reading(2.0, 200, 7)];
        let at = lagging_at(&readings, &[0.0, 1.5, 2.0], StepWindow::SincePreviousCorner);
        assert_eq!(at[0][COMMITS], 0.0);
        assert_eq!(at[1][COMMITS], 150.0);
        assert_eq!(at[2][COMMITS], 200.0);
        let at = lagging_at(&readings, &[0.0, 1.5, 2.0], StepWindow::FlushPeriod(1.0));
        assert_eq!(at[1][COMMITS], 100.0);
        assert_eq!(at[2][COMMITS], 200.0);
        assert!(wal_insert_at(&[reading(0.0, 0, 0)], &[0.0]).is_none());
    }

    /// Ten read-only backends of 10 tps each flush once a second, each at its own
    /// phase; readings every 100 ms. The count at each edge is within a transaction
    /// or two of the truth. Spreading each step back to the previous corner (another
    /// backend's flush 100 ms earlier) counted every edge half a second late: 50
    /// transactions.
    #[test]
    fn backends_flushing_at_their_own_times_are_placed_by_the_flush_period() {
        let (backends, rate) = (10u32, 10.0);
        let phase = |b: u32| f64::from(b) / f64::from(backends);
        // Backend b flushes at phase(b) + k; what it made by t is rate * t.
        let flushed = |t: f64| -> f64 {
            (0..backends)
                .map(|b| {
                    let last = ((t - phase(b)) / 1.0).floor() + phase(b);
                    (rate * last.max(0.0)).floor()
                })
                .sum()
        };
        let end = 6.0;
        let mut readings: Vec<FineReading> = (0..60)
            .map(|i| {
                let t = f64::from(i) / 10.0 + 0.05;
                reading(t - 0.05, flushed(t) as u64, 7)
            })
            .collect();
        // The final reading follows every backend's exit flush.
        let total = f64::from(backends) * rate * end;
        readings.push(reading(end, total as u64, 7));
        let edges = [2.0, 3.0, 4.0, 5.0, end];
        let truth = |t: f64| f64::from(backends) * rate * t;
        let placed = lagging_at(&readings, &edges, StepWindow::FlushPeriod(1.0));
        for (e, at) in edges.iter().zip(&placed) {
            assert!((at[COMMITS] - truth(*e)).abs() <= 6.0, "{e}: {placed:?}");
        }
        let late = lagging_at(&readings, &edges, StepWindow::SincePreviousCorner);
        assert!(truth(2.0) - late[0][COMMITS] >= 40.0, "{late:?}");
    }

    /// Two backends started together flush together: each step holds the second
    /// before it, whichever window is used.
    #[test]
    fn backends_flushing_together_are_placed_either_way() {
        // Flushes at 0.1, 1.1, 2.1 s of 20 transactions a second in all.
        let readings: Vec<FineReading> = (0..=30)
            .map(|i| {
                let t = f64::from(i) / 10.0;
                let last = ((t - 0.1) / 1.0).floor() + 0.1;
                let c = if i == 30 { 60.0 } else { 20.0 * last.max(0.0) };
                reading(t, c.round() as u64, 7)
            })
            .collect();
        for window in [
            StepWindow::FlushPeriod(1.0),
            StepWindow::SincePreviousCorner,
        ] {
            let at = lagging_at(&readings, &[0.6, 1.6], window);
            assert!((at[0][COMMITS] - 12.0).abs() < 1e-9, "{window:?} {at:?}");
            assert!((at[1][COMMITS] - 32.0).abs() < 1e-9, "{window:?} {at:?}");
        }
    }
}
