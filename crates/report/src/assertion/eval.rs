//! Measuring an assertion's metric in a run document and deciding the verdict.

use super::parse::{Assertion, Kind, Metric, Threshold, Unit};
use super::verdict::Verdict;
use crate::document::{Counts, Distribution, RunDocument, ScriptDoc, StageDoc};

/// Evaluates `assertion` on `doc` (its script `script`, from [`Assertion::check`]),
/// with `baseline` for `…*baseline` thresholds.
pub fn evaluate(
    assertion: &Assertion,
    script: Option<usize>,
    doc: &RunDocument,
    baseline: Option<&RunDocument>,
) -> Verdict {
    let unit = match assertion.threshold {
        Threshold::Value { unit, .. } => unit,
        Threshold::Baseline { .. } if assertion.metric.kind() == Kind::Time => Unit::Milliseconds,
        Threshold::Baseline { .. } => Unit::None,
    };
    let scope = Place {
        script,
        stage: assertion.stage,
    };
    let value_in = |d: &RunDocument| measure(assertion.metric, unit, d, scope);
    let measured = value_in(doc);
    let (threshold, base) = match assertion.threshold {
        Threshold::Value { value, .. } => (Ok(value), None),
        Threshold::Baseline { factor } => {
            let base = baseline.map_or(Err("no baseline run"), value_in);
            (base.map(|b| b * factor), Some(base))
        }
    };
    let passed = match (&measured, &threshold) {
        (Ok(m), Ok(t)) => assertion.op.holds(*m, *t),
        _ => false,
    };
    let note = match (&measured, &base) {
        (Err(why), _) => Some(format!("not measured: {why}")),
        (_, Some(Err(why))) => Some(format!("no baseline value: {why}")),
        _ => None,
    };
    Verdict {
        expression: assertion.source.clone(),
        assertion: assertion.normalized(),
        passed,
        measured: measured.ok(),
        threshold: threshold.ok(),
        baseline: base.and_then(Result::ok),
        unit: unit.as_str().to_string(),
        note,
    }
}

/// Where an assertion looks: a script (index) or a stage (number from 1), else the run.
#[derive(Clone, Copy)]
struct Place {
    script: Option<usize>,
    stage: Option<usize>,
}

/// What a metric is measured on: the whole run, one script or one stage.
enum Scope<'a> {
    Run(&'a RunDocument),
    Script(&'a ScriptDoc),
    Stage(&'a StageDoc),
}

impl Scope<'_> {
    fn latency(&self) -> Option<&Distribution> {
        match self {
            Scope::Run(d) => d.latency.as_ref(),
            Scope::Script(s) => s.latency.as_ref(),
            Scope::Stage(s) => s.latency.as_ref(),
        }
    }

    fn counts(&self) -> &Counts {
        match self {
            Scope::Run(d) => &d.results.transactions,
            Scope::Script(s) => &s.transactions,
            Scope::Stage(s) => &s.transactions,
        }
    }
}

/// The scope of `place` in `doc`, or why there is none.
fn scope_in(doc: &RunDocument, place: Place) -> Result<Scope<'_>, &'static str> {
    match place {
        Place { stage: Some(n), .. } => {
            let stages = doc.stages.as_deref().unwrap_or_default();
            let stage = n.checked_sub(1).and_then(|i| stages.get(i));
            Ok(Scope::Stage(stage.ok_or("no such stage in this run")?))
        }
        Place {
            script: Some(i), ..
        } => Ok(Scope::Script(
            doc.scripts.get(i).ok_or("no such script in this run")?,
        )),
        _ => Ok(Scope::Run(doc)),
    }
}

const NO_LATENCY: &str = "no successful transactions";

/// The metric's value in `unit`, or why there is none.
fn measure(
    metric: Metric,
    unit: Unit,
    doc: &RunDocument,
    place: Place,
) -> Result<f64, &'static str> {
    let scope = scope_in(doc, place)?;
    const NO_LAG: &str = "no schedule lag measured";
    let results = &doc.results;
    let latency = || scope.latency().ok_or(NO_LATENCY);
    let ms = match (metric, &scope) {
        (Metric::Tps, Scope::Run(_)) => return results.tps.ok_or(NO_LATENCY),
        (Metric::Tps, Scope::Script(s)) => return s.tps.ok_or(NO_LATENCY),
        (Metric::Tps, Scope::Stage(s)) => return s.tps.ok_or(NO_LATENCY),
        (Metric::LatencyAverage, Scope::Run(_)) => results.latency_average_ms.ok_or(NO_LATENCY)?,
        (Metric::LatencyAverage, _) => latency()?.average_ms,
        (Metric::LatencyStddev, Scope::Run(_)) => results
            .latency_stddev_ms
            .or_else(|| doc.latency.as_ref().and_then(|l| l.stddev_ms))
            .ok_or(NO_LATENCY)?,
        (Metric::LatencyStddev, _) => latency()?.stddev_ms.ok_or(NO_LATENCY)?,
        (Metric::LatencyMax, _) => latency()?.max_ms,
        (Metric::Percentile(p), _) => latency()?.percentile_ms(p).ok_or(NO_LATENCY)?,
        (Metric::Failed, _) => return share(scope.counts().failed, scope.counts().total(), unit),
        (Metric::Retried, _) => return share(scope.counts().retried, scope.counts().total(), unit),
        (Metric::Late, _) => return share(results.late, results.transactions.processed, unit),
        (Metric::LagAverage, Scope::Stage(s)) => s.lag.as_ref().ok_or(NO_LAG)?.average_ms,
        (Metric::LagMax, Scope::Stage(s)) => s.lag.as_ref().ok_or(NO_LAG)?.max_ms,
        (Metric::LagAverage, _) => results.lag_average_ms.ok_or(NO_LAG)?,
        (Metric::LagMax, _) => results.lag_max_ms.ok_or(NO_LAG)?,
        (Metric::Nopm, _) => return tpcc(doc).map(|t| t.committed_nopm()),
        (Metric::Tpm, _) => return tpcc(doc).map(|t| t.tpm),
        (Metric::ConnectionTime, _) => results
            .initial_connection_time_ms
            .or(results.average_connection_time_ms)
            .ok_or("no connection time measured")?,
    };
    Ok(ms / unit.ms_per_unit())
}

/// The TPC-C-like rates of `doc`, or why there are none.
fn tpcc(doc: &RunDocument) -> Result<&crate::document::TpccDoc, &'static str> {
    doc.tpcc.as_ref().ok_or("not a --workload tpcc run")
}

/// A count, or its share of `total` in percent.
fn share(count: u64, total: u64, unit: Unit) -> Result<f64, &'static str> {
    match unit {
        Unit::Percent if total == 0 => Err("no transactions"),
        Unit::Percent => Ok(100.0 * count as f64 / total as f64),
        _ => Ok(count as f64),
    }
}
