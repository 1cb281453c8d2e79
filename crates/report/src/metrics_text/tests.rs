use std::sync::Arc;

use pgrush_stats::live::{
    LIVE_BUCKETS, LiveMetrics, LiveRecorder, LiveShape, LiveTotals, ThreadGauges,
};
use pgrush_stats::{TxOutcome, TxRecord};

use super::*;

fn tx(script: usize, outcome: TxOutcome, latency_us: f64) -> TxRecord {
    TxRecord {
        script,
        outcome,
        latency_us,
        lag_us: 5.0,
        tries: 1,
    }
}

/// Totals of two scripts after a few transactions (slot 0: warm-up, 1: the run).
fn totals(throttled: bool) -> LiveTotals {
    let shape = LiveShape {
        scripts: 2,
        stages: 0,
        throttled,
    };
    let live = LiveMetrics::new(1, shape);
    let mut rec = LiveRecorder::new(Arc::clone(&live), 0);
    for latency in [50.0, 900.0, 1500.0, 1500.0, 70_000.0] {
        rec.record(&tx(0, TxOutcome::Success, latency), 1);
    }
    rec.record(&tx(0, TxOutcome::DeadlockFailure, 0.0), 1);
    rec.record(&tx(1, TxOutcome::Success, 300.0), 0);
    rec.publish(ThreadGauges::default(), true);
    let mut totals = LiveTotals::new(shape);
    totals.absorb(&live);
    totals
}

fn page<'a>(scripts: &'a [String], totals: &'a LiveTotals, extra: &'a [Gauge]) -> MetricsPage<'a> {
    MetricsPage {
        scripts,
        shard: 3,
        clients: 4,
        totals,
        gauges: ThreadGauges {
            connected: 4,
            aborted: 1,
            stage_slot: 1,
            rate_tps: 0.0,
        },
        extra,
    }
}

/// The value of the sample line that starts with `prefix`.
fn value(text: &str, prefix: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line {prefix} in\n{text}"));
    line.rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a number")
}

#[test]
fn histogram_buckets_are_cumulative_and_end_with_the_count() {
    let totals = totals(false);
    let scripts = vec!["a".to_string(), "b".to_string()];
    let text = render(&page(&scripts, &totals, &[]), MetricsFormat::Prometheus);
    let series = r#"pgrush_latency_seconds_bucket{script="a",stage="1",shard="3",le="#;
    let buckets: Vec<(f64, u64)> = text
        .lines()
        .filter_map(|l| l.strip_prefix(series))
        .map(|rest| {
            let (le, n) = rest.split_once("\"} ").expect("le and count");
            let le = le.trim_start_matches('"');
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().expect("le")
            };
            (le, n.parse().expect("count"))
        })
        .collect();
    assert_eq!(buckets.len(), LIVE_BUCKETS);
    assert!(
        buckets
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
    );
    let at = |le: f64| buckets.iter().find(|b| b.0 == le).map(|b| b.1);
    assert_eq!(at(0.00005), Some(1));
    assert_eq!(at(0.001), Some(2));
    assert_eq!(
        at(0.0015),
        Some(2),
        "1500 µs is above its HDR bucket's bound"
    );
    assert_eq!(at(0.002), Some(4));
    assert_eq!(at(0.08), Some(5));
    assert_eq!(buckets.last().map(|b| b.1), Some(5));
    let count = r#"pgrush_latency_seconds_count{script="a",stage="1",shard="3"}"#;
    assert_eq!(value(&text, count), 5.0);
    let sum = r#"pgrush_latency_seconds_sum{script="a",stage="1",shard="3"}"#;
    assert!((value(&text, sum) - 0.07395).abs() < 1e-12);
    // The warm-up's transactions are the warm-up stage's; failures by kind.
    let warm = r#"pgrush_transactions_total{script="b",stage="warmup",shard="3"}"#;
    assert_eq!(value(&text, warm), 1.0);
    let deadlocks = r#"pgrush_failures_total{script="a",stage="1",shard="3",kind="deadlock"}"#;
    assert_eq!(value(&text, deadlocks), 1.0);
    // No lag without -R; the cells that counted nothing are not shown.
    assert!(!text.contains("pgrush_lag_seconds"));
    assert!(!text.contains(r#"script="b",stage="1""#));
    assert_eq!(
        value(&text, r#"pgrush_clients_aborted_total{shard="3"}"#),
        1.0
    );
}

#[test]
fn label_values_are_escaped() {
    assert_eq!(escape_label(r#"a"b\c"#), r#"a\"b\\c"#);
    assert_eq!(escape_label("x\ny"), r"x\ny");
    let totals = totals(true);
    let scripts = vec!["we\"ird\\na\nme".to_string(), "b".to_string()];
    let extra = [Gauge {
        name: "pgrush_server_waits",
        help: "Waits.",
        labels: vec![("event", "Lock:\"tuple\"".to_string())],
        value: 2.5,
    }];
    let text = render(&page(&scripts, &totals, &extra), MetricsFormat::Prometheus);
    assert!(
        text.contains(
            r#"pgrush_transactions_total{script="we\"ird\\na\nme",stage="1",shard="3"} 5"#
        )
    );
    assert!(text.contains(r#"pgrush_server_waits{event="Lock:\"tuple\"",shard="3"} 2.5"#));
    // Every sample line is one line: name, labels, value.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (_, value) = line.rsplit_once(' ').expect("a value");
        assert!(value.parse::<f64>().is_ok() || value == "+Inf", "{line}");
        assert_eq!(line.matches('{').count(), 1, "{line}");
    }
    assert!(text.contains("pgrush_lag_seconds_bucket{"));
}

#[test]
fn the_two_formats_name_counters_as_each_expects() {
    let totals = totals(false);
    let scripts = vec!["a".to_string(), "b".to_string()];
    let prom = render(&page(&scripts, &totals, &[]), MetricsFormat::Prometheus);
    assert!(prom.contains("# TYPE pgrush_transactions_total counter\n"));
    assert!(!prom.contains("# EOF"));
    let om = render(&page(&scripts, &totals, &[]), MetricsFormat::OpenMetrics);
    assert!(om.contains("# TYPE pgrush_transactions counter\n"));
    assert!(om.contains("# TYPE pgrush_latency_seconds histogram\n"));
    assert!(om.ends_with("# EOF\n"));
    assert_eq!(
        MetricsFormat::for_accept(Some(
            "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"
        )),
        MetricsFormat::OpenMetrics
    );
    assert_eq!(MetricsFormat::for_accept(None), MetricsFormat::Prometheus);
}
