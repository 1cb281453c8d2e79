//! The JSON document and the HTML page of a long run with `-P 1` (thousands of
//! progress intervals) are built in time linear in the number of intervals: ten
//! times the intervals must take less than [`MAX_RATIO`] times as long (the small
//! case is the shortest of a few repetitions, so that noise on a busy machine does
//! not tighten the bound; a quadratic step takes ~100 times longer).

mod common;

use std::time::{Duration, Instant};

use common::{Shape, config, context};
use pgrush_report::document::RunDocument;
use pgrush_report::percentiles::PercentileList;
use pgrush_stats::{RunLimit, RunSummary, ScriptInfo, ThreadStats, TxOutcome, TxRecord};

const MAX_RATIO: u32 = 30;

/// A `-T intervals -P 1` run on two threads: a few transactions per second with
/// latencies that vary from second to second, an empty second now and then.
fn summary(intervals: u64) -> RunSummary {
    let mut cfg = config(&Shape::default());
    cfg.limit = RunLimit::Duration(intervals as u32);
    cfg.progress_s = Some(1);
    let scripts = vec![ScriptInfo {
        desc: b"long.sql".to_vec(),
        weight: 1,
        commands: vec![b"select 1;".to_vec()],
    }];
    let mut sum = RunSummary::empty(cfg, scripts);
    let layout = sum.layout();
    for thread in 0..2u64 {
        let mut st = ThreadStats::new(&layout).with_series(0, 1_000_000);
        for second in (0..intervals).filter(|s| s % 17 != 5) {
            for k in 0..4u64 {
                let latency = 100.0 + ((second * 7919 + k * 104_729 + thread) % 50_000) as f64;
                let rec = TxRecord {
                    script: 0,
                    outcome: TxOutcome::Success,
                    latency_us: latency,
                    lag_us: 0.0,
                    tries: 1,
                };
                let end = (second * 1_000_000 + k * 200_000 + 1000) as i64;
                st.record_tx_at(&rec, end);
                st.record_command(0, 0, latency);
            }
        }
        st.add_conn_time_us(1000);
        sum.absorb(&st);
    }
    sum.bench_duration_us = intervals * 1_000_000;
    sum.initial_connection_us = 1_000;
    sum
}

/// Time to build the document of `sum`, write it as JSON, read it back and render
/// its HTML page; checks that the outputs hold every interval.
fn render(sum: &RunSummary, intervals: usize) -> Duration {
    let ctx = context(PercentileList::default());
    let start = Instant::now();
    let doc = RunDocument::build(sum, &ctx);
    let json = doc.to_json();
    let back = RunDocument::from_json(&json).unwrap_or_else(|e| panic!("{e}"));
    let html = pgrush_report::html::render(&back);
    let elapsed = start.elapsed();
    let series = back.time_series.as_ref().expect("a time series");
    assert_eq!(series.intervals.len(), intervals);
    assert!(html.contains("Throughput over time"));
    elapsed
}

#[test]
fn documents_of_long_runs_render_in_linear_time() {
    let (small_n, big_n) = (360, 3_600);
    let small = summary(small_n);
    let big = summary(big_n);
    let small_time = (0..3)
        .map(|_| render(&small, small_n as usize))
        .min()
        .expect("repetitions");
    let mut big_time = render(&big, big_n as usize);
    // More tries only while it looks too slow (a busy moment); a quadratic step is
    // too slow every time.
    for _ in 1..3 {
        if big_time < small_time * MAX_RATIO {
            break;
        }
        big_time = render(&big, big_n as usize);
    }
    assert!(
        big_time < small_time * MAX_RATIO,
        "{big_n} intervals took {big_time:?}, {small_n} took {small_time:?}: \
         more than {MAX_RATIO}x (rendering is not linear)"
    );
}
