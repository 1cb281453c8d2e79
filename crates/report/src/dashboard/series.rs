//! The dashboard's intervals, bounded: at most [`LiveSeries::limit`] of them however
//! long the run. When the limit is reached, adjacent pairs merge into intervals twice
//! as long, and from then on each new second is merged into the last interval until it
//! is as long as the others: the page shows the whole run at one resolution, coarser as
//! the run grows, and memory and the `data.json` answers stay bounded.
//!
//! A page asks for the intervals from a cursor on. A merge renumbers them, so it starts
//! a new generation: a cursor of an older one gets everything again. The last interval,
//! while it still grows, stays ahead of the cursor: the page gets it again with each
//! answer and replaces its copy.

use std::collections::BTreeMap;

use super::interval::{LiveInterval, LiveLatency};
use crate::machine::MachineIntervalDoc;

/// How many intervals a dashboard keeps by default: an hour at one a second.
pub const DEFAULT_LIMIT: usize = 3600;

/// The intervals of a live run, at most `limit` of them.
#[derive(Debug, Clone)]
pub struct LiveSeries {
    intervals: Vec<LiveInterval>,
    limit: usize,
    /// How many closed seconds each interval holds once complete.
    width: u64,
    /// How many the last interval holds so far.
    last_parts: u64,
    generation: u64,
}

impl LiveSeries {
    /// An empty series keeping at most `limit` intervals (at least 2; an odd limit is
    /// rounded down, so that pairs merge evenly).
    pub fn new(limit: usize) -> LiveSeries {
        LiveSeries {
            intervals: Vec::new(),
            limit: (limit.max(2)) & !1,
            width: 1,
            last_parts: 0,
            generation: 0,
        }
    }

    /// The most intervals kept.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The intervals kept, oldest first.
    pub fn intervals(&self) -> &[LiveInterval] {
        &self.intervals
    }

    /// How many merges there have been: a cursor is only valid in its generation.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Adds the interval just closed.
    pub fn push(&mut self, interval: LiveInterval) {
        if self.last_parts < self.width
            && let Some(last) = self.intervals.last_mut()
        {
            last.absorb(interval);
            self.last_parts += 1;
            return;
        }
        if self.intervals.len() >= self.limit {
            self.merge_pairs();
        }
        self.intervals.push(interval);
        self.last_parts = 1;
    }

    /// Halves the intervals kept: every pair becomes one twice as long.
    fn merge_pairs(&mut self) {
        let old = std::mem::take(&mut self.intervals);
        let mut it = old.into_iter();
        while let Some(mut first) = it.next() {
            if let Some(second) = it.next() {
                first.absorb(second);
            }
            self.intervals.push(first);
        }
        self.width *= 2;
        self.last_parts = self.width;
        self.generation += 1;
    }

    /// Where an answer to a page whose cursor is `since` of `generation` starts: from
    /// the first interval for a cursor of another generation (or none).
    pub fn start(&self, since: usize, generation: Option<u64>) -> usize {
        if generation == Some(self.generation) {
            since.min(self.intervals.len())
        } else {
            0
        }
    }

    /// The cursor to ask from next: past the complete intervals, so that the last one
    /// is sent again while it still grows.
    pub fn next(&self) -> usize {
        if self.last_parts < self.width {
            // Only a started interval grows (`last_parts` is 0 while there is none).
            self.intervals.len().saturating_sub(1)
        } else {
            self.intervals.len()
        }
    }
}

/// `a` over `da` seconds followed by `b` over `db`: the average per second.
fn by_time(a: f64, da: f64, b: f64, db: f64) -> f64 {
    if da + db > 0.0 {
        (a * da + b * db) / (da + db)
    } else {
        0.0
    }
}

/// The average of `a` over `na` transactions and `b` over `nb`.
fn by_count(a: Option<f64>, na: u64, b: Option<f64>, nb: u64) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if na + nb > 0 => {
            Some((a * na as f64 + b * nb as f64) / (na + nb) as f64)
        }
        (Some(a), None) => Some(a),
        (None, b) => b,
        (Some(a), Some(_)) => Some(a),
    }
}

