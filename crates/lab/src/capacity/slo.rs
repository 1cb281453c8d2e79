//! Service-level objectives (`--slo EXPR`): the `--assert` grammar
//! (`pgrush_report::assertion`) restricted to upper bounds on what one step measures.
//!
//! - `pNN < T` (or `<=`): a percentile bound is a bound on a share, the transactions at
//!   or above `T` must be fewer than `1 − NN/100` of them; it is decided on the step's
//!   latency histogram with a Wilson interval ([`super::binomial`]).
//! - `failed < X%`, `retried < X%`: a share too, decided the same way.
//! - `latency-avg`, `latency-stddev`, `latency-max`, `lag-avg`, `lag-max`, and `failed`,
//!   `retried` as counts: the step's value, as `--assert` measures it.
//!
//! `tps` (the search finds the rate), `late` (needs `-L`), `connection-time` (not a
//! property of the load), `baseline` thresholds, operators other than `<` and `<=`, and
//! per-script expressions are refused.

use super::binomial::{Decision, Share, fewest_to_decide};
use pgrush_report::RunDocument;
use pgrush_report::assertion::{Assertion, AssertionError, Metric, Op, Threshold, Unit};
use pgrush_stats::LatencyHistogram;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// An SLO that cannot be used.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SloError {
    /// Not an assertion.
    #[error("invalid SLO \"{text}\": {why}")]
    Syntax {
        /// The expression.
        text: String,
        /// The parser's complaint.
        why: AssertionError,
    },
    /// A well-formed assertion that is no per-step upper bound.
    #[error("invalid SLO \"{text}\": {why}")]
    Unsupported {
        /// The expression.
        text: String,
        /// Why.
        why: String,
    },
}

/// How an SLO is decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SloKind {
    /// A share of the transactions (`pNN < T`, `failed < X%`) that must stay below
    /// `limit` (a fraction).
    Share {
        /// The largest share allowed (`1 − NN/100`, `X/100`).
        limit: f64,
    },
    /// A value measured on each round of the step, as `--assert` measures it.
    Value,
}

/// One parsed `--slo`.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    /// The assertion it is written as.
    pub assertion: Assertion,
    /// How it is decided.
    pub kind: SloKind,
}

/// One SLO's outcome at one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloVerdict {
    /// The SLO written the canonical way (`p99 < 10 ms`).
    pub slo: String,
    /// Whether it holds.
    pub holds: bool,
    /// The measured value in the SLO's unit (the percentile itself for `pNN`).
    pub measured: Option<f64>,
    /// The unit of `measured`.
    pub unit: String,
    /// For shares: the transactions counted (above the latency, failed), of `n`.
    pub k: Option<u64>,
    /// For shares: the transactions in all.
    pub n: Option<u64>,
    /// For shares: the largest share allowed.
    pub limit: Option<f64>,
    /// For shares: the 95% Wilson interval of the share.
    pub interval: Option<(f64, f64)>,
    /// False when the interval still contained the limit after the last round: the
    /// verdict is the point estimate's.
    pub decided: bool,
}

impl Slo {
    /// Parses and checks one `--slo` expression.
    pub fn parse(text: &str) -> Result<Slo, SloError> {
        let assertion = Assertion::parse(text).map_err(|why| SloError::Syntax {
            text: text.to_string(),
            why,
        })?;
        let refuse = |why: &str| SloError::Unsupported {
            text: text.to_string(),
            why: why.to_string(),
        };
        if assertion.script.is_some() {
            return Err(refuse(
                "per-script SLOs are not supported: bound the whole run",
            ));
        }
        if assertion.metric == Metric::Tps {
            return Err(refuse(
                "the search finds the rate itself (bound it with --assert 'capacity>=N')",
            ));
        }
        if !matches!(assertion.op, Op::Less | Op::LessOrEqual) {
            return Err(refuse("an SLO is an upper bound: use < or <="));
        }
        let Threshold::Value { value, unit } = assertion.threshold else {
            return Err(refuse("an SLO needs a value, not a baseline"));
        };
        let kind = match assertion.metric {
            Metric::Tps => {
                return Err(refuse(
                    "the search finds the rate itself (bound it with --assert 'capacity>=N')",
                ));
            }
            Metric::Late => return Err(refuse("late needs -L; bound a percentile instead")),
            Metric::ConnectionTime => {
                return Err(refuse("connection-time is not a property of the load"));
            }
            Metric::Percentile(p) if p >= 100.0 => {
                return Err(refuse("p100 is the maximum: use latency-max"));
            }
            Metric::Percentile(p) => SloKind::Share {
                limit: 1.0 - p / 100.0,
            },
            Metric::Failed | Metric::Retried if unit == Unit::Percent => {
                if value <= 0.0 || value >= 100.0 {
                    return Err(refuse("a share bound must be between 0% and 100%"));
                }
                SloKind::Share {
                    limit: value / 100.0,
                }
            }
            _ => SloKind::Value,
        };
        Ok(Slo { assertion, kind })
    }

    /// The SLO written the canonical way.
    pub fn name(&self) -> String {
        self.assertion.normalized()
    }

    /// The fewest transactions a step needs to show that the SLO holds (1 for values).
    pub fn fewest_transactions(&self) -> u64 {
        match self.kind {
            SloKind::Share { limit } => fewest_to_decide(limit),
            SloKind::Value => 1,
        }
    }

