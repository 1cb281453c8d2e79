//! Thresholds on a run's results (`--assert EXPR`): benchmarks as CI gates.
//!
//! An expression is `[SCRIPT:]METRIC OP VALUE[UNIT]`, e.g. `tps>=1000`, `p99<5ms`,
//! `failed==0`, `select-only:p99.9<=20ms`, or, against a saved run,
//! `tps>=0.95*baseline`. [`Assertion::parse`] turns the text into an [`Assertion`]
//! (pure, no knowledge of the run); [`Assertion::check`] then checks it against what
//! the run can produce ([`RunFacts`]: `-R`, `-L`, the scripts, a baseline) and resolves
//! the script; [`evaluate`] measures the value in a [`RunDocument`](crate::RunDocument)
//! and gives a [`Verdict`], whose [`Verdict::line`] is the line printed after the report.
//!
//! Metrics and their units:
//!
//! | metric | aliases | value | units |
//! |---|---|---|---|
//! | `tps` | | successful transactions per second | none |
//! | `latency-avg` | `avg`, `latency` | the report's `latency average` | `ms` (default), `us`, `s` |
//! | `latency-stddev` | `stddev` | latency standard deviation | time |
//! | `latency-max` | `max` | slowest successful transaction | time |
//! | `pNN`, `pNN.N…` | | latency percentile (0 < NN ≤ 100) | time |
//! | `failed` | | failed transactions | none (count) or `%` of ended transactions |
//! | `retried` | | transactions retried | count or `%` of ended transactions |
//! | `late` | | transactions above `-L` | count or `%` of successful transactions |
//! | `lag-avg` | `lag` | average schedule lag (`-R`) | time |
//! | `lag-max` | | maximum schedule lag (`-R`) | time |
//! | `connection-time` | `conn-time` | initial (or, with `-C`, average) connection time | time |
//!
//! [`StepAssertion`] is the form for `pgrush ops` results: a step's duration
//! (`load<=60s`, `restore<=1.2*baseline`; seconds without a unit).
//!
//! Per script (`SCRIPT:` being the script's number from 1, its builtin name or its file
//! name as the report shows it): `tps`, the latency metrics, `failed` and `retried`.
//!
//! Per stage of a run in stages (`stageN:`, N from 1, e.g. `stage2:p99<5ms`; such a prefix
//! is never a script's name): `tps`, the latency metrics, `failed`, `retried`, `lag-avg`
//! and `lag-max`, measured on the transactions scheduled in the stage.

mod eval;
pub mod ops;
mod parse;
mod step;
mod verdict;

pub use eval::evaluate;
pub use parse::{
    Assertion, AssertionError, ContextError, Metric, Op, RunFacts, ScriptKey, Threshold, Unit,
};
pub use step::StepAssertion;
pub use verdict::Verdict;
