//! `-r` with a large script: the heap held by per-command statistics grows linearly
//! with the number of commands and stays small per command — a few dozen bytes for
//! plain `-r` (sums only), about 1.3 KiB for a command with a histogram holding one
//! value (not a 184 KiB HDR counts array). Measured with a global allocator that counts
//! live heap bytes.
//!
//! Per-command figures in the time series (`-r` with `--json`/`--html`) for a script of
//! 20,000 commands over 3,600 intervals: the heap grows with the commands that actually
//! ran in each interval, never with intervals × commands (which would be gigabytes).

use pgrush_stats::{StatsLayout, ThreadStats, TxOutcome, TxRecord};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

fn bytes(layout: Layout) -> isize {
    isize::try_from(layout.size()).unwrap_or(isize::MAX)
}

// SAFETY: delegates to the system allocator, only counting live bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(bytes(layout), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(bytes(layout), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(bytes(layout), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let grown = isize::try_from(new_size).unwrap_or(isize::MAX) - bytes(layout);
        LIVE.fetch_add(grown, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Heap bytes held, per command, by the command statistics of a one-transaction run of a
/// script of `n` commands: one thread's collector plus the merged copy the report reads
/// (as the engine builds it). No transaction is recorded: the transaction histograms
/// (184 KiB each, whatever the script) would hide the per-command part.
fn held_per_command(n: usize, command_histograms: bool) -> f64 {
    let layout = StatsLayout {
        commands_per_script: vec![n],
        latency_limit_us: None,
        throttled: false,
        per_command: true,
        command_histograms,
        time_series: false,
    };
    let before = live();
    let mut thread = ThreadStats::new(&layout);
    for i in 0..n {
        thread.record_command(0, i, 80.0 + (i % 700) as f64);
    }
    let mut merged = ThreadStats::new(&layout);
    merged.merge(&thread);
    let held = live() - before;
    assert_eq!(merged.scripts[0].commands.len(), n);
    assert_eq!(merged.scripts[0].commands[n - 1].latency.count, 1);
    assert_eq!(
        merged.scripts[0].commands[n - 1].latency_hist.len(),
        u64::from(command_histograms)
    );
    drop((thread, merged));
    held as f64 / n as f64
}

/// Per-command bytes for 2,000 and 20,000 commands: within 10 % of each other (linear
/// growth) and under `bound`.
fn assert_linear_under(command_histograms: bool, bound: f64) {
    let small = held_per_command(2_000, command_histograms);
    let big = held_per_command(20_000, command_histograms);
    assert!(
        (big - small).abs() <= small * 0.1,
        "not linear: {small:.0} B per command for 2,000 commands, {big:.0} for 20,000"
    );
    assert!(
        big < bound,
        "{big:.0} B per command (two copies), bound {bound}"
    );
}

#[test]
fn plain_r_keeps_sums_only() {
    // Two copies of 64-byte CommandStats.
    assert_linear_under(false, 256.0);
}

#[test]
fn command_histograms_grow_with_use() {
    // Two copies of a one-chunk histogram (~1.3 KiB each) instead of 2 × 184 KiB.
    assert_linear_under(true, 3.0 * 1024.0);
}

const COMMANDS: usize = 20_000;
const INTERVALS: usize = 3_600;
const SECOND_US: i64 = 1_000_000;

/// Heap held by one thread's statistics: `(right after creation, added by recording)`,
/// for a run of [`INTERVALS`] one-second intervals in each of which `per_interval`
/// commands of a [`COMMANDS`]-command script ran (a different set each interval).
fn held(per_interval: usize) -> (isize, isize) {
    let layout = StatsLayout {
        commands_per_script: vec![COMMANDS],
        latency_limit_us: None,
        throttled: false,
        per_command: true,
        command_histograms: false,
        time_series: true,
    };
    let before = live();
    let mut t = ThreadStats::new(&layout).with_series(0, SECOND_US as u64);
    let created = live() - before;
    for i in 0..INTERVALS {
        let start = i as i64 * SECOND_US;
        for k in 0..per_interval {
            let command = (i * 7_919 + k * 4_729) % COMMANDS;
            t.record_command_at(0, command, 50_000.0, start + k as i64 * 1_000);
        }
        let rec = TxRecord {
            script: 0,
            outcome: TxOutcome::Success,
            latency_us: 60_000.0,
            lag_us: 0.0,
            tries: 1,
        };
        t.record_tx_at(&rec, start + 900_000);
    }
    let recorded = live() - before - created;
    let series = t.series.as_ref().map(|s| s.intervals().into_owned());
    let intervals = series.unwrap_or_default();
    assert_eq!(intervals.len(), INTERVALS);
    for iv in &intervals {
        assert_eq!(iv.commands.len(), per_interval);
        assert!(iv.commands.iter().all(|c| c.latency.count == 1));
        assert!(
            iv.commands
                .iter()
                .all(|c| c.latency_hist.buckets.len() == 1)
        );
    }
    drop(intervals);
    drop(t);
    (created, recorded)
}

#[test]
fn interval_commands_cost_what_ran_not_intervals_times_commands() {
    let (created, two) = held(2);
    let (_, eight) = held(8);
    // Creation: per command (statements, not intervals), the run's figures (64 B) and
    // the interval slot: under 160 B together.
    assert!(
        created < (COMMANDS * 160) as isize,
        "{created} B for {COMMANDS} command slots"
    );
    // Recording: proportional to the commands that ran (8 per interval cost about four
    // times 2 per interval, once the per-interval figures common to both are removed) and
    // small per command run: an entry, its one-bucket histogram, the slot's first window.
    let per_command_run = (eight - two) as f64 / (INTERVALS * 6) as f64;
    eprintln!(
        "created {created} B; recorded {two} B (2 commands per interval), {eight} B (8); {per_command_run:.0} B per command run"
    );
    assert!(
        per_command_run < 512.0,
        "{per_command_run:.0} B per command run in an interval"
    );
    let eager = (INTERVALS * COMMANDS) as f64 * 16.0;
    assert!(
        (eight as f64) < eager / 100.0,
        "{eight} B recorded: not far from building every interval × command"
    );
    let per_interval_two = two as f64 / INTERVALS as f64;
    let per_interval_eight = eight as f64 / INTERVALS as f64;
    assert!(
        per_interval_eight > per_interval_two * 1.5 && per_interval_eight < per_interval_two * 6.0,
        "not proportional: {per_interval_two:.0} B per interval with 2 commands, {per_interval_eight:.0} with 8"
    );
}
