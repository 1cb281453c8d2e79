//! A latency histogram whose memory grows with what is recorded: the per-command
//! histograms (`-r` with per-command percentiles), one per script command and thread.
//!
//! It has exactly the counts of a [`LatencyHistogram`] (same HDR index space: values in
//! µs, 3 significant digits, clamped to [`HISTOGRAM_MAX_US`]), but the counts array is
//! split into chunks of [`CHUNK`] counts (1 KiB) allocated on their first value: a
//! command executed a few times holds about 1.2 KiB instead of 184 KiB. Recording
//! allocates only when a value falls in a chunk not used before.

use crate::histogram::{HISTOGRAM_MAX_US, LatencyHistogram};
use serde::{Serialize, Serializer};
use std::ops::AddAssign;

/// Counts per chunk.
pub const CHUNK: usize = 128;
/// log2 of the sub-bucket half count of a 3-significant-digit HDR histogram (1024).
const HALF_MAGNITUDE: u32 = 10;
/// HdrHistogram's `leading_zero_count_base` for unit magnitude 0: 64 − 0 − 10 − 1.
const LEADING_ZERO_BASE: u32 = 53;
/// Sub-bucket mask (sub-bucket count 2048, minus 1).
const SUB_BUCKET_MASK: u64 = 2047;
/// Length of a [`LatencyHistogram`]'s counts array: (22 buckets + 1) × 1024.
pub const COUNTS_LEN: usize = 23 * 1024;
/// Number of chunks covering the counts array.
const N_CHUNKS: usize = COUNTS_LEN / CHUNK;

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

/// One chunk of counts.
type Chunk = [u64; CHUNK];

/// The allocated part: which chunks exist, the chunks, and the total count.
#[derive(Debug, Clone)]
struct Chunks {
    /// For each chunk number, 1 + its position in `chunks` (0: not allocated).
    slots: [u8; N_CHUNKS],
    /// The allocated chunks, in order of first use.
    chunks: Vec<Box<Chunk>>,
    /// Number of values recorded (saturating).
    total: u64,
}

impl Chunks {
    fn new() -> Box<Self> {
        Box::new(Chunks {
            slots: [0; N_CHUNKS],
            chunks: Vec::new(),
            total: 0,
        })
    }

    /// The chunk of number `n`, allocated on first use.
    #[inline]
    fn chunk_mut(&mut self, n: usize) -> &mut Chunk {
        if self.slots[n] == 0 {
            self.allocate(n);
        }
        &mut self.chunks[usize::from(self.slots[n]) - 1]
    }

    #[cold]
    fn allocate(&mut self, n: usize) {
        self.chunks.push(Box::new([0; CHUNK]));
        // At most N_CHUNKS (184) chunks: the position fits in a u8.
        self.slots[n] = u8::try_from(self.chunks.len()).unwrap_or(u8::MAX);
    }

    /// Adds `count` at counts index `index`.
    #[inline]
    fn add(&mut self, index: usize, count: u64) {
        let c = &mut self.chunk_mut(index / CHUNK)[index % CHUNK];
        *c = c.saturating_add(count);
        self.total = self.total.saturating_add(count);
    }

    /// The allocated chunks with their numbers, in increasing value order.
    fn in_order(&self) -> impl Iterator<Item = (usize, &Chunk)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|&(_, &s)| s != 0)
            .map(|(n, &s)| (n, &*self.chunks[usize::from(s) - 1]))
    }

    /// Heap bytes held (this block and its chunks).
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.chunks.capacity() * std::mem::size_of::<Box<Chunk>>()
            + self.chunks.len() * std::mem::size_of::<Chunk>()
    }
}

/// An HDR histogram of µs values with the counts of a [`LatencyHistogram`], stored in
/// chunks allocated on first use (nothing at all while empty).
#[derive(Debug, Clone, Default)]
pub struct ChunkedHistogram {
    counts: Option<Box<Chunks>>,
}

impl ChunkedHistogram {
    /// An empty histogram (allocates nothing).
    pub fn new() -> Self {
        ChunkedHistogram { counts: None }
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
        self.counts
            .get_or_insert_with(Chunks::new)
            .add(clamped_index(value_us), count);
    }

    /// Adds every value of `other` (exactly: counts are added index by index).
    pub fn merge(&mut self, other: &ChunkedHistogram) {
        let Some(theirs) = other.counts.as_deref() else {
            return;
        };
        let mine = self.counts.get_or_insert_with(Chunks::new);
        for (n, chunk) in theirs.in_order() {
            for (k, &c) in chunk.iter().enumerate().filter(|&(_, &c)| c > 0) {
                mine.add(n * CHUNK + k, c);
            }
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
            .flat_map(|c| c.in_order())
            .flat_map(|(n, chunk)| {
                chunk
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| c > 0)
                    .map(move |(k, &c)| (index_value(n * CHUNK + k), c))
            })
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
        self.counts.as_ref().map_or(0, |c| c.heap_bytes())
    }
}

impl AddAssign<&ChunkedHistogram> for ChunkedHistogram {
    fn add_assign(&mut self, rhs: &ChunkedHistogram) {
        self.merge(rhs);
    }
}

impl Serialize for ChunkedHistogram {
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
        let mut chunked = ChunkedHistogram::new();
        for (k, v) in edge_values().into_iter().enumerate() {
            let n = k as u64 % 3 + 1;
            full.record_u64_n(v, n);
            chunked.record_u64_n(v, n);
        }
        for f in [0.4, -3.0, f64::NAN, 1e300, 12_345.6] {
            full.record_us(f);
            chunked.record_us(f);
        }
        let mat = chunked.to_histogram();
        assert_eq!(mat.inner(), full.inner());
        assert_eq!(chunked.len(), full.len());
        assert_eq!((mat.min(), mat.max()), (full.min(), full.max()));
        assert_eq!(mat.mean(), full.mean());
        for q in [0.0, 0.001, 0.5, 0.9, 0.99, 0.9999, 1.0] {
            assert_eq!(mat.value_at_quantile(q), full.value_at_quantile(q));
        }
        assert_eq!(
            serde_json::to_value(&chunked).ok(),
            serde_json::to_value(&full).ok()
        );
    }

    #[test]
    fn merge_is_exact_and_memory_follows_use() {
        let mut a = ChunkedHistogram::new();
        let mut b = ChunkedHistogram::new();
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
        a += &ChunkedHistogram::new();
        assert_eq!(b.to_histogram().inner(), fb.inner());
        assert_eq!(b.len(), 15);
        let mut one = ChunkedHistogram::new();
        one.record_us(250.0);
        assert!(one.heap_bytes() < 1400, "{}", one.heap_bytes());
        assert!(one.heap_bytes() >= std::mem::size_of::<Chunk>());
    }
}
