//! The stages on the engine's clock: which stage an instant falls in, how many
//! clients are active then, and the `-R` schedule of one thread as a
//! non-homogeneous Poisson process whose intensity follows the stages.
//!
//! The timeline is a list of segments, each with a constant or linearly moving
//! number of active clients and rate: one before the first stage (the warm-up, at
//! the first stage's start values), the stages, one after the last stage (its end
//! values). The arrivals of a thread are drawn as exponential gaps of mean 1 in
//! cumulative-intensity space and mapped back to time by inverting the cumulative
//! intensity, piecewise linear (constant rate) or quadratic (ramp). A segment
//! without rate is a closed loop: the schedule does not cross it.

use pgrush_stats::stages::Stage;

use crate::clock::Micros;

/// One piece of the timeline.
#[derive(Debug, Clone, PartialEq)]
struct Segment {
    /// Start (engine clock, µs).
    start: Micros,
    /// End (exclusive; `Micros::MAX` for the last).
    end: Micros,
    /// Active clients at the start and the end.
    clients: (f64, f64),
    /// Arrivals per µs of this thread at the start and the end.
    rate: (f64, f64),
    /// Start of the run of open-loop segments this one belongs to.
    open_since: Micros,
}

impl Segment {
    /// Whether the segment has no rate (a closed loop).
    fn closed(&self) -> bool {
        self.rate.0 <= 0.0 && self.rate.1 <= 0.0
    }

    /// Whether the segment has both ends (not the one before the first stage nor
    /// the one after the last, which are constant).
    fn bounded(&self) -> bool {
        self.start != Micros::MIN && self.end != Micros::MAX
    }

    /// Length in µs (as a double; only for the bounded ones).
    fn length(&self) -> f64 {
        (self.end - self.start) as f64
    }

    /// How much of the way `t` is through the segment (0 to 1; 0 for an unbounded one).
    fn fraction(&self, t: f64) -> f64 {
        if !self.bounded() {
            return 0.0;
        }
        ((t - self.start as f64) / self.length()).clamp(0.0, 1.0)
    }

    /// The rate at `t`, and half its slope per µs.
    fn rate_at(&self, t: f64) -> (f64, f64) {
        if !self.bounded() {
            return (self.rate.0, 0.0);
        }
        let slope = (self.rate.1 - self.rate.0) / self.length();
        (self.rate.0 + slope * (t - self.start as f64), slope / 2.0)
    }
}

/// Where the next arrival of a thread's schedule falls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Arrival {
    /// At this instant.
    At(Micros),
    /// A closed-loop segment starts first, at this instant: the schedule stops there.
    ClosedFrom(Micros),
}

/// The stages of a run placed on the engine's clock.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timeline {
    segments: Vec<Segment>,
}

impl Timeline {
    /// The stages from `origin` (the start of the measured interval), for a thread
    /// among `threads` (the rate of a stage is the whole run's).
    pub(crate) fn new(stages: &[Stage], origin: Micros, threads: u32) -> Timeline {
        let per_us = |tps: f64| tps.max(0.0) / f64::from(threads.max(1)) / 1_000_000.0;
        let mut segments: Vec<Segment> = Vec::with_capacity(stages.len() + 2);
        let mut push = |start: Micros, end: Micros, clients: (u32, u32), rate: (f64, f64)| {
            let rate = (per_us(rate.0), per_us(rate.1));
            let open_since = match segments.last() {
                Some(prev) if !prev.closed() => prev.open_since,
                _ => start,
            };
            segments.push(Segment {
                start,
                end,
                clients: (f64::from(clients.0), f64::from(clients.1)),
                rate,
                open_since,
            });
        };
        if let (Some(first), Some(last)) = (stages.first(), stages.last()) {
            let before = (first.clients.0, first.clients.0);
            push(Micros::MIN, origin, before, (first.rate.0, first.rate.0));
            for st in stages {
                let start = origin + i64::from(st.start_s) * 1_000_000;
                let end = origin + i64::from(st.end_s()) * 1_000_000;
                push(start, end, st.clients, st.rate);
            }
            let end = origin + i64::from(last.end_s()) * 1_000_000;
            push(
                end,
                Micros::MAX,
                (last.clients.1, last.clients.1),
                (last.rate.1, last.rate.1),
            );
        }
        Timeline { segments }
    }

