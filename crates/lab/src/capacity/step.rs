//! One step of the search: `pgrush -R RATE --warmup W -T D --json FILE` with the user's
//! options, as a child process; rounds are repeated (pooled) while a share SLO's
//! interval still contains its limit, up to [`MAX_ROUNDS`]. A step holds when the
//! server delivered the offered rate and every SLO held.
//!
//! Delivered: the rounds ended at least [`DELIVERED_SHARE`] of the offered
//! transactions, less three Poisson standard deviations (the schedule's arrivals are a
//! Poisson process), and the schedule lag did not grow through the step: a lag growing
//! by `g` ms per second means the server falls behind by the share `g / 1000` of the
//! offered rate, a backlog that a longer step would only make worse. It grows when its
//! least-squares slope over the one-second intervals is above [`LAG_GROWTH_LIMIT`]
//! **and** the last interval's lag is more than twice the first's: a backlog that
//! builds from nothing (the schedule starts afresh after the warm-up) ends about three
//! times as high as its first second, while a stable queue near its capacity wanders
//! up and down about its mean, which a short step's slope alone would mistake.

use super::CapacityError;
use super::config::CapacityConfig;
use super::result::{StepRecord, rate_text};
use super::slo::Slo;
use crate::child::{ChildEnd, Launcher};
use pgrush_report::RunDocument;
use pgrush_stats::LatencyHistogram;
use std::path::{Path, PathBuf};

/// Most rounds of one step.
pub const MAX_ROUNDS: u32 = 3;
/// A step plans for this many times the fewest transactions that can decide its SLOs.
const PLAN_FACTOR: u64 = 2;
/// The share of the offered transactions a step must deliver (less the Poisson noise).
pub const DELIVERED_SHARE: f64 = 0.95;
/// The fastest growth of the schedule lag a sustained rate shows, as a share of
/// each second (30 ms per second: 3% of the offered rate falls behind).
pub const LAG_GROWTH_LIMIT: f64 = 0.03;

/// Runs steps: the launcher, the scratch directory for their documents, the settings.
pub struct StepRunner<'a> {
    /// Runs the children.
    pub launcher: &'a Launcher,
    /// Where documents go.
    pub dir: &'a Path,
    /// The search's settings.
    pub cfg: &'a CapacityConfig,
}

/// What one round measured.
struct Round {
    doc: RunDocument,
    lag_growth: Option<LagGrowth>,
}

/// How the schedule lag moved through a round.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LagGrowth {
    /// Least-squares slope, ms per second.
    slope: f64,
    /// True when the last interval's lag is more than twice the first's.
    doubled: bool,
}

impl LagGrowth {
    /// Whether the lag grew through the round.
    fn grew(&self) -> bool {
        self.slope / 1000.0 > LAG_GROWTH_LIMIT && self.doubled
    }
}

impl StepRunner<'_> {
    /// The measured seconds of a round at `rate`: long enough for [`PLAN_FACTOR`] times
    /// the fewest transactions the SLOs need, at least the step time, at most the
    /// longest step.
    pub fn round_seconds(&self, rate: f64) -> u32 {
        let fewest = fewest_transactions(&self.cfg.slos);
        let wanted = ((fewest * PLAN_FACTOR) as f64 / rate).ceil();
        let wanted = if wanted.is_finite() { wanted } else { f64::MAX };
        (wanted.min(f64::from(self.cfg.max_step_s)) as u32)
            .max(self.cfg.step_s)
            .min(self.cfg.max_step_s.max(self.cfg.step_s))
    }

    /// One child run; `None` when Ctrl-C stopped it.
    pub fn run_child(
        &self,
        title: &str,
        extra: &[String],
        name: &str,
    ) -> Result<Option<RunDocument>, CapacityError> {
        let path = self.dir.join(name);
        let mut args = self.cfg.run_args.clone();
        args.extend(extra.iter().cloned());
        if self.cfg.warmup_s > 0 {
            args.push(format!("--warmup={}", self.cfg.warmup_s));
        }
        args.push(format!("--json={}", path.display()));
        if self.launcher.run(title, &args)? == ChildEnd::Interrupted {
            return Ok(None);
        }
        read_document(&path).map(Some)
    }

    /// Runs step `number` at `rate`; `None` when Ctrl-C stopped it.
    pub fn run(
        &self,
        number: usize,
        rate: f64,
        relabel: &dyn Fn(String),
    ) -> Result<Option<StepRecord>, CapacityError> {
        let seconds = self.round_seconds(rate);
        let mut rounds: Vec<Round> = Vec::new();
        let mut latency = LatencyHistogram::new();
        loop {
            let n = rounds.len() + 1;
            relabel(format!("step {number}: {} tps, round {n}", rate_text(rate)));
            let extra = [format!("--rate={rate}"), format!("--time={seconds}")];
            let name = format!("step-{number}-round-{n}.json");
            let title = format!("step {number} at {} tps, round {n}", rate_text(rate));
            let Some(doc) = self.run_child(&title, &extra, &name)? else {
                return Ok(None);
            };
            if let Some(l) = &doc.latency {
                latency.merge(&l.histogram());
            }
            rounds.push(Round {
                lag_growth: lag_growth(&doc),
                doc,
            });
            let record = judge(number, rate, &rounds, &latency, &self.cfg.slos);
            let undecided = record.slos.iter().any(|v| !v.decided);
            let decided_failure =
                !record.delivered || record.slos.iter().any(|v| v.decided && !v.holds);
            if !undecided || decided_failure || rounds.len() as u32 >= MAX_ROUNDS {
                return Ok(Some(record));
            }
        }
    }
}

