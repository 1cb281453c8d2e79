//! Histograms at two significant digits (the time series' per-interval histograms): the
//! bucket arithmetic and the sparse `(value, count)` form intervals are stored in.

use crate::histogram::{HISTOGRAM_MAX_US, LatencyHistogram};
use serde::Serialize;
/// Significant decimal digits kept by per-interval histograms.
pub const INTERVAL_SIGFIG: u8 = 2;

/// Values below this are kept exactly at [`INTERVAL_SIGFIG`] digits (HdrHistogram's
/// sub-bucket count for 2 digits: the power of two ≥ 2·10²).
const EXACT_BELOW: u64 = (2 * 10u64.pow(INTERVAL_SIGFIG as u32)).next_power_of_two();

/// The highest value equivalent to `v` in an HDR histogram of [`INTERVAL_SIGFIG`]
/// significant digits (unit 1 µs): exact below 256, then buckets of 2^(⌊log2 v⌋ − 7).
pub fn coarse_value(v: u64) -> u64 {
    if v < EXACT_BELOW {
        return v;
    }
    let shift = 63 - v.leading_zeros() - 7;
    ((v >> shift) << shift) + ((1u64 << shift) - 1)
}

/// A histogram in sparse form: `(value, count)` pairs in increasing value order, where
/// `value` (µs) is the highest value equivalent to its bucket at two (`INTERVAL_SIGFIG`)
/// significant digits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SparseHistogram {
    /// `(value_us, count)` pairs, sorted by value, counts > 0.
    pub buckets: Vec<(u32, u32)>,
}

impl SparseHistogram {
    /// The recorded values of `hist`, coarsened to two (`INTERVAL_SIGFIG`) significant digits.
    pub fn from_histogram(hist: &LatencyHistogram) -> Self {
        let mut buckets: Vec<(u32, u32)> = Vec::new();
        for v in hist.inner().iter_recorded() {
            let value = u32::try_from(coarse_value(v.value_iterated_to())).unwrap_or(u32::MAX);
            let count = u32::try_from(v.count_at_value()).unwrap_or(u32::MAX);
            match buckets.last_mut() {
                Some(last) if last.0 == value => last.1 = last.1.saturating_add(count),
                _ => buckets.push((value, count)),
            }
        }
        SparseHistogram { buckets }
    }

    /// Adds every bucket of `self` to `hist`.
    pub fn add_to(&self, hist: &mut LatencyHistogram) {
        for &(value, count) in &self.buckets {
            hist.record_u64_n(u64::from(value), u64::from(count));
        }
    }

    /// A full histogram with these values.
    pub fn to_histogram(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        self.add_to(&mut h);
        h
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        self.buckets.iter().map(|&(_, c)| u64::from(c)).sum()
    }

    /// Whether no value was recorded.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Adds `other`'s buckets (merging equal values, keeping the order).
    pub fn merge(&mut self, other: &SparseHistogram) {
        if other.buckets.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(self.buckets.len() + other.buckets.len());
        let (mut a, mut b) = (
            self.buckets.iter().peekable(),
            other.buckets.iter().peekable(),
        );
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&(va, ca)), Some(&&(vb, cb))) => {
                    if va == vb {
                        out.push((va, ca.saturating_add(cb)));
                        a.next();
                        b.next();
                    } else if va < vb {
                        out.push((va, ca));
                        a.next();
                    } else {
                        out.push((vb, cb));
                        b.next();
                    }
                }
                (Some(&&x), None) => {
                    out.push(x);
                    a.next();
                }
                (None, Some(&&x)) => {
                    out.push(x);
                    b.next();
                }
                (None, None) => break,
            }
        }
        self.buckets = out;
    }
}

/// Number of buckets of a histogram at [`INTERVAL_SIGFIG`] digits up to
/// [`HISTOGRAM_MAX_US`] (< 2³²): 256 exact values, then 128 buckets per power of two.
pub(crate) const COARSE_BUCKETS: usize = EXACT_BELOW as usize + 25 * 128;

/// Bucket index of `v` (µs, clamped to [`HISTOGRAM_MAX_US`]) at [`INTERVAL_SIGFIG`] digits.
#[inline]
pub(crate) fn coarse_index(v: u64) -> usize {
    let v = v.min(HISTOGRAM_MAX_US);
    if v < EXACT_BELOW {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - 7;
    EXACT_BELOW as usize + (shift as usize - 1) * 128 + ((v >> shift) as usize - 128)
}

/// The value [`coarse_value`] gives for every value of bucket `index`.
pub(crate) fn coarse_index_value(index: usize) -> u64 {
    if index < EXACT_BELOW as usize {
        return index as u64;
    }
    let shift = (index - EXACT_BELOW as usize) / 128 + 1;
    let sub = ((index - EXACT_BELOW as usize) % 128 + 128) as u64;
    (sub << shift) + ((1u64 << shift) - 1)
}
