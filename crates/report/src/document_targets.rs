//! `--target`: the transactions of each server the scripts went to, in the run
//! document's `targets` array (the text report's `per target:` block is in `text`,
//! the page's table in `html`; pgbench's report is unchanged without targets).

use pgrush_stats::RunSummary;
use pgrush_stats::server::ServerTimeline;
use serde::{Deserialize, Serialize};

use crate::document_distribution::{Distribution, finite};
use crate::document_figures::Counts;
use crate::percentiles::PercentileList;

/// One target in the run document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetDoc {
    /// `default` (the run's connection) or the conninfo given (passwords redacted).
    pub name: String,
    /// Its scripts, numbered from 1 as in the report (`SQL script N`).
    pub scripts: Vec<usize>,
    /// Transaction counts.
    pub transactions: Counts,
    /// Successful transactions per second.
    pub tps: Option<f64>,
    /// Latency of successful transactions.
    pub latency: Option<Distribution>,
    /// `--server-stats`: what this target's server was doing, sampled on a connection
    /// of its own (absent for `default`, whose server is the document's `server_stats`,
    /// and when its sampler could not start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats: Option<ServerTimeline>,
    /// `pg_is_in_recovery()` of the server its sampler reached (a standby: true;
    /// absent when not sampled or not asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_in_recovery: Option<bool>,
}

/// The run document's `targets` (absent without targets).
pub(crate) fn target_docs(sum: &RunSummary, list: &PercentileList) -> Option<Vec<TargetDoc>> {
    if sum.targets.is_empty() {
        return None;
    }
    let duration_s = sum.bench_duration_s();
    let docs = sum
        .targets
        .iter()
        .map(|target| {
            let tx = sum.target_stats(target);
            TargetDoc {
                name: target.name.clone(),
                scripts: target.scripts.iter().map(|k| k + 1).collect(),
                transactions: Counts::of(&tx.counters),
                tps: finite(tx.counters.successful as f64 / duration_s),
                latency: Distribution::build(&tx.latency, &tx.latency_hist, list),
                server_stats: None,
                server_in_recovery: None,
            }
        })
        .collect();
    Some(docs)
}
