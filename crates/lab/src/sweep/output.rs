//! A sweep's results as a table (cells as columns; rows: the axes, runs, tps with its
//! interval, NOPM and TPM with theirs for `--workload tpcc`, latency average and
//! percentiles, then each statement's latency) in three
//! formats: aligned text, Markdown and CSV; and the comparisons as sentences.

use super::stats::{Interval, Verdict};
use super::summary::SweepSummary;

pub use crate::table::TableFormat;

/// Beyond this estimate the sentence says "more than" (the JSON keeps the number).
const MAX_REPEATS_SHOWN: u32 = 1000;

/// The longest row label in the text format (statements are cut).
const TEXT_LABEL_WIDTH: usize = 50;

/// `1234.5 [1200.1, 1250.3]` with `decimals` digits; the value alone when the
/// interval has no width (a single run).
fn interval_text(i: &Interval, decimals: usize) -> String {
    if i.low == i.high && i.low == i.estimate {
        return format!("{:.d$}", i.estimate, d = decimals);
    }
    format!(
        "{:.d$} [{:.d$}, {:.d$}]",
        i.estimate,
        i.low,
        i.high,
        d = decimals
    )
}

/// The table: a header row, then labelled rows, one column per cell.
pub fn table(summary: &SweepSummary) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut header = vec![String::new()];
    header.extend((1..=summary.cells.len()).map(|n| format!("cell {n}")));
    rows.push(header);
    for (k, axis) in summary.axes.iter().enumerate() {
        let mut row = vec![axis.name()];
        row.extend(summary.cells.iter().map(|c| c.values[k].clone()));
        rows.push(row);
    }
    let mut push = |label: String, f: &dyn Fn(&super::summary::CellSummary) -> Option<String>| {
        let mut row = vec![label];
        row.extend(
            summary
                .cells
                .iter()
                .map(|c| f(c).unwrap_or_else(|| "-".into())),
        );
        rows.push(row);
    };
    push("runs".into(), &|c| Some(c.runs.len().to_string()));
    push("tps".into(), &|c| {
        c.tps.as_ref().map(|i| interval_text(i, 1))
    });
    if summary.cells.iter().any(|c| c.nopm.is_some()) {
        push("NOPM (New-Orders per minute)".into(), &|c| {
            c.nopm.as_ref().map(|i| interval_text(i, 1))
        });
        push("TPM (transactions per minute)".into(), &|c| {
            c.tpm.as_ref().map(|i| interval_text(i, 1))
        });
    }
    push("latency average (ms)".into(), &|c| {
        c.latency_average_ms.as_ref().map(|i| interval_text(i, 3))
    });
    for p in super::summary::PERCENTILES {
        push(format!("latency p{p} (ms)"), &|c| {
            c.latency_percentiles
                .iter()
                .find(|v| v.p == p)
                .map(|v| format!("{:.3}", v.ms))
        });
    }
    let statements = summary.statement_rows();
    if !statements.is_empty() {
        push("statement latencies (ms):".into(), &|_| Some(String::new()));
    }
    for (script, text) in statements {
        let shared = summary.cells.iter().any(|c| {
            c.statements
                .iter()
                .any(|s| s.text == text && s.script != script)
        });
        let label = if shared {
            format!("  {script} {text}")
        } else {
            format!("  {text}")
        };
        push(label, &|c| {
            c.statements
                .iter()
                .find(|s| s.script == script && s.text == text)
                .map(|s| interval_text(&s.latency_ms, 3))
        });
    }
    rows
}

/// The table in `format`.
pub fn render_table(summary: &SweepSummary, format: TableFormat) -> String {
    crate::table::render_rows(&table(summary), format, TEXT_LABEL_WIDTH)
}

/// One sentence per comparison, and the single-repeat warning.
pub fn comparisons_text(summary: &SweepSummary) -> String {
    let mut out = String::new();
    if summary.untested {
        out.push_str(
            "A cell has a single run: the differences below are untested \
             (use --repeat 3 or more).\n",
        );
    }
    for c in &summary.comparisons {
        let context = if c.others.is_empty() {
            String::new()
        } else {
            format!(" ({})", c.others)
        };
        let ratio = c
            .tps_ratio
            .as_ref()
            .map_or("-".to_string(), |r| format!("x{}", interval_text(r, 3)));
        let verdict = match c.verdict {
            Verdict::Untested => "untested".to_string(),
            Verdict::Different => "larger than the noise".to_string(),
            Verdict::WithinNoise {
                repeats_needed: Some(n),
            } if n > MAX_REPEATS_SHOWN => format!(
                "within the noise; more than {MAX_REPEATS_SHOWN} repeats per cell would be \
                 needed to tell (the difference, if any, is small against the noise)"
            ),
            Verdict::WithinNoise {
                repeats_needed: Some(n),
            } => format!("within the noise; about {n} repeats per cell could tell"),
            Verdict::WithinNoise {
                repeats_needed: None,
            } => "within the noise".to_string(),
        };
        out.push_str(&format!(
            "{} {} -> {}{context}: tps {ratio}, {verdict}\n",
            c.axis, c.from, c.to
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_columns_are_right_aligned_and_labels_cut() {
        let rows = vec![
            vec!["".into(), "cell 1".into(), "cell 2".into()],
            vec![
                "tps".into(),
                "1.0 [1.0, 1.0]".into(),
                "22.5 [20.0, 25.0]".into(),
            ],
            vec!["x".repeat(60), "-".into(), "1".into()],
        ];
        let text = crate::table::render_rows(&rows, TableFormat::Text, TEXT_LABEL_WIDTH);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            format!("tps{}  1.0 [1.0, 1.0]  22.5 [20.0, 25.0]", " ".repeat(47))
        );
        assert!(lines[2].starts_with(&format!("{}…", "x".repeat(49))));
        assert!(lines[2].ends_with("  1"));
        let md = crate::table::render_rows(&rows[..2], TableFormat::Markdown, TEXT_LABEL_WIDTH);
        assert_eq!(
            md,
            "|  | cell 1 | cell 2 |\n| --- | ---: | ---: |\n| tps | 1.0 [1.0, 1.0] | 22.5 [20.0, 25.0] |\n"
        );
        let csv = crate::table::render_rows(
            &[vec!["a,b".into(), "say \"x\"".into()]],
            TableFormat::Csv,
            TEXT_LABEL_WIDTH,
        );
        assert_eq!(csv, "\"a,b\",\"say \"\"x\"\"\"\n");
    }
}