impl LiveInterval {
    /// This interval followed by `later`, as one: rates averaged over time, averages
    /// over transactions, the gauges (stage, clients, server) as at `later`'s end.
    pub fn absorb(&mut self, later: LiveInterval) {
        let (da, db) = (self.duration_s, later.duration_s);
        let (na, nb) = (self.transactions(), later.transactions());
        self.latency_ms = merge_latency(self.latency_ms, na, later.latency_ms, nb);
        self.script_avg_ms = (0..self.script_avg_ms.len().max(later.script_avg_ms.len()))
            .map(|s| {
                let n = |i: &LiveInterval| i.script_transactions.get(s).copied().unwrap_or(0);
                let avg = |i: &LiveInterval| i.script_avg_ms.get(s).copied().flatten();
                by_count(avg(self), n(self), avg(&later), n(&later))
            })
            .collect();
        let parts = self
            .script_transactions
            .len()
            .max(later.script_transactions.len());
        self.script_transactions = (0..parts)
            .map(|s| {
                let n = |v: &[u64]| v.get(s).copied().unwrap_or(0);
                n(&self.script_transactions) + n(&later.script_transactions)
            })
            .collect();
        self.tps = by_time(self.tps, da, later.tps, db);
        self.retries_per_s = by_time(self.retries_per_s, da, later.retries_per_s, db);
        self.skipped_per_s = by_time(self.skipped_per_s, da, later.skipped_per_s, db);
        let mut failures: BTreeMap<&'static str, f64> = BTreeMap::new();
        for (k, v) in &self.failures_per_s {
            *failures.entry(k).or_default() += v * da;
        }
        for (k, v) in &later.failures_per_s {
            *failures.entry(k).or_default() += v * db;
        }
        let whole = da + db;
        failures
            .values_mut()
            .for_each(|v| *v = if whole > 0.0 { *v / whole } else { 0.0 });
        self.failures_per_s = failures;
        self.machine = match (self.machine.take(), later.machine) {
            (Some(a), Some(b)) => Some(merge_machine(&a, &b)),
            (a, b) => b.or(a),
        };
        // The server's values are its latest: the later interval's, where it has any.
        self.server = later.server.or(self.server.take());
        self.t_s = later.t_s;
        self.duration_s = da + db;
        self.stage = later.stage;
        self.clients_connected = later.clients_connected;
    }

    /// The successful transactions over the interval.
    fn transactions(&self) -> u64 {
        self.script_transactions.iter().sum()
    }
}

/// The latency of two intervals as one. The average is exact (weighted by the
/// transactions); the percentiles are the higher of the two bucket bounds: exact for
/// the maximum, and for p50, p90 and p99 an upper bound (a quantile of the whole lies
/// between the two intervals' quantiles), like the bucket bounds themselves.
fn merge_latency(
    a: Option<LiveLatency>,
    na: u64,
    b: Option<LiveLatency>,
    nb: u64,
) -> Option<LiveLatency> {
    match (a, b) {
        (Some(a), Some(b)) => Some(LiveLatency {
            average: by_count(Some(a.average), na, Some(b.average), nb).unwrap_or(a.average),
            p50: a.p50.max(b.p50),
            p90: a.p90.max(b.p90),
            p99: a.p99.max(b.p99),
            max: a.max.max(b.max),
        }),
        (a, b) => b.or(a),
    }
}

