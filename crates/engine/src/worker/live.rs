//! `--metrics-listen`: a thread's publication edges. Every [`PUBLISH_EVERY_US`] the
//! event loop hands what the thread recorded since the last edge to its slot of the
//! shared live figures, with its gauges (connected and aborted clients, stage, its share
//! of the rate target); once more, waiting for the slot, when the thread ends. Nothing
//! here runs per transaction, and nothing at all without the option.

use pgrush_stats::live::ThreadGauges;

use super::Worker;
use crate::client::State;
use crate::clock::{LazyNow, Micros};

/// Time between two publications of a thread (µs): well under a scrape interval, so
/// that a scrape sees figures at most this old.
pub(super) const PUBLISH_EVERY_US: Micros = 100_000;

/// Passes of a loop that never read the clock after which it looks at the edge anyway.
const LOOK_EVERY_PASSES: u32 = 64;

impl Worker<'_> {
    /// Publishes if the edge is due. The loop's pass may have read the clock (for the
    /// `-T` end, a deadline): that instant is used. Otherwise the clock is read only
    /// after a wake-up without events (a deadline, such as the edge) or every
    /// [`LOOK_EVERY_PASSES`] passes, so that a busy loop reads it no more than before.
    pub(super) fn publish_live_if_due(&mut self, now: &mut LazyNow, timed_out: bool) {
        let Some(next) = self.live_next else {
            return;
        };
        self.live_passes += 1;
        let t = match now.peek() {
            Some(t) => t,
            None if timed_out || self.live_passes >= LOOK_EVERY_PASSES => now.get(&self.ctx.clock),
            None => return,
        };
        self.live_passes = 0;
        if t < next {
            return;
        }
        self.publish_live(t, false);
        let mut next = next;
        while next <= t {
            next += PUBLISH_EVERY_US;
        }
        self.live_next = Some(next);
    }

    /// Publishes the thread's delta and gauges at `t` (`last`: the thread's last
    /// publication, which waits for the slot).
    pub(super) fn publish_live(&mut self, t: Micros, last: bool) {
        let gauges = self.live_gauges(t);
        if let Some(live) = self.ctx.live.as_mut() {
            live.publish(gauges, last);
        }
    }

    /// The thread's gauges at `t`.
    fn live_gauges(&self, t: Micros) -> ThreadGauges {
        let count = |f: &dyn Fn(&crate::client::Client<_>) -> bool| {
            self.clients.iter().filter(|c| f(c)).count() as u32
        };
        let stages = self.ctx.stages.as_ref();
        let in_warmup = self.warmup_end.is_some_and(|edge| t < edge);
        let stage_slot = match (in_warmup, stages) {
            (true, _) => 0,
            (false, Some(run)) => run.number_at(t).max(1) as u32,
            (false, None) => 1,
        };
        let rate_tps = match stages {
            _ if self.ctx.throttle_delay <= 0.0 => 0.0,
            Some(run) => run.timeline.rate_tps_at(t),
            None => 1e6 / self.ctx.throttle_delay,
        };
        ThreadGauges {
            connected: count(&|c| c.connected()),
            aborted: count(&|c| c.state() == State::Aborted),
            stage_slot,
            rate_tps,
        }
    }
}
