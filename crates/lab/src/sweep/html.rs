//! A sweep's results as one self-contained HTML page: the tps of each cell as a bar
//! with its interval as a whisker, the per-statement latencies as grouped bars (one
//! colour per cell), the table and the comparisons. Hand-written SVG, no script.

use pgrush_report::svg::{escape, percentile_pos, percentile_tick_label};

use super::output::{comparisons_text, table};
use super::stats::Interval;
use super::summary::SweepSummary;

/// Cell colours, repeated when there are more cells.
const PALETTE: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];
/// Width of the label column of the charts (px).
const LABEL_W: f64 = 330.0;
/// Width of the plotting area (px).
const PLOT_W: f64 = 520.0;
/// Height of one bar (px).
const BAR_H: f64 = 16.0;

/// One bar of a chart: its label, colour and value with interval.
struct Bar {
    label: String,
    colour: &'static str,
    value: Interval,
}

/// A horizontal bar chart with whiskers, values with `decimals` digits; every `group`
/// bars a gap.
fn bar_chart(title: &str, unit: &str, bars: &[Bar], group: usize, decimals: usize) -> String {
    let max = bars
        .iter()
        .map(|b| b.value.high.max(b.value.estimate))
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let scale = PLOT_W / max;
    let group_gap = if group > 1 { BAR_H } else { 0.0 };
    let mut y = 30.0;
    let mut body = String::new();
    for (i, bar) in bars.iter().enumerate() {
        if i > 0 && group > 1 && i % group == 0 {
            y += group_gap;
        }
        let v = bar.value;
        let (x0, w) = (LABEL_W, (v.estimate * scale).max(0.0));
        body.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{}\"/>\
             <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#222\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"v\">{:.d$} [{:.d$}, {:.d$}]</text>\n",
            LABEL_W - 6.0,
            y + BAR_H - 4.0,
            escape(&bar.label),
            y + 1.0,
            BAR_H - 2.0,
            bar.colour,
            x0 + v.low * scale,
            x0 + v.high * scale,
            y + BAR_H / 2.0,
            y + BAR_H / 2.0,
            x0 + v.high.max(v.estimate) * scale + 4.0,
            y + BAR_H - 4.0,
            v.estimate,
            v.low,
            v.high,
            d = decimals,
        ));
        y += BAR_H;
    }
    let height = y + 10.0;
    let width = LABEL_W + PLOT_W + 190.0;
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n\
         <text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{} ({})</text>\n{body}</svg>\n",
        escape(title),
        escape(unit)
    )
}

/// The cells' latency spectra overlaid: x the percentile on a scale of nines, y the
/// latency; one polyline per cell.
fn spectrum_chart(summary: &SweepSummary) -> String {
    let (plot_w, plot_h, left, top) = (PLOT_W + 180.0, 260.0, 80.0, 30.0);
    let points = summary.cells.iter().flat_map(|c| &c.latency_spectrum);
    let (max_x, max_ms) = points.fold((1.0_f64, 0.0_f64), |(x, y), v| {
        (x.max(percentile_pos(v.p)), y.max(v.ms))
    });
    let max_x = max_x.ceil();
    let max_ms = max_ms.max(f64::MIN_POSITIVE);
    let px = |p: f64| left + percentile_pos(p) / max_x * plot_w;
    let py = |ms: f64| top + plot_h - ms / max_ms * plot_h;
    let mut body = String::new();
    for k in 0..=(max_x as u32) {
        let label = percentile_tick_label(k);
        let x = left + f64::from(k) / max_x * plot_w;
        body.push_str(&format!(
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>\n",
            top + plot_h,
            top + plot_h + 14.0
        ));
    }
    body.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{max_ms:.3} ms</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>\n",
        left - 4.0,
        top + 4.0,
        left - 4.0,
        top + plot_h
    ));
    for (i, cell) in summary.cells.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let line: Vec<String> = cell
            .latency_spectrum
            .iter()
            .map(|v| format!("{:.1},{:.1}", px(v.p), py(v.ms)))
            .collect();
        body.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"{colour}\">{}: {}</text>\n",
            line.join(" "),
            left + 10.0,
            top + 14.0 + 14.0 * i as f64,
            i + 1,
            escape(&cell.label)
        ));
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n\
         <text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">latency percentile \
         spectrum (run with the median tps of each cell)</text>\n{body}</svg>\n",
        // Room right of the plot for half the last tick's label ("99.9999%").
        left + plot_w + 40.0,
        top + plot_h + 24.0
    )
}

