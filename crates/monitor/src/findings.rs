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

/// The tps compared around an event: the client intervals it overlaps (never
/// shorter than the series' resolution) against the others.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TpsWindow {
    /// Start of the first overlapped interval (s).
    start_s: f64,
    /// End of the last overlapped interval (s).
    end_s: f64,
    /// Mean tps of the overlapped intervals.
    during: f64,
    /// Mean tps of the other intervals.
    outside: f64,
    /// How many intervals the window holds.
    intervals: usize,
}

/// The tps window around `[start, end]`, when there are intervals both in and out of it.
fn tps_around(facts: &RunFacts, start: f64, end: f64) -> Option<TpsWindow> {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    let (mut from, mut to) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(s, d, tps) in &facts.tps_intervals {
        if d <= 0.0 {
            continue;
        }
        // An instant event (end == start) lies in the interval that contains it.
        if s <= end && start < s + d && (s < end || start == end) {
            inside.push(tps);
            from = from.min(s);
            to = to.max(s + d);
        } else {
            outside.push(tps);
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    Some(TpsWindow {
        start_s: from,
        end_s: to,
        during: mean(&inside)?,
        outside: mean(&outside)?,
        intervals: inside.len(),
    })
}

/// How a tps change over `w` reads next to an event from `start` to `end`: the
/// subject ("tps", or the window named when the event fills less than nine tenths of
/// it: the series cannot show a change within a shorter stretch) and the suffix.
fn window_words(w: &TpsWindow, start: f64, end: f64) -> (String, &'static str) {
    if end - start >= 0.9 * (w.end_s - w.start_s) {
        ("tps".to_string(), " meanwhile")
    } else {
        let subject = format!(
            "tps from {:.1} s to {:.1} s (the client's interval{} around it)",
            w.start_s,
            w.end_s,
            if w.intervals == 1 { "" } else { "s" }
        );
        (subject, "")
    }
}

fn checkpoint_findings(t: &ServerTimeline, facts: &RunFacts, out: &mut Vec<Finding>) {
    for e in t.events.iter().filter(|e| e.kind == EventKind::Checkpoint) {
        let span = format!(
            "a checkpoint ran from {:.1} s to {:.1} s",
            e.start_s, e.end_s
        );
        let mut ev = vec![("start_s", e.start_s), ("end_s", e.end_s)];
        let text = match tps_around(facts, e.start_s, e.end_s) {
            Some(w) if w.outside > 0.0 => {
                let change = (w.during - w.outside) / w.outside * 100.0;
                let (tps, when) = window_words(&w, e.start_s, e.end_s);
                ev.extend([
                    ("tps_during", w.during),
                    ("tps_outside", w.outside),
                    ("window_start_s", w.start_s),
                    ("window_end_s", w.end_s),
                ]);
                if change <= -5.0 {
                    format!("{span}; {tps} fell {:.0}%{when}", -change)
                } else if change >= 5.0 {
                    format!("{span}; {tps} rose {change:.0}%{when}")
                } else {
                    format!("{span}; {tps} did not change noticeably ({change:+.0}%){when}")
                }
            }
            _ => span,
        };
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
                "{what} ran on {} from {:.1} s to {:.1} s",
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

    /// The checkpoint finding of `t`.
    fn checkpoint_finding(t: &ServerTimeline, facts: &RunFacts) -> Finding {
        explain(t, facts)
            .into_iter()
            .find(|f| f.rule == "checkpoint-during-run")
            .expect("a checkpoint finding")
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
        assert_eq!(
            checkpoint_finding(&t, &facts()).text,
            "a checkpoint ran from 4.1 s to 5.9 s; tps fell 50% meanwhile"
        );
    }

    /// A checkpoint of 0.1 s in 1 s intervals: the times as the summary prints them,
    /// and the tps compared over the whole interval around it, named as such.
    #[test]
    fn a_short_checkpoint_is_compared_over_its_interval() {
        let mut facts = facts();
        facts.tps_intervals = (0..5)
            .map(|i| (f64::from(i), 1.0, if i == 2 { 130.0 } else { 100.0 }))
            .collect();
        let t = ServerTimeline {
            interval_s: 1.0,
            events: vec![ServerEvent {
                kind: EventKind::Checkpoint,
                relation: None,
                start_s: 2.1,
                end_s: 2.2,
            }],
            ..ServerTimeline::default()
        };
        let cp = checkpoint_finding(&t, &facts);
        assert_eq!(
            cp.text,
            "a checkpoint ran from 2.1 s to 2.2 s; tps from 2.0 s to 3.0 s (the client's \
             interval around it) rose 30%"
        );
        assert_eq!(cp.evidence["window_start_s"], 2.0);
        assert_eq!(cp.evidence["window_end_s"], 3.0);
        // The same checkpoint straddling two intervals is compared over both.
        let mut t = t;
        t.events[0].start_s = 1.95;
        t.events[0].end_s = 2.05;
        let f = explain(&t, &facts);
        assert!(
            f[0].text.starts_with(
                "a checkpoint ran from 1.9 s to 2.0 s; tps from 1.0 s to 3.0 s (the client's \
                 intervals around it)"
            ),
            "{}",
            f[0].text
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
