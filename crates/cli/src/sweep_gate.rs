//! Gates over a saved sweep (`pgrush report [--baseline BASE_DIR] DIR --assert EXPR…`):
//! every assertion is checked on every cell, on the cell's run with the median tps
//! (the lower middle one for an even count, the run whose latency spectrum the sweep
//! report shows), so that every metric (percentiles, failures, lag…) comes from one
//! real run. With a baseline sweep, each cell is compared with the baseline's cell
//! that has the same axis values; a cell the baseline lacks fails its `…*baseline`
//! assertions with a note saying so.

use std::path::Path;

use pgrush_lab::sweep::{CellSummary, RunRecord, SweepSummary};
use pgrush_report::assertion::{Assertion, Threshold, Verdict};
use pgrush_report::document::RunDocument;
use pgrush_run::gate;

/// One cell of a saved sweep and the run its assertions are checked on.
#[derive(Debug)]
pub struct GatedCell {
    /// `clients=2 fillfactor=80`: the cell's axis values, as the sweep labels it.
    pub label: String,
    /// The axis values by axis name, sorted by name (the key matching baseline cells).
    pub key: Vec<(String, String)>,
    /// The run with the median tps, or why there is none.
    pub run: Result<RunDocument, String>,
}

/// The cells of the sweep saved in `dir` with their median-tps runs.
pub fn gated_cells(dir: &Path, summary: &SweepSummary) -> Vec<GatedCell> {
    summary
        .cells
        .iter()
        .map(|cell| GatedCell {
            label: cell.label.clone(),
            key: cell_key(summary, cell),
            run: median_record(&cell.runs)
                .ok_or_else(|| "no finished run in this cell".to_string())
                .and_then(|record| read_document(dir, record)),
        })
        .collect()
}

/// The cell's axis values by axis name, sorted.
fn cell_key(summary: &SweepSummary, cell: &CellSummary) -> Vec<(String, String)> {
    let mut key: Vec<(String, String)> = summary
        .axes
        .iter()
        .zip(&cell.values)
        .map(|(axis, value)| (axis.name(), value.clone()))
        .collect();
    key.sort();
    key
}

/// The run with the median tps (the lower middle one for an even count).
fn median_record(runs: &[RunRecord]) -> Option<&RunRecord> {
    let mut measured: Vec<&RunRecord> = runs.iter().filter(|r| r.tps.is_some()).collect();
    measured.sort_by(|a, b| a.tps.unwrap_or(0.0).total_cmp(&b.tps.unwrap_or(0.0)));
    measured.get(measured.len().saturating_sub(1) / 2).copied()
}

