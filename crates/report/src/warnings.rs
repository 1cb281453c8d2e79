//! Warnings about numbers the pgbench manual calls meaningless (printed on stderr as
//! `pgrush: warning: …` unless `--no-warnings`, and recorded in the JSON document).

use pgrush_stats::RunSummary;

use crate::machine::MachinePeaks;

/// A run shorter than this (seconds) is "a test that runs for only a few seconds": a
/// few is under ten, so a 13 s run is not warned about (the manual's advice of "at
/// least a few minutes" is in the warning's text, not its threshold).
pub const MIN_MEANINGFUL_DURATION_S: f64 = 10.0;

/// The description of the builtin tpcb-like script (how a run document names it).
pub const TPCB_LIKE_DESCRIPTION: &str = "<builtin: TPC-B (sort of)>";

/// The warning given when autovacuum worked on the pgbench tables during the run.
pub const AUTOVACUUM_WARNING: &str =
    "autovacuum ran on the pgbench tables during the run; the results depend on when it ran";

/// The share of the client machine's CPU time the hypervisor gave elsewhere (steal; %)
/// above which the client may have been the bottleneck.
pub const MACHINE_STEAL_PCT: f64 = 10.0;

/// How the warning about a busy client machine starts.
const MACHINE_BUSY_PREFIX: &str = "the client machine's CPU was ";

/// How the warning about steal on the client machine starts.
const MACHINE_STEAL_PREFIX: &str = "the hypervisor took ";

/// Whether `warning` is about the client machine's own load (a merged run keeps each
/// shard's: each shard ran on its own machine).
pub fn is_machine_warning(warning: &str) -> bool {
    warning.starts_with(MACHINE_BUSY_PREFIX) || warning.starts_with(MACHINE_STEAL_PREFIX)
}

/// The facts the warnings are derived from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WarningInputs {
    /// Benchmark duration (s).
    pub duration_s: f64,
    /// The builtin tpcb-like script is one of the scripts.
    pub tpcb_like: bool,
    /// `-c`.
    pub clients: u32,
    /// Scaling factor.
    pub scale: i64,
    /// Effective number of threads.
    pub threads: u32,
    /// CPUs available on the client.
    pub cpus: u32,
    /// Autovacuum (or autoanalyze) worked on the pgbench tables during the run, when known.
    pub autovacuum_during_run: Option<bool>,
    /// The client machine's busiest intervals, when it was sampled.
    pub machine: Option<MachinePeaks>,
    /// The run was made of stages (`--stage`), whose durations make its length.
    pub in_stages: bool,
}

impl WarningInputs {
    /// The facts `summary` gives (duration, clients, scale, threads); the others unset.
    pub fn from_summary(summary: &RunSummary) -> Self {
        WarningInputs {
            duration_s: summary.bench_duration_s(),
            clients: summary.config.clients,
            scale: summary.config.scale,
            threads: summary.config.threads,
            in_stages: !summary.stages.is_empty(),
            ..WarningInputs::default()
        }
    }
}

/// The warnings that apply, in a fixed order (each without the `warning:` prefix).
pub fn warnings(w: &WarningInputs) -> Vec<String> {
    let mut out = Vec::new();
    if w.duration_s < MIN_MEANINGFUL_DURATION_S {
        let longer = if w.in_stages {
            "make the stages last at least a few minutes in all"
        } else {
            "use -T or -t to run for at least a few minutes"
        };
        out.push(format!(
            "the run lasted only {:.1} s; results of runs of a few seconds are not meaningful ({longer})",
            w.duration_s
        ));
    }
    if w.tpcb_like && i64::from(w.clients) > w.scale {
        out.push(format!(
            "tpcb-like with more clients ({}) than the scale factor ({}) mostly measures update contention on pgbench_branches",
            w.clients, w.scale
        ));
    }
    if w.tpcb_like && w.autovacuum_during_run == Some(true) {
        out.push(AUTOVACUUM_WARNING.to_string());
    }
    out.extend(threads_warning(w.threads, w.cpus));
    if let Some(m) = &w.machine {
        out.extend(machine_warnings(m));
    }
    out
}

/// The warnings about the client machine's own load, if it was the bottleneck: its CPU
/// saturated (a core at 100% or the machine idle below 5%:
/// [`crate::machine::MachineIntervalDoc::saturated`]) in any interval, said as the share
/// of the run's intervals; steal above [`MACHINE_STEAL_PCT`] in any interval.
fn machine_warnings(m: &MachinePeaks) -> Vec<String> {
    let span = |start_s: f64| format!("{:.0} s to {:.0} s", start_s, start_s + m.interval_s);
    let mut out = Vec::new();
    if m.saturated > 0 {
        let whose = if m.shared_with_server {
            "the results measure this machine, which the server runs on too, not the server"
        } else {
            "the results measure the client"
        };
        let (busy, at) = m.busy;
        out.push(format!(
            "{MACHINE_BUSY_PREFIX}saturated for {:.0}% of the run ({} of {} intervals with a core at 100% or under 5% idle; the busiest {busy:.0}% busy, from {}): {whose}",
            m.saturated_pct(),
            m.saturated,
            m.judged,
            span(at)
        ));
    }
    let (steal, at) = m.steal;
    if steal > MACHINE_STEAL_PCT {
        out.push(format!(
            "{MACHINE_STEAL_PREFIX}{steal:.0}% of the client machine's CPU time (steal) from {} (above {MACHINE_STEAL_PCT:.0}%); the client may be the bottleneck",
            span(at)
        ));
    }
    out
}

