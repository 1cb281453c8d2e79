//! `--percentiles` text lines: exact values from synthetic runs with known latencies.

mod common;

use common::{Shape, summary};
use pgrush_report::percentiles::{PercentileList, render_text as render_bytes};
use pgrush_stats::RunSummary;

/// The percentile lines as text (these runs' scripts are UTF-8).
fn render_text(sum: &RunSummary, list: &PercentileList) -> String {
    String::from_utf8(render_bytes(sum, list)).unwrap_or_else(|e| panic!("not UTF-8: {e}"))
}

#[test]
fn total_and_per_command_lines() {
    let sum = summary(&Shape::default());
    let text = render_text(&sum, &PercentileList::default());
    let expected = "\
latency percentiles: p50 = 0.500 ms, p90 = 0.900 ms, p99 = 0.990 ms, p99.9 = 0.999 ms, p99.99 = 1.000 ms
statement latency percentiles in milliseconds (p50, p90, p99, p99.9, p99.99):
         0.166        0.300        0.330        0.333        0.333 \\set aid random(1, 100000 * :scale)
         0.333        0.600        0.660        0.666        0.666 SELECT abalance FROM pgbench_accounts WHERE aid = :aid; -- 0
";
    assert_eq!(text, expected);
    // The pgbench report itself is untouched: percentiles are extra lines.
    let report = pgrush_report::text::render_report_lossy(&sum);
    assert!(!report.contains("percentile"));
}

#[test]
fn custom_list_lag_and_scripts() {
    let shape = Shape {
        scripts: 2,
        per_command: false,
        rate: Some(100.0),
        ..Shape::default()
    };
    let sum = summary(&shape);
    let list = PercentileList::parse("95,50").unwrap_or_default();
    let text = render_text(&sum, &list);
    let lines: Vec<&str> = text.lines().collect();
    // Lag values are i % 7 µs: p50 = 3 µs, p95 = 6 µs.
    assert_eq!(
        lines,
        [
            "latency percentiles: p50 = 0.500 ms, p95 = 0.950 ms",
            "schedule lag percentiles: p50 = 0.003 ms, p95 = 0.006 ms",
            // Script 1 ran the odd transactions, script 0 the even ones.
            "SQL script 1 latency percentiles: p50 = 0.500 ms, p95 = 0.950 ms",
            "SQL script 2 latency percentiles: p50 = 0.499 ms, p95 = 0.949 ms",
        ]
    );
}

#[test]
fn nothing_for_an_empty_run() {
    let shape = Shape {
        transactions: 0,
        per_command: false,
        ..Shape::default()
    };
    assert_eq!(
        render_text(&summary(&shape), &PercentileList::default()),
        ""
    );
}
