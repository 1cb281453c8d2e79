//! The results of a sweep ([`SweepSummary`], schema `schema/pgrush-sweep.v1.schema.json`):
//! per cell the median tps and latencies over its repeats with bootstrap intervals and
//! the `-r` per-statement latencies; for each pair of cells that differ in one axis the
//! ratio of their median tps with its interval and a verdict. Built from the run
//! documents; `--json` writes it.

use super::axes::Axis;
use super::plan::Plan;
use super::runner::{RunFacts, TableFacts};
use super::stats::{self, Interval, Verdict};
use pgrush_report::RunDocument;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `format` field of the sweep document.
pub const FORMAT: &str = "pgrush-sweep";
/// The `format_version` written.
pub const FORMAT_VERSION: u32 = 1;
/// The latency percentiles reported per cell.
pub const PERCENTILES: [f64; 3] = [50.0, 90.0, 99.0];

/// One run of a cell, as the sweep recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Repeat number, from 1.
    pub repeat: u32,
    /// The run document's file, relative to the output directory.
    pub document: String,
    /// The run's tps.
    pub tps: Option<f64>,
    /// Number of clients the run document reports.
    pub clients: u32,
    /// The tables after the initialization (pgbench's, or the TPC-C-like ones).
    pub tables: Vec<TableFacts>,
    /// The `set:` settings before the run.
    pub settings: BTreeMap<String, String>,
}

/// A latency percentile: the median over a cell's runs, or a point of a spectrum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentileMedian {
    /// The percentile.
    pub p: f64,
    /// Median over the runs (ms).
    pub ms: f64,
}

/// One statement's latency in a cell (`-r`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementLatency {
    /// The script (`<builtin: TPC-B (sort of)>`, a file name).
    pub script: String,
    /// The statement as the `-r` report shows it.
    pub text: String,
    /// Average latency (ms): median over the runs and interval.
    pub latency_ms: Interval,
}

/// One cell's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSummary {
    /// The value of each axis.
    pub values: Vec<String>,
    /// `axis=value ...`.
    pub label: String,
    /// The finished runs.
    pub runs: Vec<RunRecord>,
    /// tps: median over the runs and interval.
    pub tps: Option<Interval>,
    /// Average latency (ms): median over the runs and interval.
    pub latency_average_ms: Option<Interval>,
    /// `--workload tpcc`: the clients' New-Order transactions per minute of the measured
    /// run (NOPM), median over the runs and interval; absent for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<Interval>,
    /// `--workload tpcc`: the clients' transactions per minute (TPM), median over the
    /// runs and interval; absent for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<Interval>,
    /// Latency percentiles: medians over the runs.
    pub latency_percentiles: Vec<PercentileMedian>,
    /// Per-statement latencies.
    pub statements: Vec<StatementLatency>,
    /// The latency percentile spectrum (10 points per decade of `1/(1-p)`) of the
    /// cell's run with the median tps (the lower middle one for an even count).
    pub latency_spectrum: Vec<PercentileMedian>,
}

/// Two cells that differ in one axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The axis that differs.
    pub axis: String,
    /// Its value in the first cell (the baseline).
    pub from: String,
    /// Its value in the second cell.
    pub to: String,
    /// The other axes' values, `axis=value ...` (empty with one axis).
    pub others: String,
    /// The cells' indexes (from 0).
    pub cells: [usize; 2],
    /// tps of the second cell over the first: ratio of medians and interval.
    pub tps_ratio: Option<Interval>,
    /// What the interval says.
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// A sweep's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    /// Always `pgrush-sweep`.
    pub format: String,
    /// The format version, 1.
    pub format_version: u32,
    /// The seed of the run order and the bootstrap.
    pub seed: u64,
    /// The axes.
    pub axes: Vec<Axis>,
    /// Repeats per cell planned.
    pub repeats: u32,
    /// Warm-up seconds before each run.
    pub warmup_s: u32,
    /// The cells.
    pub cells: Vec<CellSummary>,
    /// Comparisons of cells that differ in one axis.
    pub comparisons: Vec<Comparison>,
    /// True when some cell has fewer than two runs: differences are not tested.
    pub untested: bool,
}

