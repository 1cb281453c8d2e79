//! Per-thread collectors: the engine owns one [`ThreadStats`] per worker thread (no locks),
//! and the main thread merges them after the run.

use crate::counters::{TxCounters, TxOutcome, TxRecord};
use crate::growing::GrowingHistogram;
use crate::histogram::LatencyHistogram;
use crate::outage::ClientOutage;
use crate::pending::PendingCounts;
use crate::progress::ProgressCounters;
use crate::simple::SimpleStats;
use crate::timeseries::TimeSeries;
use serde::Serialize;
use std::ops::AddAssign;
use std::sync::Arc;

/// What to collect: the shape of the scripts and the options that change counting.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StatsLayout {
    /// Number of commands of each script (SQL and meta), in script order.
    pub commands_per_script: Vec<usize>,
    /// `-L` in µs: successful transactions slower than this count as late.
    pub latency_limit_us: Option<f64>,
    /// `-R` given: schedule lag is recorded.
    pub throttled: bool,
    /// `-r` given: per-command sums are kept (count, latency sums, failures, retries;
    /// otherwise `record_command*` do nothing).
    pub per_command: bool,
    /// With `per_command`, also a latency histogram per command, for per-command
    /// percentiles (`--percentiles` with `-r`, `--json`, `--html`); plain `-r` needs only
    /// the sums.
    pub command_histograms: bool,
    /// Per-interval statistics ([`ThreadStats::with_series`]) are wanted: they feed the
    /// run document (`--json`, `--html`, `--assert`, `--server-stats`, shards), and cost
    /// a second histogram update per transaction, so a plain run goes without.
    pub time_series: bool,
}

/// Transaction statistics: counters, latency and lag sums, histograms, late count.
///
/// While recording, latencies reach `latency_hist` in bulk: read it after
/// [`TxStats::flush`] or from the result of a merge (merges count what is pending).
#[derive(Debug, Clone, Serialize)]
pub struct TxStats {
    /// Transaction counters.
    pub counters: TxCounters,
    /// Latencies of successful transactions (µs).
    pub latency: SimpleStats,
    /// Schedule lag of successful transactions (µs; `-R` only).
    pub lag: SimpleStats,
    /// Successful transactions above the `-L` latency limit.
    pub late: u64,
    /// Histogram of the latencies of successful transactions.
    pub latency_hist: LatencyHistogram,
    /// Histogram of the schedule lag (present only with `-R`).
    pub lag_hist: Option<LatencyHistogram>,
    /// Latencies recorded but not yet in `latency_hist`.
    #[serde(skip)]
    pending_latencies: PendingCounts,
}

impl TxStats {
    /// Empty statistics; the lag histogram is created only when `throttled`.
    pub fn new(throttled: bool) -> Self {
        TxStats {
            counters: TxCounters::default(),
            latency: SimpleStats::default(),
            lag: SimpleStats::default(),
            late: 0,
            latency_hist: LatencyHistogram::new(),
            lag_hist: throttled.then(LatencyHistogram::new),
            pending_latencies: PendingCounts::default(),
        }
    }

    /// Records a transaction that succeeded at its first try, with no lag or late count
    /// to keep (no `-R`, no `-L`): what [`TxStats::record`] does then.
    #[inline]
    pub fn record_first_try_success(&mut self, latency_us: f64) {
        self.counters.successful += 1;
        self.latency.record(latency_us);
        self.pending_latencies.record_us(latency_us);
    }

    /// Moves the pending latencies into `latency_hist`.
    pub fn flush(&mut self) {
        self.pending_latencies.drain_into(&mut self.latency_hist);
    }

    /// Records one finished transaction (pgbench's rules: skipped transactions count only
    /// as skipped; latency and lag are recorded for successful ones; lag only when throttled).
    #[inline]
    pub fn record(&mut self, rec: &TxRecord, latency_limit_us: Option<f64>) {
        self.counters.count(rec.outcome, rec.tries);
        if rec.outcome != TxOutcome::Success {
            return;
        }
        self.latency.record(rec.latency_us);
        self.pending_latencies.record_us(rec.latency_us);
        if let Some(lag_hist) = self.lag_hist.as_mut() {
            self.lag.record(rec.lag_us);
            lag_hist.record_us(rec.lag_us);
        }
        if latency_limit_us.is_some_and(|limit| rec.latency_us > limit) {
            self.late += 1;
        }
    }

