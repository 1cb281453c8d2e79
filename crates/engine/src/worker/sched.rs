//! Which clients get a turn in a pass of the event loop, at a cost in proportion
//! to the clients that are ready, not to all of the thread's clients.
//!
//! A pass gives a turn to the union of three sets, in client order (as pgbench's
//! loop over all clients, so output order does not change):
//!
//! - the clients whose sockets the poll reported ([`Scheduler::socket_event`]);
//! - the clients that can run at once: just started, or whose last turn ended in
//!   [`Wait::Now`] (they yielded to the others);
//! - the clients whose deadline ([`Wait::Until`]) has passed: a min-heap of
//!   (deadline, client, generation). A turn of a client that had a deadline bumps
//!   its generation, so an entry pushed before its client's last turn is stale and
//!   skipped.
//!
//! When the `-T` end (or Ctrl-C) sets `timer_exceeded`, the worker asks for one
//! sweep of every client, as pgbench's loop would run each waiting client then.
//! Nothing allocates once built: every list is sized for the thread's clients and
//! the heap, when full, drops its stale entries (at most one entry per client is live).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::client::{Client, Turn, Wait};
use crate::clock::{Clock, LazyNow, Micros};
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;

/// A timer: (deadline, client index, generation when pushed).
type Timer = Reverse<(Micros, u32, u32)>;

/// What the scheduler knows of one client.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Bumped when a turn follows a deadline; heap entries of older generations
    /// are stale.
    generation: u32,
    /// Whether the heap may hold a live entry for the client.
    timer: bool,
    /// Socket readiness seen, not yet consumed by a turn.
    readable: bool,
    writable: bool,
}

/// The ready set of a worker's clients (indexes from 0, in the order of the
/// thread's client list).
pub(crate) struct Scheduler {
    /// Clients waiting for a deadline.
    timers: BinaryHeap<Timer>,
    /// Per client.
    slots: Vec<Slot>,
    /// Clients that can run at once in the next pass, in client order.
    run_now: Vec<u32>,
    /// The clients of the current pass (sorted and deduplicated by
    /// [`Scheduler::begin_pass`]): socket events, then the run-at-once list, then
    /// expired timers; at most one of each per client.
    ready: Vec<u32>,
    /// Whether `ready` is in strictly increasing order (no sort needed).
    in_order: bool,
    /// Readiness checks done so far (one per client considered in a pass).
    checks: u64,
}

impl Scheduler {
    /// A scheduler for `n` clients, all of which can run at once (as new clients).
    pub(crate) fn new(n: usize) -> Scheduler {
        Scheduler {
            timers: BinaryHeap::with_capacity(2 * n + 1),
            slots: vec![Slot::default(); n],
            run_now: (0..n as u32).collect(),
            // A client at most once per source (and the poll's two tokens).
            ready: Vec::with_capacity(3 * n + 2),
            in_order: true,
            checks: 0,
        }
    }

    /// The poll reported client `i`'s socket: note its readiness (kept until the
    /// client's next turn) and consider it in the next pass.
    pub(crate) fn socket_event(&mut self, i: usize, readable: bool, writable: bool) {
        let slot = &mut self.slots[i];
        slot.readable |= readable;
        slot.writable |= writable;
        self.enqueue(i as u32);
    }

    /// Whether some client can run at once (the loop must not sleep).
    #[inline]
    pub(crate) fn has_run_now(&self) -> bool {
        !self.run_now.is_empty()
    }

    /// The earliest live deadline (stale heap entries on top are dropped).
    pub(crate) fn next_deadline(&mut self) -> Option<Micros> {
        while let Some(&Reverse((t, i, g))) = self.timers.peek() {
            if self.slots[i as usize].generation == g {
                return Some(t);
            }
            self.timers.pop();
        }
        None
    }

