//! Rules that turn the server's timeline and the client's figures into plain
//! sentences, each with its evidence.

use std::collections::BTreeMap;

use pgrush_stats::server::{EventKind, Finding, ServerEvent, ServerTimeline};

/// What the rules need from the client side of the run.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// The client's intervals: start (s from the run's start), length (s), tps.
    pub tps_intervals: Vec<(f64, f64, f64)>,
    /// `-c`.
    pub clients: u32,
    /// `-j`.
    pub threads: u32,
    /// The database's scale, when known.
    pub scale: Option<i64>,
    /// Client CPU time during the run (s), when measured.
    pub client_cpu_s: Option<f64>,
    /// The run's length (s).
    pub elapsed_s: f64,
}

/// Keeps the checkpoint events that the checkpoint counters confirm (a checkpoint
/// started in an interval overlapping the event, give or take one interval), and adds
/// one event per counted checkpoint that no sampled event covers (a checkpoint shorter
/// than the wait period).
pub fn confirm_checkpoints(t: &mut ServerTimeline) {
    let slack = t.interval_s;
    let counted: Vec<(f64, f64)> = t
        .intervals
        .iter()
        .filter(|i| i.checkpoints > 0)
        .map(|i| (i.start_s, i.start_s + i.duration_s))
        .collect();
    let overlaps =
        |e: &ServerEvent, (a, b): (f64, f64)| e.start_s - slack < b && a < e.end_s + slack;
    t.events.retain(|e| {
        e.kind != EventKind::Checkpoint || counted.iter().any(|&span| overlaps(e, span))
    });
    for span in counted {
        let covered = t
            .events
            .iter()
            .any(|e| e.kind == EventKind::Checkpoint && overlaps(e, span));
        if !covered {
            t.events.push(ServerEvent {
                kind: EventKind::Checkpoint,
                relation: None,
                start_s: span.0,
                end_s: span.1,
            });
        }
    }
    t.events.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
}

