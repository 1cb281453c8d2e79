//! Per-interval statistics (the run document's time series): counters, latency and lag sums and a
//! latency histogram for every interval of the run (each second, or each `-P` interval).
//!
//! Each worker thread owns a [`TimeSeries`] (inside its [`crate::ThreadStats`], see
//! [`crate::ThreadStats::with_series`]) and records every finished transaction with the
//! instant it ended ([`crate::ThreadStats::record_tx_at`]). Recording into the current
//! interval never allocates; closing an interval (at most once per interval) stores its
//! histogram in sparse form at 2 significant digits (compact: a one-hour run keeps 3600
//! of them per thread). Threads are merged interval by interval.
//!
//! With several scripts, and with `-r`, each interval also keeps per-script and
//! per-command figures (see `series_parts`): only for the scripts and commands that ran in
//! it.

use crate::coarse::{COARSE_BUCKETS, SparseHistogram, coarse_index, coarse_index_value};
use crate::counters::{TxCounters, TxOutcome, TxRecord};
use crate::histogram::saturating_u64;
use crate::series_parts::{CommandInterval, Part, PartsRecorder, ScriptInterval, merge_parts};
use crate::simple::SimpleStats;
use serde::Serialize;
use std::borrow::Cow;

/// What happened during one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IntervalStats {
    /// Transactions that ended in the interval, by outcome, with retries.
    pub counters: TxCounters,
    /// Latencies (µs) of the successful ones.
    pub latency: SimpleStats,
    /// Schedule lag (µs) of the successful ones (`-R` only).
    pub lag: SimpleStats,
    /// Latency histogram of the successful ones.
    pub latency_hist: SparseHistogram,
    /// Per script, by script index: the scripts that ended a transaction in the interval
    /// (kept with several scripts; empty otherwise, the interval's own figures being the
    /// only script's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<ScriptInterval>,
    /// Per command (`-r`), by script and command index: the commands that ran or failed
    /// in the interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandInterval>,
}

impl IntervalStats {
    /// Adds `other` to `self`.
    pub fn merge(&mut self, other: &IntervalStats) {
        self.counters += &other.counters;
        self.latency += &other.latency;
        self.lag += &other.lag;
        self.latency_hist.merge(&other.latency_hist);
        merge_parts(&mut self.scripts, &other.scripts);
        merge_parts(&mut self.commands, &other.commands);
    }

    /// Adds per-script and per-command figures (sorted lists) to `self`'s.
    fn absorb_parts(&mut self, scripts: Vec<ScriptInterval>, commands: Vec<CommandInterval>) {
        fn absorb<T: Part>(mine: &mut Vec<T>, theirs: Vec<T>) {
            if mine.is_empty() {
                *mine = theirs;
            } else {
                merge_parts(mine, &theirs);
            }
        }
        absorb(&mut self.scripts, scripts);
        absorb(&mut self.commands, commands);
    }
}

/// The current interval's latency histogram, directly at [`crate::INTERVAL_SIGFIG`] digits: a
/// small counts array (13.5 KiB, allocated on the first value). Recording is one
/// increment; closing an interval (once a second or once per `-P` interval) reads and
/// clears the whole array, which costs less than keeping the touched range on every
/// record would.
#[derive(Debug, Clone, Default)]
struct CoarseCounts {
    counts: Vec<u32>,
}

impl CoarseCounts {
    #[inline]
    fn record_us(&mut self, value_us: f64) {
        // `coarse_index` clamps what lies past the range.
        let i = coarse_index(saturating_u64(value_us));
        match self.counts.get_mut(i) {
            Some(c) => *c = c.saturating_add(1),
            None => self.first_value(i),
        }
    }

    /// Allocates the counts, with the first value at `i` (always in range:
    /// `coarse_index` clamps).
    #[cold]
    fn first_value(&mut self, i: usize) {
        self.counts = vec![0; COARSE_BUCKETS];
        if let Some(c) = self.counts.get_mut(i) {
            *c = 1;
        }
    }

    fn to_sparse(&self) -> SparseHistogram {
        let buckets = self
            .counts
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(i, &c)| {
                let value = coarse_index_value(i);
                (u32::try_from(value).unwrap_or(u32::MAX), c)
            })
            .collect();
        SparseHistogram { buckets }
    }

    fn clear(&mut self) {
        self.counts.fill(0);
    }
}

/// The interval being filled: counters plus a coarse histogram, and its time bounds so
/// that most records skip the division that finds the interval.
#[derive(Debug, Clone, Default)]
struct Active {
    index: usize,
    start_us: i64,
    end_us: i64,
    counters: TxCounters,
    latency: SimpleStats,
    lag: SimpleStats,
    hist: CoarseCounts,
}

