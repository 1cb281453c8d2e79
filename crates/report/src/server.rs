//! The text summary of what the server was doing (`--server-stats`), printed after
//! pgbench's report: where the backends spent their time, checkpoints, autovacuum,
//! HOT updates, the cache hit ratio, WAL per transaction, then the findings.

use std::fmt::Write;

use pgrush_stats::server::{EventKind, ServerInterval, ServerTimeline};

/// How many waits the summary names.
const TOP_WAITS: usize = 5;

/// The summary, ending with a newline.
pub fn render_text(t: &ServerTimeline) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "server statistics (counters every {} s, waits every {} ms):",
        trim_float(t.interval_s),
        trim_float(t.wait_sample_s * 1000.0)
    );
    push_summary(&mut out, t);
    out
}

/// The summary of the server of `--target` number `number` (from 1, as the report's
/// `per target:` block numbers them), ending with a newline: the same lines as
/// [`render_text`]'s under a heading naming the target (and a standby as such).
pub fn render_target_text(
    number: usize,
    target: &crate::document_targets::TargetDoc,
    t: &ServerTimeline,
) -> String {
    let role = match target.server_in_recovery {
        Some(true) => ", in recovery",
        Some(false) => ", not in recovery",
        None => "",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "server statistics of target {number}: {}{role} (counters every {} s, waits every {} ms):",
        target.name,
        trim_float(t.interval_s),
        trim_float(t.wait_sample_s * 1000.0)
    );
    push_summary(&mut out, t);
    out
}

/// The summary's lines after its heading.
fn push_summary(out: &mut String, t: &ServerTimeline) {
    if !t.waits.is_empty() {
        let top: Vec<String> = t
            .waits
            .iter()
            .take(TOP_WAITS)
            .map(|w| format!("{} {:.1}%", w.wait, w.share * 100.0))
            .collect();
        let _ = writeln!(out, "backend time: {}", top.join(", "));
    }
    let checkpoints: Vec<String> = t
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Checkpoint)
        .map(|e| format!("{:.1} s to {:.1} s", e.start_s, e.end_s))
        .collect();
    let _ = writeln!(
        out,
        "checkpoints during the run: {}{}",
        checkpoints.len(),
        if checkpoints.is_empty() {
            String::new()
        } else {
            format!(" ({})", checkpoints.join(", "))
        }
    );
    for e in t.events.iter().filter(|e| e.kind != EventKind::Checkpoint) {
        let what = if e.kind == EventKind::Autovacuum {
            "autovacuum"
        } else {
            "autoanalyze"
        };
        let _ = writeln!(
            out,
            "{what}: {} from {:.1} s to {:.1} s",
            e.relation.as_deref().unwrap_or("?"),
            e.start_s,
            e.end_s
        );
    }
    let hot: Vec<String> = t
        .tables
        .iter()
        .filter_map(|tb| {
            tb.hot_share()
                .map(|s| format!("{} {:.1}%", tb.name, s * 100.0))
        })
        .collect();
    if !hot.is_empty() {
        let _ = writeln!(out, "HOT updates: {}", hot.join(", "));
    }
    if let Some(r) = t.database.hit_ratio() {
        let _ = writeln!(out, "buffer cache hit ratio: {:.2}%", r * 100.0);
    }
    let wal: u64 = t.intervals.iter().map(|i| i.wal_bytes).sum();
    if t.database.commits > 0 {
        let _ = writeln!(
            out,
            "WAL: {:.0} bytes per commit ({:.1} MB in all)",
            wal as f64 / t.database.commits as f64,
            wal as f64 / 1e6
        );
    }
    if !t.findings.is_empty() {
        let _ = writeln!(out, "findings:");
        for f in &t.findings {
            let _ = writeln!(out, "- {}", f.text);
        }
    }
}

/// A number without a useless fraction (`1`, `0.5`).
fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Checkpoints and autovacuum runs as shaded spans of a time chart.
pub(crate) fn marks(t: Option<&ServerTimeline>) -> Vec<crate::svg::Mark> {
    let Some(t) = t else {
        return Vec::new();
    };
    t.events
        .iter()
        .map(|e| crate::svg::Mark {
            label: match e.kind {
                EventKind::Checkpoint => "checkpoint".to_string(),
                EventKind::Autovacuum => {
                    format!("autovacuum {}", e.relation.as_deref().unwrap_or(""))
                }
                EventKind::Autoanalyze => {
                    format!("autoanalyze {}", e.relation.as_deref().unwrap_or(""))
                }
            },
            from: e.start_s,
            to: e.end_s,
            color: if e.kind == EventKind::Checkpoint {
                "#d62728"
            } else {
                "#2ca02c"
            },
        })
        .collect()
}

/// How many waits the stacked chart shows separately (the rest are "other").
const CHARTED_WAITS: usize = 6;

