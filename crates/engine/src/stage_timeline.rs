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
    /// Start (engine clock, µs; `Micros::MIN` for the first).
    start: Micros,
    /// End (exclusive; `Micros::MAX` for the last).
    end: Micros,
    /// Active clients at the start and the end.
    clients: (f64, f64),
    /// Arrivals per µs of this thread at the start and the end (its share of the rate).
    rate: (f64, f64),
    /// A stage without rate: a closed loop (the schedule stops at it).
    closed: bool,
    /// Start of the run of open-loop segments this one belongs to.
    open_since: Micros,
    /// The stage (0-based) it belongs to; `None` before the first.
    stage: Option<usize>,
}

impl Segment {
    /// Whether the segment has no rate (a closed loop).
    fn closed(&self) -> bool {
        self.closed
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

/// A stretch of a stage (or before or after them) with its values at both ends, as a
/// fraction of the way through the stage.
struct Piece {
    start: Micros,
    end: Micros,
    clients: (f64, f64),
    rate_tps: (f64, f64),
    closed: bool,
    stage: Option<usize>,
}

/// This thread's share of the run's rate when `active` clients are active: clients are
/// activated round-robin over the threads, so with fewer active clients than threads
/// only the first `active` threads have one (and each takes `1/active`), else every
/// thread takes `1/threads`.
fn thread_share(active: f64, threads: u32, tid: usize) -> f64 {
    let serving = active.min(f64::from(threads.max(1)));
    if serving >= 1.0 && (tid as f64) < serving {
        1.0 / serving
    } else {
        0.0
    }
}

/// The pieces of stage `index` running from `start` to `end`: cut where its active
/// clients cross a whole number up to `threads` (there a thread's share of the rate
/// changes).
fn stage_pieces(st: &Stage, index: usize, start: Micros, end: Micros, threads: u32) -> Vec<Piece> {
    let (c0, c1) = (f64::from(st.clients.0), f64::from(st.clients.1));
    let len = (end - start) as f64;
    let mut cuts: Vec<f64> = vec![0.0];
    if c0 != c1 {
        for k in 1..=threads {
            let f = (f64::from(k) - c0) / (c1 - c0);
            if f > 0.0 && f < 1.0 {
                cuts.push(f);
            }
        }
    }
    cuts.push(1.0);
    cuts.sort_by(f64::total_cmp);
    let at = |f: f64, pair: (f64, f64)| pair.0 + (pair.1 - pair.0) * f;
    cuts.windows(2)
        .map(|w| Piece {
            start: start + (w[0] * len).round() as Micros,
            end: start + (w[1] * len).round() as Micros,
            clients: (at(w[0], (c0, c1)), at(w[1], (c0, c1))),
            rate_tps: (at(w[0], st.rate), at(w[1], st.rate)),
            closed: st.closed_loop(),
            stage: Some(index),
        })
        .filter(|p| p.end > p.start)
        .collect()
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
    /// The stages from `origin` (the start of the measured interval), for thread `tid`
    /// among `threads` (the rate of a stage is the whole run's; the thread's share
    /// follows its active clients, see [`thread_share`]).
    pub(crate) fn new(stages: &[Stage], origin: Micros, threads: u32, tid: usize) -> Timeline {
        let (Some(first), Some(last)) = (stages.first(), stages.last()) else {
            return Timeline {
                segments: Vec::new(),
            };
        };
        let at = |s: u32| origin + i64::from(s) * 1_000_000;
        let constant = |start, end, c: u32, r: f64, closed, stage| Piece {
            start,
            end,
            clients: (f64::from(c), f64::from(c)),
            rate_tps: (r, r),
            closed,
            stage,
        };
        let mut pieces = vec![constant(
            Micros::MIN,
            origin,
            first.clients.0,
            first.rate.0,
            first.rate.0 <= 0.0,
            None,
        )];
        for (i, st) in stages.iter().enumerate() {
            pieces.extend(stage_pieces(st, i, at(st.start_s), at(st.end_s()), threads));
        }
        pieces.push(constant(
            at(last.end_s()),
            Micros::MAX,
            last.clients.1,
            last.rate.1,
            last.rate.1 <= 0.0,
            Some(stages.len() - 1),
        ));
        let mut segments: Vec<Segment> = Vec::with_capacity(pieces.len());
        for p in pieces {
            let mid = ((p.clients.0 + p.clients.1) / 2.0 + 1e-9).floor();
            let per_us = thread_share(mid, threads, tid) / 1_000_000.0;
            let open_since = match segments.last() {
                Some(prev) if !prev.closed => prev.open_since,
                _ => p.start,
            };
            segments.push(Segment {
                start: p.start,
                end: p.end,
                clients: p.clients,
                rate: (
                    p.rate_tps.0.max(0.0) * per_us,
                    p.rate_tps.1.max(0.0) * per_us,
                ),
                closed: p.closed,
                open_since,
                stage: p.stage,
            });
        }
        Timeline { segments }
    }

    /// The index of the segment holding `t`.
    fn segment_index(&self, t: Micros) -> usize {
        self.segments
            .partition_point(|s| s.end <= t)
            .min(self.segments.len().saturating_sub(1))
    }

    /// The segment `t` falls in: its start, its end (exclusive) and its stage (as
    /// [`Timeline::stage_at`]), for a caller that keeps it while instants stay in it.
    pub(crate) fn segment_span(&self, t: Micros) -> (Micros, Micros, Option<usize>) {
        self.segments
            .get(self.segment_index(t))
            .map_or((Micros::MIN, Micros::MAX, None), |s| {
                (s.start, s.end, s.stage)
            })
    }

    /// The stage (0-based) an instant falls in: `None` before the first stage; the
    /// last stage after its end (a transaction scheduled at the very end).
    pub(crate) fn stage_at(&self, t: Micros) -> Option<usize> {
        self.segments.get(self.segment_index(t))?.stage
    }

    /// The thread's share of the rate target at `t` (transactions per second; 0 in a
    /// closed-loop segment).
    pub(crate) fn rate_tps_at(&self, t: Micros) -> f64 {
        match self.segments.get(self.segment_index(t)) {
            Some(seg) if !seg.closed() => seg.rate_at(t as f64).0 * 1e6,
            _ => 0.0,
        }
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
            if left <= 0.0 {
                return Arrival::At(t.round() as Micros);
            }
            let (r, half_slope) = seg.rate_at(t);
            let last = i + 1 == self.segments.len();
            if last && r <= 0.0 {
                // No share of the rate after the stages: no arrival before the end.
                return Arrival::At(Micros::MAX);
            }
            let span = seg.end as f64 - t;
            let mass = if last {
                f64::INFINITY
            } else {
                (r * span + half_slope * span * span).max(0.0)
            };
            if left <= mass && mass > 0.0 {
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

    /// For the client of rank `rank`, active at `t`: the instant from which it may
    /// not be, to be asked again then. The end of `t`'s segment, or in a falling ramp
    /// the instant (rounded down) where the count drops to `rank`.
    pub(crate) fn active_until(&self, rank: u32, t: Micros) -> Micros {
        let seg = &self.segments[self.segment_index(t)];
        if seg.clients.1 >= seg.clients.0 || !seg.bounded() {
            return seg.end;
        }
        // Active while c0 + (c1 - c0) f + 1e-9 >= rank + 1 (see `active_clients`).
        let need = f64::from(rank) + 1.0 - 1e-9;
        let f = (need - seg.clients.0) / (seg.clients.1 - seg.clients.0);
        let at = seg.start as f64 + f * seg.length();
        (at.floor() as Micros).clamp(t, seg.end)
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
