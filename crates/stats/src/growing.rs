//! A latency histogram whose memory grows with what is recorded: the per-command
//! histograms (`-r` with per-command percentiles), one per script command and thread.
//!
//! It has exactly the counts of a [`LatencyHistogram`] (same HDR index space: values in
//! µs, 3 significant digits, clamped to [`HISTOGRAM_MAX_US`]), but stores only a window
//! of the counts array, from the lowest to the highest index used, allocated on the first
//! value ([`CHUNK`] counts, 1 KiB) and at least doubled when a value falls outside it: a
//! command executed a few times holds about 1 KiB instead of 184 KiB, and recording
//! allocates at most a handful of times per histogram (log2 of 184 KiB / 1 KiB).

use crate::histogram::{HISTOGRAM_MAX_US, LatencyHistogram};
use serde::{Serialize, Serializer};
use std::ops::AddAssign;

/// Counts in the first window; windows start and end on multiples of it.
pub const CHUNK: usize = 128;
/// log2 of the sub-bucket half count of a 3-significant-digit HDR histogram (1024).
const HALF_MAGNITUDE: u32 = 10;
/// HdrHistogram's `leading_zero_count_base` for unit magnitude 0: 64 − 0 − 10 − 1.
const LEADING_ZERO_BASE: u32 = 53;
/// Sub-bucket mask (sub-bucket count 2048, minus 1).
const SUB_BUCKET_MASK: u64 = 2047;
/// Length of a [`LatencyHistogram`]'s counts array: (22 buckets + 1) × 1024.
pub const COUNTS_LEN: usize = 23 * 1024;

/// The counts index of `value` in a [`LatencyHistogram`], `None` past its counts array
/// (such values are clamped to [`HISTOGRAM_MAX_US`] when recorded).
#[inline]
pub fn counts_index(value: u64) -> Option<usize> {
    let bucket = LEADING_ZERO_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    let index = ((bucket as usize + 1) << HALF_MAGNITUDE) + sub_bucket - (1 << HALF_MAGNITUDE);
    (index < COUNTS_LEN).then_some(index)
}

/// The lowest value of counts index `index` (HdrHistogram's `value_for`).
pub fn index_value(index: usize) -> u64 {
    let half = 1usize << HALF_MAGNITUDE;
    let sub_bucket = (index & (half - 1)) + half;
    match (index >> HALF_MAGNITUDE).checked_sub(1) {
        Some(bucket) => (sub_bucket as u64) << bucket,
        None => (sub_bucket - half) as u64,
    }
}

/// The index where a saturating record of `value` lands.
#[inline]
fn clamped_index(value: u64) -> usize {
    counts_index(value)
        .or_else(|| counts_index(HISTOGRAM_MAX_US))
        .unwrap_or(COUNTS_LEN - 1)
}

/// The window `[lo, hi)` that covers `[lo, hi)` and index `i`, aligned on `chunk`, at
/// least twice as long as before (extended toward `i`), within a counts array of `len`.
pub(crate) fn grown_window(
    lo: usize,
    hi: usize,
    i: usize,
    chunk: usize,
    len: usize,
) -> (usize, usize) {
    let want = (hi - lo) * 2;
    let (mut new_lo, mut new_hi) = (lo.min(i), hi.max(i + 1));
    if new_hi - new_lo < want {
        if i < lo {
            new_lo = new_hi.saturating_sub(want);
        } else {
            new_hi = new_lo + want;
        }
    }
    (
        new_lo / chunk * chunk,
        new_hi.div_ceil(chunk).saturating_mul(chunk).min(len),
    )
}

/// The allocated part: a window of the counts array and the total count.
#[derive(Debug, Clone)]
struct Window {
    /// Counts index of `counts[0]`.
    lo: usize,
    /// Counts of indices `lo..lo + counts.len()`.
    counts: Vec<u64>,
    /// Number of values recorded (saturating).
    total: u64,
}

impl Window {
    /// A window of one [`CHUNK`] around index `i`.
    fn around(i: usize) -> Box<Self> {
        let lo = (i / CHUNK * CHUNK).min(COUNTS_LEN - CHUNK);
        Box::new(Window {
            lo,
            counts: vec![0; CHUNK],
            total: 0,
        })
    }

