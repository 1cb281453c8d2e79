//! Fixed-range HDR histograms of latencies in µs (no allocation when recording).

use hdrhistogram::Histogram;
use serde::ser::{Serialize, SerializeStruct, Serializer};
use std::ops::AddAssign;
use std::sync::OnceLock;

/// Largest value a histogram resolves: one hour in µs; larger values are clamped to it.
pub const HISTOGRAM_MAX_US: u64 = 3_600_000_000;

/// `value_us as u64` for a histogram's bucket, in fewer instructions: through i64, a
/// single conversion instruction; values of 2^63 and more come out as i64::MAX instead,
/// past the last bucket as they would be anyway. NaN and negatives give 0.
#[inline]
pub(crate) fn saturating_u64(value_us: f64) -> u64 {
    (value_us as i64).max(0) as u64
}
/// Significant decimal digits kept by every histogram.
pub const HISTOGRAM_SIGFIG: u8 = 3;

/// Quantiles listed when a histogram is serialized (the JSON run document).
pub const SERIALIZED_QUANTILES: [f64; 7] = [0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999];

/// An HDR histogram of µs values, range 0..=[`HISTOGRAM_MAX_US`], 3 significant digits,
/// auto-resize off; out-of-range values saturate. The counts array (184 KiB) is allocated
/// on the first value, so histograms that stay empty cost no memory; after that,
/// recording never allocates.
#[derive(Debug, Clone, Default)]
pub struct LatencyHistogram {
    hist: Option<Histogram<u64>>,
}

/// A new, empty histogram with the fixed bounds.
fn empty_histogram() -> Histogram<u64> {
    match Histogram::new_with_bounds(1, HISTOGRAM_MAX_US, HISTOGRAM_SIGFIG) {
        Ok(h) => h,
        // The bounds are constants known to be valid.
        Err(_) => unreachable!("constant histogram bounds are valid"),
    }
}

/// The histogram [`LatencyHistogram::inner`] shows for one that never got a value.
fn shared_empty() -> &'static Histogram<u64> {
    static EMPTY: OnceLock<Histogram<u64>> = OnceLock::new();
    EMPTY.get_or_init(empty_histogram)
}

impl LatencyHistogram {
    /// Creates an empty histogram (nothing is allocated before the first value).
    pub fn new() -> Self {
        LatencyHistogram { hist: None }
    }

    /// An empty histogram with the fixed bounds (for the counts layout).
    pub(crate) fn layout() -> &'static Histogram<u64> {
        shared_empty()
    }

    /// The counts, allocated on first use.
    #[inline]
    fn counts(&mut self) -> &mut Histogram<u64> {
        self.hist.get_or_insert_with(empty_histogram)
    }

    /// The counts (an empty histogram when none was allocated).
    #[inline]
    fn view(&self) -> &Histogram<u64> {
        self.hist.as_ref().unwrap_or_else(|| shared_empty())
    }

    /// Records a value in µs; negative and NaN values count as 0, huge ones as the maximum.
    #[inline]
    pub fn record_us(&mut self, value_us: f64) {
        // `as` saturates: NaN and negatives give 0.
        self.counts().saturating_record(value_us as u64);
    }

    /// Records an integral value in µs (saturating).
    #[inline]
    pub fn record_u64(&mut self, value_us: u64) {
        self.counts().saturating_record(value_us);
    }

    /// Records `count` occurrences of an integral value in µs (saturating).
    #[inline]
    pub fn record_u64_n(&mut self, value_us: u64, count: u64) {
        self.counts().saturating_record_n(value_us, count);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        let Some(theirs) = other.hist.as_ref().filter(|h| !h.is_empty()) else {
            return;
        };
        match self.hist.as_mut().filter(|h| !h.is_empty()) {
            Some(mine) => {
                if mine.add(theirs).is_err() {
                    // Cannot happen with identical bounds; keep the data anyway.
                    for v in theirs.iter_recorded() {
                        mine.saturating_record_n(v.value_iterated_to(), v.count_at_value());
                    }
                }
            }
            None => self.hist = Some(theirs.clone()),
        }
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.view().len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.view().is_empty()
    }

    /// The value at quantile `q` (0..=1), in µs; 0 when empty.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.view().value_at_quantile(q)
    }

    /// Smallest recorded value (µs, histogram resolution).
    pub fn min(&self) -> u64 {
        self.view().min()
    }

    /// Largest recorded value (µs, histogram resolution).
    pub fn max(&self) -> u64 {
        self.view().max()
    }

    /// Mean of the recorded values (µs, histogram resolution).
    pub fn mean(&self) -> f64 {
        self.view().mean()
    }

    /// Number of values above `limit_us` (`inclusive`: at or above it), each bucket
    /// placed at its lowest value (the histogram's resolution, 3 significant digits).
    pub fn count_above(&self, limit_us: f64, inclusive: bool) -> u64 {
        let view = self.view();
        view.iter_recorded()
            .filter(|v| {
                let at = view.lowest_equivalent(v.value_iterated_to()) as f64;
                at > limit_us || (inclusive && at == limit_us)
            })
            .map(|v| v.count_at_value())
            .sum()
    }

    /// The underlying `hdrhistogram` histogram (for plots and exports).
    pub fn inner(&self) -> &Histogram<u64> {
        self.view()
    }

    /// Forgets every value (keeps the allocation).
    pub fn reset(&mut self) {
        if let Some(h) = self.hist.as_mut() {
            h.reset();
        }
    }
}

