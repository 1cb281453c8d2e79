//! Saved capacity searches (`pgrush capacity --json FILE`) in `pgrush report`: one printed
//! again, several side by side (text, Markdown, CSV, or one page with `--html`), and
//! gated with `--assert 'capacity>=N'` or `'capacity>=0.9*baseline'` against
//! `--baseline BASE.json`.

use std::path::Path;

use pgrush_lab::capacity::CapacityResult;
use pgrush_lab::capacity::compare;
use pgrush_report::assertion::Verdict;
use pgrush_run::Failure;
use pgrush_run::output_file::write_output;

use super::request::ReportArgs;
use super::saved_gates::finish_gate;

/// Reads `path` as a saved search; the error names the file.
fn read(path: &str) -> Result<(String, CapacityResult), Failure> {
    compare::read(Path::new(path))
        .map(|doc| (path.to_string(), doc))
        .map_err(|why| Failure::error(format!("report: {path}: {why}")))
}

/// `pgrush report` on saved capacity searches; `None` when the first file is none.
pub(super) fn report(prog: &str, parsed: &ReportArgs) -> Option<Result<i32, Failure>> {
    let first = parsed.files.first()?;
    if !compare::is_capacity_file(Path::new(first)) {
        return None;
    }
    Some(report_searches(prog, parsed))
}

fn report_searches(prog: &str, parsed: &ReportArgs) -> Result<i32, Failure> {
    let docs = parsed
        .files
        .iter()
        .map(|f| read(f))
        .collect::<Result<Vec<_>, Failure>>()?;
    if !parsed.expressions.is_empty() {
        return gate(prog, parsed, docs);
    }
    if let Some(path) = &parsed.html {
        let page = match docs.as_slice() {
            [(_, only)] => pgrush_lab::capacity::html::render(only),
            _ => compare::render_comparison_page(&docs),
        };
        return write_output(path, &page).map(|()| 0);
    }
    write_output("-", &compare::render(&docs, parsed.format.into())).map(|()| 0)
}

/// The gate: one verdict per assertion, then the table of the baseline and the search.
fn gate(
    prog: &str,
    parsed: &ReportArgs,
    mut docs: Vec<(String, CapacityResult)>,
) -> Result<i32, Failure> {
    let gates = crate::capacity_cmd::parse_gates(&parsed.expressions, parsed.baseline.is_some())?;
    let base = parsed.baseline.as_deref().map(read).transpose()?;
    let Some((_, doc)) = docs.first() else {
        return Ok(1);
    };
    let verdicts: Vec<Verdict> = gates
        .iter()
        .map(|g| crate::capacity_cmd::gate_verdict(g, doc, base.as_ref().map(|(_, b)| b)))
        .collect();
    if let Some(b) = base {
        docs.insert(0, b);
    }
    let table = compare::render(&docs, parsed.format.into());
    let text = format!("{}\n{table}", pgrush_run::gate::verdict_lines(&verdicts));
    finish_gate(prog, parsed, &verdicts, &text)
}
