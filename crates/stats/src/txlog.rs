//! Per-transaction log lines (`-l`), written into a reused buffer.
//!
//! Format: `client_id transaction_no latency script_no time_epoch_s time_us [lag_us] [retries]`.

use crate::cfmt::push_fixed;
use crate::counters::TxOutcome;
use std::fmt::Write;

/// Options that change the log line formats (shared by `-l` and `--aggregate-interval`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogFormat {
    /// `-R` given: the lag column is written.
    pub throttled: bool,
    /// `-L` given.
    pub latency_limit: bool,
    /// `--max-tries` (0 = unlimited); the retries column is written when ≠ 1.
    pub max_tries: u32,
    /// `--failures-detailed`: failure kinds are spelled out.
    pub failures_detailed: bool,
    /// `--reconnect` (pgrush's own): aggregate lines get a column of connection
    /// failures after pgbench's 16 (never without the option).
    pub reconnect: bool,
}

/// The log file name of a thread: `<prefix>.<pid>` for thread 0, `<prefix>.<pid>.<tid>`
/// otherwise; the prefix defaults to `pgbench_log` (as pgbench names it, for log parsers).
pub fn log_file_name(prefix: Option<&str>, pid: u32, tid: usize) -> String {
    let prefix = prefix.unwrap_or("pgbench_log");
    if tid == 0 {
        format!("{prefix}.{pid}")
    } else {
        format!("{prefix}.{pid}.{tid}")
    }
}

/// One transaction as written to the per-transaction log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TxLogRecord {
    /// Global client number (0-based).
    pub client_id: u32,
    /// Per-client transaction number, starting at 1 (skipped and failed ones use numbers too).
    pub tx_no: u64,
    /// How the transaction ended.
    pub outcome: TxOutcome,
    /// Latency in µs (written only for successful transactions).
    pub latency_us: f64,
    /// Script index (0-based).
    pub script: usize,
    /// Completion time, µs since the Unix epoch.
    pub end_epoch_us: u64,
    /// Schedule lag in µs (written with `-R`; pass 0 for skipped and failed transactions).
    pub lag_us: f64,
    /// Number of tries (the column shows `tries - 1`).
    pub tries: u32,
}

/// The word written instead of the latency for an unsuccessful transaction.
pub fn result_word(outcome: TxOutcome, failures_detailed: bool) -> &'static str {
    match outcome {
        TxOutcome::Success => "",
        TxOutcome::Skipped => "skipped",
        _ if !failures_detailed => "failed",
        TxOutcome::SerializationFailure => "serialization",
        TxOutcome::DeadlockFailure => "deadlock",
        TxOutcome::OtherFailure => "other",
        TxOutcome::ConnectionFailure => "connection",
    }
}

impl TxLogRecord {
    /// Appends the line, with its trailing newline, to `out` (no allocation when `out` has room).
    pub fn write_line(&self, fmt: &LogFormat, out: &mut String) {
        let _ = write!(out, "{} {} ", self.client_id, self.tx_no);
        if self.outcome == TxOutcome::Success {
            push_fixed(out, self.latency_us, 0);
        } else {
            out.push_str(result_word(self.outcome, fmt.failures_detailed));
        }
        let _ = write!(
            out,
            " {} {} {}",
            self.script,
            self.end_epoch_us / 1_000_000,
            self.end_epoch_us % 1_000_000
        );
        if fmt.throttled {
            out.push(' ');
            push_fixed(out, self.lag_us, 0);
        }
        if fmt.max_tries != 1 {
            let _ = write!(out, " {}", self.tries.saturating_sub(1));
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(outcome: TxOutcome) -> TxLogRecord {
        TxLogRecord {
            client_id: 0,
            tx_no: 1,
            outcome,
            latency_us: 3193.4,
            script: 0,
            end_epoch_us: 1_795_343_136_479_764,
            lag_us: 0.0,
            tries: 1,
        }
    }

    #[test]
    fn plain_and_optional_columns() {
        let mut s = String::new();
        rec(TxOutcome::Success).write_line(&LogFormat::default(), &mut s);
        // max_tries 0 (unlimited) != 1, so the retries column appears with the default format.
        assert_eq!(s, "0 1 3193 0 1795343136 479764 0\n");
        s.clear();
        let one_try = LogFormat {
            max_tries: 1,
            ..LogFormat::default()
        };
        rec(TxOutcome::Success).write_line(&one_try, &mut s);
        assert_eq!(s, "0 1 3193 0 1795343136 479764\n");
        s.clear();
        let mut r = rec(TxOutcome::SerializationFailure);
        r.client_id = 1;
        r.tries = 2;
        r.end_epoch_us = 1_795_343_136_482_714;
        r.write_line(
            &LogFormat {
                max_tries: 2,
                ..LogFormat::default()
            },
            &mut s,
        );
        assert_eq!(s, "1 1 failed 0 1795343136 482714 1\n");
        s.clear();
        let mut r = rec(TxOutcome::Skipped);
        r.tx_no = 2;
        r.end_epoch_us = 1_795_343_156_148_162;
        r.write_line(
            &LogFormat {
                throttled: true,
                latency_limit: true,
                max_tries: 1,
                ..LogFormat::default()
            },
            &mut s,
        );
        assert_eq!(s, "0 2 skipped 0 1795343156 148162 0\n");
        s.clear();
        let mut r = rec(TxOutcome::DeadlockFailure);
        r.end_epoch_us = 1_795_343_214_062_631;
        r.write_line(
            &LogFormat {
                max_tries: 1,
                failures_detailed: true,
                ..LogFormat::default()
            },
            &mut s,
        );
        assert_eq!(s, "0 1 deadlock 0 1795343214 62631\n");
        s.clear();
        let mut r = rec(TxOutcome::Success);
        r.lag_us = 12.5;
        r.latency_us = 2.5;
        r.write_line(
            &LogFormat {
                throttled: true,
                max_tries: 3,
                ..LogFormat::default()
            },
            &mut s,
        );
        assert_eq!(s, "0 1 2 0 1795343136 479764 12 0\n");
    }

    #[test]
    fn file_names() {
        assert_eq!(log_file_name(None, 4242, 0), "pgbench_log.4242");
        assert_eq!(log_file_name(Some("run/x"), 4242, 3), "run/x.4242.3");
    }

    #[test]
    fn result_words() {
        assert_eq!(result_word(TxOutcome::OtherFailure, true), "other");
        assert_eq!(result_word(TxOutcome::OtherFailure, false), "failed");
        assert_eq!(
            result_word(TxOutcome::SerializationFailure, true),
            "serialization"
        );
        assert_eq!(result_word(TxOutcome::Skipped, true), "skipped");
        assert_eq!(
            result_word(TxOutcome::ConnectionFailure, true),
            "connection"
        );
        assert_eq!(result_word(TxOutcome::ConnectionFailure, false), "failed");
    }
}
