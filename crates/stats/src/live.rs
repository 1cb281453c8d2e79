//! Live figures for a metrics endpoint (`--metrics-listen`): what the engine's threads
//! publish while a run goes on, and what the endpoint adds up.
//!
//! Each worker thread records its transactions into a [`LiveRecorder`] of its own (plain
//! counters and fixed bucket counts: no lock, no atomic, no allocation) and, at its
//! publication edges (a few per second, never per transaction), adds what it recorded
//! since the last edge to its [`LiveSlot`] in the shared [`LiveMetrics`]: a lock of its
//! own, taken with `try_lock` (when the endpoint holds it, the delta waits for the next
//! edge). The endpoint takes the slots' deltas into its [`LiveTotals`], which are
//! cumulative and never reset. The memory is fixed when the run starts: one
//! [`LiveCell`] per script and stage, per thread and once more in the totals.
//!
//! Histograms: the latency and lag of successful transactions in [`BUCKET_BOUNDS_US`],
//! 1-1.2-1.5-2-2.5-3-4-5-6-8 per decade from 10 µs to 100 s. The bucket of a value is
//! that of its HdrHistogram bucket at two significant digits (the time series'
//! resolution): the first bound at or above the bucket's highest value.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::coarse::{COARSE_BUCKETS, coarse_index, coarse_index_value};
use crate::counters::{TxCounters, TxOutcome, TxRecord};
use crate::histogram::saturating_u64;

/// Upper bounds (µs, inclusive) of the exported histogram buckets; `+Inf` follows.
pub const BUCKET_BOUNDS_US: [u64; 71] = bucket_bounds();

/// Number of buckets of a [`LiveHistogram`], `+Inf` included.
pub const LIVE_BUCKETS: usize = BUCKET_BOUNDS_US.len() + 1;

/// The bounds: for each decade from 10 µs, the steps 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8,
/// then 100 s.
const fn bucket_bounds() -> [u64; 71] {
    const STEPS: [u64; 10] = [10, 12, 15, 20, 25, 30, 40, 50, 60, 80];
    let mut out = [0u64; 71];
    let mut decade = 0;
    let mut scale = 1u64;
    while decade < 7 {
        let mut s = 0;
        while s < STEPS.len() {
            out[decade * 10 + s] = STEPS[s] * scale;
            s += 1;
        }
        scale *= 10;
        decade += 1;
    }
    out[70] = 100_000_000;
    out
}

/// The exported bucket of each two-digit HdrHistogram bucket.
fn bucket_of_coarse() -> &'static [u8] {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..COARSE_BUCKETS)
            .map(|i| {
                let highest = coarse_index_value(i);
                BUCKET_BOUNDS_US.partition_point(|&b| b < highest) as u8
            })
            .collect()
    })
}

/// Counts per exported bucket (not cumulative) and the sum of the values (µs).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveHistogram {
    /// Count per bucket of [`BUCKET_BOUNDS_US`], the last one `+Inf`.
    pub counts: [u64; LIVE_BUCKETS],
    /// Sum of the values (µs).
    pub sum_us: f64,
}

impl Default for LiveHistogram {
    fn default() -> Self {
        LiveHistogram {
            counts: [0; LIVE_BUCKETS],
            sum_us: 0.0,
        }
    }
}

