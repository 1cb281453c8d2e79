//! Several ops results side by side (`pgrush report A.json B.json`): for example
//! PostgreSQL 15 against 18, or with and without `--unlogged-tables`; as aligned text,
//! a Markdown table (`--markdown`) or CSV (`--csv`, raw seconds and bytes).

use std::fmt::Write as _;

use pgrush_report::compare::Format;

use crate::ops::result::OpsDocument;
use crate::ops::text::{Row, rows_of, size_text};

/// One line of the comparison: `(scale, step label)` and each document's row.
pub type MatchedRow = ((u32, String), Vec<Option<Row>>);

/// The rows of all documents, matched by scale and step.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Document names (file names), in column order.
    pub names: Vec<String>,
    /// `(scale, step label)` and each document's row, in the order first seen.
    pub rows: Vec<MatchedRow>,
}

impl Comparison {
    /// Matches the rows of `docs`.
    pub fn build(docs: &[(String, OpsDocument)]) -> Comparison {
        let mut rows: Vec<MatchedRow> = Vec::new();
        for (i, (_, doc)) in docs.iter().enumerate() {
            for scale in &doc.scales {
                for row in scale.steps.iter().flat_map(|r| rows_of(scale.scale, r)) {
                    let key = (row.scale, row.step.clone());
                    let index = match rows.iter().position(|(k, _)| *k == key) {
                        Some(index) => index,
                        None => {
                            rows.push((key, vec![None; docs.len()]));
                            rows.len() - 1
                        }
                    };
                    rows[index].1[i] = Some(row);
                }
            }
        }
        rows.sort_by_key(|((scale, _), _)| *scale);
        Comparison {
            names: docs.iter().map(|(n, _)| n.clone()).collect(),
            rows,
        }
    }

