//! A latency (or lag) distribution of the run document: exact figures, percentiles,
//! the HDR histogram and the raw sums.

use crate::document_figures::{PercentileValue, RawSums};
use crate::hdr;
use crate::percentiles::{PercentileList, percentiles_ms};
use pgrush_stats::{LatencyHistogram, SimpleStats};
use serde::{Deserialize, Serialize};

/// A latency (or lag) distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// Number of values.
    pub count: u64,
    /// Exact minimum (ms).
    pub min_ms: f64,
    /// Exact maximum (ms).
    pub max_ms: f64,
    /// Exact mean (ms), as pgbench computes it.
    pub average_ms: f64,
    /// Standard deviation (ms), as pgbench computes it (`null` when not a number).
    pub stddev_ms: Option<f64>,
    /// Requested percentiles (histogram resolution, 3 significant digits).
    pub percentiles: Vec<PercentileValue>,
    /// The HDR histogram in µs, V2 compressed, base64.
    pub hdr_histogram: String,
    /// The raw sums, for exact merging (absent in documents of older pgrush versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sums: Option<RawSums>,
}

/// `v`, or `None` when it is not a number (C would print NaN or infinity).
pub(crate) fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl Distribution {
    /// The distribution of the values in `st` and `hist` (`None` when there are none).
    pub(crate) fn build(
        st: &SimpleStats,
        hist: &LatencyHistogram,
        list: &PercentileList,
    ) -> Option<Self> {
        if st.count == 0 {
            return None;
        }
        let values = percentiles_ms(hist, list, Some(st.max)).unwrap_or_default();
        Some(Distribution {
            count: st.count,
            min_ms: st.min / 1000.0,
            max_ms: st.max / 1000.0,
            average_ms: st.mean() / 1000.0,
            stddev_ms: finite(st.stddev() / 1000.0),
            percentiles: list
                .values()
                .iter()
                .zip(values)
                .map(|(&p, ms)| PercentileValue { p, ms })
                .collect(),
            hdr_histogram: hdr::encode(hist),
            sums: Some(RawSums::of(st)),
        })
    }

    /// The raw figures: the stored sums, else (older documents) rebuilt from the rounded
    /// average and standard deviation.
    pub fn raw_stats(&self) -> SimpleStats {
        if let Some(sums) = &self.sums {
            return sums.to_stats();
        }
        let n = self.count as f64;
        let mean_us = self.average_ms * 1000.0;
        let sd_us = self.stddev_ms.unwrap_or(0.0) * 1000.0;
        SimpleStats {
            count: self.count,
            min: self.min_ms * 1000.0,
            max: self.max_ms * 1000.0,
            sum: mean_us * n,
            sum2: (sd_us * sd_us + mean_us * mean_us) * n,
        }
    }

    /// The histogram back (empty if the text cannot be decoded: documents read with
    /// [`crate::document::RunDocument::from_json`] have only readable ones).
    pub fn histogram(&self) -> LatencyHistogram {
        hdr::decode(&self.hdr_histogram).unwrap_or_default()
    }

    /// The value (ms) at percentile `p`: the stored one when present, else computed from
    /// the histogram.
    pub fn percentile_ms(&self, p: f64) -> Option<f64> {
        if let Some(v) = self.percentiles.iter().find(|v| v.p == p) {
            return Some(v.ms);
        }
        let h = self.histogram();
        crate::percentiles::value_at_percentile(&h, p).map(|v| (v as f64 / 1000.0).min(self.max_ms))
    }
}
