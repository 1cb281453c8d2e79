//! Per-script and per-command statistics of each interval of a [`crate::TimeSeries`]: what
//! "UPDATE accounts got slower during the checkpoint" is read from.
//!
//! Memory follows what ran, never intervals × statements: an interval keeps an entry only
//! for the scripts that ended a transaction and the commands that ran (or failed) in it,
//! each with a sparse histogram at two significant digits. While an interval is filled,
//! each script and command has one slot whose counts (a window of the coarse bucket array,
//! grown on use) are reused from interval to interval, and closing an interval visits only
//! the commands that ran in it.

use crate::coarse::{COARSE_BUCKETS, SparseHistogram, coarse_index, coarse_index_value};
use crate::counters::{TxCounters, TxOutcome, TxRecord};
use crate::growing::grown_window;
use crate::simple::SimpleStats;
use serde::Serialize;

/// One script's transactions in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScriptInterval {
    /// Index of the script (0-based).
    pub script: u32,
    /// Its transactions that ended in the interval, by outcome, with retries.
    pub counters: TxCounters,
    /// Latencies (µs) of the successful ones.
    pub latency: SimpleStats,
    /// Their histogram.
    pub latency_hist: SparseHistogram,
}

/// One command's executions in one interval (`-r`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CommandInterval {
    /// Index of the script (0-based).
    pub script: u32,
    /// Index of the command in its script (0-based).
    pub command: u32,
    /// Latencies (µs) of the executions that completed in the interval.
    pub latency: SimpleStats,
    /// Transaction failures attributed to the command in the interval.
    pub failures: u64,
    /// Histogram of the latencies.
    pub latency_hist: SparseHistogram,
}

/// An entry of an interval's sorted, sparse list of parts.
pub(crate) trait Part: Clone {
    /// The sort key: `(script, command)`.
    fn key(&self) -> (u32, u32);
    /// Adds `other` (same key) to `self`.
    fn add(&mut self, other: &Self);
}

impl Part for ScriptInterval {
    fn key(&self) -> (u32, u32) {
        (self.script, 0)
    }
    fn add(&mut self, other: &Self) {
        self.counters += &other.counters;
        self.latency += &other.latency;
        self.latency_hist.merge(&other.latency_hist);
    }
}

impl Part for CommandInterval {
    fn key(&self) -> (u32, u32) {
        (self.script, self.command)
    }
    fn add(&mut self, other: &Self) {
        self.latency += &other.latency;
        self.failures += other.failures;
        self.latency_hist.merge(&other.latency_hist);
    }
}

/// Adds the sorted list `theirs` to the sorted list `mine` (entries of equal keys added).
pub(crate) fn merge_parts<T: Part>(mine: &mut Vec<T>, theirs: &[T]) {
    if theirs.is_empty() {
        return;
    }
    if mine.is_empty() {
        mine.extend_from_slice(theirs);
        return;
    }
    let mut out = Vec::with_capacity(mine.len() + theirs.len());
    let mut a = std::mem::take(mine).into_iter().peekable();
    let mut b = theirs.iter().peekable();
    loop {
        let take_mine = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.key() == y.key() => {
                let (mut x, y) = (a.next(), b.next());
                if let (Some(x), Some(y)) = (x.as_mut(), y) {
                    x.add(y);
                }
                out.extend(x);
                continue;
            }
            (Some(x), Some(y)) => x.key() < y.key(),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if take_mine {
            out.extend(a.next());
        } else {
            out.extend(b.next().cloned());
        }
    }
    *mine = out;
}

/// Coarse buckets in a first window (256 bytes); windows start and end on multiples of it.
const WINDOW_CHUNK: usize = 64;

/// The current interval's histogram of one script or command: coarse counts in a window of
/// the bucket array that grows on use (allocated on the first value, at least doubled when
/// a value falls outside, at most log2(3456 / 64) + 1 times), and the range of buckets
/// touched since the last clear, so that closing an interval reads and clears only that.
#[derive(Debug, Clone)]
struct WindowCounts {
    /// Bucket index of `counts[0]` (bucket indices fit 16 bits: [`COARSE_BUCKETS`]).
    lo: u16,
    counts: Vec<u32>,
    /// Touched buckets (indices into `counts`); none when `first > last`.
    first: u16,
    last: u16,
}