/// The warning about more threads than CPUs on one client machine, if it applies.
fn threads_warning(threads: u32, cpus: u32) -> Option<String> {
    (threads > cpus).then(|| {
        format!(
            "more threads ({threads}) than CPUs ({cpus}) on the client; the client may be the bottleneck"
        )
    })
}

/// The warnings of a run whose clients ran on several machines (the shards of a
/// merged run): `whole`'s, with threads against CPUs judged on each machine
/// (`(threads, cpus)`), each distinct warning once.
pub fn warnings_on_machines(whole: &WarningInputs, machines: &[(u32, u32)]) -> Vec<String> {
    let mut out = warnings(&WarningInputs {
        threads: 0,
        ..whole.clone()
    });
    for &(threads, cpus) in machines {
        if let Some(w) = threads_warning(threads, cpus)
            && !out.contains(&w)
        {
            out.push(w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_warning() {
        let fine = WarningInputs {
            duration_s: 300.0,
            tpcb_like: true,
            clients: 10,
            scale: 10,
            threads: 2,
            cpus: 2,
            autovacuum_during_run: Some(false),
            machine: None,
            in_stages: false,
        };
        assert!(warnings(&fine).is_empty());
        let short = WarningInputs {
            duration_s: 2.04,
            ..fine.clone()
        };
        let w = warnings(&short);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("the run lasted only 2.0 s"), "{}", w[0]);
        assert!(w[0].ends_with("(use -T or -t to run for at least a few minutes)"));
        let staged = warnings(&WarningInputs {
            in_stages: true,
            ..short.clone()
        });
        assert!(
            staged[0].ends_with("(make the stages last at least a few minutes in all)"),
            "{}",
            staged[0]
        );
        let contended = WarningInputs {
            clients: 11,
            ..fine.clone()
        };
        assert!(warnings(&contended)[0].contains("more clients (11) than the scale factor (10)"));
        let not_tpcb = WarningInputs {
            tpcb_like: false,
            autovacuum_during_run: Some(true),
            ..contended.clone()
        };
        assert!(warnings(&not_tpcb).is_empty());
        let av = WarningInputs {
            autovacuum_during_run: Some(true),
            ..fine.clone()
        };
        assert!(warnings(&av)[0].starts_with("autovacuum ran"));
        let threads = WarningInputs { threads: 3, ..fine };
        assert!(warnings(&threads)[0].contains("more threads (3) than CPUs (2)"));
    }

    /// Shards' warnings: the whole run's duration and clients, each machine's threads.
    #[test]
    fn a_run_on_several_machines() {
        let whole = WarningInputs {
            duration_s: 4.1,
            tpcb_like: true,
            clients: 4,
            scale: 1,
            threads: 6,
            cpus: 2,
            autovacuum_during_run: Some(false),
            machine: None,
            in_stages: false,
        };
        let w = warnings_on_machines(&whole, &[(2, 2), (4, 2), (4, 2)]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].starts_with("the run lasted only 4.1 s"));
        assert!(w[1].contains("more clients (4) than the scale factor (1)"));
        assert!(w[2].contains("more threads (4) than CPUs (2)"));
    }

    /// The client machine is warned about when its CPU was saturated in any interval
    /// (with the share of the run), or above 10% steal in an interval, not at the
    /// threshold itself.
    #[test]
    fn a_busy_client_machine() {
        let at = |busy: f64, steal: f64| WarningInputs {
            duration_s: 300.0,
            machine: Some(MachinePeaks {
                busy: (busy, 2.0),
                steal: (steal, 5.0),
                interval_s: 1.0,
                shared_with_server: false,
                judged: 10,
                saturated: usize::from(busy > 95.0) * 4,
            }),
            ..WarningInputs::default()
        };
        assert!(warnings(&at(90.0, 10.0)).is_empty());
        assert_eq!(
            warnings(&at(97.0, 10.0)),
            [
                "the client machine's CPU was saturated for 40% of the run (4 of 10 intervals with a core at 100% or under 5% idle; the busiest 97% busy, from 2 s to 3 s): the results measure the client"
            ]
        );
        let w = warnings(&at(50.0, 12.0));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with(
                "the hypervisor took 12% of the client machine's CPU time (steal) from 5 s to 6 s"
            ),
            "{w:?}"
        );
        let mut shared = at(97.0, 0.0);
        if let Some(m) = shared.machine.as_mut() {
            m.shared_with_server = true;
        }
        assert_eq!(
            warnings(&shared),
            [
                "the client machine's CPU was saturated for 40% of the run (4 of 10 intervals with a core at 100% or under 5% idle; the busiest 97% busy, from 2 s to 3 s): the results measure this machine, which the server runs on too, not the server"
            ]
        );
        let both = warnings(&at(99.0, 30.0));
        assert!(both.len() == 2 && both.iter().all(|w| is_machine_warning(w)));
        assert!(!is_machine_warning(&warnings(&WarningInputs::default())[0]));
    }
}
