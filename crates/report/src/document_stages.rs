//! The run document's `stages` (a run in stages, `--stage`/`--stages`): each stage's
//! spec, place in the measured interval, clients and rate, and a summary of the
//! transactions scheduled in it, shaped as the document's whole-run figures.

use pgrush_stats::{RunSummary, StageSummary};
use serde::{Deserialize, Serialize};

use crate::document_distribution::{Distribution, finite};
use crate::document_figures::Counts;
use crate::percentiles::PercentileList;

/// One stage of a run in stages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageDoc {
    /// Its number, from 1.
    pub number: u32,
    /// `label=`, if given.
    pub label: Option<String>,
    /// The spec as written.
    pub spec: String,
    /// Start, seconds after the start of the measured interval.
    pub start_s: f64,
    /// End, seconds after the start of the measured interval.
    pub end_s: f64,
    /// Active clients at the stage's start.
    pub clients_start: u32,
    /// Active clients at the stage's end (equal to the start's unless it ramps).
    pub clients_end: u32,
    /// Rate at the start (tps; `null`: unthrottled, a closed loop).
    pub rate_start_tps: Option<f64>,
    /// Rate at the end (tps; `null`: unthrottled).
    pub rate_end_tps: Option<f64>,
    /// Whether clients and rate move linearly over the stage.
    pub ramp: bool,
    /// Transaction counts (those scheduled in the stage).
    pub transactions: Counts,
    /// Successful transactions per second over the stage.
    pub tps: Option<f64>,
    /// Latency of successful transactions.
    pub latency: Option<Distribution>,
    /// Schedule lag (with a rate).
    pub lag: Option<Distribution>,
}

impl StageDoc {
    /// How charts and comparisons name the stage: `stage 2 climb`, or `stage 2`
    /// without a label.
    pub fn name(&self) -> String {
        match &self.label {
            Some(label) => format!("stage {} {label}", self.number),
            None => format!("stage {}", self.number),
        }
    }
}

/// A rate of 0 (unthrottled) as `None`.
fn rate(tps: f64) -> Option<f64> {
    (tps > 0.0).then_some(tps)
}

/// The document of stage `number` (from 1).
fn stage_doc(number: usize, st: &StageSummary, list: &PercentileList) -> StageDoc {
    let stage = &st.stage;
    let total = &st.stats.total;
    StageDoc {
        number: number as u32,
        label: stage.spec.label.clone(),
        spec: stage.spec.text.clone(),
        start_s: f64::from(stage.start_s),
        end_s: f64::from(stage.end_s()),
        clients_start: stage.clients.0,
        clients_end: stage.clients.1,
        rate_start_tps: rate(stage.rate.0),
        rate_end_tps: rate(stage.rate.1),
        ramp: stage.spec.ramp,
        transactions: Counts::of(&total.counters),
        tps: finite(st.tps()),
        latency: Distribution::build(&total.latency, &total.latency_hist, list),
        lag: total
            .lag_hist
            .as_ref()
            .and_then(|h| Distribution::build(&total.lag, h, list)),
    }
}

/// The stages of a run (`None` without stages: the field is absent).
pub(crate) fn stage_docs(sum: &RunSummary, list: &PercentileList) -> Option<Vec<StageDoc>> {
    (!sum.stages.is_empty()).then(|| {
        sum.stages
            .iter()
            .enumerate()
            .map(|(i, st)| stage_doc(i + 1, st, list))
            .collect()
    })
}