    /// The index of the segment holding `t`.
    fn segment_index(&self, t: Micros) -> usize {
        self.segments
            .partition_point(|s| s.end <= t)
            .min(self.segments.len().saturating_sub(1))
    }

    /// The stage (0-based) an instant falls in: `None` before the first stage; the
    /// last stage after its end (a transaction scheduled at the very end).
    pub(crate) fn stage_at(&self, t: Micros) -> Option<usize> {
        let i = self.segment_index(t);
        let stages = self.segments.len().checked_sub(2)?;
        (i >= 1).then(|| (i - 1).min(stages - 1))
    }

    /// Whether `t` falls in a closed-loop segment.
    pub(crate) fn closed_at(&self, t: Micros) -> bool {
        self.segments[self.segment_index(t)].closed()
    }

    /// Where the open-loop schedule may resume at `t`: the end of the last
    /// closed-loop segment before it (the schedule does not keep a backlog across one).
    pub(crate) fn open_since(&self, t: Micros) -> Micros {
        self.segments[self.segment_index(t)].open_since
    }

    /// The arrival `draw` (an exponential draw of mean 1) after the one at `from`:
    /// the instant where the cumulative intensity has grown by `draw`.
    pub(crate) fn next_arrival(&self, from: Micros, draw: f64) -> Arrival {
        let mut i = self.segment_index(from);
        let mut t = from as f64;
        let mut left = draw;
        loop {
            let seg = &self.segments[i];
            if seg.closed() {
                return Arrival::ClosedFrom(seg.start.max(from));
            }
            let (r, half_slope) = seg.rate_at(t);
            let last = i + 1 == self.segments.len();
            let span = seg.end as f64 - t;
            let mass = if last {
                f64::INFINITY
            } else {
                r * span + half_slope * span * span
            };
            if left <= mass {
                // The root of half_slope*x² + r*x = left, in a form without cancellation.
                let disc = (r * r + 4.0 * half_slope * left).max(0.0);
                let x = 2.0 * left / (r + disc.sqrt());
                let at = (t + x).min(seg.end as f64);
                return Arrival::At(at.round() as Micros);
            }
            left -= mass;
            t = seg.end as f64;
            i += 1;
        }
    }

    /// Whether the client of activation rank `rank` (0 = activated first) is active at `t`.
    pub(crate) fn active(&self, rank: u32, t: Micros) -> bool {
        let seg = &self.segments[self.segment_index(t)];
        active_clients(seg, t as f64) > f64::from(rank)
    }

    /// The first instant from `t` when the client of rank `rank` is active; `None`
    /// when it never is again.
    pub(crate) fn next_active(&self, rank: u32, t: Micros) -> Option<Micros> {
        let need = f64::from(rank) + 1.0;
        let first = self.segment_index(t);
        for seg in &self.segments[first..] {
            let from = t.max(seg.start);
            if active_clients(seg, from as f64) >= need {
                return Some(from);
            }
            if seg.clients.1 > seg.clients.0 && seg.clients.1 >= need {
                // Rising: active from the fraction where the count reaches rank + 1.
                let f = (need - seg.clients.0) / (seg.clients.1 - seg.clients.0);
                let at = seg.start as f64 + f * seg.length();
                return Some((at.ceil() as Micros).max(from));
            }
        }
        None
    }
}

/// Active clients of `seg` at `t`: the linear value, rounded down (a small
/// tolerance keeps whole values whole).
fn active_clients(seg: &Segment, t: f64) -> f64 {
    let f = seg.fraction(t);
    (seg.clients.0 + (seg.clients.1 - seg.clients.0) * f + 1e-9).floor()
}

#[cfg(test)]
mod tests;