/// The runs of each cell: (repeat, document file, document, facts).
pub type CellRuns = Vec<(u32, String, RunDocument, RunFacts)>;

impl SweepSummary {
    /// The summary of `plan` given each cell's finished runs.
    pub fn build(plan: &Plan, runs: &[CellRuns]) -> SweepSummary {
        let mut rng = fastrand::Rng::with_seed(plan.seed);
        let axes = &plan.key.axes;
        let cells: Vec<CellSummary> = plan
            .cells
            .iter()
            .zip(runs)
            .map(|(cell, runs)| cell_summary(cell.label(axes), &cell.values, runs, &mut rng))
            .collect();
        let comparisons = comparisons(axes, &cells, runs, &mut rng);
        let untested = cells.iter().any(|c| c.runs.len() < 2);
        SweepSummary {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            seed: plan.seed,
            axes: axes.clone(),
            repeats: plan.key.repeats,
            warmup_s: plan.key.warmup_s,
            cells,
            comparisons,
            untested,
        }
    }

    /// Pretty-printed JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string());
        s.push('\n');
        s
    }

    /// The distinct statements over all cells, in first-seen order: (script, text).
    pub fn statement_rows(&self) -> Vec<(String, String)> {
        let mut rows: Vec<(String, String)> = Vec::new();
        for cell in &self.cells {
            for st in &cell.statements {
                let key = (st.script.clone(), st.text.clone());
                if !rows.contains(&key) {
                    rows.push(key);
                }
            }
        }
        rows
    }
}

/// A `--workload tpcc` rate (`rate` of its `tpcc` block) of each run of a cell.
fn tpcc_values(runs: &CellRuns, rate: fn(&pgrush_report::document::TpccDoc) -> f64) -> Vec<f64> {
    runs.iter()
        .filter_map(|(_, _, d, _)| d.tpcc.as_ref().map(rate))
        .collect()
}

/// The tps of each run of a cell.
fn tps_values(runs: &CellRuns) -> Vec<f64> {
    runs.iter()
        .filter_map(|(_, _, d, _)| d.results.tps)
        .collect()
}

fn cell_summary(
    label: String,
    values: &[String],
    runs: &CellRuns,
    rng: &mut fastrand::Rng,
) -> CellSummary {
    let records = runs
        .iter()
        .map(|(repeat, file, doc, facts)| RunRecord {
            repeat: *repeat,
            document: file.clone(),
            tps: doc.results.tps,
            clients: doc.config.clients,
            tables: facts.tables.clone(),
            settings: facts.settings.clone(),
        })
        .collect();
    let averages: Vec<f64> = runs
        .iter()
        .filter_map(|(_, _, d, _)| d.results.latency_average_ms)
        .collect();
    let latency_percentiles = PERCENTILES
        .iter()
        .filter_map(|&p| {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|(_, _, d, _)| d.latency.as_ref()?.percentile_ms(p))
                .collect();
            stats::median(&values).map(|ms| PercentileMedian { p, ms })
        })
        .collect();
    let tps = stats::median_interval(&tps_values(runs), rng);
    let latency_average_ms = stats::median_interval(&averages, rng);
    let statements = statements(runs, rng);
    // Drawn after the others so that a sweep of pgbench's tables keeps its intervals.
    let nopm = stats::median_interval(&tpcc_values(runs, |t| t.nopm), rng);
    let tpm = stats::median_interval(&tpcc_values(runs, |t| t.tpm), rng);
    CellSummary {
        values: values.to_vec(),
        label,
        runs: records,
        tps,
        latency_average_ms,
        nopm,
        tpm,
        latency_percentiles,
        statements,
        latency_spectrum: median_run(runs)
            .and_then(|d| d.latency.as_ref())
            .map(|dist| {
                pgrush_report::html::spectrum(dist)
                    .into_iter()
                    .map(|(p, ms)| PercentileMedian { p, ms })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The run with the median tps (the lower middle one for an even count).
fn median_run(runs: &CellRuns) -> Option<&RunDocument> {
    let mut docs: Vec<&RunDocument> = runs
        .iter()
        .map(|(_, _, d, _)| d)
        .filter(|d| d.results.tps.is_some())
        .collect();
    docs.sort_by(|a, b| {
        a.results
            .tps
            .unwrap_or(0.0)
            .total_cmp(&b.results.tps.unwrap_or(0.0))
    });
    docs.get(docs.len().saturating_sub(1) / 2).copied()
}

/// Each statement's average latency over the runs.
fn statements(runs: &CellRuns, rng: &mut fastrand::Rng) -> Vec<StatementLatency> {
    let mut by_key: Vec<((String, String), Vec<f64>)> = Vec::new();
    for (_, _, doc, _) in runs {
        for script in &doc.scripts {
            for cmd in script.commands.iter().filter(|c| c.executions > 0) {
                let key = (script.description.clone(), cmd.text.clone());
                match by_key.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, v)) => v.push(cmd.average_ms),
                    None => by_key.push((key, vec![cmd.average_ms])),
                }
            }
        }
    }
    by_key
        .into_iter()
        .filter_map(|((script, text), values)| {
            Some(StatementLatency {
                script,
                text,
                latency_ms: stats::median_interval(&values, rng)?,
            })
        })
        .collect()
}

