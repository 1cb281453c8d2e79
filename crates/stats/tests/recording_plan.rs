//! The recording plan (first-try successes of a plain run straight into the totals,
//! latencies counted per bucket and added to the histograms in bulk) must give the
//! statistics pgbench's rules give, recorded one by one as before, to the last bit:
//! random runs of successes, failures, skipped transactions and retries, over one or
//! several scripts, with and without `-R` lag, `-L` late counts, `-P` and a time series,
//! on two threads merged as the engine merges them.

use std::sync::Arc;

use pgrush_stats::{
    LatencyHistogram, ProgressCounters, SimpleStats, StatsLayout, ThreadStats, TxCounters,
    TxOutcome, TxRecord, TxStats,
};
use proptest::prelude::*;

/// `SimpleStats::record` as it was written before the plan (the reference for the bits).
fn record_simple(s: &mut SimpleStats, v: f64) {
    if s.count == 0 || v < s.min {
        s.min = v;
    }
    if s.count == 0 || v > s.max {
        s.max = v;
    }
    s.count += 1;
    s.sum += v;
    s.sum2 += v * v;
}

/// One transaction statistics block kept the straightforward way: every value recorded
/// into the histograms at once.
#[derive(Default)]
struct Model {
    counters: TxCounters,
    latency: SimpleStats,
    lag: SimpleStats,
    late: u64,
    latency_hist: LatencyHistogram,
    lag_hist: LatencyHistogram,
}

impl Model {
    fn record(&mut self, rec: &TxRecord, layout: &StatsLayout) {
        self.counters.count(rec.outcome, rec.tries);
        if rec.outcome != TxOutcome::Success {
            return;
        }
        record_simple(&mut self.latency, rec.latency_us);
        self.latency_hist.record_us(rec.latency_us);
        if layout.throttled {
            record_simple(&mut self.lag, rec.lag_us);
            self.lag_hist.record_us(rec.lag_us);
        }
        if layout.latency_limit_us.is_some_and(|l| rec.latency_us > l) {
            self.late += 1;
        }
    }

    /// Adds `other` as `TxStats::merge` does (same order of the floating-point sums).
    fn merge(&mut self, other: &Model) {
        self.counters += &other.counters;
        self.latency += &other.latency;
        self.lag += &other.lag;
        self.late += other.late;
        self.latency_hist += &other.latency_hist;
        self.lag_hist += &other.lag_hist;
    }
}

fn assert_same_simple(what: &str, got: &SimpleStats, want: &SimpleStats) {
    let bits = |s: &SimpleStats| {
        (
            s.count,
            s.min.to_bits(),
            s.max.to_bits(),
            s.sum.to_bits(),
            s.sum2.to_bits(),
        )
    };
    assert_eq!(bits(got), bits(want), "{what}");
}

fn assert_same_hist(what: &str, got: &LatencyHistogram, want: &LatencyHistogram) {
    // `assert!`: a histogram's Debug output is some 200 KB.
    assert!(got.inner() == want.inner(), "{what}: histograms differ");
    assert_eq!(
        (got.len(), got.min(), got.max()),
        (want.len(), want.min(), want.max())
    );
    assert_eq!(got.mean().to_bits(), want.mean().to_bits(), "{what}");
    for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
        assert_eq!(
            got.value_at_quantile(q),
            want.value_at_quantile(q),
            "{what}"
        );
    }
}

fn assert_matches(what: &str, got: &TxStats, want: &Model, throttled: bool) {
    assert_eq!(got.counters, want.counters, "{what}");
    assert_eq!(got.late, want.late, "{what}");
    assert_same_simple(what, &got.latency, &want.latency);
    assert_same_simple(what, &got.lag, &want.lag);
    assert_same_hist(what, &got.latency_hist, &want.latency_hist);
    match &got.lag_hist {
        Some(h) => assert_same_hist(what, h, &want.lag_hist),
        None => assert!(!throttled && want.lag_hist.is_empty(), "{what}"),
    }
}

/// The models of one thread: totals and one per script.
fn model_thread(recs: &[TxRecord], layout: &StatsLayout) -> (Model, Vec<Model>) {
    let mut total = Model::default();
    let mut scripts: Vec<Model> = layout
        .commands_per_script
        .iter()
        .map(|_| Model::default())
        .collect();
    for rec in recs {
        total.record(rec, layout);
        if let Some(s) = scripts.get_mut(rec.script) {
            s.record(rec, layout);
        }
    }
    (total, scripts)
}

