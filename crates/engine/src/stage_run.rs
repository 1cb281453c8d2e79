//! What a worker thread keeps for a run in stages: the timeline, the activation
//! rank of each of its clients, and one set of statistics per stage.

use pgrush_stats::{StatsLayout, ThreadStats, TxRecord};

use crate::clock::Micros;
use crate::stage_timeline::{Arrival, Timeline};

/// A thread's share of a run in stages.
pub(crate) struct StageRun {
    /// The stages on the engine clock.
    pub(crate) timeline: Timeline,
    /// Activation rank of the thread's clients, by index in the thread.
    ranks: Vec<u32>,
    /// Global id of the thread's first client.
    first_id: u32,
    /// Statistics of each stage (transactions by the stage of their scheduled start).
    pub(crate) stats: Vec<ThreadStats>,
    /// Whether the run's statistics keep only totals: then a transaction is recorded
    /// in its stage's alone, and the stages are merged into the run's at the end
    /// ([`StageRun::merge_into`]) instead of recording each transaction twice.
    holds_totals: bool,
    /// The segment of the last transaction recorded (start, end, stage): the next
    /// one is nearly always in it, and then is placed without a search.
    recent: (Micros, Micros, Option<usize>),
}

/// The activation ranks of the clients of thread `tid` given the sizes of every
/// thread's block: clients are activated round-robin over the threads (the first
/// client of each thread, then the second of each, ...), so that any number of
/// active clients is spread over the threads.
pub(crate) fn activation_ranks(blocks: &[u32], tid: usize) -> Vec<u32> {
    let mut ranks = vec![0; blocks.get(tid).copied().unwrap_or(0) as usize];
    let mut next = 0;
    let deepest = blocks.iter().copied().max().unwrap_or(0);
    for j in 0..deepest {
        for (t, &n) in blocks.iter().enumerate() {
            if j < n {
                if t == tid {
                    ranks[j as usize] = next;
                }
                next += 1;
            }
        }
    }
    ranks
}

impl StageRun {
    /// The state of a thread whose clients have `ranks`, the first one id `first_id`.
    pub(crate) fn new(
        timeline: Timeline,
        ranks: Vec<u32>,
        first_id: u32,
        stages: usize,
        layout: &StatsLayout,
    ) -> StageRun {
        StageRun {
            timeline,
            ranks,
            first_id,
            stats: (0..stages).map(|_| ThreadStats::new(layout)).collect(),
            holds_totals: false,
            recent: (0, 0, None),
        }
    }

    /// Lets the stages hold the totals of `run` (the run's statistics), when those
    /// keep only totals.
    pub(crate) fn hold_totals_of(&mut self, run: &ThreadStats) {
        self.holds_totals = run.keeps_totals_only();
    }

    /// Records a measured transaction scheduled at `scheduled` (ended at `now`) in
    /// its stage's statistics, and in the run's unless the stages hold its totals.
    #[inline]
    pub(crate) fn record_measured_tx(
        &mut self,
        run: &mut ThreadStats,
        rec: &TxRecord,
        (scheduled, now): (Micros, Micros),
    ) {
        let holds = self.holds_totals;
        match self.stats_at(scheduled) {
            Some(stats) => {
                stats.record_tx(rec);
                if !holds {
                    run.record_tx_at(rec, now);
                }
            }
            None => run.record_tx_at(rec, now),
        }
    }

    /// Hands the stages' statistics over, after merging them into the run's when they
    /// hold its totals.
    pub(crate) fn merge_into(self, run: &mut ThreadStats) -> Vec<ThreadStats> {
        if self.holds_totals {
            for stage in &self.stats {
                run.merge(stage);
            }
        }
        self.stats
    }

    /// The rank of client `id` (of this thread).
    fn rank(&self, id: u32) -> u32 {
        let i = id.wrapping_sub(self.first_id) as usize;
        self.ranks.get(i).copied().unwrap_or(u32::MAX)
    }