fn read_document(dir: &Path, record: &RunRecord) -> Result<RunDocument, String> {
    let path = dir.join(&record.document);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {}", path.display(), e))?;
    RunDocument::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Checks the assertions against each cell's run (what its options can produce, its
/// scripts); the first complaint names the cell.
pub fn resolve(
    assertions: &[Assertion],
    cells: &[GatedCell],
    with_baseline: bool,
) -> Result<(), String> {
    for cell in cells {
        if let Ok(doc) = &cell.run {
            let facts = gate::document_facts(doc, with_baseline);
            gate::resolve(assertions, &facts).map_err(|msg| format!("[{}] {msg}", cell.label))?;
        }
    }
    Ok(())
}

/// The verdicts of every cell × assertion, cell by cell, each labelled with its cell
/// (`[clients=2] tps >= 1000`). `baseline` holds the baseline sweep's cells.
pub fn verdicts(
    assertions: &[Assertion],
    cells: &[GatedCell],
    baseline: Option<&[GatedCell]>,
) -> Vec<Verdict> {
    let mut out = Vec::with_capacity(cells.len() * assertions.len());
    for cell in cells {
        let base = baseline.map(|b| b.iter().find(|c| c.key == cell.key));
        for (assertion, verdict) in assertions.iter().zip(cell_verdicts(assertions, cell, base)) {
            out.push(labelled(verdict, assertion, &cell.label));
        }
    }
    out
}

/// One cell's verdicts; `base` is `Some(None)` when the baseline has no such cell.
fn cell_verdicts(
    assertions: &[Assertion],
    cell: &GatedCell,
    base: Option<Option<&GatedCell>>,
) -> Vec<Verdict> {
    let doc = match &cell.run {
        Ok(doc) => doc,
        Err(why) => return assertions.iter().map(|a| unmeasured(a, why)).collect(),
    };
    let facts = gate::document_facts(doc, base.is_some());
    let base_doc = match base {
        Some(Some(b)) => match &b.run {
            Ok(d) => Ok(Some(d)),
            Err(why) => Err(format!("baseline cell: {why}")),
        },
        Some(None) => Err(format!(
            "the baseline sweep has no cell {}",
            key_label(&cell.key)
        )),
        None => Ok(None),
    };
    let mut verdicts = gate::verdicts(assertions, &facts, doc, base_doc.clone().ok().flatten());
    if let Err(why) = base_doc {
        for (v, a) in verdicts.iter_mut().zip(assertions) {
            if matches!(a.threshold, Threshold::Baseline { .. }) {
                v.passed = false;
                v.note = Some(format!("no baseline value: {why}"));
            }
        }
    }
    verdicts
}

/// `axis=value …` of a key.
fn key_label(key: &[(String, String)]) -> String {
    key.iter()
        .map(|(axis, value)| format!("{axis}={value}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A failed verdict for a cell without a run to measure.
fn unmeasured(assertion: &Assertion, why: &str) -> Verdict {
    let (threshold, unit) = match assertion.threshold {
        Threshold::Value { value, unit } => (Some(value), unit.as_str().to_string()),
        Threshold::Baseline { .. } => (None, String::new()),
    };
    Verdict {
        expression: assertion.source.clone(),
        assertion: assertion.normalized(),
        passed: false,
        measured: None,
        threshold,
        baseline: None,
        unit,
        note: Some(format!("not measured: {why}")),
    }
}

/// `verdict` with its cell in front of the assertion (its line, its JUnit test case).
fn labelled(mut verdict: Verdict, assertion: &Assertion, label: &str) -> Verdict {
    verdict.assertion = format!("[{label}] {}", assertion.normalized());
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(repeat: u32, tps: Option<f64>) -> RunRecord {
        RunRecord {
            repeat,
            document: format!("runs/r{repeat}.json"),
            tps,
            clients: 1,
            tables: Vec::new(),
            settings: Default::default(),
        }
    }

    #[test]
    fn the_median_run_is_the_lower_middle_one_by_tps() {
        let runs = [
            record(1, Some(30.0)),
            record(2, None),
            record(3, Some(10.0)),
            record(4, Some(20.0)),
            record(5, Some(40.0)),
        ];
        assert_eq!(median_record(&runs).map(|r| r.repeat), Some(4));
        assert_eq!(median_record(&runs[..3]).map(|r| r.repeat), Some(3));
        assert_eq!(median_record(&runs[..1]).map(|r| r.repeat), Some(1));
        assert!(median_record(&runs[1..2]).is_none());
        assert!(median_record(&[]).is_none());
    }

    #[test]
    fn a_cell_without_runs_fails_every_assertion_with_a_note() {
        let assertions = [
            Assertion::parse("tps>=10").unwrap(),
            Assertion::parse("p99<=1.1*baseline").unwrap(),
        ];
        let cell = GatedCell {
            label: "clients=2".into(),
            key: vec![("clients".into(), "2".into())],
            run: Err("no finished run in this cell".into()),
        };
        let v = verdicts(&assertions, std::slice::from_ref(&cell), None);
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|v| !v.passed));
        assert_eq!(
            v[0].line(),
            "assertion FAILED: [clients=2] tps >= 10 (not measured: no finished run in this cell)"
        );
    }
}
