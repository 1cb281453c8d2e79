//! [`PendingCounts`]: latencies counted in HdrHistogram's own bucket layout at a few
//! instructions each, added to a [`LatencyHistogram`] in bulk.
//!
//! `Histogram::saturating_record` costs some 60 instructions a value (an out-of-line
//! call, range checks, min/max and total updates); a transaction's latency is recorded
//! once per transaction, so the hot path only bumps the bucket's count here and the
//! crate's histogram gets each bucket once, with its count, when the statistics are read
//! (merged). Counts per bucket, total, `min()` and `max()` come out identical (the
//! crate's min and max are reported at bucket resolution).

use crate::histogram::{HISTOGRAM_SIGFIG, LatencyHistogram, saturating_u64};

/// log2 of HdrHistogram's sub-bucket count at [`HISTOGRAM_SIGFIG`] digits: the power of
/// two ≥ 2·10^digits (2048 for 3 digits).
const SUB_BUCKET_BITS: u32 = (2 * 10u64.pow(HISTOGRAM_SIGFIG as u32))
    .next_power_of_two()
    .trailing_zeros();
/// log2 of half the sub-bucket count: buckets past the first use their upper half only.
const HALF_BITS: u32 = SUB_BUCKET_BITS - 1;
/// Values under the sub-bucket count all fall in bucket 0.
const SUB_BUCKET_MASK: u64 = (1 << SUB_BUCKET_BITS) - 1;

/// HdrHistogram's counts index of `v` for a lowest discernible value of 1 (unit
/// magnitude 0), as its `index_for`: the bucket is the number of powers of two `v` lies
/// above bucket 0, the sub-bucket `v` shifted right by the bucket.
#[inline]
fn counts_index(v: u64) -> usize {
    if v <= SUB_BUCKET_MASK {
        // Bucket 0 holds every value at its own index (most latencies are under 2 ms).
        return v as usize;
    }
    let bucket = 64 - SUB_BUCKET_BITS - (v | SUB_BUCKET_MASK).leading_zeros();
    (((bucket as usize) + 1) << HALF_BITS) + (v >> bucket) as usize - (1 << HALF_BITS)
}

/// The smallest value whose counts index is `i` (inverse of [`counts_index`]).
fn lowest_value_at(i: usize) -> u64 {
    let half = 1usize << HALF_BITS;
    if i < 2 * half {
        return i as u64;
    }
    let bucket = (i >> HALF_BITS) - 1;
    let sub_bucket = (i & (half - 1)) + half;
    (sub_bucket as u64) << bucket
}

/// Latencies (µs) waiting to be added to a [`LatencyHistogram`]: a count per HdrHistogram
/// bucket, allocated on the first value (pages are only made resident where values fall).
#[derive(Debug, Clone, Default)]
pub struct PendingCounts {
    /// Count per counts index of the fixed-bounds histogram.
    counts: Vec<u64>,
    /// The histogram's highest trackable value: values past the last bucket saturate to it.
    high: u64,
    /// Values pending (0: nothing to add).
    len: u64,
}

impl PendingCounts {
    /// Counts a value in µs; negative and NaN values count as 0, values past the last
    /// bucket as the histogram's highest trackable value (as [`LatencyHistogram::record_us`]).
    #[inline]
    pub fn record_us(&mut self, value_us: f64) {
        let v = saturating_u64(value_us);
        match self.counts.get_mut(counts_index(v)) {
            Some(c) => {
                *c += 1;
                self.len += 1;
            }
            None => self.record_out_of_range(v),
        }
    }

    /// The first value (the counts are allocated with the histogram's layout), or one
    /// past the last bucket, saturated as `Histogram::saturating_record` does.
    #[cold]
    #[inline(never)]
    fn record_out_of_range(&mut self, v: u64) {
        if self.counts.is_empty() {
            let layout = LatencyHistogram::layout();
            self.counts = vec![0; layout.distinct_values()];
            self.high = layout.high();
        }
        let i = counts_index(v);
        let i = if i < self.counts.len() {
            i
        } else {
            counts_index(self.high)
        };
        if let Some(c) = self.counts.get_mut(i) {
            *c += 1;
            self.len += 1;
        }
    }

