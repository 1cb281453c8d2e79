//! The ops page's section on switchovers and failovers: for each such step, a
//! sentence of its timings, its two charts (`failover_chart`: the workload's
//! throughput, and the clients without a connection up close, with the outage windows
//! shaded and the step's moments marked), and the run page's table of the outage
//! windows.

use std::fmt::Write as _;

use pgrush_report::outage_html::windows_table;
use pgrush_report::svg::escape;

use crate::ops::config::StepKind;
use crate::ops::failover_chart::{close_up, throughput};
use crate::ops::result::{Details, FailoverDetails, OpsDocument, StepResult};

/// `<h2>` and one `<section>` per switchover or failover that ran (nothing when none
/// did). Each section's id is `STEP-SCALE-ROUND` (`failover-1-1`), its table's
/// `outages-STEP-SCALE-ROUND`.
pub(crate) fn section(doc: &OpsDocument) -> String {
    let mut s = String::new();
    for scale in &doc.scales {
        for result in &scale.steps {
            if let Details::Failover(d) = &result.details {
                push_step(&mut s, scale.scale, result, d);
            }
        }
    }
    if s.is_empty() {
        return s;
    }
    format!("<h2>Switchover and failover: what the clients saw</h2>{s}")
}

fn push_step(s: &mut String, scale: u32, result: &StepResult, d: &FailoverDetails) {
    let id = format!("{}-{scale}-{}", result.step, result.round);
    let _ = write!(
        s,
        "<section id=\"{id}\"><h3>{} at scale {scale}{}</h3><p>{}</p>",
        result.step,
        if result.round > 1 {
            format!(", round {}", result.round)
        } else {
            String::new()
        },
        escape(&summary(result.step, d))
    );
    if !d.workload_intervals.is_empty() {
        let _ = write!(s, "<h4>Throughput of the workload</h4>{}", throughput(d));
    }
    if let Some(chart) = close_up(d) {
        let _ = write!(s, "<h4>Up close: clients without a connection</h4>{chart}");
    }
    if d.outage_windows.is_empty() {
        s.push_str("<p>No client lost its connection.</p>");
    } else {
        s.push_str(&windows_table(&d.outage_windows, &format!("outages-{id}")));
    }
    s.push_str("</section>");
}