/// The HTML section: waits as stacked shares, WAL bytes per second and the buffer
/// hit ratio over time (each with the events and the run's `stages` shaded), the
/// findings and the summary.
pub(crate) fn html_section(t: &ServerTimeline, stages: &[crate::svg::Mark]) -> String {
    use crate::svg::{Chart, Series, Stacking, XScale, escape};
    let mut s = String::from("<h2>What the server was doing</h2>");
    if !t.findings.is_empty() {
        s.push_str("<ul>");
        for f in &t.findings {
            let _ = write!(s, "<li>{}</li>", escape(&f.text));
        }
        s.push_str("</ul>");
    }
    let mut marks = stages.to_vec();
    marks.extend(self::marks(Some(t)));
    let mid = |i: &ServerInterval| i.start_s + i.duration_s / 2.0;
    let charted: Vec<&str> = t
        .waits
        .iter()
        .take(CHARTED_WAITS)
        .map(|w| w.wait.as_str())
        .collect();
    let mut cumulative = vec![0.0; t.intervals.len()];
    let mut series: Vec<Series> = Vec::new();
    let others = |i: &ServerInterval| {
        i.waits
            .iter()
            .filter(|(k, _)| !charted.contains(&k.as_str()))
            .map(|(_, v)| *v)
            .sum::<f64>()
    };
    // The charted waits one by one, then the rest together (`None`).
    let layers = charted
        .iter()
        .map(|w| Some(*w))
        .chain(std::iter::once(None));
    for layer in layers {
        let points = t
            .intervals
            .iter()
            .zip(cumulative.iter_mut())
            .map(|(i, c)| {
                let share = match layer {
                    Some(w) => i.waits.get(w).copied().unwrap_or(0.0),
                    None => others(i),
                };
                *c += share * 100.0;
                (mid(i), *c)
            })
            .collect();
        let name = layer.unwrap_or("other").to_string();
        series.push(Series { name, points });
    }
    let waits = Chart {
        title: "Where the benchmark's backends spent their time".into(),
        x_label: "time since start (s)".into(),
        y_label: "share of backend time (%, stacked)".into(),
        x_scale: XScale::Linear,
        series,
    };
    s.push_str(&waits.render_with(&marks, Stacking::Stacked));
    let wal = Chart {
        title: "WAL written".into(),
        x_label: "time since start (s)".into(),
        y_label: "MB per second".into(),
        x_scale: XScale::Linear,
        series: vec![Series {
            name: "WAL MB/s".into(),
            points: t
                .intervals
                .iter()
                .filter(|i| i.duration_s > 0.0)
                .map(|i| (mid(i), i.wal_bytes as f64 / 1e6 / i.duration_s))
                .collect(),
        }],
    };
    s.push_str(&wal.render_with(&marks, Stacking::Lines));
    let hits = Chart {
        title: "Buffer cache hit ratio".into(),
        x_label: "time since start (s)".into(),
        y_label: "hits (%)".into(),
        x_scale: XScale::Linear,
        series: vec![Series {
            name: "hit ratio".into(),
            points: t
                .intervals
                .iter()
                .filter_map(|i| Some((mid(i), i.database.hit_ratio()? * 100.0)))
                .collect(),
        }],
    };
    s.push_str(&hits.render_with(&marks, Stacking::Lines));
    let _ = write!(s, "<pre>{}</pre>", escape(&render_text(t)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgrush_stats::server::{DatabaseActivity, Finding, ServerEvent, TableActivity, WaitShare};

    #[test]
    fn summary_lines() {
        let t = ServerTimeline {
            interval_s: 1.0,
            wait_sample_s: 0.1,
            waits: vec![WaitShare {
                wait: "Client:ClientRead".into(),
                share: 0.612,
            }],
            events: vec![ServerEvent {
                kind: EventKind::Checkpoint,
                relation: None,
                start_s: 1.0,
                end_s: 2.5,
            }],
            tables: vec![TableActivity {
                name: "pgbench_tellers".into(),
                updates: 10,
                hot_updates: 10,
                ..TableActivity::default()
            }],
            database: DatabaseActivity {
                commits: 100,
                blocks_hit: 999,
                blocks_read: 1,
                ..DatabaseActivity::default()
            },
            intervals: vec![ServerInterval {
                wal_bytes: 50_000,
                ..ServerInterval::default()
            }],
            findings: vec![Finding {
                rule: "x".into(),
                text: "something happened".into(),
                evidence: Default::default(),
            }],
            ..ServerTimeline::default()
        };
        assert_eq!(
            render_text(&t),
            "server statistics (counters every 1 s, waits every 100 ms):\n\
             backend time: Client:ClientRead 61.2%\n\
             checkpoints during the run: 1 (1.0 s to 2.5 s)\n\
             HOT updates: pgbench_tellers 100.0%\n\
             buffer cache hit ratio: 99.90%\n\
             WAL: 500 bytes per commit (0.1 MB in all)\n\
             findings:\n\
             - something happened\n"
        );
    }
}
