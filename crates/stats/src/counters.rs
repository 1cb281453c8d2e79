//! Transaction outcomes and counters.

use serde::Serialize;
use std::ops::AddAssign;

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TxOutcome {
    /// Completed successfully.
    Success,
    /// Skipped because it would have started later than the latency limit (`-R` with `-L`).
    Skipped,
    /// Failed with a serialization failure (SQLSTATE 40001) after its last try.
    SerializationFailure,
    /// Failed with a deadlock (SQLSTATE 40P01) after its last try.
    DeadlockFailure,
    /// Failed with another SQL error (only with `--continue-on-error`, PostgreSQL 19).
    OtherFailure,
    /// Failed because the connection was lost (only with `--reconnect`, pgrush's own):
    /// the client reconnected and went on.
    ConnectionFailure,
}

impl TxOutcome {
    /// Whether the outcome is one of the failure kinds.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            TxOutcome::SerializationFailure
                | TxOutcome::DeadlockFailure
                | TxOutcome::OtherFailure
                | TxOutcome::ConnectionFailure
        )
    }
}

/// One finished transaction, as the engine reports it to [`crate::ThreadStats::record_tx`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TxRecord {
    /// Index of the script that ran (0-based).
    pub script: usize,
    /// How it ended.
    pub outcome: TxOutcome,
    /// Latency in µs: end minus scheduled start (only meaningful for `Success`).
    pub latency_us: f64,
    /// Schedule lag in µs: actual start minus scheduled start (recorded only with `-R`).
    pub lag_us: f64,
    /// Number of tries (1 when it was not retried).
    pub tries: u32,
}

impl TxRecord {
    /// Whether it succeeded at its first try: the common case, which the recorders
    /// count by a path of their own.
    #[inline]
    pub fn first_try_success(&self) -> bool {
        self.outcome == TxOutcome::Success && self.tries == 1
    }
}

/// Transaction counters (successful, skipped, failures by kind, retries).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TxCounters {
    /// Successful transactions.
    pub successful: u64,
    /// Skipped transactions (`-R` with `-L`).
    pub skipped: u64,
    /// Transactions failed with a serialization failure.
    pub serialization_failures: u64,
    /// Transactions failed with a deadlock.
    pub deadlock_failures: u64,
    /// Transactions failed with another error (`--continue-on-error`).
    pub other_failures: u64,
    /// Transactions failed because the connection was lost (`--reconnect`); absent
    /// from the serialized form when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub connection_failures: u64,
    /// Transactions retried at least once (successful or not).
    pub retried: u64,
    /// Total number of retries.
    pub retries: u64,
}

impl TxCounters {
    /// All failed transactions.
    pub fn failed(&self) -> u64 {
        self.serialization_failures
            + self.deadlock_failures
            + self.other_failures
            + self.connection_failures
    }

    /// Successful + skipped + failed: every transaction that ended.
    pub fn total(&self) -> u64 {
        self.successful + self.skipped + self.failed()
    }

    /// Counts one finished transaction (skipped transactions count no retries, as in pgbench).
    #[inline]
    pub fn count(&mut self, outcome: TxOutcome, tries: u32) {
        if outcome == TxOutcome::Skipped {
            self.skipped += 1;
            return;
        }
        if tries > 1 {
            self.retried += 1;
            self.retries += u64::from(tries - 1);
        }
        match outcome {
            TxOutcome::Success => self.successful += 1,
            TxOutcome::SerializationFailure => self.serialization_failures += 1,
            TxOutcome::DeadlockFailure => self.deadlock_failures += 1,
            TxOutcome::OtherFailure => self.other_failures += 1,
            TxOutcome::ConnectionFailure => self.connection_failures += 1,
            TxOutcome::Skipped => {}
        }
    }
}

/// For serde: a zero counter is left out.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl AddAssign<&TxCounters> for TxCounters {
    fn add_assign(&mut self, o: &TxCounters) {
        self.successful += o.successful;
        self.skipped += o.skipped;
        self.serialization_failures += o.serialization_failures;
        self.deadlock_failures += o.deadlock_failures;
        self.other_failures += o.other_failures;
        self.connection_failures += o.connection_failures;
        self.retried += o.retried;
        self.retries += o.retries;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting() {
        let mut c = TxCounters::default();
        c.count(TxOutcome::Success, 1);
        c.count(TxOutcome::Success, 3);
        c.count(TxOutcome::Skipped, 5);
        c.count(TxOutcome::SerializationFailure, 2);
        c.count(TxOutcome::DeadlockFailure, 1);
        c.count(TxOutcome::OtherFailure, 1);
        c.count(TxOutcome::ConnectionFailure, 1);
        assert_eq!(c.successful, 2);
        assert_eq!(c.skipped, 1);
        assert_eq!(c.connection_failures, 1);
        assert_eq!(c.failed(), 4);
        assert_eq!(c.total(), 7);
        assert_eq!(c.retried, 2);
        assert_eq!(c.retries, 3);
        let mut d = c;
        d += &c;
        assert_eq!(d.total(), 14);
        assert_eq!(d.retries, 6);
        assert!(TxOutcome::DeadlockFailure.is_failure());
        assert!(!TxOutcome::Skipped.is_failure());
    }
}