impl AddAssign<&LatencyHistogram> for LatencyHistogram {
    fn add_assign(&mut self, rhs: &LatencyHistogram) {
        self.merge(rhs);
    }
}

impl Serialize for LatencyHistogram {
    /// Serialized as a summary: `count`, `min_us`, `max_us`, `mean_us`, `stdev_us` and
    /// `percentiles_us` (pairs `[percentile, value]` for [`SERIALIZED_QUANTILES`]).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("LatencyHistogram", 6)?;
        s.serialize_field("count", &self.view().len())?;
        s.serialize_field("min_us", &self.view().min())?;
        s.serialize_field("max_us", &self.view().max())?;
        s.serialize_field("mean_us", &self.view().mean())?;
        s.serialize_field("stdev_us", &self.view().stdev())?;
        let pct: Vec<(f64, u64)> = SERIALIZED_QUANTILES
            .iter()
            .map(|&q| (q * 100.0, self.view().value_at_quantile(q)))
            .collect();
        s.serialize_field("percentiles_us", &pct)?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_above_a_limit() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.count_above(0.0, true), 0);
        for v in [1_000u64, 5_000, 5_000, 6_000, 200_000] {
            h.record_u64(v);
        }
        assert_eq!(h.count_above(5_000.0, false), 2);
        assert_eq!(h.count_above(5_000.0, true), 4);
        assert_eq!(h.count_above(999.0, false), 5);
        assert_eq!(h.count_above(300_000.0, true), 0);
    }

    #[test]
    fn record_saturate_merge() {
        let mut h = LatencyHistogram::new();
        assert!(h.is_empty());
        h.record_us(100.0);
        h.record_us(-5.0);
        h.record_us(f64::NAN);
        h.record_us(1e300);
        assert_eq!(h.len(), 4);
        assert_eq!(h.min(), 0);
        assert!(h.max() >= HISTOGRAM_MAX_US);
        let mut g = LatencyHistogram::new();
        for v in 1..=1000u64 {
            g.record_u64(v);
        }
        let q = g.value_at_quantile(0.5);
        assert!((499..=501).contains(&q), "{q}");
        g += &h;
        assert_eq!(g.len(), 1004);
        let json = serde_json::to_value(&g).unwrap_or_default();
        assert_eq!(json["count"], 1004);
        assert_eq!(json["percentiles_us"].as_array().map(Vec::len), Some(7));
    }

    #[test]
    fn unused_histograms_allocate_nothing() {
        let mut e = LatencyHistogram::new();
        e.merge(&LatencyHistogram::new());
        e.reset();
        assert!(e.hist.is_none());
        assert!(e.is_empty());
        assert_eq!(e.inner().len(), 0);
        assert_eq!((e.min(), e.max(), e.value_at_quantile(0.5)), (0, 0, 0));
        assert_eq!(e.mean(), 0.0);
        let json = serde_json::to_value(&e).unwrap_or_default();
        assert_eq!(json["count"], 0);
        e.record_u64(7);
        assert_eq!((e.len(), e.min(), e.max()), (1, 7, 7));
    }

    #[test]
    fn merge_into_empty_equals_the_source() {
        let mut src = LatencyHistogram::new();
        for v in [0u64, 1, 999, 2047, 2048, 2049, 123_456, 9_999_999, u64::MAX] {
            src.record_u64_n(v, v % 7 + 1);
        }
        let mut empty = LatencyHistogram::new();
        empty.merge(&src);
        let mut nonempty = LatencyHistogram::new();
        nonempty.record_u64(5);
        nonempty.merge(&src);
        nonempty.merge(&LatencyHistogram::new());
        assert_eq!(empty.inner(), src.inner());
        assert_eq!(empty.len(), src.len());
        assert_eq!(nonempty.len(), src.len() + 1);
        assert_eq!((empty.min(), empty.max()), (src.min(), src.max()));
        assert_eq!(empty.mean(), src.mean());
        for q in [0.0, 0.1, 0.5, 0.9, 0.999, 1.0] {
            assert_eq!(empty.value_at_quantile(q), src.value_at_quantile(q));
        }
    }
}