    /// Adds `other` to `self`.
    pub fn merge(&mut self, other: &TxStats) {
        self.counters += &other.counters;
        self.latency += &other.latency;
        self.lag += &other.lag;
        self.late += other.late;
        self.latency_hist += &other.latency_hist;
        other.pending_latencies.add_to(&mut self.latency_hist);
        match (self.lag_hist.as_mut(), other.lag_hist.as_ref()) {
            (Some(mine), Some(theirs)) => *mine += theirs,
            (None, Some(theirs)) => self.lag_hist = Some(theirs.clone()),
            _ => {}
        }
    }
}

impl AddAssign<&TxStats> for TxStats {
    fn add_assign(&mut self, rhs: &TxStats) {
        self.merge(rhs);
    }
}

/// Statistics of one script command (`-r`): 64 bytes, plus the histogram's counts when
/// [`StatsLayout::command_histograms`] is set.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CommandStats {
    /// Completed executions and their latencies (µs).
    pub latency: SimpleStats,
    /// Failures attributed to this command.
    pub failures: u64,
    /// Retries attributed to this command.
    pub retries: u64,
    /// Histogram of the execution latencies (empty unless
    /// [`StatsLayout::command_histograms`]).
    pub latency_hist: GrowingHistogram,
}

impl CommandStats {
    /// Average latency in ms of completed executions, 0 when never executed (the `-r` column).
    pub fn average_ms(&self) -> f64 {
        if self.latency.count > 0 {
            self.latency.sum / self.latency.count as f64 / 1000.0
        } else {
            0.0
        }
    }

    /// Adds `other` to `self`.
    pub fn merge(&mut self, other: &CommandStats) {
        self.latency += &other.latency;
        self.failures += other.failures;
        self.retries += other.retries;
        self.latency_hist += &other.latency_hist;
    }
}

impl AddAssign<&CommandStats> for CommandStats {
    fn add_assign(&mut self, rhs: &CommandStats) {
        self.merge(rhs);
    }
}

/// Statistics of one script: its transactions and its commands.
#[derive(Debug, Clone, Serialize)]
pub struct ScriptStats {
    /// Transactions that ran this script.
    pub tx: TxStats,
    /// One entry per command, in script order.
    pub commands: Vec<CommandStats>,
}

impl ScriptStats {
    /// Empty statistics for a script of `n_commands` commands.
    pub fn new(n_commands: usize, throttled: bool) -> Self {
        ScriptStats {
            tx: TxStats::new(throttled),
            commands: (0..n_commands).map(|_| CommandStats::default()).collect(),
        }
    }

    /// Adds `other` to `self` (command lists are merged index by index).
    pub fn merge(&mut self, other: &ScriptStats) {
        self.tx += &other.tx;
        for (i, c) in other.commands.iter().enumerate() {
            match self.commands.get_mut(i) {
                Some(mine) => *mine += c,
                None => self.commands.push(c.clone()),
            }
        }
    }
}

impl AddAssign<&ScriptStats> for ScriptStats {
    fn add_assign(&mut self, rhs: &ScriptStats) {
        self.merge(rhs);
    }
}

/// Everything one worker thread collects. Recording never allocates.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadStats {
    /// Totals over all scripts.
    pub total: TxStats,
    /// Per-script statistics, in script order.
    pub scripts: Vec<ScriptStats>,
    /// Time spent connecting and disconnecting (µs); with `-C` summed over every connection.
    pub conn_time_us: u64,
    /// `-L` in µs (copied from the layout).
    pub latency_limit_us: Option<f64>,
    /// Per-interval statistics (JSON, HTML, percentiles), when enabled with [`ThreadStats::with_series`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<TimeSeries>,
    /// Client outages under `--reconnect` (engine clock while the run records them,
    /// µs from the measured start in the engine's outcome).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<ClientOutage>,
    #[serde(skip)]
    progress: Option<Arc<ProgressCounters>>,
    /// [`StatsLayout::command_histograms`]: command latencies go to histograms too.
    #[serde(skip)]
    command_histograms: bool,
    /// With a single script its statistics equal the totals: while this is set, the
    /// script's `tx` is not recorded and stands for a copy of `total`, made by
    /// [`ThreadStats::merge`] (every reader goes through a merge) or by a record for
    /// another script index. Saves recording every transaction twice.
    #[serde(skip)]
    mirror: bool,
    /// How a first-try success is recorded, decided when the options are set.
    #[serde(skip)]
    plan: RecordPlan,
}

