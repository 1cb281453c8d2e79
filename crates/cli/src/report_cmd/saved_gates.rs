//! Gates over saved results (`pgrush report [--baseline BASE] RESULTS --assert EXPR…`):
//! a run document, a sweep directory (every cell) or `pgrush ops` results (every scale).
//! Each prints its verdict lines, writes `--junit`'s file and exits with status 3 when
//! an assertion failed, 1 when the files or the assertions do not fit.

use std::path::Path;

use pgrush_lab::ops::OpsDocument;
use pgrush_lab::ops::compare::Comparison as OpsComparison;
use pgrush_lab::sweep;
use pgrush_report::assertion::{Assertion, ContextError, Threshold, Verdict, ops};
use pgrush_report::compare::Comparison;
use pgrush_report::document::RunDocument;

use pgrush_run::Failure;
use pgrush_run::gate;

use pgrush_run::output_file::write_output;

use super::request::ReportArgs;
use crate::saved_run::read_run;

/// `pgrush report [--baseline=BASE] RUN --assert=EXPR…`: the verdict lines, the table of
/// the baseline and the run, the `--junit` file; exit status 3 when an assertion failed.
pub(super) fn gate_saved_run(
    prog: &str,
    parsed: &ReportArgs,
    assertions: &[Assertion],
    mut runs: Vec<(String, RunDocument)>,
) -> Result<i32, Failure> {
    let base = match &parsed.baseline {
        Some(path) => Some((path.clone(), read_run(path)?)),
        None => None,
    };
    let Some((_, new)) = runs.first() else {
        return Ok(1);
    };
    let facts = gate::document_facts(new, base.is_some());
    gate::resolve(assertions, &facts).map_err(Failure::error)?;
    let verdicts = gate::verdicts(assertions, &facts, new, base.as_ref().map(|(_, doc)| doc));
    if let Some(b) = base {
        runs.insert(0, b);
    }
    let table = Comparison::build(&runs).render(parsed.format);
    let text = format!("{}\n{table}", gate::verdict_lines(&verdicts));
    finish_gate(prog, parsed, &verdicts, &text)
}

/// A saved sweep's summary.
fn load_sweep(dir: &str) -> Result<sweep::SweepSummary, Failure> {
    if !sweep::is_saved_sweep(Path::new(dir)) {
        return Err(Failure::error(format!(
            "\"{dir}\" is not a sweep directory (no {})",
            sweep::PLAN_FILE
        )));
    }
    sweep::load_summary(Path::new(dir)).map_err(|e| Failure::error(format!("\"{dir}\": {e}")))
}

/// `pgrush report [--baseline=BASE_DIR] DIR --assert=EXPR…`: one verdict line per cell
/// and assertion, the sweep's table, the `--junit` file (one test case per cell
/// and assertion); exit status 3 when an assertion failed in any cell.
pub(super) fn gate_saved_sweep(
    prog: &str,
    parsed: &ReportArgs,
    assertions: &[Assertion],
) -> Result<i32, Failure> {
    let Some(dir) = parsed.files.first() else {
        return Ok(1);
    };
    let summary = load_sweep(dir)?;
    let cells = crate::sweep_gate::gated_cells(Path::new(dir), &summary);
    let base_cells = match &parsed.baseline {
        Some(base) => Some(crate::sweep_gate::gated_cells(
            Path::new(base),
            &load_sweep(base)?,
        )),
        None => None,
    };
    crate::sweep_gate::resolve(assertions, &cells, base_cells.is_some()).map_err(Failure::error)?;
    let verdicts = crate::sweep_gate::verdicts(assertions, &cells, base_cells.as_deref());
    let table = sweep::output::render_table(&summary, parsed.format.into());
    let text = format!("{}\n{table}", gate::verdict_lines(&verdicts));
    finish_gate(prog, parsed, &verdicts, &text)
}

/// `pgrush report [--baseline=BASE.json] OPS.json --assert=STEP<=DURATION…` when the
/// file holds `pgrush ops` results: one verdict line per scale and assertion, the
/// side-by-side table (baseline first), the `--junit` file; `None` when there is no assertion
/// or the file is no ops result.
pub(super) fn gate_saved_ops(prog: &str, parsed: &ReportArgs) -> Option<Result<i32, Failure>> {
    if parsed.expressions.is_empty() {
        return None;
    }
    let path = parsed.files.first()?;
    if !ops::is_ops_file(path) {
        return None;
    }
    let assertions = match ops::parse_assertions(&parsed.expressions) {
        Ok(a) => a,
        Err(msg) => return Some(Err(Failure::usage(Some("report"), msg))),
    };
    let no_baseline = assertions
        .iter()
        .find(|a| matches!(a.threshold, Threshold::Baseline { .. }) && parsed.baseline.is_none());
    if let Some(a) = no_baseline {
        let why = ContextError::NoBaseline;
        let msg = format!("invalid assertion \"{}\": {why}", a.source);
        return Some(Err(Failure::error(msg)));
    }
    let mut files = Vec::new();
    for file in parsed.baseline.iter().chain([path]) {
        match read_ops(file) {
            Ok((text, results)) => files.push((file.clone(), text, results)),
            Err(failure) => return Some(Err(failure)),
        }
    }
    let (doc, base) = match files.as_slice() {
        [(_, _, base), (_, _, doc)] => (doc, Some(base)),
        [(_, _, doc)] => (doc, None),
        _ => return Some(Ok(1)),
    };
    let verdicts = ops::verdicts(&assertions, doc, base);
    let text = format!("{}{}", gate::verdict_lines(&verdicts), ops_table(&files));
    Some(finish_gate(prog, parsed, &verdicts, &text))
}

/// The ops results in `path`: its text and what the gate reads.
fn read_ops(path: &str) -> Result<(String, ops::OpsResults), Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let why = pgrush_wire::strerror(&e);
        Failure::error(format!("could not open file \"{path}\": {why}"))
    })?;
    let results =
        ops::parse_results(&text).map_err(|e| Failure::error(format!("\"{path}\": {e}")))?;
    Ok((text, results))
}

/// `pgrush report`'s side-by-side table of the ops results (path, text, what the gate
/// reads), after a blank line;
/// empty when a file does not read as a whole ops document (the verdicts still do).
fn ops_table(files: &[(String, String, ops::OpsResults)]) -> String {
    let docs: Option<Vec<(String, OpsDocument)>> = files
        .iter()
        .map(|(path, text, _)| Some((path.clone(), serde_json::from_str(text).ok()?)))
        .collect();
    docs.map(|d| format!("\n{}", OpsComparison::build(&d).render()))
        .unwrap_or_default()
}

/// Prints `text`, writes `--junit`'s file and gives the exit status of the verdicts.
pub(super) fn finish_gate(
    prog: &str,
    parsed: &ReportArgs,
    verdicts: &[Verdict],
    text: &str,
) -> Result<i32, Failure> {
    write_output("-", text)?;
    if let Some(path) = &parsed.junit {
        let suite = format!("{prog} report");
        let xml = pgrush_report::junit::render(&suite, verdicts, text);
        write_output(path, &xml)?;
    }
    Ok(if gate::all_passed(verdicts) {
        0
    } else {
        gate::ASSERTION_FAILED
    })
}

#[cfg(test)]
mod tests {
    use pgrush_lab::ops::StepKind;
    use pgrush_report::assertion::ops::STEPS;

    #[test]
    fn ops_assertions_know_every_step_of_pgrush_ops() {
        let names: Vec<&str> = StepKind::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names, STEPS);
    }
}
