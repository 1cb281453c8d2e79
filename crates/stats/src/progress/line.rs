//! `-P` progress lines (stderr), as pgbench prints them:
//!
//! `progress: <T>, %.1f tps, lat %.3f ms stddev %.3f, %ld failed[, lag %.3f ms[, %ld skipped]][, %ld retried, %ld retries]`

use crate::cfmt::push_fixed;
use crate::progress::ProgressSnapshot;
use std::fmt::Write;

/// Options that shape progress lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgressOptions {
    /// `--progress-timestamp`: print Unix epoch seconds (`%.3f s`) instead of elapsed seconds.
    pub timestamp: bool,
    /// `-R` given: append the lag.
    pub throttled: bool,
    /// `-L` given (with `-R`: append the skipped count).
    pub latency_limit: bool,
    /// `--max-tries` (0 = unlimited); retried/retries are appended when ≠ 1.
    pub max_tries: u32,
}

/// The instants a progress line refers to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgressTime {
    /// Time since thread 0 started, µs (printed as `%.1f s`).
    pub elapsed_us: u64,
    /// Time since the previous report (or the start), µs: the tps denominator.
    pub interval_us: u64,
    /// Now, µs since the Unix epoch (printed with `--progress-timestamp`).
    pub now_epoch_us: u64,
}

/// Appends one progress line (without newline) computed from two cumulative snapshots.
pub fn push_progress_line(
    out: &mut String,
    opts: &ProgressOptions,
    cur: &ProgressSnapshot,
    last: &ProgressSnapshot,
    time: &ProgressTime,
) {
    let cnt = cur.count.wrapping_sub(last.count);
    let tps = 1_000_000.0 * cnt as f64 / time.interval_us as f64;
    let (latency, stddev, lag) = if cnt > 0 {
        let n = cnt as f64;
        let latency = 0.001 * (cur.latency_sum - last.latency_sum) / n;
        let sqlat = (cur.latency_sum2 - last.latency_sum2) / n;
        let stddev = 0.001 * (sqlat - 1_000_000.0 * latency * latency).sqrt();
        let lag = 0.001 * (cur.lag_sum - last.lag_sum) / n;
        (latency, stddev, lag)
    } else {
        (0.0, 0.0, 0.0)
    };
    out.push_str("progress: ");
    if opts.timestamp {
        push_fixed(out, time.now_epoch_us as f64 / 1_000_000.0, 3);
    } else {
        push_fixed(out, time.elapsed_us as f64 / 1_000_000.0, 1);
    }
    out.push_str(" s, ");
    push_fixed(out, tps, 1);
    out.push_str(" tps, lat ");
    push_fixed(out, latency, 3);
    out.push_str(" ms stddev ");
    push_fixed(out, stddev, 3);
    let failures = cur.failures.wrapping_sub(last.failures) as i64;
    let _ = write!(out, ", {failures} failed");
    if opts.throttled {
        out.push_str(", lag ");
        push_fixed(out, lag, 3);
        out.push_str(" ms");
        if opts.latency_limit {
            let skipped = cur.skipped.wrapping_sub(last.skipped) as i64;
            let _ = write!(out, ", {skipped} skipped");
        }
    }
    if opts.max_tries != 1 {
        let retried = cur.retried.wrapping_sub(last.retried) as i64;
        let retries = cur.retries.wrapping_sub(last.retries) as i64;
        let _ = write!(out, ", {retried} retried, {retries} retries");
    }
}

/// Returns one progress line (without newline); see [`push_progress_line`].
pub fn format_progress_line(
    opts: &ProgressOptions,
    cur: &ProgressSnapshot,
    last: &ProgressSnapshot,
    time: &ProgressTime,
) -> String {
    let mut s = String::with_capacity(160);
    push_progress_line(&mut s, opts, cur, last, time);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(count: u64, lat: &[f64], lag_sum: f64) -> ProgressSnapshot {
        ProgressSnapshot {
            count,
            latency_sum: lat.iter().sum(),
            latency_sum2: lat.iter().map(|x| x * x).sum(),
            lag_sum,
            ..ProgressSnapshot::default()
        }
    }

    const ONE_S: ProgressTime = ProgressTime {
        elapsed_us: 1_000_000,
        interval_us: 1_000_000,
        now_epoch_us: 1_795_343_086_006_123,
    };

    #[test]
    fn plain_line() {
        let opts = ProgressOptions {
            max_tries: 1,
            ..ProgressOptions::default()
        };
        let last = ProgressSnapshot::default();
        let cur = snap(4, &[400.0, 600.0, 400.0, 600.0], 0.0);
        assert_eq!(
            format_progress_line(&opts, &cur, &last, &ONE_S),
            "progress: 1.0 s, 4.0 tps, lat 0.500 ms stddev 0.100, 0 failed"
        );
        // Nothing completed in the interval: zeros.
        let t = ProgressTime {
            elapsed_us: 2_100_000,
            ..ONE_S
        };
        assert_eq!(
            format_progress_line(&opts, &cur, &cur, &t),
            "progress: 2.1 s, 0.0 tps, lat 0.000 ms stddev 0.000, 0 failed"
        );
    }

    #[test]
    fn all_suffixes_and_timestamp() {
        let opts = ProgressOptions {
            timestamp: true,
            throttled: true,
            latency_limit: true,
            max_tries: 3,
        };
        let last = ProgressSnapshot {
            count: 10,
            failures: 1,
            skipped: 2,
            retried: 3,
            retries: 4,
            ..snap(10, &[1000.0; 10], 50.0)
        };
        let mut cur = snap(12, &[1000.0; 12], 50.0 + 256.0);
        cur.failures = 88;
        cur.skipped = 2;
        cur.retried = 393;
        cur.retries = 708;
        let t = ProgressTime {
            interval_us: 500_000,
            ..ONE_S
        };
        assert_eq!(
            format_progress_line(&opts, &cur, &last, &t),
            "progress: 1795343086.006 s, 4.0 tps, lat 1.000 ms stddev 0.000, 87 failed, \
             lag 0.128 ms, 0 skipped, 390 retried, 704 retries"
        );
        // Lag without skipped when -L is absent; no retries with max_tries 1.
        let opts2 = ProgressOptions {
            timestamp: false,
            latency_limit: false,
            max_tries: 1,
            ..opts
        };
        assert_eq!(
            format_progress_line(&opts2, &cur, &last, &t),
            "progress: 1.0 s, 4.0 tps, lat 1.000 ms stddev 0.000, 87 failed, lag 0.128 ms"
        );
        // Unlimited tries (0) also prints retries.
        let opts3 = ProgressOptions {
            throttled: false,
            max_tries: 0,
            ..opts2
        };
        assert!(
            format_progress_line(&opts3, &cur, &last, &t)
                .ends_with("87 failed, 390 retried, 704 retries")
        );
    }
}
