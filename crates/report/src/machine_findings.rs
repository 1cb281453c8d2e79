//! Findings that join the client machine's load with the server's statistics: when
//! the server runs on the client's machine, whether its I/O wait rose while the
//! server checkpointed. Nothing is said where it cannot be known (a remote server,
//! whose machine is not sampled; no checkpoint; no interval without one).

use std::collections::BTreeMap;

use pgrush_stats::server::{EventKind, Finding, ServerEvent};

use crate::machine::{MachineDoc, MachineIntervalDoc};

/// The rule name of the finding.
pub const CHECKPOINT_IOWAIT_RULE: &str = "iowait-during-checkpoints";

/// How many percentage points above the intervals without a checkpoint the I/O wait
/// of those with one must be (and at least half as much again) to be a rise.
const RISE_MIN_POINTS: f64 = 1.0;

/// "iowait on the server machine rose during checkpoints", when the server runs on
/// this machine (`m.same_machine_as_server`) and the intervals overlapping one of
/// `events`' checkpoints had clearly more I/O wait than the others.
pub fn checkpoint_iowait(m: &MachineDoc, events: &[ServerEvent]) -> Option<Finding> {
    if !m.same_machine_as_server {
        return None;
    }
    let checkpoints: Vec<&ServerEvent> = events
        .iter()
        .filter(|e| e.kind == EventKind::Checkpoint)
        .collect();
    let overlaps = |i: &MachineIntervalDoc| {
        let end = i.start_s + i.duration_s;
        checkpoints
            .iter()
            .any(|e| e.start_s < end && e.end_s > i.start_s)
    };
    let (during, outside): (Vec<&MachineIntervalDoc>, Vec<&MachineIntervalDoc>) =
        m.judged().partition(|i| overlaps(i));
    let mean = |v: &[&MachineIntervalDoc]| {
        (!v.is_empty()).then(|| v.iter().map(|i| i.cpu_iowait_pct).sum::<f64>() / v.len() as f64)
    };
    let (with, without) = (mean(&during)?, mean(&outside)?);
    if with < without + RISE_MIN_POINTS || with < without * 1.5 {
        return None;
    }
    Some(Finding {
        rule: CHECKPOINT_IOWAIT_RULE.into(),
        text: format!(
            "iowait on the server machine rose during checkpoints: {with:.1}% of CPU time in the {} intervals with a checkpoint against {without:.1}% in the {} without (the server runs on the client's machine)",
            during.len(),
            outside.len()
        ),
        evidence: BTreeMap::from([
            ("iowait_with_checkpoint_pct".into(), with),
            ("iowait_without_checkpoint_pct".into(), without),
            ("intervals_with_checkpoint".into(), during.len() as f64),
            ("intervals_without_checkpoint".into(), outside.len() as f64),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start_s: f64, iowait: f64) -> MachineIntervalDoc {
        MachineIntervalDoc {
            start_s,
            duration_s: 1.0,
            cpu_user_pct: 30.0,
            cpu_system_pct: 10.0,
            cpu_iowait_pct: iowait,
            cpu_steal_pct: 0.0,
            busiest_core_pct: 50.0,
            run_queue: 2,
            context_switches_per_s: 1000.0,
            net_in_bytes_per_s: 0.0,
            net_out_bytes_per_s: 0.0,
            loopback_bytes_per_s: 0.0,
        }
    }

    fn machine(same: bool, iowaits: &[f64]) -> MachineDoc {
        MachineDoc {
            same_machine_as_server: same,
            cores: 2,
            interval_s: 1.0,
            intervals: iowaits
                .iter()
                .enumerate()
                .map(|(k, &w)| interval(k as f64, w))
                .collect(),
            server_machine: String::new(),
        }
    }

    fn checkpoint(start_s: f64, end_s: f64) -> ServerEvent {
        ServerEvent {
            kind: EventKind::Checkpoint,
            relation: None,
            start_s,
            end_s,
        }
    }

    #[test]
    fn iowait_rising_during_a_checkpoint_is_found() {
        // A checkpoint from 2.5 s to 4.2 s: intervals 2, 3 and 4 overlap it.
        let m = machine(true, &[1.0, 2.0, 12.0, 15.0, 9.0, 1.0, 2.0]);
        let f = checkpoint_iowait(&m, &[checkpoint(2.5, 4.2)]).expect("a finding");
        assert_eq!(f.rule, CHECKPOINT_IOWAIT_RULE);
        assert_eq!(
            f.text,
            "iowait on the server machine rose during checkpoints: 12.0% of CPU time in the 3 intervals with a checkpoint against 1.5% in the 4 without (the server runs on the client's machine)"
        );
        assert_eq!(f.evidence["intervals_with_checkpoint"], 3.0);
    }

    #[test]
    fn nothing_is_said_when_it_cannot_be_known_or_did_not_rise() {
        let events = [checkpoint(2.5, 4.2)];
        let rising = [1.0, 2.0, 12.0, 15.0, 9.0, 1.0, 2.0];
        // A remote server: its machine was not sampled.
        assert_eq!(checkpoint_iowait(&machine(false, &rising), &events), None);
        // No checkpoint.
        assert_eq!(checkpoint_iowait(&machine(true, &rising), &[]), None);
        // Every interval overlaps the checkpoint: nothing to compare with.
        let all = [checkpoint(0.0, 10.0)];
        assert_eq!(checkpoint_iowait(&machine(true, &rising), &all), None);
        // Flat I/O wait.
        let flat = [3.0, 3.0, 3.5, 3.2, 3.1, 3.0, 3.0];
        assert_eq!(checkpoint_iowait(&machine(true, &flat), &events), None);
    }
}
