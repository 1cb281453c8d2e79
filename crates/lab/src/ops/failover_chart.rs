//! The charts of a switchover or a failover: its workload's throughput per interval,
//! and, up close, how many clients were without a connection from the moment the
//! primary was told to go. Both shade the clients' outage windows (as the run page
//! does) and mark the primary's end, the promotion and the first commit after a lost
//! connection as dashed lines.

use pgrush_report::outage_html::outage_marks;
use pgrush_report::svg::{Chart, Mark, Series, Stacking, XScale};

use crate::ops::result::{FailoverDetails, FailoverTimeline, WorkloadInterval};

/// The colours of the step's moments.
const PRIMARY_DOWN: &str = "#8c564b";
const PROMOTED: &str = "#9467bd";
const FIRST_COMMIT: &str = "#ff7f0e";

/// Throughput and failures per interval (as steps: each interval's rate over its whole
/// length), the outage windows shaded, the moments as dashed lines.
pub(crate) fn throughput(d: &FailoverDetails) -> String {
    let steps = |rate: fn(&WorkloadInterval) -> f64| -> Vec<(f64, f64)> {
        d.workload_intervals
            .iter()
            .flat_map(|i| [(i.start_s, rate(i)), (i.end_s, rate(i))])
            .collect()
    };
    let chart = Chart {
        title: String::new(),
        x_label: "time since the workload's start (s)".into(),
        y_label: "transactions per second".into(),
        x_scale: XScale::Linear,
        series: vec![
            Series {
                name: "tps".into(),
                points: steps(|i| i.tps),
            },
            Series {
                name: "failures/s".into(),
                points: steps(|i| {
                    let length = i.end_s - i.start_s;
                    if length > 0.0 {
                        i.failures as f64 / length
                    } else {
                        0.0
                    }
                }),
            },
        ],
    };
    let mut marks = outage_marks(&d.outage_windows);
    if let Some(t) = &d.timeline {
        marks.extend(moment_marks(t, 0.0, 1.0));
    }
    chart.render_with(&marks, Stacking::Lines)
}

/// The clients without a connection, in milliseconds from the moment the primary was
/// told to go until a little after the last of them committed again; None without the
/// step's moments or without a client outage.
pub(crate) fn close_up(d: &FailoverDetails) -> Option<String> {
    let t = d.timeline.as_ref()?;
    if d.client_outages.is_empty() {
        return None;
    }
    let zero = t.primary_stopping_s;
    let ms = |s: f64| ((s - zero) * 1000.0).max(0.0);
    // +1 at each outage's start, -1 at its end.
    let mut changes: Vec<(f64, i32)> = Vec::new();
    for o in &d.client_outages {
        changes.push((ms(o.start_s), 1));
        if let Some(end) = o.end_s {
            changes.push((ms(end), -1));
        }
    }
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let last = changes
        .iter()
        .map(|c| c.0)
        .chain([ms(t.promoted_s), ms(t.primary_down_s)])
        .fold(0.0, f64::max);
    let mut points = vec![(0.0, 0.0)];
    let mut without = 0;
    for (at, change) in changes {
        points.push((at, f64::from(without)));
        without += change;
        points.push((at, f64::from(without)));
    }
    points.push((last * 1.25, f64::from(without)));
    let chart = Chart {
        title: String::new(),
        x_label: "ms since the primary was told to go".into(),
        y_label: "clients without a connection".into(),
        x_scale: XScale::Linear,
        series: vec![Series {
            name: "clients without a connection".into(),
            points,
        }],
    };
    let mut marks: Vec<Mark> = outage_marks(&d.outage_windows)
        .into_iter()
        .map(|m| Mark {
            from: ms(m.from),
            to: ms(m.to),
            ..m
        })
        .collect();
    marks.extend(moment_marks(t, zero, 1000.0));
    Some(chart.render_with(&marks, Stacking::Lines))
}

/// The primary's end, the promotion and the first commit as instants, at
/// `(seconds - zero) × scale`.
fn moment_marks(t: &FailoverTimeline, zero: f64, scale: f64) -> Vec<Mark> {
    let instant = |label: &str, at: f64, color| Mark {
        label: label.into(),
        from: (at - zero) * scale,
        to: (at - zero) * scale,
        color,
    };
    let mut marks = vec![
        instant("primary down", t.primary_down_s, PRIMARY_DOWN),
        instant("promoted", t.promoted_s, PROMOTED),
    ];
    if let Some(first) = t.first_commit_s {
        marks.push(instant("first commit", first, FIRST_COMMIT));
    }
    marks
}