/// The fewest transactions a step needs to decide every SLO.
pub fn fewest_transactions(slos: &[Slo]) -> u64 {
    slos.iter().map(Slo::fewest_transactions).max().unwrap_or(1)
}

/// Reads a child's run document.
fn read_document(path: &PathBuf) -> Result<RunDocument, CapacityError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CapacityError::Io(format!("{}: {e}", path.display())))?;
    RunDocument::from_json(&text).map_err(|e| CapacityError::Io(format!("{}: {e}", path.display())))
}

/// The least-squares slope of the schedule lag over the run's intervals, in ms per
/// second, and whether it ended more than twice as high as it began (`None` with fewer
/// than two intervals with transactions).
fn lag_growth(doc: &RunDocument) -> Option<LagGrowth> {
    let series = doc.time_series.as_ref()?;
    let points: Vec<(f64, f64)> = series
        .chartable()
        .into_iter()
        .filter_map(|iv| Some((iv.mid_s(), iv.lag_average_ms?)))
        .collect();
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let doubled = points.last()?.1 > 2.0 * points.first()?.1;
    (sxx > 0.0).then(|| LagGrowth {
        slope: sxy / sxx,
        doubled,
    })
}

/// The step's record from its rounds so far.
fn judge(
    number: usize,
    rate: f64,
    rounds: &[Round],
    latency: &LatencyHistogram,
    slos: &[Slo],
) -> StepRecord {
    let docs: Vec<RunDocument> = rounds.iter().map(|r| r.doc.clone()).collect();
    let duration_s: f64 = docs.iter().map(|d| d.results.duration_s).sum();
    let transactions: u64 = docs.iter().map(|d| d.results.transactions.total()).sum();
    let expected = rate * duration_s;
    let floor = DELIVERED_SHARE * expected - 3.0 * expected.sqrt();
    let growth = rounds
        .iter()
        .filter_map(|r| r.lag_growth.map(|g| g.slope))
        .reduce(f64::max);
    let behind = rounds
        .iter()
        .any(|r| r.lag_growth.is_some_and(|g| g.grew()));
    let short = (transactions as f64) < floor;
    let verdicts: Vec<_> = slos.iter().map(|s| s.judge(latency, &docs)).collect();
    let delivered_tps = if duration_s > 0.0 {
        transactions as f64 / duration_s
    } else {
        0.0
    };
    let mut why = Vec::new();
    if short {
        why.push(format!(
            "delivered {delivered_tps:.1} of {} tps",
            rate_text(rate)
        ));
    }
    if behind {
        why.push(format!(
            "schedule lag grew {:.1} ms/s",
            growth.unwrap_or_default()
        ));
    }
    why.extend(
        verdicts
            .iter()
            .filter(|v| !v.holds)
            .map(super::output::failed_slo_text),
    );
    let at = |p: f64| {
        pgrush_report::percentiles::value_at_percentile(latency, p).map(|us| us as f64 / 1000.0)
    };
    let mean_of = |pick: fn(&RunDocument) -> Option<f64>| {
        let (sum, count) = docs.iter().fold((0.0, 0u64), |(sum, count), d| {
            let n = d.results.transactions.processed;
            match pick(d) {
                Some(v) if n > 0 => (sum + v * n as f64, count + n),
                _ => (sum, count),
            }
        });
        (count > 0).then(|| sum / count as f64)
    };
    StepRecord {
        step: number,
        latency_average_ms: mean_of(|d| d.results.latency_average_ms),
        lag_average_ms: mean_of(|d| d.results.lag_average_ms),
        offered_tps: rate,
        rounds: rounds.len() as u32,
        duration_s,
        transactions,
        delivered_tps,
        p50_ms: at(50.0),
        p99_ms: at(99.0),
        p99_9_ms: at(99.9),
        lag_growth_ms_per_s: growth,
        delivered: !short && !behind,
        held: why.is_empty(),
        failure: (!why.is_empty()).then(|| why.join("; ")),
        slos: verdicts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_grows_when_it_climbs_fast_and_doubles() {
        let grew = |slope, doubled| LagGrowth { slope, doubled }.grew();
        // A backlog building at 5% of the rate: 50 ms/s, from nothing.
        assert!(grew(50.0, true));
        // A stable queue near capacity that wandered up in a short step.
        assert!(!grew(50.0, false));
        // Doubled, but slowly: within the limit.
        assert!(!grew(20.0, true));
    }

    #[test]
    fn rounds_plan_enough_transactions_within_the_bounds() {
        let cfg = CapacityConfig {
            slos: vec![Slo::parse("p99<10ms").unwrap_or_else(|e| panic!("{e}"))],
            run_args: Vec::new(),
            start_rate: None,
            precision: 0.05,
            step_s: 2,
            max_step_s: 8,
            warmup_s: 1,
            exe: PathBuf::new(),
        };
        let launcher = Launcher::new(Path::new("pgrush"), Path::new("/dev/null"))
            .unwrap_or_else(|e| panic!("{e}"));
        let runner = StepRunner {
            launcher: &launcher,
            dir: Path::new("."),
            cfg: &cfg,
        };
        // p99 needs 381; twice that at 100 tps is 7.62 s.
        assert_eq!(runner.round_seconds(100.0), 8);
        assert_eq!(runner.round_seconds(1000.0), 2);
        assert_eq!(runner.round_seconds(10.0), 8);
    }
}
