//! The figures the run document's sections share: transaction counts, the raw sums a
//! series of values merges through, one percentile's value.

use pgrush_stats::{SimpleStats, TxCounters};
use serde::{Deserialize, Serialize};

/// One percentile value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentileValue {
    /// The percentile (0, 100].
    pub p: f64,
    /// Value in ms.
    pub ms: f64,
}

/// The raw figures pgbench keeps for a series of values (µs): count, min, max, sum and
/// sum of squares. Several series merge exactly through them (`pgrush merge`); JSON keeps
/// every `f64` exactly (shortest round-trip form).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RawSums {
    /// Number of values.
    pub count: u64,
    /// Smallest value (µs; 0 when empty).
    pub min_us: f64,
    /// Largest value (µs; 0 when empty).
    pub max_us: f64,
    /// Sum of the values (µs).
    pub sum_us: f64,
    /// Sum of the squares of the values (µs²).
    pub sum2_us: f64,
}

impl RawSums {
    /// The figures of `st`.
    pub fn of(st: &SimpleStats) -> Self {
        RawSums {
            count: st.count,
            min_us: st.min,
            max_us: st.max,
            sum_us: st.sum,
            sum2_us: st.sum2,
        }
    }

    /// The statistics back.
    pub fn to_stats(&self) -> SimpleStats {
        SimpleStats {
            count: self.count,
            min: self.min_us,
            max: self.max_us,
            sum: self.sum_us,
            sum2: self.sum2_us,
        }
    }
}

/// Transaction counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Successful transactions ("actually processed").
    pub processed: u64,
    /// Failed transactions (all kinds).
    pub failed: u64,
    /// Serialization failures.
    pub serialization_failures: u64,
    /// Deadlock failures.
    pub deadlock_failures: u64,
    /// Other failures (`--continue-on-error`).
    pub other_failures: u64,
    /// Failures on a lost connection (`--reconnect`; written only when not 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub connection_failures: u64,
    /// Skipped (`-R` with `-L`).
    pub skipped: u64,
    /// Transactions retried.
    pub retried: u64,
    /// Total retries.
    pub retries: u64,
}

/// For serde: a zero count is left out.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Counts {
    pub(crate) fn of(c: &TxCounters) -> Self {
        Counts {
            processed: c.successful,
            failed: c.failed(),
            serialization_failures: c.serialization_failures,
            deadlock_failures: c.deadlock_failures,
            other_failures: c.other_failures,
            connection_failures: c.connection_failures,
            skipped: c.skipped,
            retried: c.retried,
            retries: c.retries,
        }
    }

    /// Every transaction that ended.
    pub fn total(&self) -> u64 {
        self.processed + self.failed + self.skipped
    }
}