impl Default for WindowCounts {
    fn default() -> Self {
        WindowCounts {
            lo: 0,
            counts: Vec::new(),
            first: 1,
            last: 0,
        }
    }
}

/// A bucket index as stored (always below [`COARSE_BUCKETS`], which fits 16 bits).
fn narrow(i: usize) -> u16 {
    u16::try_from(i).unwrap_or(u16::MAX)
}

impl WindowCounts {
    #[inline]
    fn record_us(&mut self, value_us: f64) {
        // `as` saturates: NaN and negatives give 0.
        let i = coarse_index(value_us as u64);
        let lo = usize::from(self.lo);
        if i < lo || i >= lo + self.counts.len() {
            self.grow(i);
        }
        let k = i - usize::from(self.lo);
        let k16 = narrow(k);
        if self.first > self.last {
            (self.first, self.last) = (k16, k16);
        } else {
            self.first = self.first.min(k16);
            self.last = self.last.max(k16);
        }
        self.counts[k] = self.counts[k].saturating_add(1);
    }

    /// Makes the window cover bucket `i`.
    #[cold]
    fn grow(&mut self, i: usize) {
        if self.counts.is_empty() {
            self.lo = narrow((i / WINDOW_CHUNK * WINDOW_CHUNK).min(COARSE_BUCKETS - WINDOW_CHUNK));
            self.counts = vec![0; WINDOW_CHUNK];
            (self.first, self.last) = (1, 0);
            return;
        }
        let old_lo = usize::from(self.lo);
        let hi = old_lo + self.counts.len();
        let (lo, hi) = grown_window(old_lo, hi, i, WINDOW_CHUNK, COARSE_BUCKETS);
        let mut counts = vec![0; hi - lo];
        let at = old_lo - lo;
        counts[at..at + self.counts.len()].copy_from_slice(&self.counts);
        if self.first <= self.last {
            self.first += narrow(at);
            self.last += narrow(at);
        }
        self.lo = narrow(lo);
        self.counts = counts;
    }

    /// The touched part of the window: `(bucket index of its first count, counts)`.
    fn touched(&self) -> (usize, &[u32]) {
        if self.first > self.last {
            return (0, &[]);
        }
        let (first, last) = (usize::from(self.first), usize::from(self.last));
        (usize::from(self.lo) + first, &self.counts[first..=last])
    }

    fn to_sparse(&self) -> SparseHistogram {
        let (base, counts) = self.touched();
        let buckets = counts
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(k, &c)| {
                let value = coarse_index_value(base + k);
                (u32::try_from(value).unwrap_or(u32::MAX), c)
            })
            .collect();
        SparseHistogram { buckets }
    }

    fn clear(&mut self) {
        if self.first <= self.last {
            self.counts[usize::from(self.first)..=usize::from(self.last)].fill(0);
        }
        (self.first, self.last) = (1, 0);
    }

    fn heap_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u32>()
    }
}

/// A script's slot in the current interval.
#[derive(Debug, Clone, Default)]
struct ScriptSlot {
    counters: TxCounters,
    latency: SimpleStats,
    hist: WindowCounts,
}

/// A command's slot in the current interval.
#[derive(Debug, Clone, Default)]
struct CommandSlot {
    latency: SimpleStats,
    failures: u64,
    hist: WindowCounts,
}

impl CommandSlot {
    fn is_empty(&self) -> bool {
        self.latency.count == 0 && self.failures == 0
    }
}

/// Records the current interval's per-script and per-command figures.
#[derive(Debug, Clone, Default)]
pub(crate) struct PartsRecorder {
    /// One per script, or none when per-script figures are not kept.
    scripts: Vec<ScriptSlot>,
    /// Slot of each script's first command (and the total at the end); empty when
    /// per-command figures are not kept.
    command_base: Vec<usize>,
    /// One per command of every script, script after script.
    commands: Vec<CommandSlot>,
    /// The command slots used in the current interval.
    touched: Vec<usize>,
}