impl LiveHistogram {
    /// Records a value (µs) with the bucket table of [`bucket_of_coarse`].
    #[inline]
    fn record(&mut self, value_us: f64, table: &[u8]) {
        if let Some(&b) = table.get(coarse_index(saturating_u64(value_us)))
            && let Some(c) = self.counts.get_mut(usize::from(b))
        {
            *c += 1;
        }
        self.sum_us += value_us;
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The cumulative counts: entry `i` counts the values at or below bound `i`.
    pub fn cumulative(&self) -> [u64; LIVE_BUCKETS] {
        let mut out = self.counts;
        for i in 1..out.len() {
            out[i] += out[i - 1];
        }
        out
    }

    /// Adds `other`.
    pub fn add(&mut self, other: &LiveHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.sum_us += other.sum_us;
    }

    /// The upper bound (µs) of the bucket that holds the `q` quantile (0 to 1) of the
    /// values: the value is at most that, and above the bucket before's bound. `None`
    /// without values; the highest bound (100 s) for values beyond it.
    pub fn quantile_upper_us(&self, q: f64) -> Option<u64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        let bucket = self.cumulative().iter().position(|&c| c >= rank)?;
        Some(BUCKET_BOUNDS_US[bucket.min(BUCKET_BOUNDS_US.len() - 1)])
    }

    /// The mean of the values (µs), `None` without values.
    pub fn mean_us(&self) -> Option<f64> {
        let n = self.count();
        (n > 0).then(|| self.sum_us / n as f64)
    }
}

/// What the transactions of one script did in one stage.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveCell {
    /// Transactions by outcome, retries.
    pub counters: TxCounters,
    /// Latencies of the successful ones.
    pub latency: LiveHistogram,
    /// Schedule lags of the successful ones (`-R` only).
    pub lag: LiveHistogram,
}

impl LiveCell {
    /// Adds `other`.
    pub fn add(&mut self, other: &LiveCell) {
        self.counters += &other.counters;
        self.latency.add(&other.latency);
        self.lag.add(&other.lag);
    }
}

/// The shape of a run's live figures: scripts and stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveShape {
    /// Number of scripts.
    pub scripts: usize,
    /// Number of stages (0: a run without stages, which counts as one stage).
    pub stages: usize,
    /// Whether the run is throttled (lag is recorded).
    pub throttled: bool,
}

impl LiveShape {
    /// Stage slots: 0 is `--warmup`, then one per stage (one for a run without stages).
    pub fn stage_slots(&self) -> usize {
        1 + self.stages.max(1)
    }

    /// Cells: one per stage slot and script, stage-major.
    pub fn cells(&self) -> usize {
        self.stage_slots() * self.scripts
    }

    /// The cell of `script` in stage slot `slot`.
    pub fn cell(&self, slot: usize, script: usize) -> usize {
        slot * self.scripts + script
    }

    fn empty_cells(&self) -> Vec<LiveCell> {
        vec![LiveCell::default(); self.cells()]
    }
}

/// One thread's place in [`LiveMetrics`]: its pending deltas and its gauges.
#[derive(Debug)]
pub struct LiveSlot {
    pending: Mutex<Vec<LiveCell>>,
    connected: AtomicU32,
    aborted: AtomicU32,
    stage_slot: AtomicU32,
    rate_tps: AtomicU64,
}

impl LiveSlot {
    fn new(shape: &LiveShape) -> LiveSlot {
        LiveSlot {
            pending: Mutex::new(shape.empty_cells()),
            connected: AtomicU32::new(0),
            aborted: AtomicU32::new(0),
            stage_slot: AtomicU32::new(0),
            rate_tps: AtomicU64::new(0),
        }
    }
}

/// What a thread says about itself at a publication edge.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadGauges {
    /// Its clients with an open connection.
    pub connected: u32,
    /// Its clients that aborted.
    pub aborted: u32,
    /// The stage slot it is in (0: warm-up).
    pub stage_slot: u32,
    /// Its share of the rate target (transactions per second; 0 when not throttled).
    pub rate_tps: f64,
}

/// The live figures of one run, shared by the engine's threads and the endpoint.
#[derive(Debug)]
pub struct LiveMetrics {
    shape: LiveShape,
    slots: Vec<LiveSlot>,
}

impl LiveMetrics {
    /// Slots for `threads` threads.
    pub fn new(threads: usize, shape: LiveShape) -> Arc<LiveMetrics> {
        Arc::new(LiveMetrics {
            shape,
            slots: (0..threads).map(|_| LiveSlot::new(&shape)).collect(),
        })
    }