/// How [`ThreadStats`] records a transaction that succeeded at its first try, decided
/// from the options: the common case of a run gets a path of its own, without the
/// checks of [`ThreadStats::record_in_full`]. Anything else (a failure, a retry, another
/// script) is recorded in full whatever the plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum RecordPlan {
    /// Nothing but the totals to keep (one script, mirrored; no lag, no late count, no
    /// progress, no series): a count, a latency and its bucket.
    TotalsOnly,
    /// The totals and the time series' current interval, nothing else (as
    /// `TotalsOnly`, with a series of one script and no per-command figures: `--json`,
    /// `--html`, `--dashboard`).
    TotalsAndSeries,
    /// Everything [`ThreadStats::record_in_full`] looks at.
    #[default]
    Full,
}

impl ThreadStats {
    /// Creates the collectors for `layout` (histograms allocate their counts on first use).
    pub fn new(layout: &StatsLayout) -> Self {
        ThreadStats {
            total: TxStats::new(layout.throttled),
            scripts: layout
                .commands_per_script
                .iter()
                .map(|&n| {
                    ScriptStats::new(if layout.per_command { n } else { 0 }, layout.throttled)
                })
                .collect(),
            conn_time_us: 0,
            latency_limit_us: layout.latency_limit_us,
            series: None,
            outages: Vec::new(),
            progress: None,
            command_histograms: layout.per_command && layout.command_histograms,
            mirror: layout.commands_per_script.len() == 1,
            plan: RecordPlan::Full,
        }
        .with_plan()
    }

    /// Decides [`ThreadStats::plan`] from the options set so far.
    fn with_plan(mut self) -> Self {
        let only_totals = self.mirror
            && self.total.lag_hist.is_none()
            && self.latency_limit_us.is_none()
            && self.progress.is_none();
        self.plan = match &self.series {
            _ if !only_totals => RecordPlan::Full,
            None => RecordPlan::TotalsOnly,
            Some(series) if !series.has_parts() => RecordPlan::TotalsAndSeries,
            Some(_) => RecordPlan::Full,
        };
        self
    }

    /// Whether these statistics keep nothing but the totals (see
    /// [`RecordPlan::TotalsOnly`]): then they are the sum of any split of the same
    /// transactions recorded apart and merged in.
    pub fn keeps_totals_only(&self) -> bool {
        self.plan == RecordPlan::TotalsOnly
    }

    /// Turns a mirrored single script's statistics into a real copy of the totals.
    #[cold]
    fn unmirror(&mut self) {
        if self.mirror {
            self.mirror = false;
            self.plan = RecordPlan::Full;
            if let Some(s) = self.scripts.first_mut() {
                // A merge into an empty one writes only the used buckets (a clone would
                // copy, and make resident, the whole counts arrays).
                let mut tx = TxStats::new(self.total.lag_hist.is_some());
                tx.merge(&self.total);
                s.tx = tx;
            }
        }
    }

    /// The transaction statistics of script `i` (the totals while mirrored).
    fn script_tx(&self, i: usize) -> Option<&TxStats> {
        match self.scripts.get(i) {
            Some(_) if self.mirror => Some(&self.total),
            Some(s) => Some(&s.tx),
            None => None,
        }
    }

    /// Also keeps per-interval statistics: intervals of `interval_us` from `origin_us`
    /// (engine clock, µs); record with [`ThreadStats::record_tx_at`]. Each interval also
    /// gets per-script figures when there are several scripts, and with `-r` the
    /// figures of the commands that ran in it ([`ThreadStats::record_command_at`]).
    pub fn with_series(mut self, origin_us: i64, interval_us: u64) -> Self {
        let throttled = self.total.lag_hist.is_some();
        let shape: Vec<usize> = self.scripts.iter().map(|s| s.commands.len()).collect();
        let per_command = shape.iter().any(|&n| n > 0);
        self.series = Some(
            TimeSeries::new(origin_us, interval_us, throttled).with_parts(
                shape.len() > 1,
                &shape,
                per_command,
            ),
        );
        self.with_plan()
    }