/// The pairs of cells (i < j) whose values differ in exactly one axis, with that
/// axis: (i, j, axis index).
pub fn one_axis_pairs(values: &[Vec<String>]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    for (i, a) in values.iter().enumerate() {
        for (j, b) in values.iter().enumerate().skip(i + 1) {
            let mut differing = (0..a.len()).filter(|&k| a[k] != b[k]);
            if let (Some(k), None) = (differing.next(), differing.next()) {
                out.push((i, j, k));
            }
        }
    }
    out
}

/// Every pair of cells that differ in exactly one axis, the earlier value as baseline.
fn comparisons(
    axes: &[Axis],
    cells: &[CellSummary],
    runs: &[CellRuns],
    rng: &mut fastrand::Rng,
) -> Vec<Comparison> {
    let values: Vec<Vec<String>> = cells.iter().map(|c| c.values.clone()).collect();
    let mut out = Vec::new();
    for (i, j, k) in one_axis_pairs(&values) {
        let (a, b) = (&cells[i], &cells[j]);
        let others = axes
            .iter()
            .zip(&a.values)
            .enumerate()
            .filter(|(n, _)| *n != k)
            .map(|(_, (axis, v))| format!("{}={v}", axis.name()))
            .collect::<Vec<_>>()
            .join(" ");
        let (ta, tb) = (tps_values(&runs[i]), tps_values(&runs[j]));
        let tps_ratio = stats::ratio_interval(&ta, &tb, rng);
        let n = ta.len().min(tb.len());
        let verdict = tps_ratio.map_or(Verdict::Untested, |r| stats::verdict(&r, n));
        out.push(Comparison {
            axis: axes[k].name(),
            from: a.values[k].clone(),
            to: b.values[k].clone(),
            others,
            cells: [i, j],
            tps_ratio,
            verdict,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_differ_in_exactly_one_axis() {
        let axes: Vec<Axis> = ["fillfactor=100,80", "clients=1,2,4"]
            .iter()
            .map(|s| Axis::parse(s).unwrap())
            .collect();
        let cells = super::super::plan::product(&axes).unwrap();
        let values: Vec<Vec<String>> = cells.into_iter().map(|c| c.values).collect();
        let pairs = one_axis_pairs(&values);
        // 2x3 cells: 3 fillfactor pairs (one per client count) and 3 client pairs per
        // fillfactor (1-2, 1-4, 2-4).
        assert_eq!(pairs.len(), 3 + 2 * 3);
        assert!(pairs.contains(&(0, 3, 0)));
        assert!(pairs.contains(&(0, 2, 1)));
        assert!(!pairs.iter().any(|&(i, j, _)| (i, j) == (0, 4)));
        assert!(one_axis_pairs(&[vec!["a".into()]]).is_empty());
    }
}