impl Active {
    fn snapshot(&self) -> IntervalStats {
        IntervalStats {
            counters: self.counters,
            latency: self.latency,
            lag: self.lag,
            latency_hist: self.hist.to_sparse(),
            ..IntervalStats::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.counters.total() == 0
    }
}

/// Statistics per interval, from the series origin (the engine's run start) on.
///
/// `intervals[i]` covers `[origin + i·interval, origin + (i+1)·interval)`; the last one
/// may be partial (the run ended inside it).
#[derive(Debug, Clone, Serialize)]
pub struct TimeSeries {
    /// Interval length in µs.
    pub interval_us: u64,
    /// Origin of the intervals (engine clock, µs).
    #[serde(skip)]
    pub origin_us: i64,
    /// Whether schedule lag is recorded (`-R`).
    pub throttled: bool,
    closed: Vec<IntervalStats>,
    #[serde(skip)]
    active: Option<Active>,
    /// Per-script and per-command figures of the active interval, when kept.
    #[serde(skip)]
    parts: Option<Box<PartsRecorder>>,
}

impl TimeSeries {
    /// An empty series of `interval_us`-long intervals (at least 1 µs) starting at `origin_us`.
    pub fn new(origin_us: i64, interval_us: u64, throttled: bool) -> Self {
        TimeSeries {
            interval_us: interval_us.max(1),
            origin_us,
            throttled,
            closed: Vec::new(),
            active: None,
            parts: None,
        }
    }

    /// Also keeps, in each interval, per-script figures (when `per_script`) and the
    /// figures of every command that ran (when `per_command`; record them with
    /// [`TimeSeries::record_command`]) of scripts of `commands_per_script` commands.
    pub fn with_parts(
        mut self,
        per_script: bool,
        commands_per_script: &[usize],
        per_command: bool,
    ) -> Self {
        let parts = PartsRecorder::new(per_script, commands_per_script, per_command);
        self.parts = parts.is_enabled().then(|| Box::new(parts));
        self
    }

    /// Whether per-script or per-command figures are kept.
    pub fn has_parts(&self) -> bool {
        self.parts.is_some()
    }

    /// Whether per-command figures are kept.
    #[inline]
    pub fn keeps_commands(&self) -> bool {
        self.parts.as_ref().is_some_and(|p| p.keeps_commands())
    }

    /// A finished series made of `intervals` (e.g. read back from a saved run, to be merged
    /// with others): `intervals[i]` covers `[origin + i·interval, origin + (i+1)·interval)`.
    pub fn from_intervals(
        origin_us: i64,
        interval_us: u64,
        throttled: bool,
        intervals: Vec<IntervalStats>,
    ) -> Self {
        TimeSeries {
            closed: intervals,
            ..TimeSeries::new(origin_us, interval_us, throttled)
        }
    }

    fn index_of(&self, now_us: i64) -> usize {
        let since = now_us.saturating_sub(self.origin_us).max(0) as u64;
        usize::try_from(since / self.interval_us).unwrap_or(usize::MAX)
    }

    fn close_active(&mut self) {
        if let Some(active) = self.active.as_mut() {
            if active.index >= self.closed.len() {
                self.closed
                    .resize(active.index + 1, IntervalStats::default());
            }
            if !active.is_empty() {
                let snap = active.snapshot();
                self.closed[active.index].merge(&snap);
            }
            if let Some(parts) = self.parts.as_mut().filter(|p| !p.is_empty()) {
                let (scripts, commands) = parts.take();
                self.closed[active.index].absorb_parts(scripts, commands);
            }
            active.counters = TxCounters::default();
            active.latency = SimpleStats::default();
            active.lag = SimpleStats::default();
            active.hist.clear();
        }
    }

    /// Makes the interval containing `now_us` the active one.
    #[cold]
    fn switch_to(&mut self, now_us: i64) {
        self.close_active();
        let index = self.index_of(now_us);
        let a = self.active.get_or_insert_with(Active::default);
        a.index = index;
        // Bounds of the interval (an instant before the origin belongs to interval 0;
        // saturating: a huge index only loses the fast path).
        let len = i64::try_from(self.interval_us).unwrap_or(i64::MAX);
        let start = i64::try_from(index)
            .unwrap_or(i64::MAX)
            .saturating_mul(len)
            .saturating_add(self.origin_us);
        a.start_us = if index == 0 { i64::MIN } else { start };
        a.end_us = start.saturating_add(len);
    }

    /// Makes sure the active interval is the one containing `now_us`.
    #[inline]
    fn enter(&mut self, now_us: i64) {
        let current = matches!(&self.active, Some(a) if a.start_us <= now_us && now_us < a.end_us);
        if !current {
            self.switch_to(now_us);
        }
    }

