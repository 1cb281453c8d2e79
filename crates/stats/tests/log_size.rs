//! Long runs: `-l` lines, `--aggregate-interval` lines and the per-interval time
//! series grow linearly with the run. Ten times the run must take less than
//! [`MAX_RATIO`] times as long (the small case is the shortest of a few
//! repetitions, so that noise does not tighten the bound; a quadratic step takes
//! ~100 times longer).

use std::time::{Duration, Instant};

use pgrush_stats::{
    AggregateInterval, LogFormat, RunConfig, RunLimit, RunSummary, ScriptInfo, StatsLayout,
    ThreadStats, TxLogRecord, TxOutcome, TxRecord,
};

const MAX_RATIO: u32 = 30;

/// Run start, µs since the epoch (a whole second).
const T0: u64 = 1_795_343_141_000_000;

fn rec(i: u64) -> TxRecord {
    TxRecord {
        script: 0,
        outcome: if i.is_multiple_of(13) {
            TxOutcome::SerializationFailure
        } else {
            TxOutcome::Success
        },
        latency_us: 100.0 + (i * 7919 % 50_000) as f64,
        lag_us: (i % 7) as f64,
        tries: 1 + u32::from(i.is_multiple_of(13)),
    }
}

/// Asserts that `work(10 * n)` stays within [`MAX_RATIO`] of the fastest of three
/// `work(n)`.
fn assert_linear(what: &str, n: u64, work: &dyn Fn(u64) -> Duration) {
    let small = (0..3).map(|_| work(n)).min().expect("repetitions");
    let mut big = work(10 * n);
    // More tries only while it looks too slow (a busy moment); a quadratic step is
    // too slow every time.
    for _ in 1..3 {
        if big < small * MAX_RATIO {
            break;
        }
        big = work(10 * n);
    }
    assert!(
        big < small * MAX_RATIO,
        "{what}: 10x took {big:?}, 1x {small:?}: more than {MAX_RATIO}x (not linear)"
    );
}

/// `n` transactions, ten per second, through the `--aggregate-interval=1` writer:
/// one line per second.
fn aggregate(n: u64) -> Duration {
    let format = LogFormat {
        throttled: true,
        max_tries: 2,
        failures_detailed: true,
        ..LogFormat::default()
    };
    let start = Instant::now();
    let mut agg = AggregateInterval::new(T0, 1, format);
    let mut out = String::new();
    for i in 0..n {
        agg.record(T0 + i * 100_000 + 50, &rec(i), &mut out);
    }
    agg.finish(T0 + n * 100_000, &mut out);
    let elapsed = start.elapsed();
    assert_eq!(out.lines().count() as u64, n / 10);
    elapsed
}

/// `n` transactions through the `-l` line writer, as the engine writes them (one
/// reused line buffer, appended to the file's contents).
fn tx_log(n: u64) -> Duration {
    let format = LogFormat {
        throttled: true,
        ..LogFormat::default()
    };
    let start = Instant::now();
    let mut file = Vec::new();
    let mut line = String::new();
    for i in 0..n {
        let r = rec(i);
        line.clear();
        TxLogRecord {
            client_id: (i % 8) as u32,
            tx_no: i / 8 + 1,
            outcome: r.outcome,
            latency_us: r.latency_us,
            script: 0,
            end_epoch_us: T0 + i * 1000,
            lag_us: r.lag_us,
            tries: r.tries,
        }
        .write_line(&format, &mut line);
        file.extend_from_slice(line.as_bytes());
    }
    let elapsed = start.elapsed();
    assert_eq!(file.iter().filter(|&&c| c == b'\n').count() as u64, n);
    elapsed
}

/// Two threads record `intervals` seconds of transactions (four per second, every
/// 17th second empty) into their time series; the series are merged.
fn series(intervals: u64) -> Duration {
    let config = RunConfig {
        scale: 1,
        partitioning: None,
        query_mode: pgrush_stats::QueryMode::Simple,
        clients: 2,
        threads: 2,
        max_tries: 1,
        limit: RunLimit::Duration(intervals as u32),
        rate: Some(100.0),
        latency_limit_us: None,
        progress_s: Some(1),
        connect_per_tx: false,
        failures_detailed: false,
        per_command: false,
        continue_on_error: false,
        warmup_s: None,
        reconnect: false,
    };
    let scripts = vec![ScriptInfo {
        desc: b"long.sql".to_vec(),
        weight: 1,
        commands: vec![b"select 1;".to_vec()],
    }];
    let mut sum = RunSummary::empty(config, scripts);
    let layout: StatsLayout = sum.layout();
    let start = Instant::now();
    for thread in 0..2 {
        let mut st = ThreadStats::new(&layout).with_series(0, 1_000_000);
        for second in (0..intervals).filter(|s| s % 17 != 5) {
            for k in 0..4 {
                let i = second * 4 + k + thread;
                st.record_tx_at(&rec(i), (second * 1_000_000 + k * 200_000) as i64);
            }
        }
        sum.absorb(&st);
    }
    let n = sum.stats.series.as_ref().map_or(0, |s| s.intervals().len());
    let elapsed = start.elapsed();
    assert_eq!(n as u64, intervals - u64::from(intervals % 17 == 6));
    elapsed
}

#[test]
fn aggregate_log_lines_take_linear_time() {
    assert_linear("--aggregate-interval lines", 36_000, &aggregate);
}

#[test]
fn transaction_log_lines_take_linear_time() {
    assert_linear("-l lines", 36_000, &tx_log);
}

#[test]
fn time_series_take_linear_time() {
    assert_linear("time series", 3_600, &series);
}