    /// Completes the ready set of this pass: the socket events already noted, the
    /// clients that can run at once and the expired deadlines (every client when
    /// `sweep`), in client order.
    pub(crate) fn begin_pass(&mut self, now: &mut LazyNow, clock: &Clock, sweep: bool) {
        if self.ready.is_empty() {
            // No socket event: the run-at-once list (in client order) is the set.
            std::mem::swap(&mut self.ready, &mut self.run_now);
        } else {
            for k in 0..self.run_now.len() {
                let i = self.run_now[k];
                self.enqueue(i);
            }
            self.run_now.clear();
        }
        if sweep {
            self.ready.clear();
            self.ready.extend(0..self.slots.len() as u32);
            self.in_order = true;
        }
        while let Some(t) = self.next_deadline() {
            if t > now.get(clock) {
                break;
            }
            if let Some(Reverse((_, i, _))) = self.timers.pop()
                && !sweep
            {
                self.enqueue(i);
            }
        }
        if !self.in_order {
            self.ready.sort_unstable();
            self.ready.dedup();
        }
    }

    /// Gives each client of the ready set that is due its turn, in client order,
    /// and schedules what it waits for next. `finished` is told of each client
    /// that is done; when it returns false the pass stops and so does this.
    pub(crate) fn run_ready<C: ClientConn, N: Network<Conn = C>>(
        &mut self,
        clients: &mut [Client<C>],
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
        mut finished: impl FnMut(&Client<C>) -> bool,
    ) -> bool {
        let clock = ctx.clock;
        for k in 0..self.ready.len() {
            let i = self.ready[k] as usize;
            let client = &mut clients[i];
            self.checks += 1;
            let slot = &mut self.slots[i];
            let (readable, writable) = (slot.readable, slot.writable);
            if !client.is_due(now, &clock, ctx.timer_exceeded, readable, writable) {
                continue;
            }
            slot.readable = false;
            slot.writable = false;
            let turn = client.take_turn(ctx, readable);
            self.schedule(i, client.wait());
            if turn == Turn::Ran(Wait::Done) && !finished(client) {
                return false;
            }
        }
        true
    }

    /// Ends the pass: the ready set is emptied for the next one.
    pub(crate) fn end_pass(&mut self) {
        self.ready.clear();
        self.in_order = true;
    }

    /// The clients of the current pass, in order.
    #[cfg(test)]
    pub(crate) fn ready(&self) -> &[u32] {
        &self.ready
    }

    /// Readiness checks done so far (for the scaling tests).
    #[cfg(test)]
    pub(crate) fn checks(&self) -> u64 {
        self.checks
    }

    /// Client `i` just had a turn and now waits for `wait`: its older timers go
    /// stale; a deadline goes on the heap, `Now` on the run-at-once list.
    pub(crate) fn schedule(&mut self, i: usize, wait: Wait) {
        let slot = &mut self.slots[i];
        if slot.timer {
            slot.generation = slot.generation.wrapping_add(1);
            slot.timer = false;
        }
        match wait {
            Wait::Now => self.run_now.push(i as u32),
            Wait::Until(t) => {
                slot.timer = true;
                let generation = slot.generation;
                self.push_timer(t, i as u32, generation);
            }
            Wait::Socket | Wait::Done => {}
        }
    }

    /// Pushes a timer; a full heap first drops its stale entries (at most one per
    /// client is live, and the heap holds twice as many), so it never grows.
    fn push_timer(&mut self, t: Micros, i: u32, generation: u32) {
        if self.timers.len() == self.timers.capacity() {
            let slots = &self.slots;
            self.timers
                .retain(|&Reverse((_, j, g))| slots[j as usize].generation == g);
        }
        self.timers.push(Reverse((t, i, generation)));
    }

    /// Puts client `i` in the ready set (duplicates go at the sort).
    #[inline]
    fn enqueue(&mut self, i: u32) {
        if let Some(&last) = self.ready.last() {
            self.in_order &= last < i;
        }
        self.ready.push(i);
    }
}

#[cfg(test)]
mod tests;
