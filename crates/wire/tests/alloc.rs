//! A warm connection doing Bind/Describe/Execute/Sync round trips (and simple
//! queries) allocates nothing: a counting global allocator proves it.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{must_connect, socket_conninfo, tcp_conninfo, wait};
use pgrush_wire::{BackendMessage, Connection, ReadOutcome};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One round trip; returns the sum of the integer results (checked by the caller).
fn round_trip(conn: &mut Connection, prepared: bool, value: &[u8]) -> i64 {
    if prepared {
        conn.queue_bind("", "P_0", [Some(value)]).expect("bind");
        conn.queue_describe_portal("").expect("describe");
        conn.queue_execute("", 0).expect("execute");
        conn.queue_sync();
    } else {
        conn.queue_query("SELECT 41 + 1").expect("query");
    }
    let mut sum = 0i64;
    let mut sent = conn.flush().expect("flush");
    loop {
        while let Some(m) = conn.next_message().expect("decode") {
            match m {
                BackendMessage::DataRow(row) => {
                    let v = row.get(0).unwrap_or(b"0");
                    sum += std::str::from_utf8(v)
                        .ok()
                        .and_then(|s| s.parse::<i64>().ok())
                        .unwrap_or(-1_000_000);
                }
                BackendMessage::ErrorResponse(_) => panic!("server error"),
                BackendMessage::ReadyForQuery(_) => return sum,
                _ => {}
            }
        }
        if !sent {
            sent = conn.flush().expect("flush");
        }
        match conn.read_some().expect("read") {
            ReadOutcome::Data(_) => {}
            ReadOutcome::WouldBlock => wait(conn, libc::POLLIN),
            ReadOutcome::Closed => panic!("closed"),
        }
    }
}

#[test]
fn warm_round_trips_do_not_allocate() {
    let c = pgrush_testkit::shared();
    for ci in [
        socket_conninfo(c, c.superuser(), "postgres"),
        tcp_conninfo(c, c.superuser(), "postgres") + " sslmode=disable",
    ] {
        let mut conn = must_connect(&ci);
        conn.set_nonblocking(true).expect("nonblocking");
        conn.queue_parse("P_0", "SELECT $1::int + 1", 0)
            .expect("parse");
        conn.queue_sync();
        conn.flush().expect("flush");
        conn.drain_until_ready().expect("prepare");
        // Warm up the buffers.
        for _ in 0..20 {
            assert_eq!(round_trip(&mut conn, true, b"41"), 42);
            assert_eq!(round_trip(&mut conn, false, b""), 42);
        }
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.with(|c| c.set(true));
        let mut total = 0;
        for _ in 0..500 {
            total += round_trip(&mut conn, true, b"41");
            total += round_trip(&mut conn, false, b"");
        }
        COUNTING.with(|c| c.set(false));
        assert_eq!(total, 1000 * 42);
        assert_eq!(
            ALLOCATIONS.load(Ordering::Relaxed),
            0,
            "allocations in steady state ({ci})"
        );
        // The counter does see allocations (the test can fail).
        COUNTING.with(|c| c.set(true));
        let r = conn.simple_query("SELECT 1").expect("query");
        COUNTING.with(|c| c.set(false));
        assert_eq!(r[0].get(0, 0), Some("1"));
        assert!(ALLOCATIONS.load(Ordering::Relaxed) > 0);
    }
}