    /// Records one finished transaction that ended at `now_us` (engine clock).
    /// Allocates only when a new interval starts (and, with per-script figures, when a
    /// script's counts window grows: a few times per script).
    #[inline]
    pub fn record(&mut self, rec: &TxRecord, now_us: i64) {
        self.enter(now_us);
        if let Some(parts) = self.parts.as_mut() {
            parts.record_tx(rec);
        }
        let throttled = self.throttled;
        let Some(a) = self.active.as_mut() else {
            return;
        };
        a.counters.count(rec.outcome, rec.tries);
        if rec.outcome == TxOutcome::Success {
            a.latency.record(rec.latency_us);
            a.hist.record_us(rec.latency_us);
            if throttled {
                a.lag.record(rec.lag_us);
            }
        }
    }

    /// [`TimeSeries::record`] of a transaction that succeeded at its first try, in a
    /// series without per-script or per-command figures ([`TimeSeries::has_parts`]) and
    /// without schedule lag: a count, a latency and its bucket.
    #[inline]
    pub fn record_first_try_success(&mut self, latency_us: f64, now_us: i64) {
        debug_assert!(self.parts.is_none() && !self.throttled);
        self.enter(now_us);
        if let Some(a) = self.active.as_mut() {
            a.counters.successful += 1;
            a.latency.record(latency_us);
            a.hist.record_us(latency_us);
        }
    }

    /// Records a completed execution of a command that ended at `now_us` (engine clock),
    /// when per-command figures are kept. Bad indices are ignored.
    #[inline]
    pub fn record_command(&mut self, script: usize, command: usize, latency_us: f64, now_us: i64) {
        if self.keeps_commands() {
            self.enter(now_us);
            if let Some(parts) = self.parts.as_mut() {
                parts.record_command(script, command, latency_us);
            }
        }
    }

    /// Attributes a transaction failure at `now_us` to a command, when per-command
    /// figures are kept. Bad indices are ignored.
    pub fn record_command_failure(&mut self, script: usize, command: usize, now_us: i64) {
        if self.keeps_commands() {
            self.enter(now_us);
            if let Some(parts) = self.parts.as_mut() {
                parts.record_command_failure(script, command);
            }
        }
    }

    /// Every interval from the origin to the last one with data (the current one
    /// included); borrowed when no interval is being filled (a finished or merged series).
    pub fn intervals(&self) -> Cow<'_, [IntervalStats]> {
        let parts = self.parts.as_deref().filter(|p| !p.is_empty());
        let Some(a) = self
            .active
            .as_ref()
            .filter(|a| !a.is_empty() || parts.is_some())
        else {
            return Cow::Borrowed(&self.closed);
        };
        let mut out = self.closed.clone();
        if a.index >= out.len() {
            out.resize(a.index + 1, IntervalStats::default());
        }
        if !a.is_empty() {
            out[a.index].merge(&a.snapshot());
        }
        if let Some(p) = parts {
            let (scripts, commands) = p.snapshot();
            out[a.index].absorb_parts(scripts, commands);
        }
        Cow::Owned(out)
    }

    /// Heap bytes held by the current interval's per-script and per-command slots.
    pub fn parts_heap_bytes(&self) -> usize {
        self.parts.as_ref().map_or(0, |p| p.heap_bytes())
    }