    /// The table as text: a time and a size column per document, and with two
    /// documents the ratio of their times.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, name) in self.names.iter().enumerate() {
            let _ = writeln!(out, "{}: {name}", column_name(i));
        }
        let mut header = format!("{:>6}  {:<22}", "scale", "step");
        for i in 0..self.names.len() {
            let _ = write!(
                header,
                " {:>10} {:>10}",
                format!("{} time", column_name(i)),
                format!("{} size", column_name(i))
            );
        }
        if self.names.len() == 2 {
            header.push_str(&format!(" {:>7}", "B/A"));
        }
        out.push_str(header.trim_end());
        out.push('\n');
        for ((scale, step), cells) in &self.rows {
            let mut line = format!("{scale:>6}  {step:<22}");
            for cell in cells {
                let time = cell
                    .as_ref()
                    .and_then(|r| r.seconds)
                    .map_or_else(|| "-".to_string(), |s| format!("{s:.2} s"));
                let size = cell
                    .as_ref()
                    .and_then(|r| r.bytes)
                    .map_or_else(|| "-".to_string(), size_text);
                let _ = write!(line, " {time:>10} {size:>10}");
            }
            if let Some(ratio) = time_ratio(cells) {
                let _ = write!(line, " {:>7}", format!("{ratio:.2}x"));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

impl Comparison {
    /// The table in `format`: [`Comparison::render`], [`Comparison::markdown`] or
    /// [`Comparison::csv`].
    pub fn render_as(&self, format: Format) -> String {
        match format {
            Format::Text => self.render(),
            Format::Markdown => self.markdown(),
            Format::Csv => self.csv(),
        }
    }

    /// A GitHub-flavoured Markdown table: scale, step, then a time and a size column
    /// per document (headed by its name), and with two documents the ratio of times.
    pub fn markdown(&self) -> String {
        let cell = |t: &str| t.replace('\\', "\\\\").replace('|', "\\|");
        let mut out = String::from("| scale | step |");
        let mut rule = String::from("|---:|---|");
        for name in &self.names {
            let _ = write!(out, " {0} time | {0} size |", cell(name));
            rule.push_str("---:|---:|");
        }
        if self.names.len() == 2 {
            out.push_str(" B/A |");
            rule.push_str("---:|");
        }
        let _ = writeln!(out, "\n{rule}");
        for ((scale, step), cells) in &self.rows {
            let _ = write!(out, "| {scale} | {} |", cell(step));
            for row in cells {
                let row = row.as_ref();
                let time = row
                    .and_then(|r| r.seconds)
                    .map_or_else(|| "-".to_string(), |s| format!("{s:.2} s"));
                let size = row
                    .and_then(|r| r.bytes)
                    .map_or_else(|| "-".to_string(), size_text);
                let _ = write!(out, " {time} | {size} |");
            }
            if self.names.len() == 2 {
                let ratio =
                    time_ratio(cells).map_or_else(|| "-".to_string(), |r| format!("{r:.2}x"));
                let _ = write!(out, " {ratio} |");
            }
            out.push('\n');
        }
        out
    }

    /// RFC 4180 CSV: `scale,step`, then `NAME seconds,NAME bytes` per document (raw
    /// numbers, empty when the document has no value), and with two documents
    /// `B/A time`.
    pub fn csv(&self) -> String {
        let field = |t: &str| {
            if t.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", t.replace('"', "\"\""))
            } else {
                t.to_string()
            }
        };
        let mut out = String::from("scale,step");
        for name in &self.names {
            let _ = write!(
                out,
                ",{},{}",
                field(&format!("{name} seconds")),
                field(&format!("{name} bytes"))
            );
        }
        if self.names.len() == 2 {
            out.push_str(",B/A time");
        }
        out.push('\n');
        for ((scale, step), cells) in &self.rows {
            let _ = write!(out, "{scale},{}", field(step));
            for row in cells {
                let row = row.as_ref();
                let seconds = row
                    .and_then(|r| r.seconds)
                    .map_or_else(String::new, |s| format!("{s:.6}"));
                let bytes = row
                    .and_then(|r| r.bytes)
                    .map_or_else(String::new, |b| b.to_string());
                let _ = write!(out, ",{seconds},{bytes}");
            }
            if self.names.len() == 2 {
                let ratio = time_ratio(cells).map_or_else(String::new, |r| format!("{r:.4}"));
                let _ = write!(out, ",{ratio}");
            }
            out.push('\n');
        }
        out
    }
}

/// B's time over A's, when both documents have a time and A's is not zero.
fn time_ratio(cells: &[Option<Row>]) -> Option<f64> {
    match cells {
        [Some(a), Some(b)] => match (a.seconds, b.seconds) {
            (Some(ta), Some(tb)) if ta > 0.0 => Some(tb / ta),
            _ => None,
        },
        _ => None,
    }
}

/// `A`, `B`, ... for the columns.
fn column_name(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::config::StepKind;
    use crate::ops::result::{Details, OpsSettings, ScaleResult, StepResult};

    fn doc(load_seconds: &[(u32, f64)]) -> OpsDocument {
        OpsDocument {
            schema: crate::ops::SCHEMA.into(),
            pgrush_version: "0".into(),
            server_version: "18.1".into(),
            server_version_num: 180001,
            target: "throwaway".into(),
            started_at: "2026-11-23T20:00:00.000Z".into(),
            settings: OpsSettings {
                scales: Vec::new(),
                steps: Vec::new(),
                jobs: 1,
                dump_format: "custom".into(),
                repeat: 1,
                workload_seconds: 1,
                fillfactor: 100,
                unlogged_tables: false,
                partitions: 0,
                init_steps: "dtgvp".into(),
            },
            scales: load_seconds
                .iter()
                .map(|&(scale, seconds)| ScaleResult {
                    scale,
                    estimated_bytes: 0,
                    free_bytes: 0,
                    steps: vec![StepResult {
                        step: StepKind::Load,
                        round: 1,
                        seconds,
                        bytes: Some(u64::from(scale) * 15_000_000),
                        bytes_per_second: None,
                        check: None,
                        skipped: None,
                        details: Details::None,
                    }],
                })
                .collect(),
            stopped: None,
        }
    }

    #[test]
    fn rows_are_matched_by_scale_and_step_with_the_ratio() {
        let cmp = Comparison::build(&[
            ("a.json".into(), doc(&[(1, 1.0), (10, 10.0)])),
            ("b.json".into(), doc(&[(1, 0.5)])),
        ]);
        assert_eq!(cmp.rows.len(), 2);
        let text = cmp.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "A: a.json");
        assert_eq!(lines[1], "B: b.json");
        assert!(lines[2].ends_with("B/A"), "{text}");
        assert!(
            lines[3].contains("1.00 s") && lines[3].ends_with("0.50x"),
            "{text}"
        );
        assert!(
            lines[4].trim_start().starts_with("10") && lines[4].ends_with("-"),
            "{text}"
        );
    }

    #[test]
    fn markdown_and_csv_carry_the_same_rows() {
        let cmp = Comparison::build(&[
            ("a|1.json".into(), doc(&[(1, 1.0), (10, 10.0)])),
            ("b,2.json".into(), doc(&[(1, 0.5)])),
        ]);
        let md = cmp.render_as(Format::Markdown);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(
            lines[0],
            "| scale | step | a\\|1.json time | a\\|1.json size | b,2.json time | b,2.json size | B/A |"
        );
        assert_eq!(lines[1], "|---:|---|---:|---:|---:|---:|---:|");
        assert_eq!(
            lines[2],
            "| 1 | load | 1.00 s | 15.0 MB | 0.50 s | 15.0 MB | 0.50x |"
        );
        assert_eq!(lines[3], "| 10 | load | 10.00 s | 150.0 MB | - | - | - |");
        let csv = cmp.render_as(Format::Csv);
        assert_eq!(
            csv,
            "scale,step,a|1.json seconds,a|1.json bytes,\"b,2.json seconds\",\"b,2.json bytes\",B/A time\n\
             1,load,1.000000,15000000,0.500000,15000000,0.5000\n\
             10,load,10.000000,150000000,,,\n"
        );
        assert_eq!(cmp.render_as(Format::Text), cmp.render());
    }
}