    /// [`ThreadStats::record_tx`], plus the time series (if enabled) with the instant
    /// `now_us` (engine clock, µs) when the transaction ended.
    #[inline]
    pub fn record_tx_at(&mut self, rec: &TxRecord, now_us: i64) {
        self.record(rec, Some(now_us));
    }

    /// Also publishes every transaction to `counters` (for `-P`).
    pub fn with_progress(mut self, counters: Arc<ProgressCounters>) -> Self {
        self.progress = Some(counters);
        self.with_plan()
    }

    /// The progress block this thread publishes to, if any.
    pub fn progress(&self) -> Option<&Arc<ProgressCounters>> {
        self.progress.as_ref()
    }

    /// Records one finished transaction in the totals, its script and the progress block.
    /// An out-of-range script index only updates the totals.
    #[inline]
    pub fn record_tx(&mut self, rec: &TxRecord) {
        self.record(rec, None);
    }

    /// Records a transaction, and in the time series too when `now_us` is given: a
    /// first-try success by the path of the [`RecordPlan`], the rest in full.
    #[inline]
    fn record(&mut self, rec: &TxRecord, now_us: Option<i64>) {
        let first_try_success = rec.first_try_success() && rec.script == 0;
        match (self.plan, now_us, self.series.as_mut()) {
            (RecordPlan::TotalsOnly, _, _) if first_try_success => {
                self.total.record_first_try_success(rec.latency_us);
            }
            (RecordPlan::TotalsAndSeries, Some(now_us), Some(series)) if first_try_success => {
                series.record_first_try_success(rec.latency_us, now_us);
                self.total.record_first_try_success(rec.latency_us);
            }
            _ => self.record_in_full(rec, now_us),
        }
    }

    /// Records a transaction everywhere the options ask for.
    #[inline(never)]
    fn record_in_full(&mut self, rec: &TxRecord, now_us: Option<i64>) {
        if self.mirror && rec.script != 0 {
            self.unmirror();
        }
        self.total.record(rec, self.latency_limit_us);
        if !self.mirror
            && let Some(s) = self.scripts.get_mut(rec.script)
        {
            s.tx.record(rec, self.latency_limit_us);
        }
        if let Some(p) = &self.progress {
            p.record(
                rec.outcome,
                rec.latency_us,
                rec.lag_us,
                rec.tries,
                self.total.lag_hist.is_some(),
            );
        }
        if let (Some(series), Some(now_us)) = (self.series.as_mut(), now_us) {
            series.record(rec, now_us);
        }
    }

    /// Moves every pending latency into the histograms (see [`TxStats::flush`]).
    pub fn flush(&mut self) {
        self.total.flush();
        self.scripts.iter_mut().for_each(|s| s.tx.flush());
    }

    fn command_mut(&mut self, script: usize, command: usize) -> Option<&mut CommandStats> {
        self.scripts.get_mut(script)?.commands.get_mut(command)
    }

    /// Records one completed execution of a command (`-r`). Bad indices are ignored.
    #[inline]
    pub fn record_command(&mut self, script: usize, command: usize, latency_us: f64) {
        let histograms = self.command_histograms;
        if let Some(c) = self.command_mut(script, command) {
            c.latency.record(latency_us);
            if histograms {
                c.latency_hist.record_us(latency_us);
            }
        }
    }

    /// [`ThreadStats::record_command`], plus the time series' per-command figures (if
    /// kept) with the instant `now_us` (engine clock, µs) when the command ended.
    #[inline]
    pub fn record_command_at(
        &mut self,
        script: usize,
        command: usize,
        latency_us: f64,
        now_us: i64,
    ) {
        self.record_command(script, command, latency_us);
        if let Some(series) = self.series.as_mut() {
            series.record_command(script, command, latency_us, now_us);
        }
    }

