//! Recording into the per-thread collectors must not allocate once each histogram has its
//! first value (counting global allocator).

use pgrush_stats::{
    AggregateInterval, LogFormat, ProgressCounters, StatsLayout, ThreadStats, TxLogRecord,
    TxOutcome, TxRecord,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCS.with(Cell::get)
}

#[test]
fn hot_path_records_without_allocating() {
    let layout = StatsLayout {
        commands_per_script: vec![3, 5],
        latency_limit_us: Some(500.0),
        throttled: true,
        per_command: true,
        command_histograms: true,
        time_series: true,
    };
    let progress = Arc::new(ProgressCounters::new());
    let mut stats = ThreadStats::new(&layout).with_progress(Arc::clone(&progress));
    let fmt = LogFormat {
        throttled: true,
        latency_limit: true,
        max_tries: 3,
        failures_detailed: true,
        reconnect: false,
    };
    let start = 1_795_343_141_700_000u64;
    let mut agg = AggregateInterval::new(start, 1, fmt);
    let mut line = String::with_capacity(4096);
    let outcomes = [
        TxOutcome::Success,
        TxOutcome::Skipped,
        TxOutcome::SerializationFailure,
        TxOutcome::DeadlockFailure,
        TxOutcome::Success,
    ];

    // The counter works: a heap allocation is seen.
    let probe_before = allocations();
    let probe = vec![1u8; 64];
    assert!(allocations() > probe_before);
    drop(probe);

    // Histograms allocate their counts on their first value (an unused one costs no
    // memory): the first iterations record into every histogram, then nothing allocates.
    let mut before = allocations();
    for i in 0..20_000u64 {
        if i == 10 {
            before = allocations();
        }
        let outcome = outcomes[(i % 5) as usize];
        let rec = TxRecord {
            script: (i % 2) as usize,
            outcome,
            latency_us: (i % 5000) as f64 * 1.7,
            lag_us: (i % 300) as f64,
            tries: 1 + (i % 3) as u32,
        };
        stats.record_tx(&rec);
        stats.record_command(rec.script, (i % 3) as usize, 12.5);
        if outcome.is_failure() {
            stats.record_command_failure(rec.script, 1);
            stats.record_command_retry(rec.script, 1);
        }
        stats.add_conn_time_us(1);
        line.clear();
        TxLogRecord {
            client_id: 3,
            tx_no: i + 1,
            outcome,
            latency_us: rec.latency_us,
            script: rec.script,
            end_epoch_us: start + i * 700,
            lag_us: rec.lag_us,
            tries: rec.tries,
        }
        .write_line(&fmt, &mut line);
        agg.record(start + i * 700, &rec, &mut line);
        let _ = progress.snapshot();
    }
    let after = allocations();
    assert_eq!(
        after - before,
        0,
        "recording allocated {} times",
        after - before
    );
    assert_eq!(stats.total.counters.total(), 20_000);
    assert_eq!(progress.snapshot().skipped, 4000);
}

#[test]
fn interval_figures_record_without_allocating_once_warm() {
    let layout = StatsLayout {
        commands_per_script: vec![3, 5],
        latency_limit_us: None,
        throttled: false,
        per_command: true,
        command_histograms: true,
        time_series: true,
    };
    // One long interval: what is measured is recording, not closing intervals.
    let mut stats = ThreadStats::new(&layout).with_series(0, 1_000_000_000);
    let rec = |script: usize, latency_us: f64, outcome| TxRecord {
        script,
        outcome,
        latency_us,
        lag_us: 0.0,
        tries: 1,
    };
    // Warm up: every script and command sees the smallest and the largest latency, so
    // their count windows have grown to their full size.
    for (script, commands) in [(0usize, 3usize), (1, 5)] {
        for latency in [0.0, 1e12] {
            stats.record_tx_at(&rec(script, latency, TxOutcome::Success), 10);
            for command in 0..commands {
                stats.record_command_at(script, command, latency, 10);
            }
        }
    }
    let before = allocations();
    for i in 0..20_000u64 {
        let script = (i % 2) as usize;
        let failed = i % 7 == 0;
        let outcome = if failed {
            TxOutcome::SerializationFailure
        } else {
            TxOutcome::Success
        };
        let now = 100 + i as i64;
        stats.record_command_at(script, (i % 3) as usize, (i % 5000) as f64 * 1.3, now);
        if failed {
            stats.record_command_failure_at(script, 1, now);
        }
        stats.record_tx_at(&rec(script, (i % 9000) as f64 * 2.1, outcome), now);
    }
    let after = allocations();
    assert_eq!(
        after - before,
        0,
        "recording allocated {} times",
        after - before
    );
    let intervals = stats.series.as_ref().map(|s| s.intervals().into_owned());
    let iv = intervals.unwrap_or_default();
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0].scripts.len(), 2);
    assert_eq!(iv[0].commands.len(), 8);
    let counted: u64 = iv[0].scripts.iter().map(|s| s.counters.total()).sum();
    assert_eq!(counted, 20_000 + 4);
}