impl PartsRecorder {
    /// Slots for `scripts` scripts (none when `per_script` is false) and, when
    /// `per_command`, for each of their commands (`commands_per_script`).
    pub fn new(per_script: bool, commands_per_script: &[usize], per_command: bool) -> Self {
        let scripts = if per_script {
            vec![ScriptSlot::default(); commands_per_script.len()]
        } else {
            Vec::new()
        };
        let mut command_base = Vec::new();
        if per_command {
            let mut at = 0;
            command_base.push(0);
            for &n in commands_per_script {
                at += n;
                command_base.push(at);
            }
        }
        let total = command_base.last().copied().unwrap_or(0);
        PartsRecorder {
            scripts,
            command_base,
            commands: vec![CommandSlot::default(); total],
            touched: Vec::new(),
        }
    }

    /// Whether per-command figures are kept.
    #[inline]
    pub fn keeps_commands(&self) -> bool {
        !self.command_base.is_empty()
    }

    /// Whether anything is recorded at all.
    pub fn is_enabled(&self) -> bool {
        !self.scripts.is_empty() || self.keeps_commands()
    }

    /// Records a finished transaction in its script's slot.
    #[inline]
    pub fn record_tx(&mut self, rec: &TxRecord) {
        if let Some(s) = self.scripts.get_mut(rec.script) {
            s.counters.count(rec.outcome, rec.tries);
            if rec.outcome == TxOutcome::Success {
                s.latency.record(rec.latency_us);
                s.hist.record_us(rec.latency_us);
            }
        }
    }

    /// The slot of a command, marked as used in this interval.
    #[inline]
    fn command_slot(&mut self, script: usize, command: usize) -> Option<&mut CommandSlot> {
        let base = *self.command_base.get(script)?;
        let end = *self.command_base.get(script + 1)?;
        let i = base + command;
        if i >= end {
            return None;
        }
        let slot = self.commands.get_mut(i)?;
        if slot.is_empty() {
            self.touched.push(i);
        }
        Some(slot)
    }

    /// Records a completed execution of a command.
    #[inline]
    pub fn record_command(&mut self, script: usize, command: usize, latency_us: f64) {
        if let Some(slot) = self.command_slot(script, command) {
            slot.latency.record(latency_us);
            slot.hist.record_us(latency_us);
        }
    }

    /// Attributes a transaction failure to a command.
    pub fn record_command_failure(&mut self, script: usize, command: usize) {
        if let Some(slot) = self.command_slot(script, command) {
            slot.failures += 1;
        }
    }

    /// Whether nothing was recorded since the last [`PartsRecorder::clear`].
    pub fn is_empty(&self) -> bool {
        self.touched.is_empty() && self.scripts.iter().all(|s| s.counters.total() == 0)
    }

    /// The `(script, command)` of command slot `i`.
    fn command_key(&self, i: usize) -> (u32, u32) {
        let script = self.command_base.partition_point(|&b| b <= i) - 1;
        let command = i - self.command_base[script];
        (
            u32::try_from(script).unwrap_or(u32::MAX),
            u32::try_from(command).unwrap_or(u32::MAX),
        )
    }

    /// The figures recorded since the last clear, as sorted sparse lists.
    pub fn snapshot(&self) -> (Vec<ScriptInterval>, Vec<CommandInterval>) {
        let scripts = self
            .scripts
            .iter()
            .enumerate()
            .filter(|(_, s)| s.counters.total() > 0)
            .map(|(i, s)| ScriptInterval {
                script: u32::try_from(i).unwrap_or(u32::MAX),
                counters: s.counters,
                latency: s.latency,
                latency_hist: s.hist.to_sparse(),
            })
            .collect();
        let sorted;
        let used = if self.touched.is_sorted() {
            &self.touched
        } else {
            sorted = {
                let mut t = self.touched.clone();
                t.sort_unstable();
                t
            };
            &sorted
        };
        let commands = used
            .iter()
            .map(|&i| {
                let slot = &self.commands[i];
                let (script, command) = self.command_key(i);
                CommandInterval {
                    script,
                    command,
                    latency: slot.latency,
                    failures: slot.failures,
                    latency_hist: slot.hist.to_sparse(),
                }
            })
            .collect();
        (scripts, commands)
    }

