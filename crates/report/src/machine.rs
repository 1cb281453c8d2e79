//! The client machine's own load during a run (the run document's `machine`): per
//! interval of the time series, CPU by kind, the busiest core, the run queue, context
//! switches and network bytes; its chart on the run page, and the peaks the warnings
//! judge the client by.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::svg::{Chart, Series, Stacking, XScale, escape};

/// The client machine over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineDoc {
    /// The server runs on this machine too (reached over a Unix socket, a loopback
    /// address or one of this machine's own addresses): its load is in these figures.
    pub same_machine_as_server: bool,
    /// CPU cores counted in `/proc/stat`.
    pub cores: u32,
    /// Interval length (s): the time series'.
    pub interval_s: f64,
    /// One per interval of the time series, with the same start.
    pub intervals: Vec<MachineIntervalDoc>,
    /// What is known of the server's machine: this one, or another that was not
    /// sampled (empty in documents of older versions).
    #[serde(default)]
    pub server_machine: String,
}

/// A core busy this much (%) over an interval had a thread at 100%.
pub const SATURATED_CORE_PCT: f64 = 99.0;

/// A machine idle less than this (%, I/O wait counted as idle) over an interval had
/// its CPU saturated.
pub const SATURATED_IDLE_PCT: f64 = 5.0;

/// The client machine over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineIntervalDoc {
    /// Start, seconds from the run's start (the time series interval's).
    pub start_s: f64,
    /// Time between the two readings (s).
    pub duration_s: f64,
    /// Share of all cores' time in user mode (%).
    pub cpu_user_pct: f64,
    /// Share in the kernel, interrupts included (%).
    pub cpu_system_pct: f64,
    /// Share idle waiting for I/O (%).
    pub cpu_iowait_pct: f64,
    /// Share the hypervisor gave to other machines (%).
    pub cpu_steal_pct: f64,
    /// The busiest core's busy share (%).
    pub busiest_core_pct: f64,
    /// Threads running or ready to run at the interval's end.
    pub run_queue: u64,
    /// Context switches per second, the whole machine.
    pub context_switches_per_s: f64,
    /// Bytes received per second, every interface but the loopback.
    pub net_in_bytes_per_s: f64,
    /// Bytes sent per second, every interface but the loopback.
    pub net_out_bytes_per_s: f64,
    /// Bytes per second over the loopback (a server on this machine reached over TCP).
    pub loopback_bytes_per_s: f64,
}

impl MachineIntervalDoc {
    /// The share of all cores' time that was busy (%): user, system and steal.
    pub fn busy_pct(&self) -> f64 {
        self.cpu_user_pct + self.cpu_system_pct + self.cpu_steal_pct
    }

    fn mid_s(&self) -> f64 {
        self.start_s + self.duration_s / 2.0
    }

    /// Whether the CPU was saturated over the interval: a core at 100%
    /// ([`SATURATED_CORE_PCT`]) or the machine idle below [`SATURATED_IDLE_PCT`].
    pub fn saturated(&self) -> bool {
        self.busiest_core_pct >= SATURATED_CORE_PCT || 100.0 - self.busy_pct() < SATURATED_IDLE_PCT
    }
}

/// Where the client machine was most loaded: its busiest and most stolen-from
/// interval (only intervals of at least half the interval length count).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachinePeaks {
    /// The highest busy share (%) and the start of its interval (s).
    pub busy: (f64, f64),
    /// The highest steal share (%) and the start of its interval (s).
    pub steal: (f64, f64),
    /// The interval length (s).
    pub interval_s: f64,
    /// Whether the server ran on this machine too (its load is in the figures).
    pub shared_with_server: bool,
    /// Intervals judged (long enough), and how many of them had the CPU saturated
    /// ([`MachineIntervalDoc::saturated`]).
    pub judged: usize,
    /// See `judged`.
    pub saturated: usize,
}

impl MachinePeaks {
    /// The share of the judged intervals with the CPU saturated (%; 0 without any).
    pub fn saturated_pct(&self) -> f64 {
        if self.judged == 0 {
            0.0
        } else {
            self.saturated as f64 * 100.0 / self.judged as f64
        }
    }
}

impl MachineDoc {
    /// The intervals long enough to judge: a last interval of a few milliseconds reads a
    /// tick or two of CPU time, so only those of at least half the interval length.
    pub(crate) fn judged(&self) -> impl Iterator<Item = &MachineIntervalDoc> {
        self.intervals
            .iter()
            .filter(|i| i.duration_s >= self.interval_s / 2.0)
    }

    /// The peaks the warnings are judged by.
    pub fn peaks(&self) -> MachinePeaks {
        let max_by = |f: fn(&MachineIntervalDoc) -> f64| {
            self.judged()
                .map(|i| (f(i), i.start_s))
                .fold((0.0, 0.0), |best, v| if v.0 > best.0 { v } else { best })
        };
        MachinePeaks {
            busy: max_by(MachineIntervalDoc::busy_pct),
            steal: max_by(|i| i.cpu_steal_pct),
            interval_s: self.interval_s,
            shared_with_server: self.same_machine_as_server,
            judged: self.judged().count(),
            saturated: self.judged().filter(|i| i.saturated()).count(),
        }
    }
}