/// The page.
pub fn render(summary: &SweepSummary) -> String {
    let colour = |i: usize| PALETTE[i % PALETTE.len()];
    let tps: Vec<Bar> = summary
        .cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            Some(Bar {
                label: format!("{}: {}", i + 1, c.label),
                colour: colour(i),
                value: c.tps?,
            })
        })
        .collect();
    let mut statements = Vec::new();
    for (script, text) in summary.statement_rows() {
        for (i, cell) in summary.cells.iter().enumerate() {
            let found = cell
                .statements
                .iter()
                .find(|s| s.script == script && s.text == text);
            let short: String = text.chars().take(48).collect();
            statements.push(Bar {
                label: format!("{short} [{}]", i + 1),
                colour: colour(i),
                value: found.map_or(
                    Interval {
                        estimate: 0.0,
                        low: 0.0,
                        high: 0.0,
                    },
                    |s| s.latency_ms,
                ),
            });
        }
    }
    let mut html = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pgrush sweep</title>\n\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
         td:first-child{text-align:left}.v{fill:#444}</style></head><body>\n\
         <h1>pgrush sweep</h1>\n",
    );
    html.push_str(&format!(
        "<p>{} cells, {} repeats per cell, warm-up {} s, seed {}. Medians over the repeats \
         with 95% bootstrap confidence intervals.</p>\n",
        summary.cells.len(),
        summary.repeats,
        summary.warmup_s,
        summary.seed
    ));
    html.push_str(&bar_chart(
        "tps per cell",
        "median and interval",
        &tps,
        1,
        1,
    ));
    if !statements.is_empty() {
        html.push_str(&bar_chart(
            "statement latencies",
            "ms, one bar per cell",
            &statements,
            summary.cells.len(),
            3,
        ));
    }
    if summary.cells.iter().any(|c| !c.latency_spectrum.is_empty()) {
        html.push_str(&spectrum_chart(summary));
    }
    html.push_str("<h2>Comparisons</h2>\n<ul>\n");
    for line in comparisons_text(summary).lines() {
        html.push_str(&format!("<li>{}</li>\n", escape(line)));
    }
    html.push_str("</ul>\n<h2>Table</h2>\n<table>\n");
    for (n, row) in table(summary).iter().enumerate() {
        let tag = if n == 0 { "th" } else { "td" };
        html.push_str("<tr>");
        for cell in row {
            html.push_str(&format!("<{tag}>{}</{tag}>", escape(cell)));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n</body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_largest_bound_and_whiskers_span_the_interval() {
        let bars = [
            Bar {
                label: "a<b".into(),
                colour: PALETTE[0],
                value: Interval {
                    estimate: 50.0,
                    low: 40.0,
                    high: 100.0,
                },
            },
            Bar {
                label: "c".into(),
                colour: PALETTE[1],
                value: Interval {
                    estimate: 25.0,
                    low: 25.0,
                    high: 25.0,
                },
            },
        ];
        let svg = bar_chart("t", "u", &bars, 1, 3);
        // 100 is the whole plot width: 50 is half of it, the whisker from 40 to 100.
        assert!(
            svg.contains(&format!("width=\"{:.1}\"", PLOT_W / 2.0)),
            "{svg}"
        );
        assert!(svg.contains(&format!(
            "x1=\"{:.1}\" x2=\"{:.1}\"",
            LABEL_W + PLOT_W * 0.4,
            LABEL_W + PLOT_W
        )));
        assert!(svg.contains(&format!("width=\"{:.1}\"", PLOT_W / 4.0)));
        assert!(svg.contains(">a&lt;b</text>"));
        assert!(svg.contains("50.000 [40.000, 100.000]"));
    }
}
