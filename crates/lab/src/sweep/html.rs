//! A sweep's results as one self-contained page in the run report's style: the tps of
//! each cell as a bar with its interval as a whisker, the per-statement latencies as
//! grouped bars (one colour per cell, the same as in the spectrum), the cells' latency
//! spectra, the comparisons and the table.

use pgrush_report::page::{header_table, page_end, page_start};
use pgrush_report::svg::bars::{Bar, BarChart};
use pgrush_report::svg::frame::shorten;
use pgrush_report::svg::{Chart, Series, XScale, escape};

use super::output::{comparisons_text, table};
use super::stats::Interval;
use super::summary::SweepSummary;

/// Longest statement text in a bar's label (cut at a word, with "…").
const STATEMENT_CHARS: usize = 44;

/// A cell's name: its number and label (its series name in every chart).
fn cell_name(i: usize, label: &str) -> String {
    format!("{}: {label}", i + 1)
}

/// A bar of `value` with its interval, the text with `decimals` digits.
fn interval_bar(label: String, series: String, value: Interval, decimals: usize) -> Bar {
    Bar {
        label,
        series,
        value: value.estimate,
        interval: Some((value.low, value.high)),
        text: format!(
            "{:.d$} [{:.d$}, {:.d$}]",
            value.estimate,
            value.low,
            value.high,
            d = decimals
        ),
    }
}

/// The cells' tps as bars with whiskers.
fn tps_chart(summary: &SweepSummary) -> String {
    let bars = summary
        .cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let name = cell_name(i, &c.label);
            Some(interval_bar(name.clone(), name, c.tps?, 1))
        })
        .collect();
    BarChart {
        value_label: "tps (median and 95% interval)".into(),
        bars,
        group: 0,
        legend: false,
    }
    .render()
}

/// Each statement's latency in each cell, grouped by statement; `None` without
/// per-statement latencies.
fn statements_chart(summary: &SweepSummary) -> Option<String> {
    let mut bars = Vec::new();
    for (script, text) in summary.statement_rows() {
        for (i, cell) in summary.cells.iter().enumerate() {
            let found = cell
                .statements
                .iter()
                .find(|s| s.script == script && s.text == text);
            let zero = Interval {
                estimate: 0.0,
                low: 0.0,
                high: 0.0,
            };
            bars.push(interval_bar(
                format!("{} [{}]", shorten(&text, STATEMENT_CHARS), i + 1),
                cell_name(i, &cell.label),
                found.map_or(zero, |s| s.latency_ms),
                3,
            ));
        }
    }
    (!bars.is_empty()).then(|| {
        BarChart {
            value_label: "latency (ms, median and 95% interval)".into(),
            bars,
            group: summary.cells.len(),
            legend: true,
        }
        .render()
    })
}

/// The cells' latency spectra overlaid, one line per cell.
fn spectrum_chart(summary: &SweepSummary) -> String {
    Chart {
        title: String::new(),
        x_label: "percentile".into(),
        y_label: "latency (ms)".into(),
        x_scale: XScale::Percentile,
        series: summary
            .cells
            .iter()
            .enumerate()
            .map(|(i, c)| Series {
                name: cell_name(i, &c.label),
                points: c.latency_spectrum.iter().map(|v| (v.p, v.ms)).collect(),
            })
            .collect(),
    }
    .render()
}

/// The page.
pub fn render(summary: &SweepSummary) -> String {
    let mut html = String::with_capacity(32 * 1024);
    page_start(&mut html, "pgrush sweep");
    html.push_str(&format!(
        "<p>{} cells, {} repeats per cell, warm-up {} s, seed {}. Medians over the repeats \
         with 95% bootstrap confidence intervals.</p>",
        summary.cells.len(),
        summary.repeats,
        summary.warmup_s,
        summary.seed
    ));
    html.push_str("<h2>tps per cell</h2>");
    html.push_str(&tps_chart(summary));
    if let Some(chart) = statements_chart(summary) {
        html.push_str("<h2>Statement latencies</h2>");
        html.push_str(&chart);
    }
    if summary.cells.iter().any(|c| !c.latency_spectrum.is_empty()) {
        html.push_str("<h2>Latency by percentile (the run with the median tps of each cell)</h2>");
        html.push_str(&spectrum_chart(summary));
    }
    html.push_str("<h2>Comparisons</h2><ul>");
    for line in comparisons_text(summary).lines() {
        html.push_str(&format!("<li>{}</li>", escape(line)));
    }
    html.push_str("</ul><h2>Table</h2>");
    header_table(&mut html, "cells", &table(summary));
    page_end(&mut html);
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_labels_end_in_an_ellipsis_at_a_word() {
        let text = "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;";
        let label = format!("{} [1]", shorten(text, STATEMENT_CHARS));
        assert_eq!(label, "UPDATE pgbench_tellers SET tbalance… [1]");
        let bar = interval_bar(
            "x".into(),
            "x".into(),
            Interval {
                estimate: 50.0,
                low: 40.0,
                high: 100.0,
            },
            3,
        );
        assert_eq!(bar.text, "50.000 [40.000, 100.000]");
        assert_eq!(bar.interval, Some((40.0, 100.0)));
    }
}
