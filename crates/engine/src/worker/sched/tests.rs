//! The scheduler alone: ready-set order, timers, stale heap entries, the sweep.

use super::Scheduler;
use crate::client::Wait;
use crate::clock::{Clock, LazyNow, Micros};

/// Far enough in the future never to expire during a test (µs).
const LATER: Micros = 3_600_000_000;

/// Runs one pass with a fresh "now" and returns its ready set.
fn pass(s: &mut Scheduler, clock: &Clock, sweep: bool) -> Vec<u32> {
    s.end_pass();
    let mut now = LazyNow::new();
    s.begin_pass(&mut now, clock, sweep);
    s.ready().to_vec()
}

#[test]
fn new_clients_run_at_once_in_order() {
    let clock = Clock::new();
    let mut s = Scheduler::new(4);
    assert!(s.has_run_now());
    assert_eq!(pass(&mut s, &clock, false), [0, 1, 2, 3]);
    assert!(!s.has_run_now());
    assert_eq!(pass(&mut s, &clock, false), Vec::<u32>::new());
}

#[test]
fn the_ready_set_is_sorted_and_has_no_duplicates() {
    let clock = Clock::new();
    let mut s = Scheduler::new(10);
    pass(&mut s, &clock, false);
    let past = clock.now() - 10;
    s.schedule(7, Wait::Now);
    s.schedule(3, Wait::Until(past));
    s.schedule(5, Wait::Until(past + LATER));
    s.schedule(9, Wait::Socket);
    s.schedule(1, Wait::Now);
    s.end_pass();
    for i in [9, 7, 3, 9, 2] {
        s.socket_event(i, true, false);
    }
    let mut now = LazyNow::new();
    s.begin_pass(&mut now, &clock, false);
    // 5's deadline has not come; 7 came both ways, 3 and 9 twice.
    assert_eq!(s.ready(), [1, 2, 3, 7, 9]);
    assert_eq!(s.next_deadline(), Some(past + LATER));
}

#[test]
fn timers_expire_in_their_pass_only() {
    let clock = Clock::new();
    let mut s = Scheduler::new(3);
    pass(&mut s, &clock, false);
    let soon = clock.now() + 2_000;
    s.schedule(2, Wait::Until(soon));
    s.schedule(0, Wait::Until(soon + LATER));
    assert!(!s.has_run_now());
    assert_eq!(s.next_deadline(), Some(soon));
    assert_eq!(pass(&mut s, &clock, false), Vec::<u32>::new());
    while clock.now() < soon {
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    assert_eq!(pass(&mut s, &clock, false), [2]);
    // Popped: the next deadline is the other client's.
    assert_eq!(s.next_deadline(), Some(soon + LATER));
}

#[test]
fn stale_timers_are_skipped() {
    let clock = Clock::new();
    let mut s = Scheduler::new(2);
    pass(&mut s, &clock, false);
    let past = clock.now() - 10;
    // Client 0 waited for an expired deadline, then had a turn (the sweep) and
    // now waits for its socket: the entry is stale.
    s.schedule(0, Wait::Until(past));
    s.schedule(0, Wait::Socket);
    // Client 1's first deadline was replaced by a later one.
    s.schedule(1, Wait::Until(past));
    s.schedule(1, Wait::Until(past + LATER));
    assert_eq!(s.next_deadline(), Some(past + LATER));
    assert_eq!(pass(&mut s, &clock, false), Vec::<u32>::new());
}

#[test]
fn a_full_heap_drops_its_stale_entries_instead_of_growing() {
    let clock = Clock::new();
    let n = 8;
    let mut s = Scheduler::new(n);
    pass(&mut s, &clock, false);
    let capacity = s.timers.capacity();
    let t0 = clock.now() + LATER;
    for round in 0..100 {
        for i in 0..n {
            s.schedule(i, Wait::Until(t0 + round * 10 + i as Micros));
        }
    }
    assert_eq!(s.timers.capacity(), capacity);
    // Only the last round is live.
    assert_eq!(s.next_deadline(), Some(t0 + 990));
    assert!(s.timers.len() <= capacity);
}

#[test]
fn a_sweep_takes_every_client_once() {
    let clock = Clock::new();
    let mut s = Scheduler::new(5);
    pass(&mut s, &clock, false);
    s.schedule(4, Wait::Now);
    s.schedule(1, Wait::Until(clock.now() + LATER));
    s.end_pass();
    s.socket_event(4, true, false);
    let mut now = LazyNow::new();
    s.begin_pass(&mut now, &clock, true);
    assert_eq!(s.ready(), [0, 1, 2, 3, 4]);
    assert!(!s.has_run_now());
}
