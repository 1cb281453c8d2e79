//! The statistics of a share: `k` of `n` transactions above a latency (or failed), its
//! Wilson score interval at 95%, and whether that interval lies wholly below or above a
//! limit ([`Decision`]).

/// The normal quantile of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A share with its 95% Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// Transactions counted (above the latency, failed).
    pub k: u64,
    /// Transactions in all.
    pub n: u64,
    /// Lower bound of the interval.
    pub low: f64,
    /// Upper bound of the interval.
    pub high: f64,
}

impl Share {
    /// `k` of `n` and its Wilson score interval (`[0, 1]` when `n` is 0).
    pub fn of(k: u64, n: u64) -> Share {
        if n == 0 {
            return Share {
                k,
                n,
                low: 0.0,
                high: 1.0,
            };
        }
        let (nf, z2) = (n as f64, Z95 * Z95);
        let p = k.min(n) as f64 / nf;
        let denominator = 1.0 + z2 / nf;
        let centre = (p + z2 / (2.0 * nf)) / denominator;
        let half = Z95 / denominator * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
        Share {
            k,
            n,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
    }

    /// The point estimate `k / n` (0 without transactions).
    pub fn estimate(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.k as f64 / self.n as f64
        }
    }

    /// Where the interval lies with respect to `limit`.
    pub fn against(&self, limit: f64) -> Decision {
        if self.high < limit {
            Decision::Below
        } else if self.low > limit {
            Decision::Above
        } else {
            Decision::Straddles
        }
    }
}

/// Where a share's interval lies with respect to a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Wholly below: the limit holds.
    Below,
    /// Wholly above: the limit is broken.
    Above,
    /// The interval contains the limit: more transactions are needed to tell.
    Straddles,
}

/// The fewest transactions that can show a share below `limit` (0 < limit < 1): with none
/// of them counted, the Wilson interval's upper bound, `z² / (n + z²)`, must be below it.
pub fn fewest_to_decide(limit: f64) -> u64 {
    let z2 = Z95 * Z95;
    let n = z2 * (1.0 - limit) / limit;
    (n.floor() as u64).saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_known_values() {
        // 10 of 100: the textbook Wilson interval is [0.0552, 0.1744].
        let s = Share::of(10, 100);
        assert!((s.low - 0.0552).abs() < 1e-4, "{s:?}");
        assert!((s.high - 0.1744).abs() < 1e-4, "{s:?}");
        // None of 381: just below 1%.
        let none = Share::of(0, 381);
        assert_eq!(none.low, 0.0);
        assert!(none.high < 0.01 && none.high > 0.0099, "{none:?}");
        assert_eq!(Share::of(0, 0).against(0.5), Decision::Straddles);
    }

    #[test]
    fn decisions_need_the_whole_interval_on_one_side() {
        assert_eq!(Share::of(0, 1000).against(0.01), Decision::Below);
        assert_eq!(Share::of(50, 1000).against(0.01), Decision::Above);
        assert_eq!(Share::of(10, 1000).against(0.01), Decision::Straddles);
        assert_eq!(Share::of(0, 100).against(0.01), Decision::Straddles);
    }

    #[test]
    fn the_fewest_transactions_grow_with_the_percentile() {
        // p99: 3.84 × 99 = 380.3; p99.9: 3.84 × 999 = 3837.6.
        assert_eq!(fewest_to_decide(0.01), 381);
        assert_eq!(fewest_to_decide(0.001), 3838);
        for limit in [0.01, 0.001, 0.05] {
            let n = fewest_to_decide(limit);
            assert_eq!(Share::of(0, n).against(limit), Decision::Below);
            assert_ne!(Share::of(0, n - 1).against(limit), Decision::Below);
        }
    }
}