    /// Adds another thread's series (intervals matched by index; both series should share
    /// origin and interval length). Nothing stays being filled in `self`.
    pub fn merge(&mut self, other: &TimeSeries) {
        self.close_active();
        let theirs = other.intervals();
        if theirs.len() > self.closed.len() {
            self.closed.resize(theirs.len(), IntervalStats::default());
        }
        for (mine, t) in self.closed.iter_mut().zip(theirs.iter()) {
            mine.merge(t);
        }
        self.throttled |= other.throttled;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coarse::coarse_value;
    use crate::histogram::{HISTOGRAM_MAX_US, LatencyHistogram};

    fn ok(latency_us: f64, lag_us: f64) -> TxRecord {
        TxRecord {
            script: 0,
            outcome: TxOutcome::Success,
            latency_us,
            lag_us,
            tries: 1,
        }
    }

    #[test]
    fn coarse_buckets() {
        assert_eq!(coarse_value(0), 0);
        assert_eq!(coarse_value(255), 255);
        assert_eq!(coarse_value(256), 257);
        assert_eq!(coarse_value(257), 257);
        assert_eq!(coarse_value(1000), 1003);
        assert_eq!(coarse_value(123_456), 123_903);
        // Within 1 % (2 significant digits) of the value.
        for v in [300u64, 4_095, 65_537, 3_599_999_999] {
            let c = coarse_value(v);
            assert!(c >= v && (c - v) as f64 <= v as f64 / 100.0, "{v} -> {c}");
        }
        let mut h = LatencyHistogram::new();
        for v in [1000u64, 1001, 1002, 1003, 1004] {
            h.record_u64(v);
        }
        let s = SparseHistogram::from_histogram(&h);
        assert_eq!(s.buckets, vec![(1003, 4), (1007, 1)]);
        assert_eq!(s.len(), 5);
    }

    #[test]
    fn coarse_counts_match_the_full_histogram_path() {
        // Bucket values agree with coarse_value at every bucket edge.
        for v in (0..5000u64).chain([
            65_535,
            65_536,
            1 << 31,
            (1 << 32) - 1,
            HISTOGRAM_MAX_US,
            u64::MAX,
        ]) {
            let i = coarse_index(v);
            assert!(i < COARSE_BUCKETS, "{v}");
            assert_eq!(coarse_index_value(i), coarse_value(v.min(HISTOGRAM_MAX_US)));
        }
        // Same sparse form as recording into a full histogram and coarsening it.
        let values = [
            0.0,
            0.4,
            1.0,
            255.0,
            256.0,
            999.5,
            1000.0,
            1003.0,
            1004.0,
            65_537.0,
            3.0e9,
            1.0e12,
            -5.0,
            f64::NAN,
        ];
        let mut full = LatencyHistogram::new();
        let mut coarse = CoarseCounts::default();
        for &v in &values {
            full.record_us(v);
            coarse.record_us(v);
        }
        assert_eq!(coarse.to_sparse(), SparseHistogram::from_histogram(&full));
        coarse.clear();
        assert!(coarse.to_sparse().is_empty());
        coarse.record_us(42.0);
        assert_eq!(coarse.to_sparse().buckets, vec![(42, 1)]);
    }

    #[test]
    fn interval_bounds_follow_the_origin() {
        let mut s = TimeSeries::new(-500, 1000, false);
        for t in [-10_000, -501, -500, 499, 500, 1499, 1500, 7000, 499] {
            s.record(&ok(1.0, 0.0), t);
        }
        let iv = s.intervals();
        let counts: Vec<u64> = iv.iter().map(|i| i.counters.successful).collect();
        assert_eq!(counts, vec![5, 2, 1, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn intervals_and_merge() {
        let mut a = TimeSeries::new(1000, 1_000_000, true);
        a.record(&ok(100.0, 5.0), 1000);
        a.record(&ok(300.0, 7.0), 500_000);
        // Nothing in interval 1; interval 2 gets a failure and a success.
        a.record(
            &TxRecord {
                outcome: TxOutcome::SerializationFailure,
                tries: 3,
                ..ok(0.0, 0.0)
            },
            2_100_000,
        );
        a.record(&ok(200.0, 1.0), 2_900_000);
        let iv = a.intervals();
        assert_eq!(iv.len(), 3);
        assert_eq!(iv[0].counters.successful, 2);
        assert_eq!(iv[0].latency.sum, 400.0);
        assert_eq!(iv[0].lag.sum, 12.0);
        assert_eq!(iv[0].latency_hist.buckets, vec![(100, 1), (301, 1)]);
        assert_eq!(iv[1], IntervalStats::default());
        assert_eq!(iv[2].counters.serialization_failures, 1);
        assert_eq!(iv[2].counters.retries, 2);
        assert_eq!(iv[2].counters.successful, 1);

        let mut b = TimeSeries::new(1000, 1_000_000, true);
        b.record(&ok(100.0, 0.0), 2000);
        b.record(&ok(50.0, 0.0), 3_500_000);
        a.merge(&b);
        let m = a.intervals();
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].counters.successful, 3);
        assert_eq!(m[0].latency_hist.buckets, vec![(100, 2), (301, 1)]);
        assert_eq!(m[0].latency_hist.len(), 3);
        assert_eq!(m[3].counters.successful, 1);
        let h = m[0].latency_hist.to_histogram();
        assert_eq!(h.len(), 3);
        // 300 µs is coarsened to its 2-significant-digit bucket [300, 301].
        assert_eq!(h.max(), 301);
        // A series rebuilt from its intervals merges like a recorded one.
        let mut rebuilt =
            TimeSeries::from_intervals(1000, 1_000_000, true, b.intervals().into_owned());
        rebuilt.merge(&TimeSeries::from_intervals(
            1000,
            1_000_000,
            true,
            m.to_vec(),
        ));
        assert_eq!(rebuilt.intervals()[3].counters.successful, 2);
        assert_eq!(rebuilt.intervals()[0].counters.successful, 4);
        // Records before the origin land in interval 0.
        let mut c = TimeSeries::new(5_000_000, 1_000_000, false);
        c.record(&ok(10.0, 3.0), 0);
        assert_eq!(c.intervals()[0].counters.successful, 1);
        assert_eq!(c.intervals()[0].lag.count, 0);
    }
}
