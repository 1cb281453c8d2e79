//! `--aggregate-interval` log lines.
//!
//! Fields: `interval_start num_tx sum_lat sum_lat2 min_lat max_lat sum_lag sum_lag2 min_lag
//! max_lag skipped retried retries serialization_failures deadlock_failures` (+ `other_failures`
//! with `--continue-on-error`). Intervals start at the thread's start time rounded down to a
//! whole second; empty intervals are written as zero lines when a later transaction (or the
//! end of the thread) passes them; the last, incomplete interval is never written.

use crate::cfmt::push_fixed;
use crate::counters::{TxCounters, TxOutcome, TxRecord};
use crate::simple::SimpleStats;
use crate::txlog::LogFormat;
use std::fmt::Write;

/// Accumulates transactions into fixed intervals and writes one line per completed interval.
#[derive(Debug, Clone)]
pub struct AggregateInterval {
    format: LogFormat,
    interval_us: u64,
    start_us: u64,
    counters: TxCounters,
    latency: SimpleStats,
    lag: SimpleStats,
    /// With stages: when each stage starts (µs since the epoch); every line then ends
    /// with the number of the stage its interval starts in (0 before the first).
    stage_starts: Vec<u64>,
}

impl AggregateInterval {
    /// Starts the first interval at `thread_start_epoch_us` rounded down to the second.
    /// An interval of 0 seconds is treated as 1.
    pub fn new(thread_start_epoch_us: u64, interval_s: u32, format: LogFormat) -> Self {
        AggregateInterval {
            format,
            interval_us: u64::from(interval_s.max(1)) * 1_000_000,
            start_us: thread_start_epoch_us / 1_000_000 * 1_000_000,
            counters: TxCounters::default(),
            latency: SimpleStats::default(),
            lag: SimpleStats::default(),
            stage_starts: Vec::new(),
        }
    }

    /// Lines end with a stage column: the stages start at `stage_starts_us` (µs since
    /// the epoch, in order); an interval's stage is the one its start falls in (the
    /// first stage for one that starts before it).
    pub fn with_stage_starts(mut self, stage_starts_us: Vec<u64>) -> Self {
        self.stage_starts = stage_starts_us;
        self
    }

    /// The stage starts given to [`AggregateInterval::with_stage_starts`].
    pub fn stage_starts(&self) -> &[u64] {
        &self.stage_starts
    }

    /// Start of the current interval (µs since the epoch).
    pub fn current_start_us(&self) -> u64 {
        self.start_us
    }

    /// Writes the lines of every interval that ended at or before `now_epoch_us` into `out`,
    /// then counts `rec` (which ended at `now_epoch_us`) in the current interval.
    pub fn record(&mut self, now_epoch_us: u64, rec: &TxRecord, out: &mut String) {
        self.flush_until(now_epoch_us, out);
        self.counters.count(rec.outcome, rec.tries);
        if rec.outcome == TxOutcome::Success {
            self.latency.record(rec.latency_us);
            if self.format.throttled {
                self.lag.record(rec.lag_us);
            }
        }
    }

    /// At thread end: writes the intervals completed by `now_epoch_us`; the incomplete one is dropped.
    pub fn finish(&mut self, now_epoch_us: u64, out: &mut String) {
        self.flush_until(now_epoch_us, out);
    }

    fn flush_until(&mut self, now_epoch_us: u64, out: &mut String) {
        while self.start_us + self.interval_us <= now_epoch_us {
            self.write_current(out);
            self.start_us += self.interval_us;
            self.counters = TxCounters::default();
            self.latency = SimpleStats::default();
            self.lag = SimpleStats::default();
        }
    }