    /// Adds the pending values to `hist` (they stay pending here).
    pub fn add_to(&self, hist: &mut LatencyHistogram) {
        if self.len == 0 {
            return;
        }
        for (i, &c) in self.counts.iter().enumerate() {
            if c != 0 {
                hist.record_u64_n(lowest_value_at(i), c);
            }
        }
    }

    /// Moves the pending values into `hist`.
    pub fn drain_into(&mut self, hist: &mut LatencyHistogram) {
        self.add_to(hist);
        if self.len != 0 {
            // Zero only the counts used: the rest of the pages stay untouched.
            self.counts
                .iter_mut()
                .filter(|c| **c != 0)
                .for_each(|c| *c = 0);
            self.len = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every counts index of the crate's histogram maps back to itself.
    #[test]
    fn index_layout_matches_hdrhistogram() {
        let layout = LatencyHistogram::layout();
        for (i, v) in layout.iter_all().enumerate() {
            let value = v.value_iterated_to();
            assert_eq!(counts_index(value), i, "value {value}");
            assert_eq!(counts_index(lowest_value_at(i)), i);
            assert_eq!(layout.lowest_equivalent(value), lowest_value_at(i));
        }
    }

    fn assert_same(direct: &LatencyHistogram, via: &LatencyHistogram) {
        // (`assert!`: a histogram's Debug output is some 200 KB.)
        assert!(
            direct.inner() == via.inner(),
            "counts, total, min or max differ"
        );
        assert_eq!(direct.len(), via.len());
        assert_eq!((direct.min(), direct.max()), (via.min(), via.max()));
        assert_eq!(direct.mean().to_bits(), via.mean().to_bits());
        assert_eq!(
            direct.inner().stdev().to_bits(),
            via.inner().stdev().to_bits()
        );
        for q in [0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(direct.value_at_quantile(q), via.value_at_quantile(q));
        }
        assert_eq!(
            serde_json::to_value(direct).ok(),
            serde_json::to_value(via).ok()
        );
    }

    /// A small xorshift generator: deterministic values over the whole range.
    fn values(seed: u64, n: usize) -> Vec<f64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let bits = x % 40;
                (x >> 24) as f64 / (1u64 << 40) as f64 * (1u64 << bits) as f64
            })
            .collect()
    }

    #[test]
    fn drained_counts_equal_direct_records() {
        let specials = [
            0.0,
            -3.0,
            f64::NAN,
            0.4,
            1.0,
            2047.9,
            2048.0,
            1e300,
            3.6e9,
            4.2e9,
            5e9,
            1e19,
            2e19,
            -1e300,
        ];
        for seed in 1..20 {
            let mut direct = LatencyHistogram::new();
            let mut pending = PendingCounts::default();
            let mut via = LatencyHistogram::new();
            via.record_us(5.0);
            direct.record_us(5.0);
            for v in values(seed, 2000).into_iter().chain(specials) {
                direct.record_us(v);
                pending.record_us(v);
            }
            let mut copy = LatencyHistogram::new();
            copy.merge(&via);
            pending.add_to(&mut copy);
            pending.drain_into(&mut via);
            assert_eq!(via.len(), 2001 + specials.len() as u64);
            assert_same(&direct, &via);
            assert_same(&direct, &copy);
            // Drained counts are gone; new ones are counted from zero.
            pending.record_us(7.0);
            pending.drain_into(&mut via);
            direct.record_us(7.0);
            assert_same(&direct, &via);
        }
    }

    #[test]
    fn nothing_pending_adds_nothing() {
        let mut h = LatencyHistogram::new();
        let mut p = PendingCounts::default();
        p.drain_into(&mut h);
        p.add_to(&mut h);
        assert!(h.is_empty());
        assert_eq!(p.len, 0);
    }
}