    /// Makes the window cover index `i`.
    #[cold]
    fn grow(&mut self, i: usize) {
        let hi = self.lo + self.counts.len();
        let (lo, hi) = grown_window(self.lo, hi, i, CHUNK, COUNTS_LEN);
        let mut counts = vec![0; hi - lo];
        let at = self.lo - lo;
        counts[at..at + self.counts.len()].copy_from_slice(&self.counts);
        self.lo = lo;
        self.counts = counts;
    }

    /// Adds `count` at counts index `i`.
    #[inline]
    fn add(&mut self, i: usize, count: u64) {
        if i < self.lo || i >= self.lo + self.counts.len() {
            self.grow(i);
        }
        let c = &mut self.counts[i - self.lo];
        *c = c.saturating_add(count);
        self.total = self.total.saturating_add(count);
    }

    /// `(counts index, count)` of every non-empty bucket, by index.
    fn recorded(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(k, &c)| (self.lo + k, c))
    }

    /// Heap bytes held (this block and its counts).
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.counts.capacity() * std::mem::size_of::<u64>()
    }
}

/// An HDR histogram of µs values with the counts of a [`LatencyHistogram`], stored as a
/// window of its counts array that grows with use (nothing at all while empty).
#[derive(Debug, Clone, Default)]
pub struct GrowingHistogram {
    counts: Option<Box<Window>>,
}

impl GrowingHistogram {
    /// An empty histogram (allocates nothing).
    pub fn new() -> Self {
        GrowingHistogram { counts: None }
    }

    /// Records a value in µs; negative and NaN values count as 0, huge ones as the maximum
    /// (as [`LatencyHistogram::record_us`]).
    #[inline]
    pub fn record_us(&mut self, value_us: f64) {
        // `as` saturates: NaN and negatives give 0.
        self.record_u64_n(value_us as u64, 1);
    }

    /// Records `count` occurrences of an integral value in µs (saturating).
    #[inline]
    pub fn record_u64_n(&mut self, value_us: u64, count: u64) {
        let i = clamped_index(value_us);
        self.counts
            .get_or_insert_with(|| Window::around(i))
            .add(i, count);
    }

    /// Adds every value of `other` (exactly: counts are added index by index).
    pub fn merge(&mut self, other: &GrowingHistogram) {
        let Some(theirs) = other.counts.as_deref() else {
            return;
        };
        let Some((first, _)) = theirs.recorded().next() else {
            return;
        };
        let mine = self.counts.get_or_insert_with(|| Window::around(first));
        for (i, c) in theirs.recorded() {
            mine.add(i, c);
        }
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.counts.as_ref().map_or(0, |c| c.total)
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `(lowest value of the bucket, count)` of every non-empty bucket, by value.
    pub fn iter_recorded(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .flat_map(|w| w.recorded())
            .map(|(i, c)| (index_value(i), c))
    }

    /// The same values in a full [`LatencyHistogram`] (identical counts, so identical
    /// percentiles, mean, min, max and serialized form). Allocates the 184 KiB array: for
    /// reports, one command at a time.
    pub fn to_histogram(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for (value, count) in self.iter_recorded() {
            h.record_u64_n(value, count);
        }
        h
    }

    /// Heap bytes held by this histogram.
    pub fn heap_bytes(&self) -> usize {
        self.counts.as_ref().map_or(0, |w| w.heap_bytes())
    }
}

impl AddAssign<&GrowingHistogram> for GrowingHistogram {
    fn add_assign(&mut self, rhs: &GrowingHistogram) {
        self.merge(rhs);
    }
}

impl Serialize for GrowingHistogram {
    /// Serialized as the equivalent [`LatencyHistogram`].
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_histogram().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values around every bucket edge, the clamping limits and beyond.
    fn edge_values() -> Vec<u64> {
        let mut v: Vec<u64> = (0..5000).collect();
        for shift in 11..64 {
            let p = 1u64 << shift;
            v.extend([p - 1, p, p + 1, p + p / 3]);
        }
        v.extend([
            HISTOGRAM_MAX_US - 1,
            HISTOGRAM_MAX_US,
            HISTOGRAM_MAX_US + 1,
            u64::MAX,
        ]);
        v
    }