/// When the primary went, the promotion and the first commit, in words.
fn summary(step: StepKind, d: &FailoverDetails) -> String {
    let how = if step == StepKind::Failover {
        "killing its postmaster"
    } else {
        "its fast shutdown"
    };
    let mut text = match &d.timeline {
        Some(t) => {
            let mut text = format!(
                "The primary was down {:.3} s into the workload ({how} took {:.3} s); the \
                 standby was promoted at {:.3} s (pg_promote() took {:.3} s; it polls, and \
                 returns up to 0.1 s after the promotion)",
                t.primary_down_s, d.stop_seconds, t.promoted_s, d.promote_seconds
            );
            if let Some(first) = t.first_commit_s {
                let _ = write!(
                    text,
                    "; the first commit after a lost connection came at {first:.3} s"
                );
            }
            text
        }
        None => format!(
            "The primary took {:.3} s to go ({how}); pg_promote() took {:.3} s",
            d.stop_seconds, d.promote_seconds
        ),
    };
    let _ = write!(
        text,
        ". Clients cut off: {}; connection failures: {}; committed transactions lost: {} ({} standby).",
        d.clients_cut_off,
        d.connection_failures,
        d.lost_transactions,
        if d.synchronous {
            "synchronous"
        } else {
            "asynchronous"
        }
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::result::{
        ClientOutageTimes, FailoverTimeline, OpsSettings, OutageWindowDoc, ScaleResult,
        WorkloadInterval,
    };

    fn details() -> FailoverDetails {
        FailoverDetails {
            synchronous: true,
            stop_seconds: 0.2,
            promote_seconds: 0.3,
            outage_seconds: Some(0.5),
            clients_cut_off: 2,
            connection_failures: 3,
            replay_backlog_bytes: 0,
            transactions: 400,
            expected_history_rows: 400,
            history_rows: 400,
            lost_transactions: 0,
            rejoin_seconds: None,
            rewound: None,
            outage_windows: vec![OutageWindowDoc {
                start_s: 1.25,
                end_s: 1.75,
                clients: 2,
                connection_failures: 3,
                client_min_s: 0.4,
                client_max_s: 0.5,
                open: false,
                failures_by_sqlstate_class: [("57".to_string(), 3)].into(),
                before: None,
                during: None,
                after: None,
                servers: Vec::new(),
            }],
            timeline: Some(FailoverTimeline {
                primary_stopping_s: 1.2,
                primary_down_s: 1.3,
                promoted_s: 1.6,
                first_commit_s: Some(1.7),
            }),
            workload_intervals: (0..3)
                .map(|k| WorkloadInterval {
                    start_s: f64::from(k),
                    end_s: f64::from(k + 1),
                    tps: 100.0,
                    failures: u64::from(k == 1) * 3,
                })
                .collect(),
            client_outages: vec![
                ClientOutageTimes {
                    client: 0,
                    start_s: 1.25,
                    end_s: Some(1.7),
                },
                ClientOutageTimes {
                    client: 1,
                    start_s: 1.3,
                    end_s: Some(1.75),
                },
            ],
        }
    }

    fn document(details: FailoverDetails) -> OpsDocument {
        OpsDocument {
            schema: crate::ops::result::SCHEMA.into(),
            pgrush_version: "0".into(),
            server_version: "18".into(),
            server_version_num: 180000,
            target: "throwaway".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            settings: OpsSettings {
                scales: vec![1],
                steps: vec![StepKind::Failover],
                jobs: 1,
                dump_format: "custom".into(),
                repeat: 1,
                workload_seconds: 3,
                fillfactor: 100,
                unlogged_tables: false,
                partitions: 0,
                init_steps: "dtgvp".into(),
            },
            scales: vec![ScaleResult {
                scale: 1,
                estimated_bytes: 0,
                free_bytes: 0,
                steps: vec![StepResult {
                    step: StepKind::Failover,
                    round: 1,
                    seconds: 0.5,
                    bytes: None,
                    bytes_per_second: None,
                    check: None,
                    skipped: None,
                    details: Details::Failover(details),
                }],
            }],
            stopped: None,
        }
    }

    #[test]
    fn a_failover_gets_its_chart_moments_and_table() {
        let html = section(&document(details()));
        assert!(html.contains("<section id=\"failover-1-1\">"), "{html}");
        // Both charts shade the window and mark the moments.
        assert_eq!(html.matches("<svg").count(), 2, "{html}");
        assert_eq!(
            html.matches("<title>outage 1</title></rect>").count(),
            2,
            "{html}"
        );
        for label in ["primary down", "promoted", "first commit"] {
            assert_eq!(
                html.matches(&format!("<title>{label}</title></line>"))
                    .count(),
                2,
                "{label}: {html}"
            );
        }
        assert!(
            html.contains("<table id=\"outages-failover-1-1\">"),
            "{html}"
        );
        assert!(html.contains(">1.250</td>") && html.contains(">500.0</td>"));
        assert!(html.contains("first commit after a lost connection came at 1.700 s"));
    }

    #[test]
    fn no_outage_says_so_and_no_failover_adds_nothing() {
        let mut d = details();
        d.outage_windows.clear();
        d.timeline = None;
        d.workload_intervals.clear();
        d.client_outages.clear();
        let html = section(&document(d));
        assert!(html.contains("No client lost its connection."), "{html}");
        assert!(!html.contains("<svg"), "{html}");
        let mut doc = document(details());
        doc.scales[0].steps[0].details = Details::None;
        assert_eq!(section(&doc), "");
    }
}
