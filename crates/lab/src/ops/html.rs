//! `--html FILE`: one self-contained page in the run report's style (inline CSS, SVG
//! and hover script): the times and the sizes of each step against the scale (log-log
//! lines from three scales on, bars per step below that), the table, and for each
//! switchover and failover what its clients saw (`html_failover`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use pgrush_report::page::{page_end, page_start};
use pgrush_report::svg::bars::{Bar, BarChart};
use pgrush_report::svg::escape;

use crate::ops::chart::{LogChart, Series};
use crate::ops::result::OpsDocument;
use crate::ops::text::{Row, rows_of, size_text};

/// Every row of the document, each step label's rows in scale order.
fn all_rows(doc: &OpsDocument) -> Vec<Row> {
    doc.scales
        .iter()
        .flat_map(|s| s.steps.iter().flat_map(|r| rows_of(s.scale, r)))
        .collect()
}

/// One series per step label (repetitions folded into their mean), `value` of each row.
fn series(rows: &[Row], value: fn(&Row) -> Option<f64>) -> Vec<Series> {
    let mut order: Vec<String> = Vec::new();
    let mut points: BTreeMap<String, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for row in rows {
        let label = row.step.split(" #").next().unwrap_or(&row.step).to_string();
        let Some(v) = value(row) else { continue };
        if !order.contains(&label) {
            order.push(label.clone());
        }
        points
            .entry(label)
            .or_default()
            .entry(row.scale)
            .or_default()
            .push(v);
    }
    order
        .into_iter()
        .map(|name| {
            let by_scale = points.remove(&name).unwrap_or_default();
            Series {
                name,
                points: by_scale
                    .into_iter()
                    .map(|(scale, vs)| (f64::from(scale), vs.iter().sum::<f64>() / vs.len() as f64))
                    .collect(),
            }
        })
        .collect()
}

fn seconds_tick(v: f64) -> String {
    format!("{v} s")
}

fn bytes_tick(v: f64) -> String {
    size_text(v as u64)
}

/// What a chart of the steps shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    /// Seconds.
    Time,
    /// Bytes.
    Size,
}

/// The fewest scales drawn as lines against the scale; fewer are bars per step.
const LINES_FROM_SCALES: usize = 3;

/// The steps' `series` as a chart: log-log lines against the scale from three scales
/// on, bars per step (grouped by scale) below that.
fn steps_chart(series: Vec<Series>, measure: Measure) -> String {
    let mut scales: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    scales.sort_by(f64::total_cmp);
    scales.dedup();
    let (y_label, y_unit): (&str, fn(f64) -> String) = match measure {
        Measure::Time => ("seconds (log)", seconds_tick),
        Measure::Size => ("bytes (log)", bytes_tick),
    };
    if scales.len() >= LINES_FROM_SCALES {
        return LogChart {
            title: String::new(),
            x_label: "scale".into(),
            y_label: y_label.into(),
            y_unit,
            series,
        }
        .render();
    }
    let mut bars = Vec::new();
    for &scale in &scales {
        for line in &series {
            let Some(&(_, v)) = line.points.iter().find(|p| p.0 == scale) else {
                continue;
            };
            let label = if scales.len() > 1 {
                format!("{} (scale {scale})", line.name)
            } else {
                line.name.clone()
            };
            let (value, text) = match measure {
                Measure::Time => (v, format!("{v:.2} s")),
                Measure::Size => (v / 1e6, size_text(v as u64)),
            };
            bars.push(Bar {
                label,
                series: line.name.clone(),
                value,
                interval: None,
                text,
            });
        }
    }
    let per_scale = bars.len() / scales.len().max(1);
    BarChart {
        value_label: match measure {
            Measure::Time => format!("seconds at scale {}", scale_list(&scales)),
            Measure::Size => format!("MB at scale {}", scale_list(&scales)),
        },
        bars,
        group: if scales.len() > 1 { per_scale } else { 0 },
        legend: false,
    }
    .render()
}

