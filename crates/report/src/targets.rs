//! `--target`: the transactions of each server the scripts went to. The text
//! report's `per target:` block follows the per-script blocks (only when the run
//! had targets: pgbench's report is unchanged otherwise); the run document's
//! `targets` array holds the same figures with the latency distribution.

use std::fmt::Write as _;

use pgrush_stats::RunSummary;
use pgrush_stats::server::ServerTimeline;
use serde::{Deserialize, Serialize};

use crate::document::{Counts, Distribution, RunDocument};
use crate::document_distribution::finite;
use crate::html::ms;
use crate::percentiles::{PercentileList, label};
use crate::svg::escape;
use crate::text::{pct, push_count_pct, push_simple_stats};
use crate::textbuf::TextBuf;

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

/// The text report's `per target:` block (nothing without targets).
pub(crate) fn push_target_blocks(s: &mut TextBuf, sum: &RunSummary, total_cnt: u64) {
    if sum.targets.is_empty() {
        return;
    }
    let duration_s = sum.bench_duration_s();
    s.str("per target:\n");
    for (i, target) in sum.targets.iter().enumerate() {
        let tx = sum.target_stats(target);
        let c = &tx.counters;
        let scripts: Vec<String> = target.scripts.iter().map(|k| (k + 1).to_string()).collect();
        let _ = writeln!(
            s,
            " - target {}: {} (SQL script {})",
            i + 1,
            target.name,
            scripts.join(", ")
        );
        let _ = write!(s, "   - {} transactions (", c.total());
        s.fixed(pct(c.total(), total_cnt), 1);
        if c.total() == 0 {
            s.str("% of total)\n");
            continue;
        }
        let _ = write!(
            s,
            "% of total)\n   - number of transactions actually processed: {} (tps = ",
            c.successful
        );
        s.fixed(c.successful as f64 / duration_s, 6);
        s.str(")\n");
        push_count_pct(
            s,
            "   - number of failed transactions",
            c.failed(),
            c.total(),
        );
        push_simple_stats(s, "   - latency", &tx.latency);
    }
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

/// The HTML page's `Per target` table (empty without targets): transactions,
/// failures, tps and the latency percentiles of each target; then the summary of
/// each target's server statistics (as the text report prints it).
pub(crate) fn html_section(d: &RunDocument) -> String {
    let Some(targets) = &d.targets else {
        return String::new();
    };
    let mut s = String::from(
        "<h2>Per target</h2><table id=\"targets\"><tr><th>target</th><th>scripts</th><th>processed</th><th>failed</th><th>tps</th><th>average</th>",
    );
    for &p in &d.percentiles {
        let _ = write!(s, "<th>{}</th>", escape(&label(p)));
    }
    s.push_str("</tr>");
    for t in targets {
        let scripts: Vec<String> = t.scripts.iter().map(usize::to_string).collect();
        let latency = t.latency.as_ref();
        let _ = write!(
            s,
            "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
            escape(&t.name),
            scripts.join(", "),
            t.transactions.processed,
            t.transactions.failed,
            t.tps.map_or("–".to_string(), |v| format!("{v:.1}")),
            ms(latency.map(|l| l.average_ms)),
        );
        for &p in &d.percentiles {
            let _ = write!(
                s,
                "<td class=\"n\">{}</td>",
                ms(latency.and_then(|l| l.percentile_ms(p)))
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    for (i, t) in targets.iter().enumerate() {
        if let Some(server) = &t.server_stats {
            let text = crate::server::render_target_text(i + 1, t, server);
            let _ = write!(s, "<pre class=\"target-server\">{}</pre>", escape(&text));
        }
    }
    s
}