    /// The shape (scripts, stages).
    pub fn shape(&self) -> LiveShape {
        self.shape
    }

    /// The gauges summed over the threads (the stage is thread 0's).
    pub fn gauges(&self) -> ThreadGauges {
        let mut g = ThreadGauges::default();
        for (i, s) in self.slots.iter().enumerate() {
            g.connected += s.connected.load(Ordering::Relaxed);
            g.aborted += s.aborted.load(Ordering::Relaxed);
            g.rate_tps += f64::from_bits(s.rate_tps.load(Ordering::Relaxed));
            if i == 0 {
                g.stage_slot = s.stage_slot.load(Ordering::Relaxed);
            }
        }
        g
    }
}

/// A thread's recorder: what it recorded since its last publication.
#[derive(Debug)]
pub struct LiveRecorder {
    cells: Vec<LiveCell>,
    dirty: bool,
    shape: LiveShape,
    table: &'static [u8],
    shared: Arc<LiveMetrics>,
    tid: usize,
}

impl LiveRecorder {
    /// The recorder of thread `tid`.
    pub fn new(shared: Arc<LiveMetrics>, tid: usize) -> LiveRecorder {
        let shape = shared.shape;
        LiveRecorder {
            cells: shape.empty_cells(),
            dirty: false,
            shape,
            table: bucket_of_coarse(),
            shared,
            tid,
        }
    }

    /// Records a finished transaction in stage slot `slot` (0: warm-up; see
    /// [`LiveShape::stage_slots`]).
    #[inline]
    pub fn record(&mut self, rec: &TxRecord, slot: usize) {
        let i = self.shape.cell(slot, rec.script);
        let Some(cell) = self.cells.get_mut(i) else {
            return;
        };
        self.dirty = true;
        if rec.first_try_success() && !self.shape.throttled {
            // The common case, without the general count's checks.
            cell.counters.successful += 1;
            cell.latency.record(rec.latency_us, self.table);
            return;
        }
        cell.counters.count(rec.outcome, rec.tries);
        if rec.outcome == TxOutcome::Success {
            cell.latency.record(rec.latency_us, self.table);
            if self.shape.throttled {
                cell.lag.record(rec.lag_us, self.table);
            }
        }
    }

    /// Publishes the gauges and hands what was recorded since the last time to the
    /// thread's slot. With `wait` false, a slot the endpoint holds is left alone (the
    /// delta waits for the next edge); the thread's last publication waits.
    pub fn publish(&mut self, gauges: ThreadGauges, wait: bool) {
        let Some(slot) = self.shared.slots.get(self.tid) else {
            return;
        };
        slot.connected.store(gauges.connected, Ordering::Relaxed);
        slot.aborted.store(gauges.aborted, Ordering::Relaxed);
        slot.stage_slot.store(gauges.stage_slot, Ordering::Relaxed);
        slot.rate_tps
            .store(gauges.rate_tps.to_bits(), Ordering::Relaxed);
        if !self.dirty {
            return;
        }
        let pending = if wait {
            Some(slot.pending.lock().unwrap_or_else(|e| e.into_inner()))
        } else {
            slot.pending.try_lock().ok()
        };
        if let Some(mut pending) = pending {
            for (p, c) in pending.iter_mut().zip(self.cells.iter_mut()) {
                p.add(c);
                *c = LiveCell::default();
            }
            self.dirty = false;
        }
    }
}

/// The endpoint's cumulative figures (never reset).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTotals {
    /// The shape of the cells.
    pub shape: LiveShape,
    /// One cell per stage slot and script ([`LiveShape::cell`]).
    pub cells: Vec<LiveCell>,
}

impl LiveTotals {
    /// Empty totals of `shape`.
    pub fn new(shape: LiveShape) -> LiveTotals {
        LiveTotals {
            shape,
            cells: shape.empty_cells(),
        }
    }