    /// When client `id` may start its next transaction: `None` if at once (it is
    /// active at `now`), else the instant it becomes active, `Micros::MAX` for never.
    pub(crate) fn idle_until(&self, id: u32, now: Micros) -> Option<Micros> {
        let rank = self.rank(id);
        if self.timeline.active(rank, now) {
            return None;
        }
        Some(self.timeline.next_active(rank, now).unwrap_or(Micros::MAX))
    }

    /// For client `id`, active at `now`: until when it stays so for certain.
    pub(crate) fn active_until(&self, id: u32, now: Micros) -> Micros {
        self.timeline.active_until(self.rank(id), now)
    }

    /// The statistics of the stage of a transaction scheduled at `scheduled`.
    #[inline]
    pub(crate) fn stats_at(&mut self, scheduled: Micros) -> Option<&mut ThreadStats> {
        let (start, end, stage) = self.recent;
        let stage = if (start..end).contains(&scheduled) {
            stage
        } else {
            self.recent = self.timeline.segment_span(scheduled);
            self.recent.2
        };
        self.stats.get_mut(stage?)
    }

    /// The stage number (1-based) of an instant, 0 before the first stage.
    pub(crate) fn number_at(&self, t: Micros) -> usize {
        self.timeline.stage_at(t).map_or(0, |i| i + 1)
    }

    /// The next `-R` slot after `trigger` with the exponential draw `draw`, at `now`:
    /// the schedule resumes no earlier than the end of a closed-loop stage before `now`.
    pub(crate) fn next_slot(&self, trigger: Micros, now: Micros, draw: f64) -> Arrival {
        let from = trigger.max(self.timeline.open_since(now));
        self.timeline.next_arrival(from, draw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgrush_stats::TxOutcome;
    use pgrush_stats::stages::{StageSpec, resolve};

    const S: Micros = 1_000_000;

    /// Transactions of two one-second stages, recorded out of order and after the
    /// end: each in its stage (the last for one after the end), whichever segment the
    /// previous one was in; the run's totals are the stages' merged.
    #[test]
    fn transactions_go_to_their_stage_and_the_run_totals_them() {
        let specs: Vec<StageSpec> = ["1s", "1s"]
            .iter()
            .map(|s| StageSpec::parse(s).unwrap())
            .collect();
        let stages = resolve(&specs, 1, 0.0).unwrap();
        let layout = StatsLayout {
            commands_per_script: vec![1],
            ..StatsLayout::default()
        };
        let mut run = ThreadStats::new(&layout);
        let timeline = Timeline::new(&stages, 0, 1, 0);
        let mut sr = StageRun::new(timeline, vec![0], 0, 2, &layout);
        sr.hold_totals_of(&run);
        let rec = TxRecord {
            script: 0,
            outcome: TxOutcome::Success,
            latency_us: 100.0,
            lag_us: 0.0,
            tries: 1,
        };
        for at in [S / 2, 3 * S / 2, S / 5, 5 * S, S - 1, S] {
            sr.record_measured_tx(&mut run, &rec, (at, at + 100));
        }
        let mut per_stage = sr.merge_into(&mut run);
        run.flush();
        let counts: Vec<u64> = per_stage
            .iter_mut()
            .map(|s| {
                s.flush();
                s.total.counters.successful
            })
            .collect();
        assert_eq!(counts, vec![3, 3]);
        assert_eq!(run.total.counters.successful, 6);
    }

    #[test]
    fn activation_goes_round_robin_over_the_threads() {
        // 7 clients over 3 threads: blocks 2, 2, 3 (pgbench deals the remainder last).
        let blocks = [2, 2, 3];
        assert_eq!(activation_ranks(&blocks, 0), vec![0, 3]);
        assert_eq!(activation_ranks(&blocks, 1), vec![1, 4]);
        assert_eq!(activation_ranks(&blocks, 2), vec![2, 5, 6]);
    }
}