    /// [`ThreadStats::record_command_failure`], plus the time series' per-command
    /// figures (if kept) at `now_us` (engine clock, µs).
    pub fn record_command_failure_at(&mut self, script: usize, command: usize, now_us: i64) {
        self.record_command_failure(script, command);
        if let Some(series) = self.series.as_mut() {
            series.record_command_failure(script, command, now_us);
        }
    }

    /// Attributes a transaction failure to a command. Bad indices are ignored.
    #[inline]
    pub fn record_command_failure(&mut self, script: usize, command: usize) {
        if let Some(c) = self.command_mut(script, command) {
            c.failures += 1;
        }
    }

    /// Attributes a retry to the command where the error occurred. Bad indices are ignored.
    #[inline]
    pub fn record_command_retry(&mut self, script: usize, command: usize) {
        if let Some(c) = self.command_mut(script, command) {
            c.retries += 1;
        }
    }

    /// Adds connection (and disconnection) time.
    #[inline]
    pub fn add_conn_time_us(&mut self, us: u64) {
        self.conn_time_us = self.conn_time_us.saturating_add(us);
    }

    /// Adds another thread's statistics to these (the progress block is not touched);
    /// nothing stays pending in the result.
    pub fn merge(&mut self, other: &ThreadStats) {
        self.unmirror();
        self.total += &other.total;
        for (i, s) in other.scripts.iter().enumerate() {
            let tx = other.script_tx(i).unwrap_or(&s.tx);
            match self.scripts.get_mut(i) {
                Some(mine) => {
                    mine.tx += tx;
                    for (j, c) in s.commands.iter().enumerate() {
                        match mine.commands.get_mut(j) {
                            Some(m) => *m += c,
                            None => mine.commands.push(c.clone()),
                        }
                    }
                }
                None => self.scripts.push(ScriptStats {
                    tx: tx.clone(),
                    commands: s.commands.clone(),
                }),
            }
        }
        self.conn_time_us = self.conn_time_us.saturating_add(other.conn_time_us);
        self.outages.extend(other.outages.iter().cloned());
        match (self.series.as_mut(), other.series.as_ref()) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (None, Some(theirs)) => {
                // The intervals only: the merged series records nothing more.
                self.series = Some(TimeSeries::from_intervals(
                    theirs.origin_us,
                    theirs.interval_us,
                    theirs.throttled,
                    theirs.intervals().into_owned(),
                ));
            }
            _ => {}
        }
        self.flush();
    }

    /// Merges a list of per-thread statistics (`None` for an empty list).
    pub fn merge_all<'a>(all: impl IntoIterator<Item = &'a ThreadStats>) -> Option<ThreadStats> {
        let mut it = all.into_iter();
        let mut acc = it.next()?.clone();
        acc.progress = None;
        acc.unmirror();
        acc.flush();
        for t in it {
            acc.merge(t);
        }
        Some(acc)
    }
}

