//! The statistics of a sweep, pure and deterministic (seeded).
//!
//! - A cell's value (tps, a latency) is the **median** over its repeats, with a 95%
//!   percentile-**bootstrap** confidence interval: the repeats are resampled with
//!   replacement [`RESAMPLES`] times, the median of each resample taken, and the 2.5th
//!   and 97.5th percentiles of those medians are the interval (Efron and Tibshirani,
//!   *An Introduction to the Bootstrap*, 1993, ch. 13).
//! - Two cells are compared by the **ratio of their medians**, its interval
//!   bootstrapped the same way (both cells resampled independently). When the interval
//!   excludes 1 the difference is larger than the noise.
//! - When it does not, [`repeats_needed`] estimates how many repeats would make it
//!   exclude 1 if the ratio stayed the same: an interval's width shrinks as
//!   `1/sqrt(n)`, so the side of the interval that reaches past 1 must shrink by the
//!   factor `|ratio - 1| / (ratio - bound)`, which takes `n × factor⁻²` repeats.
//! - With a single repeat there is no interval and no verdict ([`Verdict::Untested`]).

use serde::{Deserialize, Serialize};

/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 10_000;
/// The interval's coverage.
pub const CONFIDENCE: f64 = 0.95;

/// An estimate and its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The median (or ratio of medians).
    pub estimate: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// True when 1 lies outside the interval.
    pub fn excludes_one(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }
}

/// What a comparison says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A cell had fewer than two repeats: no interval, nothing tested.
    Untested,
    /// The interval excludes 1: the difference is larger than the noise.
    Different,
    /// The interval contains 1; `repeats_needed` estimates how many repeats would
    /// separate the cells if the ratio stayed the same (`None`: the ratio is 1).
    WithinNoise {
        /// Estimated repeats per cell.
        repeats_needed: Option<u32>,
    },
}

/// The median (mean of the two middle values for an even count); `None` when empty
/// or when a value is not a number.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    })
}

/// The `q` quantile (0 to 1) of sorted values, interpolated linearly between ranks.
fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The median of a resample of `values` (with replacement), using `scratch`.
fn resampled_median(values: &[f64], rng: &mut fastrand::Rng, scratch: &mut Vec<f64>) -> f64 {
    scratch.clear();
    scratch.extend((0..values.len()).map(|_| values[rng.usize(..values.len())]));
    median(scratch).unwrap_or(f64::NAN)
}

/// The interval of the bootstrapped statistics, around `estimate`.
fn percentile_interval(estimate: f64, mut stats: Vec<f64>) -> Interval {
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Interval {
        estimate,
        low: quantile_sorted(&stats, tail),
        high: quantile_sorted(&stats, 1.0 - tail),
    }
}

/// The median of `values` with its bootstrap interval; `None` when empty or not
/// numbers. With one value the interval is that value.
pub fn median_interval(values: &[f64], rng: &mut fastrand::Rng) -> Option<Interval> {
    let estimate = median(values)?;
    let mut scratch = Vec::with_capacity(values.len());
    let stats = (0..RESAMPLES)
        .map(|_| resampled_median(values, rng, &mut scratch))
        .collect();
    Some(percentile_interval(estimate, stats))
}

/// `median(b) / median(a)` with its bootstrap interval; `None` when a side is empty,
/// not numbers, or `a`'s median is not positive.
pub fn ratio_interval(a: &[f64], b: &[f64], rng: &mut fastrand::Rng) -> Option<Interval> {
    let base = median(a).filter(|m| *m > 0.0)?;
    let estimate = median(b)? / base;
    let mut scratch = Vec::with_capacity(a.len().max(b.len()));
    let stats = (0..RESAMPLES)
        .map(|_| {
            let ma = resampled_median(a, rng, &mut scratch);
            let mb = resampled_median(b, rng, &mut scratch);
            if ma > 0.0 { mb / ma } else { f64::INFINITY }
        })
        .collect();
    Some(percentile_interval(estimate, stats))
}

/// The verdict on a ratio measured with `n` repeats per cell (the smaller count).
pub fn verdict(ratio: &Interval, n: usize) -> Verdict {
    if n < 2 {
        Verdict::Untested
    } else if ratio.excludes_one() {
        Verdict::Different
    } else {
        Verdict::WithinNoise {
            repeats_needed: repeats_needed(ratio, n),
        }
    }
}