    /// Takes every thread's published deltas.
    pub fn absorb(&mut self, live: &LiveMetrics) {
        self.absorb_also_into(live, None);
    }

    /// Takes every thread's published deltas, adding them to `also` as well (the
    /// deltas of an interval, for the dashboard).
    pub fn absorb_also_into(&mut self, live: &LiveMetrics, mut also: Option<&mut LiveTotals>) {
        for slot in &live.slots {
            let mut pending = slot.pending.lock().unwrap_or_else(|e| e.into_inner());
            for (i, (t, p)) in self.cells.iter_mut().zip(pending.iter_mut()).enumerate() {
                t.add(p);
                if let Some(cell) = also.as_deref_mut().and_then(|a| a.cells.get_mut(i)) {
                    cell.add(p);
                }
                *p = LiveCell::default();
            }
        }
    }

    /// The cells of script `script` over every stage slot, added up.
    pub fn script_total(&self, script: usize) -> LiveCell {
        let mut out = LiveCell::default();
        for slot in 0..self.shape.stage_slots() {
            if let Some(c) = self.cells.get(self.shape.cell(slot, script)) {
                out.add(c);
            }
        }
        out
    }

    /// Every cell added up.
    pub fn total(&self) -> LiveCell {
        let mut out = LiveCell::default();
        for c in &self.cells {
            out.add(c);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx(script: usize, outcome: TxOutcome, latency_us: f64, tries: u32) -> TxRecord {
        TxRecord {
            script,
            outcome,
            latency_us,
            lag_us: latency_us / 2.0,
            tries,
        }
    }

    #[test]
    fn bounds_rise_from_10_us_to_100_s() {
        assert_eq!(BUCKET_BOUNDS_US[0], 10);
        assert_eq!(
            &BUCKET_BOUNDS_US[..11],
            &[10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100]
        );
        assert_eq!(BUCKET_BOUNDS_US[70], 100_000_000);
        assert!(BUCKET_BOUNDS_US.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_value_falls_in_the_first_bucket_whose_bound_holds_its_hdr_bucket() {
        let table = bucket_of_coarse();
        let mut h = LiveHistogram::default();
        // Exact below 256 µs: 10 is in the 10 bucket, 11 in the 12 one.
        h.record(10.0, table);
        h.record(11.0, table);
        // 1000 µs: its two-digit bucket is 1000..=1003, past the bound 1000.
        h.record(1000.0, table);
        // Past the last bound: +Inf.
        h.record(1e9, table);
        assert_eq!(h.counts[0], 1);
        assert_eq!(h.counts[1], 1);
        assert_eq!(h.counts[BUCKET_BOUNDS_US.partition_point(|&b| b < 1200)], 1);
        assert_eq!(h.counts[LIVE_BUCKETS - 1], 1);
        assert_eq!(h.count(), 4);
        let cum = h.cumulative();
        assert_eq!(cum[LIVE_BUCKETS - 1], 4);
        assert!(cum.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn deltas_published_by_threads_add_up_in_the_totals() {
        let shape = LiveShape {
            scripts: 2,
            stages: 0,
            throttled: true,
        };
        let live = LiveMetrics::new(2, shape);
        let mut a = LiveRecorder::new(Arc::clone(&live), 0);
        let mut b = LiveRecorder::new(Arc::clone(&live), 1);
        a.record(&tx(0, TxOutcome::Success, 100.0, 1), 1);
        a.record(&tx(1, TxOutcome::SerializationFailure, 0.0, 3), 1);
        b.record(&tx(0, TxOutcome::Success, 300.0, 2), 0);
        b.record(&tx(0, TxOutcome::Skipped, 0.0, 1), 1);
        let gauges = ThreadGauges {
            connected: 2,
            aborted: 0,
            stage_slot: 1,
            rate_tps: 50.0,
        };
        a.publish(gauges, false);
        b.publish(gauges, true);
        let mut totals = LiveTotals::new(shape);
        totals.absorb(&live);
        // Twice: what was taken is not taken again.
        totals.absorb(&live);
        let run0 = &totals.cells[shape.cell(1, 0)];
        assert_eq!(run0.counters.successful, 1);
        assert_eq!(run0.counters.skipped, 1);
        assert_eq!(run0.latency.count(), 1);
        assert_eq!(run0.lag.sum_us, 50.0);
        let run1 = &totals.cells[shape.cell(1, 1)];
        assert_eq!(run1.counters.serialization_failures, 1);
        assert_eq!(run1.counters.retries, 2);
        assert_eq!(run1.latency.count(), 0);
        let warm0 = &totals.cells[shape.cell(0, 0)];
        assert_eq!(warm0.counters.retried, 1);
        assert_eq!(warm0.latency.sum_us, 300.0);
        let g = live.gauges();
        assert_eq!((g.connected, g.stage_slot, g.rate_tps), (4, 1, 100.0));
        // A later delta adds to the totals (cumulative).
        a.record(&tx(0, TxOutcome::Success, 100.0, 1), 1);
        a.publish(gauges, false);
        totals.absorb(&live);
        assert_eq!(totals.cells[shape.cell(1, 0)].counters.successful, 2);
    }

    #[test]
    fn a_held_slot_keeps_the_delta_for_the_next_edge() {
        let shape = LiveShape {
            scripts: 1,
            stages: 2,
            throttled: false,
        };
        let live = LiveMetrics::new(1, shape);
        let mut a = LiveRecorder::new(Arc::clone(&live), 0);
        a.record(&tx(0, TxOutcome::Success, 100.0, 1), 2);
        {
            let _held = live.slots[0].pending.lock();
            a.publish(ThreadGauges::default(), false);
        }
        let mut totals = LiveTotals::new(shape);
        totals.absorb(&live);
        assert_eq!(totals.cells[shape.cell(2, 0)].counters.successful, 0);
        a.publish(ThreadGauges::default(), false);
        totals.absorb(&live);
        assert_eq!(totals.cells[shape.cell(2, 0)].counters.successful, 1);
        assert_eq!(totals.cells[shape.cell(2, 0)].lag.count(), 0);
    }

    #[test]
    fn quantiles_are_bucket_bounds_and_intervals_are_absorbed_twice() {
        let shape = LiveShape {
            scripts: 2,
            stages: 0,
            throttled: false,
        };
        let live = LiveMetrics::new(1, shape);
        let mut rec = LiveRecorder::new(Arc::clone(&live), 0);
        for _ in 0..98 {
            rec.record(&tx(0, TxOutcome::Success, 990.0, 1), 1);
        }
        rec.record(&tx(1, TxOutcome::Success, 9_000.0, 1), 1);
        rec.record(&tx(1, TxOutcome::Success, 45_000.0, 1), 1);
        rec.publish(ThreadGauges::default(), true);
        let mut totals = LiveTotals::new(shape);
        let mut interval = LiveTotals::new(shape);
        totals.absorb_also_into(&live, Some(&mut interval));
        assert_eq!(totals, interval);
        let all = interval.total().latency;
        assert_eq!(all.quantile_upper_us(0.5), Some(1_000));
        assert_eq!(all.quantile_upper_us(0.99), Some(10_000));
        assert_eq!(all.quantile_upper_us(1.0), Some(50_000));
        assert_eq!(interval.script_total(1).latency.mean_us(), Some(27_000.0));
        assert_eq!(interval.script_total(0).latency.mean_us(), Some(990.0));
        assert_eq!(LiveHistogram::default().quantile_upper_us(0.5), None);
        // The deltas went: a second absorb adds nothing.
        let mut again = LiveTotals::new(shape);
        totals.absorb_also_into(&live, Some(&mut again));
        assert_eq!(again.total().counters.successful, 0);
        assert_eq!(totals.total().counters.successful, 100);
    }
}
