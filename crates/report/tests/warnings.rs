//! The meaningfulness warnings of a summary: where "a run of a few seconds" ends.

mod common;

use common::{Shape, summary};
use pgrush_report::warnings::{MIN_MEANINGFUL_DURATION_S, WarningInputs, warnings};

/// The warnings of the synthetic run lasting `duration_us` (4 clients on scale 1 with 2
/// threads, not tpcb-like: only the duration can warn).
fn warnings_after(duration_us: u64) -> Vec<String> {
    let mut sum = summary(&Shape::default());
    sum.bench_duration_us = duration_us;
    warnings(&WarningInputs {
        cpus: 2,
        ..WarningInputs::from_summary(&sum)
    })
}

#[test]
fn only_runs_of_a_few_seconds_are_warned_about() {
    assert_eq!(
        warnings_after(2_500_000),
        [
            "the run lasted only 2.5 s; results of runs of a few seconds are not meaningful (use -T or -t to run for at least a few minutes)"
        ]
    );
    // The boundary: 9.999999 s is a few seconds, 10 s is not.
    assert_eq!(warnings_after(9_999_999).len(), 1);
    assert!(warnings_after(9_999_999)[0].starts_with("the run lasted only 10.0 s;"));
    assert_eq!(warnings_after(10_000_000), Vec::<String>::new());
    // The 13 s run of the report that said otherwise.
    assert_eq!(warnings_after(13_000_000), Vec::<String>::new());
    assert_eq!(warnings_after(300_000_000), Vec::<String>::new());
    assert_eq!(MIN_MEANINGFUL_DURATION_S, 10.0);
}
