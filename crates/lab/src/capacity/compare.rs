//! Saved capacity searches read back (`pgrush report CAP.json…`): one printed again, or
//! several side by side (for example two server versions, or before and after a
//! setting) as aligned text, Markdown or CSV, and as one page whose charts overlay
//! each search's latency–throughput curve.

use std::path::Path;

use pgrush_report::page::{header_table, page_end, page_start};
use pgrush_report::svg::{Chart, Series, XScale, escape};

use super::output::{MAX_WIDTH, percent, render_text};
use super::result::{CapacityResult, SCHEMA, rate_text};
use crate::table::{TableFormat, render_rows};

/// Whether the file at `path` holds a capacity search (its `schema` is
/// `pgrush-capacity/…`); false when it cannot be read or parsed.
pub fn is_capacity_file(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| {
        v.get("schema")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|s| s.starts_with("pgrush-capacity/"))
    })
}

/// Reads a saved search; the error says why in a sentence (without the path).
pub fn read(path: &Path) -> Result<CapacityResult, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let doc: CapacityResult = serde_json::from_str(&text)
        .map_err(|e| format!("not a pgrush capacity result (schema {SCHEMA}): {e}"))?;
    if doc.schema != SCHEMA {
        return Err(format!(
            "schema \"{}\" is not the one this pgrush reads ({SCHEMA})",
            doc.schema
        ));
    }
    Ok(doc)
}

/// `800` or `-`.
fn rate_or_dash(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".to_string(), rate_text)
}

/// The step that held at the capacity.
fn held_step(doc: &CapacityResult) -> Option<&super::StepRecord> {
    let good = doc.capacity_tps?;
    doc.steps.iter().find(|s| s.held && s.offered_tps == good)
}

/// The comparison's rows: a header of the documents' names, then one row per fact;
/// with two documents a last column `B/A` for the capacities.
pub fn rows(docs: &[(String, CapacityResult)]) -> Vec<Vec<String>> {
    let two = docs.len() == 2;
    let mut header = vec![String::new()];
    header.extend(docs.iter().map(|(name, _)| name.clone()));
    if two {
        header.push("B/A".into());
    }
    let mut rows = vec![header];
    let mut row = |label: &str, cell: &dyn Fn(&CapacityResult) -> String, ratio: String| {
        let mut r = vec![label.to_string()];
        r.extend(docs.iter().map(|(_, d)| cell(d)));
        if two {
            r.push(ratio);
        }
        rows.push(r);
    };
    let capacity_ratio = match docs {
        [(_, a), (_, b)] => match (a.capacity_tps, b.capacity_tps) {
            (Some(a), Some(b)) if a > 0.0 => format!("{:.3}", b / a),
            _ => "-".into(),
        },
        _ => String::new(),
    };
    row("SLOs", &|d| d.settings.slos.join(", "), String::new());
    row(
        "sustainable rate (tps)",
        &|d| rate_or_dash(d.capacity_tps),
        capacity_ratio,
    );
    row(
        "first failing rate (tps)",
        &|d| rate_or_dash(d.first_failing_tps),
        String::new(),
    );
    row(
        "bracket width",
        &|d| d.bracket_width.map_or_else(|| "-".into(), percent),
        String::new(),
    );
    let at_capacity = |pick: fn(&super::StepRecord) -> Option<f64>| {
        move |d: &CapacityResult| {
            held_step(d)
                .and_then(pick)
                .map_or_else(|| "-".into(), |v| format!("{v:.3}"))
        }
    };
    row(
        "p50 at capacity (ms)",
        &at_capacity(|s| s.p50_ms),
        String::new(),
    );
    row(
        "p99 at capacity (ms)",
        &at_capacity(|s| s.p99_ms),
        String::new(),
    );
    row("steps", &|d| d.steps.len().to_string(), String::new());
    row(
        "complete",
        &|d| {
            if d.interrupted {
                "interrupted".into()
            } else if d.complete {
                "yes".into()
            } else {
                "no".into()
            }
        },
        String::new(),
    );
    row(
        "run options",
        &|d| d.settings.run_args.join(" "),
        String::new(),
    );
    rows
}

/// One document's table again, or several side by side, in `format`.
pub fn render(docs: &[(String, CapacityResult)], format: TableFormat) -> String {
    match (docs, format) {
        ([(_, only)], TableFormat::Text) => render_text(only),
        _ => render_rows(&rows(docs), format, MAX_WIDTH / 3),
    }
}

/// A chart against the offered rate.
fn against_offered(y_label: &str, series: Vec<Series>) -> String {
    Chart {
        title: String::new(),
        x_label: "offered rate (tps)".into(),
        y_label: y_label.into(),
        x_scale: XScale::Linear,
        series,
    }
    .render()
}

/// The page comparing several searches: the table, then each search's p99 and
/// delivered rate against the offered rate on shared axes.
pub fn render_comparison_page(docs: &[(String, CapacityResult)]) -> String {
    let mut html = String::with_capacity(32 * 1024);
    page_start(&mut html, "pgrush capacity: comparison");
    html.push_str("<h2>Searches</h2>");
    header_table(&mut html, "searches", &rows(docs));
    let curve_of = |pick: fn(&super::StepRecord) -> Option<f64>, what: &str| -> Vec<Series> {
        docs.iter()
            .map(|(name, d)| Series {
                name: format!("{name} {what}"),
                points: d
                    .curve()
                    .iter()
                    .filter_map(|s| Some((s.offered_tps, pick(s)?)))
                    .collect(),
            })
            .collect()
    };
    html.push_str("<h2>p99 latency against offered rate</h2>");
    html.push_str(&against_offered(
        "p99 from the schedule (ms)",
        curve_of(|s| s.p99_ms, "p99"),
    ));
    html.push_str("<h2>Delivered against offered rate</h2>");
    html.push_str(&against_offered(
        "delivered (tps)",
        curve_of(|s| Some(s.delivered_tps), "delivered"),
    ));
    html.push_str(&format!(
        "<p>Each search's steps are open-loop runs at the offered rate; a step holds when \
         the rate was delivered and every SLO held. Files: {}.</p>",
        escape(
            &docs
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    ));
    page_end(&mut html);
    html
}