/// One kind of CPU time of an interval (%).
type Share = fn(&MachineIntervalDoc) -> f64;

/// What the page and the document say about where the server ran.
pub fn placement_label(m: &MachineDoc) -> &'static str {
    server_machine_label(m.same_machine_as_server)
}

/// What is known of the server's machine, whether it is this one or not.
pub fn server_machine_label(same_machine_as_server: bool) -> &'static str {
    if same_machine_as_server {
        "same machine as the server: its load is in these figures"
    } else {
        "the server runs on another machine, which was not sampled: its load is not known \
         (the server statistics show only what PostgreSQL's views report)"
    }
}

/// The run page's section: CPU by kind (stacked) and the run queue, the run's
/// `stages` shaded.
pub(crate) fn html_section(m: &MachineDoc, stages: &[crate::svg::Mark]) -> String {
    let mut s = String::from("<h2>Client machine</h2>");
    let _ = write!(
        s,
        "<p>{} cores; {}.</p>",
        m.cores,
        escape(placement_label(m))
    );
    let shown: Vec<&MachineIntervalDoc> = m.judged().collect();
    let shown = if shown.is_empty() {
        m.intervals.iter().collect()
    } else {
        shown
    };
    let kinds: [(&str, Share); 4] = [
        ("user", |i| i.cpu_user_pct),
        ("system", |i| i.cpu_system_pct),
        ("steal", |i| i.cpu_steal_pct),
        ("iowait", |i| i.cpu_iowait_pct),
    ];
    let mut cumulative = vec![0.0; shown.len()];
    let series: Vec<Series> = kinds
        .iter()
        .map(|(name, share)| Series {
            name: (*name).into(),
            points: shown
                .iter()
                .zip(cumulative.iter_mut())
                .map(|(i, c)| {
                    *c += share(i);
                    (i.mid_s(), *c)
                })
                .collect(),
        })
        .collect();
    let cpu = Chart {
        title: "Client machine: CPU".into(),
        x_label: "time since start (s)".into(),
        y_label: "share of all cores (%, stacked)".into(),
        x_scale: XScale::Linear,
        series,
    };
    s.push_str(&cpu.render_with(stages, Stacking::Stacked));
    let queue = Chart {
        title: "Client machine: run queue".into(),
        x_label: "time since start (s)".into(),
        y_label: "threads running or ready".into(),
        x_scale: XScale::Linear,
        series: vec![
            Series {
                name: "run queue".into(),
                points: shown
                    .iter()
                    .map(|i| (i.mid_s(), i.run_queue as f64))
                    .collect(),
            },
            Series {
                name: "cores".into(),
                points: shown
                    .iter()
                    .map(|i| (i.mid_s(), f64::from(m.cores)))
                    .collect(),
            },
        ],
    };
    s.push_str(&queue.render_with(stages, Stacking::Lines));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start_s: f64, user: f64, steal: f64) -> MachineIntervalDoc {
        MachineIntervalDoc {
            start_s,
            duration_s: 1.0,
            cpu_user_pct: user,
            cpu_system_pct: 5.0,
            cpu_iowait_pct: 0.0,
            cpu_steal_pct: steal,
            busiest_core_pct: user,
            run_queue: 3,
            context_switches_per_s: 1000.0,
            net_in_bytes_per_s: 0.0,
            net_out_bytes_per_s: 0.0,
            loopback_bytes_per_s: 0.0,
        }
    }

    #[test]
    fn peaks_skip_a_short_last_interval() {
        let mut tail = interval(3.0, 95.0, 50.0);
        tail.duration_s = 0.01;
        let m = MachineDoc {
            same_machine_as_server: true,
            cores: 2,
            interval_s: 1.0,
            intervals: vec![
                interval(0.0, 40.0, 2.0),
                interval(1.0, 60.0, 12.0),
                interval(2.0, 80.0, 1.0),
                tail,
            ],
            server_machine: String::new(),
        };
        let p = m.peaks();
        assert_eq!(p.busy, (86.0, 2.0));
        assert_eq!(p.steal, (12.0, 1.0));
        assert_eq!((p.judged, p.saturated), (3, 0));
        // A core at 100%, or the machine under 5% idle: saturated.
        let mut core = interval(4.0, 40.0, 0.0);
        core.busiest_core_pct = 100.0;
        let idle_3 = interval(5.0, 92.0, 0.0);
        let idle_6 = interval(6.0, 89.0, 0.0);
        assert!(core.saturated() && idle_3.saturated() && !idle_6.saturated());
        let mut m = m;
        m.intervals.extend([core, idle_3, idle_6]);
        let p = m.peaks();
        assert_eq!((p.judged, p.saturated), (6, 2));
        assert!((p.saturated_pct() - 100.0 / 3.0).abs() < 1e-9);
        let page = html_section(&m, &[]);
        assert!(page.contains("same machine as the server"), "{page}");
        assert!(page.contains("run queue") && page.contains("Client machine: CPU"));
    }
}
