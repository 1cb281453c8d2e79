//! Fixed-range HDR histograms of latencies in µs (no allocation when recording).

use hdrhistogram::Histogram;
use serde::ser::{Serialize, SerializeStruct, Serializer};
use std::ops::AddAssign;

/// Largest value a histogram resolves: one hour in µs; larger values are clamped to it.
pub const HISTOGRAM_MAX_US: u64 = 3_600_000_000;
/// Significant decimal digits kept by every histogram.
pub const HISTOGRAM_SIGFIG: u8 = 3;

/// Quantiles listed when a histogram is serialized (issue 8's JSON output).
pub const SERIALIZED_QUANTILES: [f64; 7] = [0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999];

/// An HDR histogram of µs values, range 0..=[`HISTOGRAM_MAX_US`], 3 significant digits,
/// auto-resize off, so recording never allocates; out-of-range values saturate.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// Creates an empty histogram (allocates its whole counts array once).
    pub fn new() -> Self {
        let hist = match Histogram::new_with_bounds(1, HISTOGRAM_MAX_US, HISTOGRAM_SIGFIG) {
            Ok(h) => h,
            // The bounds are constants known to be valid.
            Err(_) => unreachable!("constant histogram bounds are valid"),
        };
        LatencyHistogram { hist }
    }

    /// Records a value in µs; negative and NaN values count as 0, huge ones as the maximum.
    #[inline]
    pub fn record_us(&mut self, value_us: f64) {
        // `as` saturates: NaN and negatives give 0.
        self.hist.saturating_record(value_us as u64);
    }

    /// Records an integral value in µs (saturating).
    #[inline]
    pub fn record_u64(&mut self, value_us: u64) {
        self.hist.saturating_record(value_us);
    }

    /// Records `count` occurrences of an integral value in µs (saturating).
    #[inline]
    pub fn record_u64_n(&mut self, value_us: u64, count: u64) {
        self.hist.saturating_record_n(value_us, count);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if self.hist.add(&other.hist).is_err() {
            // Cannot happen with identical bounds; keep the data anyway.
            for v in other.hist.iter_recorded() {
                self.hist
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// The value at quantile `q` (0..=1), in µs; 0 when empty.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q)
    }

    /// Smallest recorded value (µs, histogram resolution).
    pub fn min(&self) -> u64 {
        self.hist.min()
    }

    /// Largest recorded value (µs, histogram resolution).
    pub fn max(&self) -> u64 {
        self.hist.max()
    }

    /// Mean of the recorded values (µs, histogram resolution).
    pub fn mean(&self) -> f64 {
        self.hist.mean()
    }

    /// The underlying `hdrhistogram` histogram (for plots and exports).
    pub fn inner(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// Forgets every value (keeps the allocation).
    pub fn reset(&mut self) {
        self.hist.reset();
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
        s.serialize_field("count", &self.hist.len())?;
        s.serialize_field("min_us", &self.hist.min())?;
        s.serialize_field("max_us", &self.hist.max())?;
        s.serialize_field("mean_us", &self.hist.mean())?;
        s.serialize_field("stdev_us", &self.hist.stdev())?;
        let pct: Vec<(f64, u64)> = SERIALIZED_QUANTILES
            .iter()
            .map(|&q| (q * 100.0, self.hist.value_at_quantile(q)))
            .collect();
        s.serialize_field("percentiles_us", &pct)?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