impl AddAssign<&ThreadStats> for ThreadStats {
    fn add_assign(&mut self, rhs: &ThreadStats) {
        self.merge(rhs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> StatsLayout {
        StatsLayout {
            commands_per_script: vec![2, 3],
            latency_limit_us: Some(1000.0),
            throttled: true,
            per_command: true,
            command_histograms: true,
            time_series: true,
        }
    }

    fn tx(script: usize, outcome: TxOutcome, latency_us: f64, lag_us: f64, tries: u32) -> TxRecord {
        TxRecord {
            script,
            outcome,
            latency_us,
            lag_us,
            tries,
        }
    }

    #[test]
    fn record_and_merge_threads() {
        let l = layout();
        let mut a = ThreadStats::new(&l);
        let mut b = ThreadStats::new(&l);
        a.record_tx(&tx(0, TxOutcome::Success, 500.0, 10.0, 1));
        a.record_tx(&tx(0, TxOutcome::Success, 1500.0, 20.0, 2));
        a.record_tx(&tx(1, TxOutcome::Skipped, 0.0, 0.0, 1));
        b.record_tx(&tx(1, TxOutcome::DeadlockFailure, 9999.0, 5.0, 3));
        b.record_tx(&tx(1, TxOutcome::Success, 2000.0, 30.0, 1));
        b.record_tx(&tx(7, TxOutcome::Success, 1.0, 1.0, 1)); // bad script index: totals only
        a.record_command(0, 1, 250.0);
        a.record_command(0, 1, 750.0);
        b.record_command(0, 1, 500.0);
        b.record_command_failure(1, 2);
        b.record_command_retry(1, 2);
        b.record_command_retry(1, 2);
        b.record_command(9, 9, 1.0); // ignored
        a.add_conn_time_us(100);
        b.add_conn_time_us(50);

        let m = ThreadStats::merge_all([&a, &b]).unwrap_or_else(|| ThreadStats::new(&l));
        let c = &m.total.counters;
        assert_eq!(c.successful, 4);
        assert_eq!(c.skipped, 1);
        assert_eq!(c.deadlock_failures, 1);
        assert_eq!(c.retried, 2);
        assert_eq!(c.retries, 3);
        assert_eq!(m.total.late, 2);
        assert_eq!(m.total.latency.count, 4);
        assert_eq!(m.total.latency.max, 2000.0);
        assert_eq!(m.total.latency.min, 1.0);
        assert_eq!(m.total.lag.sum, 61.0);
        assert_eq!(m.total.latency_hist.len(), 4);
        assert_eq!(
            m.total.lag_hist.as_ref().map(LatencyHistogram::len),
            Some(4)
        );
        assert_eq!(m.scripts[0].tx.counters.successful, 2);
        assert_eq!(m.scripts[1].tx.counters.total(), 3);
        assert_eq!(m.scripts[0].commands[1].latency.count, 3);
        assert_eq!(m.scripts[0].commands[1].average_ms(), 0.5);
        assert_eq!(m.scripts[0].commands[0].average_ms(), 0.0);
        assert_eq!(m.scripts[1].commands[2].failures, 1);
        assert_eq!(m.scripts[1].commands[2].retries, 2);
        assert_eq!(m.conn_time_us, 150);
        assert!(ThreadStats::merge_all([]).is_none());
    }

    #[test]
    fn single_script_mirrors_the_totals() {
        let l = StatsLayout {
            commands_per_script: vec![2],
            latency_limit_us: Some(150.0),
            throttled: true,
            per_command: true,
            command_histograms: true,
            time_series: true,
        };
        let mut a = ThreadStats::new(&l);
        let mut b = ThreadStats::new(&l);
        a.record_tx(&tx(0, TxOutcome::Success, 100.0, 1.0, 1));
        a.record_tx(&tx(0, TxOutcome::Success, 200.0, 2.0, 2));
        a.record_command(0, 1, 50.0);
        b.record_tx(&tx(0, TxOutcome::DeadlockFailure, 0.0, 0.0, 3));
        b.record_tx(&tx(0, TxOutcome::Success, 300.0, 3.0, 1));
        b.record_command(0, 0, 20.0);
        // Through the engine's path (merge into a fresh one) and merge_all.
        let mut m = ThreadStats::new(&l);
        m.merge(&a);
        m.merge(&b);
        let n = ThreadStats::merge_all([&a, &b]).unwrap_or_else(|| ThreadStats::new(&l));
        for m in [&m, &n] {
            let s = &m.scripts[0].tx;
            assert_eq!(s.counters, m.total.counters);
            assert_eq!(s.counters.successful, 3);
            assert_eq!(s.counters.deadlock_failures, 1);
            assert_eq!(s.latency, m.total.latency);
            assert_eq!(s.latency.sum, 600.0);
            assert_eq!(s.late, 2);
            assert_eq!(s.latency_hist.len(), 3);
            assert_eq!(s.lag_hist.as_ref().map(LatencyHistogram::len), Some(3));
            assert_eq!(m.scripts[0].commands[0].latency.count, 1);
            assert_eq!(m.scripts[0].commands[1].latency.count, 1);
        }
        // A record for another script index counts in the totals only.
        let mut c = ThreadStats::new(&l);
        c.record_tx(&tx(0, TxOutcome::Success, 100.0, 1.0, 1));
        c.record_tx(&tx(3, TxOutcome::Success, 100.0, 1.0, 1));
        c.record_tx(&tx(0, TxOutcome::Success, 100.0, 1.0, 1));
        let mut m = ThreadStats::new(&l);
        m.merge(&c);
        assert_eq!(m.total.counters.successful, 3);
        assert_eq!(m.scripts[0].tx.counters.successful, 2);
        assert_eq!(m.scripts[0].tx.latency_hist.len(), 2);
    }

    #[test]
    fn the_series_path_of_first_try_successes_records_what_the_full_path_does() {
        let l = StatsLayout {
            commands_per_script: vec![1],
            time_series: true,
            ..StatsLayout::default()
        };
        let fast = ThreadStats::new(&l).with_series(0, 1_000);
        assert_eq!(fast.plan, RecordPlan::TotalsAndSeries);
        // A progress block forces the full path; it records nothing the others read.
        let full = ThreadStats::new(&l)
            .with_series(0, 1_000)
            .with_progress(Arc::new(ProgressCounters::new()));
        assert_eq!(full.plan, RecordPlan::Full);
        let (mut fast, mut full) = (fast, full);
        let records = [
            (tx(0, TxOutcome::Success, 120.0, 0.0, 1), 10),
            (tx(0, TxOutcome::Success, 7_500.0, 0.0, 1), 900),
            (tx(0, TxOutcome::SerializationFailure, 80.0, 0.0, 1), 1_100),
            (tx(0, TxOutcome::Success, 300.0, 0.0, 2), 1_200),
            (tx(0, TxOutcome::Success, 45.0, 0.0, 1), 1_999),
            (tx(0, TxOutcome::Success, 2_000_000.0, 0.0, 1), 4_500),
        ];
        for (rec, at) in &records {
            fast.record_tx_at(rec, *at);
            full.record_tx_at(rec, *at);
        }
        let (fast, full) = (
            ThreadStats::merge_all([&fast]).expect("merged"),
            ThreadStats::merge_all([&full]).expect("merged"),
        );
        assert_eq!(fast.total.counters, full.total.counters);
        assert_eq!(fast.total.latency, full.total.latency);
        assert_eq!(fast.total.latency_hist.len(), 5);
        assert_eq!(
            fast.total.latency_hist.value_at_quantile(0.5),
            full.total.latency_hist.value_at_quantile(0.5)
        );
        let intervals = |t: &ThreadStats| t.series.as_ref().map(|s| s.intervals().into_owned());
        assert_eq!(intervals(&fast), intervals(&full));
        assert_eq!(intervals(&fast).map(|i| i.len()), Some(5));
    }

    #[test]
    fn a_series_with_parts_or_lag_records_in_full() {
        let two = StatsLayout {
            commands_per_script: vec![1, 1],
            time_series: true,
            ..StatsLayout::default()
        };
        assert_eq!(
            ThreadStats::new(&two).with_series(0, 1_000).plan,
            RecordPlan::Full
        );
        let throttled = StatsLayout {
            commands_per_script: vec![1],
            throttled: true,
            time_series: true,
            ..StatsLayout::default()
        };
        let t = ThreadStats::new(&throttled).with_series(0, 1_000);
        assert_eq!(t.plan, RecordPlan::Full);
        let plain = ThreadStats::new(&StatsLayout {
            commands_per_script: vec![1],
            ..StatsLayout::default()
        });
        assert!(plain.keeps_totals_only());
    }

    #[test]
    fn lag_only_when_throttled_and_progress_published() {
        let l = StatsLayout {
            commands_per_script: vec![1],
            latency_limit_us: None,
            throttled: false,
            per_command: false,
            command_histograms: true,
            time_series: true,
        };
        let p = Arc::new(ProgressCounters::new());
        let mut t = ThreadStats::new(&l).with_progress(Arc::clone(&p));
        t.record_tx(&tx(0, TxOutcome::Success, 100.0, 50.0, 1));
        t.record_tx(&tx(0, TxOutcome::SerializationFailure, 100.0, 50.0, 1));
        assert_eq!(t.total.lag.count, 0);
        assert!(t.total.lag_hist.is_none());
        assert_eq!(t.total.late, 0);
        let s = p.snapshot();
        assert_eq!(s.count, 1);
        assert_eq!(s.failures, 1);
        assert_eq!(s.lag_sum, 0.0);
        assert_eq!(s.latency_sum, 100.0);
        // Without -r no command statistics are kept.
        t.record_command(0, 0, 5.0);
        assert!(t.scripts[0].commands.is_empty());
    }
}