    fn write_current(&self, out: &mut String) {
        let c = &self.counters;
        let _ = write!(out, "{} {}", self.start_us / 1_000_000, c.successful);
        for v in [
            self.latency.sum,
            self.latency.sum2,
            self.latency.min,
            self.latency.max,
            self.lag.sum,
            self.lag.sum2,
            self.lag.min,
            self.lag.max,
        ] {
            out.push(' ');
            push_fixed(out, v, 0);
        }
        // PostgreSQL 19 always writes the other failures' column (the 16th).
        let (ser, dead, other) = if self.format.failures_detailed {
            (
                c.serialization_failures,
                c.deadlock_failures,
                c.other_failures,
            )
        } else {
            (0, 0, 0)
        };
        let _ = write!(
            out,
            " {} {} {} {} {} {}",
            c.skipped, c.retried, c.retries, ser, dead, other
        );
        if self.format.reconnect {
            // pgrush's own 17th column: connection failures (as the others, 0 unless
            // `--failures-detailed`).
            let conn = if self.format.failures_detailed {
                c.connection_failures
            } else {
                0
            };
            let _ = write!(out, " {conn}");
        }
        if !self.stage_starts.is_empty() {
            // An interval that starts before the first stage (the start rounded down
            // to the second) holds nothing earlier: it is the first stage's.
            let stage = self
                .stage_starts
                .partition_point(|&s| s <= self.start_us)
                .max(1);
            let _ = write!(out, " {stage}");
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_795_343_141_700_000; // thread start, 0.7 s into a second

    fn ok(lat: f64, lag: f64) -> TxRecord {
        TxRecord {
            script: 0,
            outcome: TxOutcome::Success,
            latency_us: lat,
            lag_us: lag,
            tries: 1,
        }
    }

    #[test]
    fn intervals_empty_and_incomplete() {
        let mut a = AggregateInterval::new(T0, 1, LogFormat::default());
        assert_eq!(a.current_start_us(), 1_795_343_141_000_000);
        let mut out = String::new();
        a.record(T0 + 100_000, &ok(14.0, 0.0), &mut out);
        a.record(T0 + 200_000, &ok(8626.0, 0.0), &mut out);
        assert_eq!(out, "", "nothing written before the first interval ends");
        // Next transaction 2.5 s later: interval 141 complete, 142 and 143 empty.
        a.record(T0 + 2_900_000, &ok(100.0, 0.0), &mut out);
        assert_eq!(
            out,
            "1795343141 2 8640 74408072 14 8626 0 0 0 0 0 0 0 0 0 0\n\
             1795343142 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
             1795343143 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        );
        out.clear();
        // End inside interval 144: it is not written.
        a.finish(T0 + 2_950_000, &mut out);
        assert_eq!(out, "");
        // End after it: interval 144 written, later ones only if complete.
        a.finish(1_795_343_145_000_000, &mut out);
        assert_eq!(out, "1795343144 1 100 10000 100 100 0 0 0 0 0 0 0 0 0 0\n");
    }

    #[test]
    fn with_stages_each_line_ends_with_the_stage_of_its_start() {
        // Stages start at T0 (0.7 s into second 141) and 1.3 s later (143.0 s).
        let stages = vec![T0, T0 + 1_300_000];
        let mut a = AggregateInterval::new(T0, 1, LogFormat::default()).with_stage_starts(stages);
        let mut out = String::new();
        a.record(T0 + 100_000, &ok(14.0, 0.0), &mut out);
        a.finish(1_795_343_144_000_000, &mut out);
        let stages: Vec<&str> = out.lines().map(|l| l.rsplit(' ').next().unwrap()).collect();
        // 141 starts before the first stage (it is the first's), 142 in it, 143 with
        // the second.
        assert_eq!(stages, ["1", "1", "2"], "{out}");
        assert!(out.lines().all(|l| l.split(' ').count() == 17), "{out}");
    }

    #[test]
    fn optional_counters() {
        let fmt = LogFormat {
            throttled: true,
            latency_limit: true,
            max_tries: 2,
            failures_detailed: true,
            reconnect: false,
        };
        let mut a = AggregateInterval::new(T0, 2, fmt);
        let mut out = String::new();
        a.record(T0, &ok(10.0, 3.0), &mut out);
        let mut r = ok(0.0, 0.0);
        r.outcome = TxOutcome::Skipped;
        a.record(T0, &r, &mut out);
        r.outcome = TxOutcome::SerializationFailure;
        r.tries = 2;
        a.record(T0, &r, &mut out);
        r.outcome = TxOutcome::DeadlockFailure;
        r.tries = 1;
        a.record(T0, &r, &mut out);
        r.outcome = TxOutcome::OtherFailure;
        a.record(T0, &r, &mut out);
        a.finish(1_795_343_143_000_000, &mut out);
        assert_eq!(out, "1795343141 1 10 100 10 10 3 9 3 3 1 1 1 1 1 1\n");

        // Without --failures-detailed the failure columns stay 0, the 16th too.
        let fmt2 = LogFormat {
            failures_detailed: false,
            ..fmt
        };
        let mut b = AggregateInterval::new(T0, 1, fmt2);
        let mut out2 = String::new();
        r.outcome = TxOutcome::OtherFailure;
        b.record(T0, &r, &mut out2);
        b.finish(T0 + 1_000_000, &mut out2);
        assert_eq!(out2, "1795343141 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    }

    #[test]
    fn connection_failures_column_only_with_reconnect() {
        let fmt = LogFormat {
            failures_detailed: true,
            reconnect: true,
            ..LogFormat::default()
        };
        let mut a = AggregateInterval::new(T0, 1, fmt);
        let mut out = String::new();
        a.record(T0, &ok(10.0, 0.0), &mut out);
        let mut r = ok(0.0, 0.0);
        r.outcome = TxOutcome::ConnectionFailure;
        a.record(T0, &r, &mut out);
        a.finish(T0 + 1_000_000, &mut out);
        assert_eq!(out, "1795343141 1 10 100 10 10 0 0 0 0 0 0 0 0 0 0 1\n");
    }
}