    #[test]
    fn index_space_is_the_full_histograms() {
        let full = LatencyHistogram::new();
        assert_eq!(full.inner().distinct_values(), COUNTS_LEN);
        assert_eq!(COUNTS_LEN % CHUNK, 0);
        for v in edge_values() {
            match counts_index(v) {
                Some(i) => {
                    assert_eq!(index_value(i), full.inner().lowest_equivalent(v), "{v}");
                    assert!(i == 0 || index_value(i - 1) < index_value(i));
                }
                None => assert!(v > HISTOGRAM_MAX_US, "{v}"),
            }
        }
    }

    #[test]
    fn same_counts_as_a_full_histogram() {
        let mut full = LatencyHistogram::new();
        let mut growing = GrowingHistogram::new();
        for (k, v) in edge_values().into_iter().enumerate() {
            let n = k as u64 % 3 + 1;
            full.record_u64_n(v, n);
            growing.record_u64_n(v, n);
        }
        for f in [0.4, -3.0, f64::NAN, 1e300, 12_345.6] {
            full.record_us(f);
            growing.record_us(f);
        }
        let mat = growing.to_histogram();
        assert_eq!(mat.inner(), full.inner());
        assert_eq!(growing.len(), full.len());
        assert_eq!((mat.min(), mat.max()), (full.min(), full.max()));
        assert_eq!(mat.mean(), full.mean());
        for q in [0.0, 0.001, 0.5, 0.9, 0.99, 0.9999, 1.0] {
            assert_eq!(mat.value_at_quantile(q), full.value_at_quantile(q));
        }
        assert_eq!(
            serde_json::to_value(&growing).ok(),
            serde_json::to_value(&full).ok()
        );
    }

    #[test]
    fn merge_is_exact_and_memory_follows_use() {
        let mut a = GrowingHistogram::new();
        let mut b = GrowingHistogram::new();
        assert_eq!(a.heap_bytes(), 0);
        a.merge(&b);
        assert_eq!(a.heap_bytes(), 0);
        assert!(a.is_empty());
        let (mut fa, mut fb) = (LatencyHistogram::new(), LatencyHistogram::new());
        for v in [3u64, 100, 2047, 2048, 999_999, 5_000_000_000] {
            a.record_u64_n(v, 2);
            fa.record_u64_n(v, 2);
        }
        for v in [100u64, 101, 70_000] {
            b.record_u64_n(v, 1);
            fb.record_u64_n(v, 1);
        }
        b.merge(&a);
        fb.merge(&fa);
        a += &GrowingHistogram::new();
        assert_eq!(b.to_histogram().inner(), fb.inner());
        assert_eq!(b.len(), 15);
        let mut one = GrowingHistogram::new();
        one.record_us(250.0);
        assert!(one.heap_bytes() < 1400, "{}", one.heap_bytes());
        assert!(one.heap_bytes() >= CHUNK * 8);
    }

    #[test]
    fn windows_grow_a_logarithmic_number_of_times() {
        // Upward, downward and from the middle: each growth at least doubles the window.
        let orders: [Vec<u64>; 3] = [
            (0..40).map(|k| 1u64 << k).collect(),
            (0..40).rev().map(|k| 1u64 << k).collect(),
            (0..40).map(|k| (1u64 << 20) ^ (1u64 << k)).collect(),
        ];
        for values in orders {
            let mut h = GrowingHistogram::new();
            let mut growths = 0;
            let mut last = 0;
            for &v in &values {
                h.record_u64_n(v, 1);
                if h.heap_bytes() != last {
                    growths += 1;
                    last = h.heap_bytes();
                }
            }
            // The first allocation, then at most log2(23552 / 128) + 1 growths.
            assert!(growths <= 10, "{growths} growths for {values:?}");
            assert!(h.heap_bytes() <= COUNTS_LEN * 8 + 64);
            let mut full = LatencyHistogram::new();
            for &v in &values {
                full.record_u64(v);
            }
            assert_eq!(h.to_histogram().inner(), full.inner());
        }
    }
}
