//! `--html FILE`: one self-contained page (inline CSS and SVG, no script): the times
//! and the sizes of each step against the scale, both on log scales, and the table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use pgrush_report::html::page_start;
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
    let times = LogChart {
        title: "Time of each step against scale".into(),
        x_label: "scale".into(),
        y_label: "seconds (log)".into(),
        y_unit: seconds_tick,
        series: lines,
    };
    let table = crate::ops::compare::Comparison::build(docs).render();
    let _ = writeln!(
        s,
        "{}<h2>Side by side</h2><pre>{}</pre></body></html>",
        times.render(),
        escape(&table)
    );
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
    let times = LogChart {
        title: "Time of each step against scale".into(),
        x_label: "scale".into(),
        y_label: "seconds (log)".into(),
        y_unit: seconds_tick,
        series: series(&rows, |r| r.seconds),
    };
    let sizes = LogChart {
        title: "Size handled by each step against scale".into(),
        x_label: "scale".into(),
        y_label: "bytes (log)".into(),
        y_unit: bytes_tick,
        series: series(&rows, |r| r.bytes.map(|b| b as f64)),
    };
    let _ = write!(
        s,
        "<h2>Times</h2>{}<h2>Sizes</h2>{}<h2>All steps</h2>",
        times.render(),
        sizes.render()
    );
    push_table(&mut s, &rows);
    s.push_str("</body></html>\n");
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