    /// The figures recorded since the last clear, which are then forgotten (the slots
    /// keep their counts arrays).
    pub fn take(&mut self) -> (Vec<ScriptInterval>, Vec<CommandInterval>) {
        self.touched.sort_unstable();
        let out = self.snapshot();
        self.clear();
        out
    }

    /// Forgets what was recorded (keeps the slots' counts arrays).
    pub fn clear(&mut self) {
        for s in &mut self.scripts {
            if s.counters.total() > 0 {
                s.counters = TxCounters::default();
                s.latency = SimpleStats::default();
                s.hist.clear();
            }
        }
        for &i in &self.touched {
            let slot = &mut self.commands[i];
            slot.latency = SimpleStats::default();
            slot.failures = 0;
            slot.hist.clear();
        }
        self.touched.clear();
    }

    /// Heap bytes held by the slots (for tests of the memory bound).
    pub fn heap_bytes(&self) -> usize {
        let hists: usize = self.commands.iter().map(|c| c.hist.heap_bytes()).sum();
        let scripts: usize = self.scripts.iter().map(|s| s.hist.heap_bytes()).sum();
        hists
            + scripts
            + self.commands.capacity() * std::mem::size_of::<CommandSlot>()
            + self.scripts.capacity() * std::mem::size_of::<ScriptSlot>()
            + self.touched.capacity() * std::mem::size_of::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::HISTOGRAM_MAX_US;

    #[test]
    fn window_counts_match_coarse_buckets_and_grow_rarely() {
        let values = [
            0.0, 0.4, 255.0, 256.0, 1000.0, 1003.0, 1004.0, 65_537.0, 3.0e9, 1.0e12, -5.0,
        ];
        let mut w = WindowCounts::default();
        let mut growths = 0;
        let mut last = 0;
        for &v in values.iter().rev() {
            w.record_us(v);
            if w.heap_bytes() != last {
                growths += 1;
                last = w.heap_bytes();
            }
        }
        assert!(growths <= 7, "{growths}");
        let mut expected: Vec<(u32, u32)> = Vec::new();
        for &v in &values {
            let c = crate::coarse::coarse_value((v as u64).min(HISTOGRAM_MAX_US)) as u32;
            match expected.iter_mut().find(|(x, _)| *x == c) {
                Some(e) => e.1 += 1,
                None => expected.push((c, 1)),
            }
        }
        expected.sort_unstable();
        assert_eq!(w.to_sparse().buckets, expected);
        w.clear();
        assert!(w.to_sparse().is_empty());
        w.record_us(42.0);
        assert_eq!(w.to_sparse().buckets, vec![(42, 1)]);
    }

    #[test]
    fn slots_follow_their_scripts_and_commands() {
        let mut p = PartsRecorder::new(true, &[2, 3], true);
        let rec = |script, latency_us| TxRecord {
            script,
            outcome: TxOutcome::Success,
            latency_us,
            lag_us: 0.0,
            tries: 1,
        };
        p.record_tx(&rec(1, 100.0));
        p.record_tx(&rec(1, 300.0));
        p.record_tx(&rec(7, 300.0));
        p.record_command(1, 2, 50.0);
        p.record_command(0, 1, 20.0);
        p.record_command(1, 2, 70.0);
        p.record_command(1, 3, 70.0);
        p.record_command(2, 0, 70.0);
        p.record_command_failure(0, 0);
        let (s, c) = p.snapshot();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].script, s[0].counters.successful), (1, 2));
        let keys: Vec<_> = c.iter().map(|c| (c.script, c.command)).collect();
        assert_eq!(keys, [(0, 0), (0, 1), (1, 2)]);
        assert_eq!(c[0].failures, 1);
        assert_eq!(c[2].latency.sum, 120.0);
        assert_eq!(c[2].latency_hist.buckets, vec![(50, 1), (70, 1)]);
        p.clear();
        assert!(p.is_empty());
        assert_eq!(p.snapshot(), (Vec::new(), Vec::new()));
        let mut merged = c.clone();
        merge_parts(&mut merged, &c[1..]);
        assert_eq!(merged.len(), 3);
        assert_eq!(merged[1].latency.count, 2);
        assert_eq!(merged[2].latency_hist.len(), 4);
    }
}
