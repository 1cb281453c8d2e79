//! `-P`: thread 0 prints a progress line every interval, from the sum of every
//! thread's counters. With `--warmup` the lines before its end say `(warm-up)`;
//! at its end the schedule restarts, so the measured lines count from it as
//! pgbench's count from the run start. With stages, a measured line ends with
//! ` stage N`, the stage its interval ends in.

use pgrush_stats::ProgressSnapshot;
use pgrush_stats::progress::{ProgressTime, format_progress_line};

use crate::clock::{Clock, Micros};
use crate::plan::Plan;
use crate::shared::Shared;
use crate::stage_timeline::Timeline;

/// What a warm-up line says after its time.
const WARMUP_MARK: &str = " (warm-up)";

/// The progress schedule of thread 0 and the snapshot of the previous report.
pub(super) struct ProgressReporter {
    interval_us: Micros,
    bench_start: Micros,
    next_report: Micros,
    last_report: Micros,
    last_snapshot: ProgressSnapshot,
    /// The end of `--warmup` while it lasts.
    warmup_end: Option<Micros>,
    /// With stages: their timeline, for the lines' stage numbers.
    stages: Option<Timeline>,
}

impl ProgressReporter {
    /// Reports every `interval_s` seconds from `bench_start`, or, with a warm-up
    /// ending at `warmup_end`, from `bench_start` until then and from it after.
    pub(super) fn new(interval_s: u32, bench_start: Micros, warmup_end: Option<Micros>) -> Self {
        let interval_us = i64::from(interval_s) * 1_000_000;
        ProgressReporter {
            interval_us,
            bench_start,
            next_report: bench_start + interval_us,
            last_report: bench_start,
            last_snapshot: ProgressSnapshot::default(),
            warmup_end,
            stages: None,
        }
    }

    /// The lines say which stage they end in.
    pub(super) fn with_stages(mut self, timeline: Timeline) -> Self {
        self.stages = Some(timeline);
        self
    }

    /// When the next line is due (or the warm-up ends).
    pub(super) fn next_report(&self) -> Micros {
        match self.warmup_end {
            Some(edge) => self.next_report.min(edge),
            None => self.next_report,
        }
    }

    /// Prints the line if it is due at `t` (intervals that passed while the thread
    /// was busy are not printed: the next line covers them).
    pub(super) fn report_if_due(&mut self, t: Micros, shared: &Shared, plan: &Plan, clock: &Clock) {
        if let Some(edge) = self.warmup_end
            && t >= edge.min(self.next_report)
        {
            self.report_warmup(t, edge, shared, plan, clock);
            return;
        }
        if t < self.next_report {
            return;
        }
        let cur = ProgressSnapshot::sum(shared.progress.iter().map(|a| a.as_ref()));
        let line = self.line(t, &cur, plan, clock, false);
        eprintln!("{line}");
        self.last_snapshot = cur;
        self.last_report = t;
        while t >= self.next_report {
            self.next_report += self.interval_us;
        }
    }

    /// During the warm-up: a due line says `(warm-up)`; at its end the schedule
    /// restarts from it, with what the warm-up counted as the previous snapshot.
    #[cold]
    fn report_warmup(
        &mut self,
        t: Micros,
        edge: Micros,
        shared: &Shared,
        plan: &Plan,
        clock: &Clock,
    ) {
        let cur = ProgressSnapshot::sum(shared.progress.iter().map(|a| a.as_ref()));
        if t >= self.next_report {
            let line = self.line(t, &cur, plan, clock, true);
            eprintln!("{line}");
            self.last_report = t;
            while t >= self.next_report {
                self.next_report += self.interval_us;
            }
        }
        self.last_snapshot = cur;
        if t >= edge {
            self.warmup_end = None;
            self.bench_start = edge;
            self.last_report = edge;
            self.next_report = edge + self.interval_us;
            while t >= self.next_report {
                self.next_report += self.interval_us;
            }
        }
    }

    /// The line for the interval that ends at `t`.
    fn line(
        &self,
        t: Micros,
        cur: &ProgressSnapshot,
        plan: &Plan,
        clock: &Clock,
        warmup: bool,
    ) -> String {
        let mut line = format_progress_line(
            &plan.progress_opts,
            cur,
            &self.last_snapshot,
            &ProgressTime {
                elapsed_us: (t - self.bench_start).max(0) as u64,
                interval_us: (t - self.last_report).max(1) as u64,
                now_epoch_us: clock.epoch_us(t).max(0) as u64,
            },
        );
        if warmup && let Some(at) = line.find(" s, ") {
            line.insert_str(at + 2, WARMUP_MARK);
        }
        // The stage the interval ends in, at the line's due time (the line may be late).
        let due = self.next_report.min(t);
        if let Some(stage) = self.stages.as_ref().and_then(|tl| tl.stage_at(due - 1))
            && !warmup
        {
            line.push_str(&format!(" stage {}", stage + 1));
        }
        line
    }
}