fn outcome() -> impl Strategy<Value = TxOutcome> {
    prop_oneof![
        8 => Just(TxOutcome::Success),
        1 => Just(TxOutcome::Skipped),
        1 => Just(TxOutcome::SerializationFailure),
        1 => Just(TxOutcome::DeadlockFailure),
        1 => Just(TxOutcome::OtherFailure),
    ]
}

fn latency() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => (0u64..5_000).prop_map(|v| v as f64),
        3 => (0u64..50_000_000).prop_map(|v| v as f64),
        1 => prop_oneof![Just(-1.0), Just(0.5), Just(4.2e9), Just(1e19), Just(f64::NAN)],
    ]
}

fn record(scripts: usize) -> impl Strategy<Value = (bool, TxRecord)> {
    (
        any::<bool>(),
        prop_oneof![8 => 0..scripts, 1 => 0..scripts + 1],
        outcome(),
        latency(),
        latency(),
        prop_oneof![6 => Just(1u32), 1 => 2u32..4],
    )
        .prop_map(|(second, script, outcome, latency_us, lag_us, tries)| {
            let rec = TxRecord {
                script,
                outcome,
                latency_us,
                lag_us,
                tries,
            };
            (second, rec)
        })
}

fn case() -> impl Strategy<Value = (StatsLayout, bool, Vec<(bool, TxRecord)>)> {
    (
        1usize..4,
        any::<bool>(),
        prop_oneof![Just(None), Just(Some(2_000.0))],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(|(scripts, throttled, limit, progress, series)| {
            let layout = StatsLayout {
                commands_per_script: vec![1; scripts],
                latency_limit_us: limit,
                throttled,
                per_command: false,
                command_histograms: false,
                time_series: series,
            };
            let records = proptest::collection::vec(record(scripts), 0..400);
            (Just(layout), Just(progress), records)
        })
}

/// A recording thread as the engine builds it, with its progress block when asked.
fn thread(layout: &StatsLayout, progress: bool) -> (ThreadStats, Arc<ProgressCounters>) {
    let counters = Arc::new(ProgressCounters::new());
    let mut t = ThreadStats::new(layout);
    if progress {
        t = t.with_progress(Arc::clone(&counters));
    }
    if layout.time_series {
        t = t.with_series(0, 1_000_000);
    }
    (t, counters)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn recording_matches_one_by_one(case in case()) {
        let (layout, progress, records) = case;
        let (mut a, pa) = thread(&layout, progress);
        let (mut b, _) = thread(&layout, progress);
        let mut recs = [Vec::new(), Vec::new()];
        for (i, (second, rec)) in records.iter().enumerate() {
            let t = if *second { &mut b } else { &mut a };
            t.record_tx_at(rec, i as i64 * 10_000);
            recs[usize::from(*second)].push(*rec);
        }
        let (mut total_a, scripts_a) = model_thread(&recs[0], &layout);
        let (total_b, scripts_b) = model_thread(&recs[1], &layout);

        // -P publishes every transaction as it ends.
        if progress {
            let s = pa.snapshot();
            prop_assert_eq!(s.count, total_a.counters.successful);
            prop_assert_eq!(s.failures, total_a.counters.failed());
            prop_assert_eq!(s.latency_sum.to_bits(), total_a.latency.sum.to_bits());
        }

        // Merged as the engine does (into an empty one) and as `merge_all` does.
        let mut engine = ThreadStats::new(&layout);
        engine.merge(&a);
        engine.merge(&b);
        let all = ThreadStats::merge_all([&a, &b]).unwrap_or_else(|| ThreadStats::new(&layout));
        // One thread read on its own, after a flush.
        a.flush();
        assert_matches("thread a", &a.total, &total_a, layout.throttled);

        total_a.merge(&total_b);
        for (name, m) in [("engine merge", &engine), ("merge_all", &all)] {
            assert_matches(name, &m.total, &total_a, layout.throttled);
            for (i, (sa, sb)) in scripts_a.iter().zip(&scripts_b).enumerate() {
                let mut want = Model::default();
                want.merge(sa);
                want.merge(sb);
                assert_matches(&format!("{name}, script {i}"), &m.scripts[i].tx, &want, layout.throttled);
            }
            let series = m.series.as_ref().map(|s| s.intervals().iter().map(|iv| iv.counters.total()).sum::<u64>());
            prop_assert_eq!(series, layout.time_series.then(|| total_a.counters.total()));
        }
    }
}