/// A finding with its evidence.
fn finding(rule: &str, text: String, evidence: &[(&str, f64)]) -> Finding {
    Finding {
        rule: rule.to_string(),
        text,
        evidence: evidence
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// Every rule's findings, in a fixed order.
pub fn explain(t: &ServerTimeline, facts: &RunFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    checkpoint_findings(t, facts, &mut out);
    wait_findings(t, facts, &mut out);
    client_cpu_finding(facts, &mut out);
    hot_update_findings(t, &mut out);
    autovacuum_findings(t, &mut out);
    cache_finding(t, &mut out);
    out
}

/// Mean tps of the client intervals that overlap (`inside`) or miss the span.
fn tps_around(facts: &RunFacts, start: f64, end: f64) -> (Option<f64>, Option<f64>) {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for &(s, d, tps) in &facts.tps_intervals {
        if d <= 0.0 {
            continue;
        }
        if s < end && start < s + d {
            inside.push(tps);
        } else {
            outside.push(tps);
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    (mean(&inside), mean(&outside))
}

fn checkpoint_findings(t: &ServerTimeline, facts: &RunFacts, out: &mut Vec<Finding>) {
    for e in t.events.iter().filter(|e| e.kind == EventKind::Checkpoint) {
        let span = format!(
            "a checkpoint ran from {:.0} s to {:.0} s",
            e.start_s, e.end_s
        );
        let (during, other) = tps_around(facts, e.start_s, e.end_s);
        let (text, evidence) = match (during, other) {
            (Some(d), Some(o)) if o > 0.0 => {
                let change = (d - o) / o * 100.0;
                let text = if change <= -5.0 {
                    format!("{span}; tps fell {:.0}% meanwhile", -change)
                } else if change >= 5.0 {
                    format!("{span}; tps rose {change:.0}% meanwhile")
                } else {
                    format!("{span}; tps did not change noticeably ({change:+.0}%)")
                };
                (text, vec![("tps_during", d), ("tps_outside", o)])
            }
            _ => (span, Vec::new()),
        };
        let mut ev = vec![("start_s", e.start_s), ("end_s", e.end_s)];
        ev.extend(evidence);
        out.push(finding("checkpoint-during-run", text, &ev));
    }
}

fn wait_findings(t: &ServerTimeline, facts: &RunFacts, out: &mut Vec<Finding>) {
    if let Some(lock) = t
        .waits
        .iter()
        .find(|w| w.wait.starts_with("Lock:") && w.share >= 0.10)
    {
        let mut text = format!(
            "{:.0}% of backend time waited on {}: clients contend for the same rows",
            lock.share * 100.0,
            lock.wait
        );
        let mut ev = vec![("share", lock.share), ("clients", f64::from(facts.clients))];
        let branches_waited = t.intervals.iter().any(|i| {
            i.lock_waits
                .keys()
                .any(|k| k.ends_with(":pgbench_branches"))
        });
        if let Some(scale) = facts.scale
            && (branches_waited || lock.wait == "Lock:transactionid")
            && scale < i64::from(facts.clients)
        {
            text.push_str(&format!(
                " (pgbench_branches has {scale} row{} for {} clients)",
                if scale == 1 { "" } else { "s" },
                facts.clients
            ));
            ev.push(("scale", scale as f64));
        }
        out.push(finding("lock-contention", text, &ev));
    }
    if let Some(client) = t
        .waits
        .iter()
        .find(|w| w.wait == "Client:ClientRead" && w.share >= 0.5)
    {
        out.push(finding(
            "waiting-for-client",
            format!(
                "backends spent {:.0}% of their time waiting for the client \
                 (Client:ClientRead): the client and the network, not the server, set the pace",
                client.share * 100.0
            ),
            &[("share", client.share)],
        ));
    }
}

fn client_cpu_finding(facts: &RunFacts, out: &mut Vec<Finding>) {
    let Some(cpu) = facts.client_cpu_s else {
        return;
    };
    if facts.elapsed_s <= 0.0 || facts.threads == 0 {
        return;
    }
    let per_thread = cpu / facts.elapsed_s / f64::from(facts.threads);
    if per_thread >= 0.9 {
        out.push(finding(
            "client-cpu",
            format!(
                "the client used {:.0}% of one CPU per thread: the result may be limited \
                 by the client (more threads with -j, or shards on more machines)",
                per_thread * 100.0
            ),
            &[("cpu_s", cpu), ("elapsed_s", facts.elapsed_s)],
        ));
    }
}

/// Tables with at least 100 updates whose updates were not all HOT, or whose
/// fillfactor was set (what a fillfactor comparison looks for).
fn hot_update_findings(t: &ServerTimeline, out: &mut Vec<Finding>) {
    for table in &t.tables {
        let Some(share) = table.hot_share().filter(|_| table.updates >= 100) else {
            continue;
        };
        if share >= 0.99 && table.fillfactor.is_none() {
            continue;
        }
        let fillfactor = table.fillfactor.unwrap_or(100);
        out.push(finding(
            "hot-updates",
            format!(
                "updates on {} were {:.0}% HOT (fillfactor {fillfactor})",
                table.name,
                share * 100.0
            ),
            &[
                ("updates", table.updates as f64),
                ("hot_updates", table.hot_updates as f64),
                ("fillfactor", f64::from(fillfactor)),
            ],
        ));
    }
}

/// Autovacuum runs seen working, then the ones only the counters saw (too short to
/// be sampled).
fn autovacuum_findings(t: &ServerTimeline, out: &mut Vec<Finding>) {
    for table in &t.tables {
        let sighted = t
            .events
            .iter()
            .any(|e| e.kind == EventKind::Autovacuum && e.relation.as_deref() == Some(&table.name));
        if table.autovacuums > 0 && !sighted {
            out.push(finding(
                "autovacuum-during-run",
                format!(
                    "autovacuum finished {} run{} on {} during the run",
                    table.autovacuums,
                    if table.autovacuums == 1 { "" } else { "s" },
                    table.name
                ),
                &[("runs", table.autovacuums as f64)],
            ));
        }
    }
    for e in t.events.iter().filter(|e| e.kind != EventKind::Checkpoint) {
        let what = if e.kind == EventKind::Autovacuum {
            "autovacuum"
        } else {
            "autoanalyze"
        };
        out.push(finding(
            "autovacuum-during-run",
            format!(
                "{what} ran on {} from {:.0} s to {:.0} s",
                e.relation.as_deref().unwrap_or("a table"),
                e.start_s,
                e.end_s
            ),
            &[("start_s", e.start_s), ("end_s", e.end_s)],
        ));
    }
}

fn cache_finding(t: &ServerTimeline, out: &mut Vec<Finding>) {
    if let Some(ratio) = t.database.hit_ratio().filter(|r| *r < 0.99) {
        out.push(finding(
            "cache-misses",
            format!(
                "{:.1}% of block requests missed shared buffers (read from the OS)",
                (1.0 - ratio) * 100.0
            ),
            &[
                ("blocks_hit", t.database.blocks_hit as f64),
                ("blocks_read", t.database.blocks_read as f64),
            ],
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgrush_stats::server::{ServerInterval, TableActivity, WaitShare};

    fn facts() -> RunFacts {
        RunFacts {
            tps_intervals: (0..10)
                .map(|i| {
                    (
                        f64::from(i),
                        1.0,
                        if (4..6).contains(&i) { 50.0 } else { 100.0 },
                    )
                })
                .collect(),
            clients: 10,
            threads: 2,
            scale: Some(1),
            client_cpu_s: Some(19.0),
            elapsed_s: 10.0,
        }
    }

    #[test]
    fn checkpoint_with_a_tps_drop() {
        let mut t = ServerTimeline {
            interval_s: 1.0,
            intervals: (0..10)
                .map(|i| ServerInterval {
                    start_s: f64::from(i),
                    duration_s: 1.0,
                    checkpoints: u64::from(i == 4),
                    ..ServerInterval::default()
                })
                .collect(),
            events: vec![
                ServerEvent {
                    kind: EventKind::Checkpoint,
                    relation: None,
                    start_s: 4.1,
                    end_s: 5.9,
                },
                // A blip far from any counted checkpoint is dropped.
                ServerEvent {
                    kind: EventKind::Checkpoint,
                    relation: None,
                    start_s: 8.5,
                    end_s: 8.6,
                },
            ],
            ..ServerTimeline::default()
        };
        confirm_checkpoints(&mut t);
        assert_eq!(t.events.len(), 1);
        let f = explain(&t, &facts());
        let cp = f
            .iter()
            .find(|f| f.rule == "checkpoint-during-run")
            .expect("finding");
        assert_eq!(
            cp.text,
            "a checkpoint ran from 4 s to 6 s; tps fell 50% meanwhile"
        );
    }

    #[test]
    fn unsampled_checkpoint_is_added_from_the_counters() {
        let mut t = ServerTimeline {
            interval_s: 1.0,
            intervals: vec![ServerInterval {
                start_s: 2.0,
                duration_s: 1.0,
                checkpoints: 1,
                ..ServerInterval::default()
            }],
            ..ServerTimeline::default()
        };
        confirm_checkpoints(&mut t);
        assert_eq!(t.events.len(), 1);
        assert_eq!(t.events[0].start_s, 2.0);
    }

    #[test]
    fn lock_contention_names_the_branches() {
        let t = ServerTimeline {
            waits: vec![
                WaitShare {
                    wait: "Lock:transactionid".into(),
                    share: 0.42,
                },
                WaitShare {
                    wait: "CPU".into(),
                    share: 0.3,
                },
            ],
            ..ServerTimeline::default()
        };
        let f = explain(&t, &facts());
        assert_eq!(
            f[0].text,
            "42% of backend time waited on Lock:transactionid: clients contend for the \
             same rows (pgbench_branches has 1 row for 10 clients)"
        );
        let cpu = f
            .iter()
            .find(|f| f.rule == "client-cpu")
            .expect("cpu finding");
        assert!(
            cpu.text
                .starts_with("the client used 95% of one CPU per thread")
        );
    }

    #[test]
    fn hot_share_with_fillfactor() {
        let t = ServerTimeline {
            tables: vec![TableActivity {
                name: "pgbench_accounts".into(),
                updates: 1000,
                hot_updates: 930,
                fillfactor: Some(80),
                ..TableActivity::default()
            }],
            ..ServerTimeline::default()
        };
        let f = explain(&t, &RunFacts::default());
        assert_eq!(
            f[0].text,
            "updates on pgbench_accounts were 93% HOT (fillfactor 80)"
        );
    }
}
