//! `SimpleStats`: count, min, max, sum and sum of squares of a series of values (µs).

use serde::Serialize;
use std::ops::AddAssign;

/// Running statistics of a series of values, exactly as pgbench keeps them (doubles in µs).
///
/// `min`/`max` are 0 while `count` is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SimpleStats {
    /// Number of values recorded.
    pub count: u64,
    /// Smallest value (0 when empty).
    pub min: f64,
    /// Largest value (0 when empty).
    pub max: f64,
    /// Sum of the values.
    pub sum: f64,
    /// Sum of the squares of the values.
    pub sum2: f64,
}

impl SimpleStats {
    /// Adds one value.
    #[inline]
    pub fn record(&mut self, value: f64) {
        if self.count == 0 {
            self.min = value;
            self.max = value;
        } else {
            if value < self.min {
                self.min = value;
            }
            if value > self.max {
                self.max = value;
            }
        }
        self.count += 1;
        self.sum += value;
        self.sum2 += value * value;
    }

    /// Adds all values of `other` to `self`.
    pub fn merge(&mut self, other: &SimpleStats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        if self.count == 0 || other.max > self.max {
            self.max = other.max;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.sum2 += other.sum2;
    }

    /// Mean value (`sum / count`; NaN when empty, as in C).
    pub fn mean(&self) -> f64 {
        self.sum / self.count as f64
    }

    /// Standard deviation as pgbench computes it: `sqrt(sum2/n - mean²)`.
    pub fn stddev(&self) -> f64 {
        let mean = self.mean();
        (self.sum2 / self.count as f64 - mean * mean).sqrt()
    }
}

impl AddAssign<&SimpleStats> for SimpleStats {
    fn add_assign(&mut self, rhs: &SimpleStats) {
        self.merge(rhs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_and_merge() {
        let mut a = SimpleStats::default();
        assert_eq!((a.min, a.max), (0.0, 0.0));
        a.record(5.0);
        a.record(3.0);
        let mut b = SimpleStats::default();
        b.record(10.0);
        b.record(1.0);
        let mut m = a;
        m += &b;
        assert_eq!(m.count, 4);
        assert_eq!(m.min, 1.0);
        assert_eq!(m.max, 10.0);
        assert_eq!(m.sum, 19.0);
        assert_eq!(m.sum2, 25.0 + 9.0 + 100.0 + 1.0);
        let mut e = SimpleStats::default();
        e.merge(&a);
        assert_eq!(e, a);
        a.merge(&SimpleStats::default());
        assert_eq!(a.count, 2);
        assert_eq!(a.mean(), 4.0);
        assert_eq!(a.stddev(), 1.0);
        assert!(SimpleStats::default().mean().is_nan());
    }
}