    /// The threshold in µs (percentiles).
    fn limit_us(&self) -> f64 {
        match self.assertion.threshold {
            Threshold::Value { value, unit } => value * unit.ms_per_unit() * 1000.0,
            Threshold::Baseline { .. } => f64::NAN,
        }
    }

    /// The SLO's verdict on a step's rounds: `latency` holds every round's successful
    /// transactions, `docs` are the rounds' documents.
    pub fn judge(&self, latency: &LatencyHistogram, docs: &[RunDocument]) -> SloVerdict {
        let mut verdict = SloVerdict {
            slo: self.name(),
            holds: false,
            measured: None,
            unit: String::new(),
            k: None,
            n: None,
            limit: None,
            interval: None,
            decided: true,
        };
        let SloKind::Share { limit } = self.kind else {
            let all: Vec<_> = docs
                .iter()
                .map(|d| pgrush_report::assertion::evaluate(&self.assertion, None, d, None))
                .collect();
            verdict.holds = !all.is_empty() && all.iter().all(|v| v.passed);
            // The worst round's value.
            verdict.measured = all.iter().filter_map(|v| v.measured).reduce(f64::max);
            verdict.unit = all.first().map(|v| v.unit.clone()).unwrap_or_default();
            return verdict;
        };
        let (k, n) = match self.assertion.metric {
            Metric::Percentile(p) => {
                let inclusive = self.assertion.op == Op::Less;
                verdict.measured = pgrush_report::percentiles::value_at_percentile(latency, p)
                    .map(|us| us as f64 / 1000.0);
                verdict.unit = "ms".into();
                (
                    latency.count_above(self.limit_us(), inclusive),
                    latency.len(),
                )
            }
            metric => {
                let count = |d: &RunDocument| {
                    let t = &d.results.transactions;
                    let k = if metric == Metric::Failed {
                        t.failed
                    } else {
                        t.retried
                    };
                    (k, t.total())
                };
                let (k, n) = docs
                    .iter()
                    .map(count)
                    .fold((0, 0), |(a, b), (k, n)| (a + k, b + n));
                verdict.measured = (n > 0).then(|| 100.0 * k as f64 / n as f64);
                verdict.unit = "%".into();
                (k, n)
            }
        };
        let share = Share::of(k, n);
        verdict.k = Some(k);
        verdict.n = Some(n);
        verdict.limit = Some(limit);
        verdict.interval = Some((share.low, share.high));
        match share.against(limit) {
            Decision::Below => verdict.holds = true,
            Decision::Above => verdict.holds = false,
            Decision::Straddles => {
                verdict.decided = false;
                verdict.holds = n > 0 && share.estimate() < limit;
            }
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Slo::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn percentiles_and_failure_shares_are_shares() {
        let p99 = Slo::parse("p99<10ms").unwrap();
        assert!(matches!(p99.kind, SloKind::Share { limit } if (limit - 0.01).abs() < 1e-12));
        assert_eq!(p99.name(), "p99 < 10 ms");
        assert_eq!(p99.fewest_transactions(), 381);
        assert_eq!(Slo::parse("p99.9<=5").unwrap().fewest_transactions(), 3838);
        let failed = Slo::parse("failed<0.1%").unwrap();
        assert!(matches!(failed.kind, SloKind::Share { limit } if (limit - 0.001).abs() < 1e-12));
        assert_eq!(Slo::parse("failed<=3").unwrap().kind, SloKind::Value);
        assert_eq!(Slo::parse("lag<5ms").unwrap().kind, SloKind::Value);
        assert_eq!(Slo::parse("latency-avg<5").unwrap().kind, SloKind::Value);
    }

    #[test]
    fn what_no_step_can_bound_is_refused() {
        assert!(
            err("q99<1ms").contains("unknown metric \"q99\""),
            "{}",
            err("q99<1ms")
        );
        assert!(err("tps>=100").contains("--assert 'capacity>=N'"));
        assert!(err("p99>1ms").contains("upper bound"));
        assert!(err("p99<=1.1*baseline").contains("baseline"));
        assert!(err("1:p99<1ms").contains("per-script"));
        assert!(err("conn-time<1ms").contains("connection-time"));
        assert!(err("failed<100%").contains("between 0% and 100%"));
        assert!(err("p100<5ms").contains("latency-max"));
    }

    #[test]
    fn a_percentile_is_judged_on_the_share_above_its_limit() {
        let slo = Slo::parse("p99<10ms").unwrap();
        let mut h = LatencyHistogram::new();
        h.record_u64_n(5_000, 2_000);
        let v = slo.judge(&h, &[]);
        assert!(v.holds && v.decided, "{v:?}");
        assert_eq!((v.k, v.n), (Some(0), Some(2_000)));
        // 20 of 2000 at 20 ms: a share of 1%, the limit itself: undecided.
        h.record_u64_n(20_000, 20);
        let v = slo.judge(&h, &[]);
        assert!(!v.decided, "{v:?}");
        h.record_u64_n(20_000, 200);
        let v = slo.judge(&h, &[]);
        assert!(!v.holds && v.decided, "{v:?}");
        assert!(v.measured.unwrap() > 19.0, "{v:?}");
    }
}