/// The machine's load over two adjacent intervals: shares and rates averaged over
/// time, the run queue at the end, and the busiest core the busier of the two (an
/// upper bound: a core saturated in either half stays visible).
fn merge_machine(a: &MachineIntervalDoc, b: &MachineIntervalDoc) -> MachineIntervalDoc {
    let (da, db) = (a.duration_s, b.duration_s);
    let t = |x: f64, y: f64| by_time(x, da, y, db);
    MachineIntervalDoc {
        start_s: a.start_s,
        duration_s: da + db,
        cpu_user_pct: t(a.cpu_user_pct, b.cpu_user_pct),
        cpu_system_pct: t(a.cpu_system_pct, b.cpu_system_pct),
        cpu_iowait_pct: t(a.cpu_iowait_pct, b.cpu_iowait_pct),
        cpu_steal_pct: t(a.cpu_steal_pct, b.cpu_steal_pct),
        busiest_core_pct: a.busiest_core_pct.max(b.busiest_core_pct),
        run_queue: b.run_queue,
        context_switches_per_s: t(a.context_switches_per_s, b.context_switches_per_s),
        net_in_bytes_per_s: t(a.net_in_bytes_per_s, b.net_in_bytes_per_s),
        net_out_bytes_per_s: t(a.net_out_bytes_per_s, b.net_out_bytes_per_s),
        loopback_bytes_per_s: t(a.loopback_bytes_per_s, b.loopback_bytes_per_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::{LivePageInfo, data_json};
    use pgrush_stats::live::{LiveShape, LiveTotals};

    /// One second with `n` successful transactions of script 1 at 8 µs, and a failure
    /// every other second, ending at `t_s`.
    fn second(n: u64, t_s: f64) -> LiveInterval {
        let shape = LiveShape {
            scripts: 2,
            stages: 0,
            throttled: false,
        };
        let mut t = LiveTotals::new(shape);
        let c = &mut t.cells[shape.cell(1, 1)];
        c.counters.successful = n;
        c.counters.deadlock_failures = (t_s as u64) % 2;
        c.latency.counts[0] = n;
        c.latency.sum_us = n as f64 * 8.0;
        LiveInterval::from_cells(&t, t_s, 1.0)
    }

    #[test]
    fn a_long_run_stays_within_the_limit_and_keeps_its_totals() {
        let mut series = LiveSeries::new(DEFAULT_LIMIT);
        let (mut transactions, mut failures) = (0u64, 0u64);
        for i in 1..=10_000u64 {
            let n = i % 7 + 1;
            transactions += n;
            failures += i % 2;
            series.push(second(n, i as f64));
            assert!(series.intervals().len() <= DEFAULT_LIMIT, "at {i}");
        }
        let kept = series.intervals();
        // 3600 seconds, then 1800 of 2 s to 7200, then 4 s each: 1800 + 700.
        assert_eq!((kept.len(), series.generation()), (2500, 2));
        let sum = |f: &dyn Fn(&LiveInterval) -> f64| kept.iter().map(f).sum::<f64>();
        let tx = sum(&|i| i.tps * i.duration_s);
        assert!(
            (tx - transactions as f64).abs() < 1e-6,
            "{tx} vs {transactions}"
        );
        let failed = sum(&|i| i.failures_per_s["deadlock"] * i.duration_s);
        assert!(
            (failed - failures as f64).abs() < 1e-6,
            "{failed} vs {failures}"
        );
        assert_eq!(
            kept.iter().map(|i| i.transactions()).sum::<u64>(),
            transactions
        );
        // The whole run, without gaps, at one resolution.
        assert_eq!(kept[0].t_s - kept[0].duration_s, 0.0);
        assert_eq!(kept[kept.len() - 1].t_s, 10_000.0);
        assert!(
            kept.windows(2)
                .all(|w| w[1].t_s - w[1].duration_s == w[0].t_s)
        );
        assert!(kept.iter().all(|i| i.duration_s == 4.0));
        let l = kept[10].latency_ms.expect("latency");
        assert_eq!((l.average, l.p99, l.max), (0.008, 0.01, 0.01));
        assert_eq!(kept[10].script_avg_ms, vec![None, Some(0.008)]);
    }

    #[test]
    fn a_cursor_from_before_a_merge_gets_everything_again() {
        let mut series = LiveSeries::new(4);
        // Before the first interval: nothing to send, from the start.
        assert_eq!((series.next(), series.start(3, Some(0))), (0, 0));
        (1..=4).for_each(|t| series.push(second(10, t as f64)));
        let (cursor, generation) = (series.next(), series.generation());
        assert_eq!((cursor, series.start(cursor, Some(generation))), (4, 4));
        series.push(second(10, 5.0));
        // Merged into 2 s intervals; the fifth second opened the third, still growing.
        assert_eq!(series.intervals().len(), 3);
        assert_eq!(series.start(cursor, Some(generation)), 0);
        assert_eq!(series.start(cursor, None), 0);
        assert_eq!(series.next(), 2);
        let scripts = vec!["a".to_string(), "b".to_string()];
        let info = LivePageInfo {
            command_line: "pgrush",
            scripts: &scripts,
        };
        let answer = data_json(
            &info,
            &series,
            series.start(cursor, Some(generation)),
            false,
        );
        let v: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
        assert_eq!(
            (v["first"].as_u64(), v["next"].as_u64()),
            (Some(0), Some(2))
        );
        assert_eq!(v["generation"], 1);
        assert_eq!(v["intervals"].as_array().map(Vec::len), Some(3));
        // The growing interval is sent again until it is complete.
        series.push(second(10, 6.0));
        assert_eq!((series.next(), series.intervals()[2].duration_s), (3, 2.0));
    }
}
