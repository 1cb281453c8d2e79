//! The search's result as one self-contained page in the run report's style: the
//! verdict, the latency-throughput curve (p50, p99, p99.9 against the offered rate),
//! delivered against offered, and the table of steps.

use pgrush_report::page::{header_table, page_end, page_start};
use pgrush_report::svg::{Chart, Series, XScale, escape};

use super::output::{table, verdict_text};
use super::result::CapacityResult;

/// The latency percentiles against the offered rate.
fn latency_chart(result: &CapacityResult) -> String {
    let curve = result.curve();
    let line = |name: &str, pick: &dyn Fn(&super::StepRecord) -> Option<f64>| Series {
        name: name.to_string(),
        points: curve
            .iter()
            .filter_map(|s| Some((s.offered_tps, pick(s)?)))
            .collect(),
    };
    Chart {
        title: String::new(),
        x_label: "offered rate (tps)".into(),
        y_label: "latency from the schedule (ms)".into(),
        x_scale: XScale::Linear,
        series: vec![
            line("p50", &|s| s.p50_ms),
            line("p99", &|s| s.p99_ms),
            line("p99.9", &|s| s.p99_9_ms),
        ],
    }
    .render()
}

/// Delivered against offered, with the line where they are equal.
fn delivered_chart(result: &CapacityResult) -> String {
    let curve = result.curve();
    Chart {
        title: String::new(),
        x_label: "offered rate (tps)".into(),
        y_label: "tps".into(),
        x_scale: XScale::Linear,
        series: vec![
            Series {
                name: "delivered".into(),
                points: curve
                    .iter()
                    .map(|s| (s.offered_tps, s.delivered_tps))
                    .collect(),
            },
            Series {
                // Its own colour, apart from "delivered" (the palette picks by name).
                name: "offered rate".into(),
                points: curve
                    .iter()
                    .map(|s| (s.offered_tps, s.offered_tps))
                    .collect(),
            },
        ],
    }
    .render()
}

/// The page.
pub fn render(result: &CapacityResult) -> String {
    let mut html = String::with_capacity(32 * 1024);
    page_start(&mut html, "pgrush capacity");
    html.push_str("<ul>");
    for line in verdict_text(result).lines() {
        html.push_str(&format!("<li>{}</li>", escape(line)));
    }
    html.push_str("</ul>");
    html.push_str(&format!(
        "<p>SLOs: {}. Each step ran at an offered rate (-R) for at least {} s after a {} s \
         warm-up; latency counts from each transaction's scheduled start.</p>",
        escape(&result.settings.slos.join(", ")),
        result.settings.step_s,
        result.settings.warmup_s
    ));
    html.push_str("<h2>Latency against offered rate</h2>");
    html.push_str(&latency_chart(result));
    html.push_str("<h2>Delivered against offered rate</h2>");
    html.push_str(&delivered_chart(result));
    html.push_str("<h2>Steps</h2>");
    header_table(&mut html, "steps", &table(result));
    page_end(&mut html);
    html
}
