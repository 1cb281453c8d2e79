//! `-P`: thread 0 prints a progress line every interval, from the sum of every
//! thread's counters.

use pgrush_stats::ProgressSnapshot;
use pgrush_stats::progress::{ProgressTime, format_progress_line};

use crate::clock::{Clock, Micros};
use crate::plan::Plan;
use crate::shared::Shared;

/// The progress schedule of thread 0 and the snapshot of the previous report.
pub(super) struct ProgressReporter {
    interval_us: Micros,
    bench_start: Micros,
    next_report: Micros,
    last_report: Micros,
    last_snapshot: ProgressSnapshot,
}

impl ProgressReporter {
    /// Reports every `interval_s` seconds from `bench_start`.
    pub(super) fn new(interval_s: u32, bench_start: Micros) -> Self {
        let interval_us = i64::from(interval_s) * 1_000_000;
        ProgressReporter {
            interval_us,
            bench_start,
            next_report: bench_start + interval_us,
            last_report: bench_start,
            last_snapshot: ProgressSnapshot::default(),
        }
    }

    /// When the next line is due.
    pub(super) fn next_report(&self) -> Micros {
        self.next_report
    }

    /// Prints the line if it is due at `t` (intervals that passed while the thread
    /// was busy are not printed: the next line covers them).
    pub(super) fn report_if_due(&mut self, t: Micros, shared: &Shared, plan: &Plan, clock: &Clock) {
        if t < self.next_report {
            return;
        }
        let cur = ProgressSnapshot::sum(shared.progress.iter().map(|a| a.as_ref()));
        let line = format_progress_line(
            &plan.progress_opts,
            &cur,
            &self.last_snapshot,
            &ProgressTime {
                elapsed_us: (t - self.bench_start).max(0) as u64,
                interval_us: (t - self.last_report).max(1) as u64,
                now_epoch_us: clock.epoch_us(t).max(0) as u64,
            },
        );
        eprintln!("{line}");
        self.last_snapshot = cur;
        self.last_report = t;
        while t >= self.next_report {
            self.next_report += self.interval_us;
        }
    }
}