/// `1` or `1 and 10`.
fn scale_list(scales: &[f64]) -> String {
    scales
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// A page comparing several results: the side-by-side table and the times against
/// scale, one line per result and step.
pub fn render_comparison(docs: &[(String, OpsDocument)]) -> String {
    let mut s = String::with_capacity(32 * 1024);
    page_start(
        &mut s,
        &format!("pgrush ops: comparison of {} results", docs.len()),
    );
    let mut lines = Vec::new();
    for (i, (name, doc)) in docs.iter().enumerate() {
        let letter = char::from(b'A' + (i % 26) as u8);
        let _ = write!(
            s,
            "<p>{letter}: {} (PostgreSQL {})</p>",
            escape(name),
            escape(&doc.server_version)
        );
        for mut line in series(&all_rows(doc), |r| r.seconds) {
            line.name = format!("{letter} {}", line.name);
            lines.push(line);
        }
    }
    let table = crate::ops::compare::Comparison::build(docs).render();
    let _ = write!(
        s,
        "<h2>Time of each step</h2>{}<h2>Side by side</h2><pre>{}</pre>",
        steps_chart(lines, Measure::Time),
        escape(&table)
    );
    page_end(&mut s);
    s
}

/// The whole page.
pub fn render(doc: &OpsDocument) -> String {
    let mut s = String::with_capacity(32 * 1024);
    let title = format!(
        "pgrush ops: PostgreSQL {} ({})",
        doc.server_version, doc.started_at
    );
    page_start(&mut s, &title);
    let set = &doc.settings;
    let _ = write!(
        s,
        "<p>{} cluster; -j {}; dump format {}; fillfactor {}{}; workload {} s; repeat {}.</p>",
        escape(&doc.target),
        set.jobs,
        escape(&set.dump_format),
        set.fillfactor,
        if set.unlogged_tables {
            "; unlogged tables"
        } else {
            ""
        },
        set.workload_seconds,
        set.repeat
    );
    if let Some(why) = &doc.stopped {
        let _ = write!(
            s,
            "<div class=\"warn\">Stopped early: {}</div>",
            escape(why)
        );
    }
    let rows = all_rows(doc);
    let times = steps_chart(series(&rows, |r| r.seconds), Measure::Time);
    let sizes = steps_chart(series(&rows, |r| r.bytes.map(|b| b as f64)), Measure::Size);
    let _ = write!(
        s,
        "<h2>Time of each step</h2>{times}<h2>Size handled by each step</h2>{sizes}<h2>All steps</h2>"
    );
    push_table(&mut s, &rows);
    s.push_str(&crate::ops::html_failover::section(doc));
    page_end(&mut s);
    s
}

fn push_table(s: &mut String, rows: &[Row]) {
    s.push_str(
        "<table id=\"steps\"><tr><th>scale</th><th>step</th><th>time</th><th>size</th>\
         <th>rate</th><th>check and notes</th></tr>",
    );
    for row in rows {
        let _ = write!(
            s,
            "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td>{}</td></tr>",
            row.scale,
            escape(&row.step),
            row.seconds.map(|v| format!("{v:.2} s")).unwrap_or_default(),
            row.bytes.map(size_text).unwrap_or_default(),
            escape(&row.rate),
            escape(&row.note)
        );
    }
    s.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(scale: u32, step: &str, seconds: f64) -> Row {
        Row {
            scale,
            step: step.into(),
            seconds: Some(seconds),
            bytes: Some(u64::from(scale) * 1_000_000),
            rate: String::new(),
            note: String::new(),
        }
    }

    #[test]
    fn one_series_per_step_with_rounds_averaged() {
        let rows = vec![
            row(1, "load", 1.0),
            row(1, "load #2", 3.0),
            row(1, "dump", 0.5),
            row(10, "load", 20.0),
        ];
        let s = series(&rows, |r| r.seconds);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "load");
        assert_eq!(s[0].points, vec![(1.0, 2.0), (10.0, 20.0)]);
        assert_eq!(s[1].points, vec![(1.0, 0.5)]);
    }
}