/// Repeats per cell for the interval to exclude 1 if the ratio stayed the same, from
/// the `1/sqrt(n)` shrinking of its half on the side of 1; `None` when the ratio is
/// exactly 1 (no number of repeats separates equal cells).
pub fn repeats_needed(ratio: &Interval, n: usize) -> Option<u32> {
    let gap = ratio.estimate - 1.0;
    if gap == 0.0 || !gap.is_finite() {
        return None;
    }
    let reach = if gap > 0.0 {
        ratio.estimate - ratio.low
    } else {
        ratio.high - ratio.estimate
    };
    let factor = reach / gap.abs();
    let needed = (n as f64 * factor * factor).ceil();
    Some(if needed >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        (needed as u32).max(n as u32 + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng() -> fastrand::Rng {
        fastrand::Rng::with_seed(1)
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn constant_values_have_a_zero_width_interval() {
        let i = median_interval(&[5.0, 5.0, 5.0], &mut rng()).unwrap();
        assert_eq!((i.estimate, i.low, i.high), (5.0, 5.0, 5.0));
        let one = median_interval(&[9.0], &mut rng()).unwrap();
        assert_eq!((one.low, one.high), (9.0, 9.0));
    }

    #[test]
    fn two_values_interval_spans_both() {
        // Resampled medians of {10, 20}: 10 (p=1/4), 15 (1/2), 20 (1/4); the 2.5% and
        // 97.5% quantiles are the two values.
        let i = median_interval(&[10.0, 20.0], &mut rng()).unwrap();
        assert_eq!((i.estimate, i.low, i.high), (15.0, 10.0, 20.0));
    }

    #[test]
    fn interval_of_seven_values_is_the_second_and_sixth() {
        let values = [40.0, 10.0, 70.0, 30.0, 60.0, 20.0, 50.0];
        let i = median_interval(&values, &mut rng()).unwrap();
        assert_eq!(i.estimate, 40.0);
        // A resample's median is at most the smallest value with probability
        // P(Bin(7, 1/7) >= 4) = 0.010 < 0.025, at most the second with 0.108: the
        // 2.5% quantile is the second value; symmetrically the 97.5% one is the sixth.
        assert_eq!((i.low, i.high), (20.0, 60.0));
        assert_eq!(median_interval(&values, &mut rng()), Some(i));
    }

    #[test]
    fn ratio_of_separated_cells_excludes_one() {
        let a = [100.0, 101.0, 99.0];
        let b = [200.0, 202.0, 198.0];
        let r = ratio_interval(&a, &b, &mut rng()).unwrap();
        assert_eq!(r.estimate, 2.0);
        assert!(r.low >= 198.0 / 101.0 && r.high <= 202.0 / 99.0, "{r:?}");
        assert!(r.excludes_one());
        assert_eq!(verdict(&r, 3), Verdict::Different);
        let constant = ratio_interval(&[4.0, 4.0], &[5.0, 5.0], &mut rng()).unwrap();
        assert_eq!((constant.low, constant.high), (1.25, 1.25));
        assert!(ratio_interval(&[0.0], &[1.0], &mut rng()).is_none());
    }

    #[test]
    fn overlapping_cells_are_within_noise() {
        let a = [100.0, 90.0, 110.0];
        let b = [105.0, 95.0, 115.0];
        let r = ratio_interval(&a, &b, &mut rng()).unwrap();
        assert_eq!(r.estimate, 1.05);
        assert!(!r.excludes_one(), "{r:?}");
        match verdict(&r, 3) {
            Verdict::WithinNoise {
                repeats_needed: Some(n),
            } => assert!(n > 3, "{n}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(verdict(&r, 1), Verdict::Untested);
    }

    #[test]
    fn repeats_needed_follows_the_square_root_law() {
        // Ratio 1.05, lower half 0.10 wide: it must shrink to below 0.05, a factor 2,
        // so 4 times the repeats.
        let r = Interval {
            estimate: 1.05,
            low: 0.95,
            high: 1.15,
        };
        assert_eq!(repeats_needed(&r, 3), Some(12));
        // Below 1 the upper half counts.
        let down = Interval {
            estimate: 0.9,
            low: 0.85,
            high: 1.2,
        };
        assert_eq!(repeats_needed(&down, 2), Some(18));
        let equal = Interval {
            estimate: 1.0,
            low: 0.9,
            high: 1.1,
        };
        assert_eq!(repeats_needed(&equal, 5), None);
        assert_eq!(
            verdict(&equal, 5),
            Verdict::WithinNoise {
                repeats_needed: None
            }
        );
    }
}
