//! The counters each thread publishes ([`ProgressCounters`]) and a snapshot of them
//! ([`ProgressSnapshot`]).

use crate::counters::{TxCounters, TxOutcome};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// Per-thread cumulative counters readable from another thread.
///
/// Float sums are stored as `f64` bit patterns. Only one thread may write a block.
#[derive(Debug, Default)]
pub struct ProgressCounters {
    count: AtomicU64,
    latency_sum: AtomicU64,
    latency_sum2: AtomicU64,
    lag_sum: AtomicU64,
    failures: AtomicU64,
    skipped: AtomicU64,
    retried: AtomicU64,
    retries: AtomicU64,
}

#[inline]
fn bump(a: &AtomicU64, by: u64) {
    // Single writer: a relaxed load + store is enough and avoids a locked instruction.
    a.store(
        a.load(Ordering::Relaxed).wrapping_add(by),
        Ordering::Relaxed,
    );
}

#[inline]
fn bump_f64(a: &AtomicU64, by: f64) {
    let v = f64::from_bits(a.load(Ordering::Relaxed)) + by;
    a.store(v.to_bits(), Ordering::Relaxed);
}

impl ProgressCounters {
    /// A zeroed block.
    pub fn new() -> Self {
        Self::default()
    }

    /// Publishes one finished transaction (same counting rules as [`TxCounters::count`];
    /// `lag_us` is added only when `record_lag`).
    #[inline]
    pub fn record(
        &self,
        outcome: TxOutcome,
        latency_us: f64,
        lag_us: f64,
        tries: u32,
        record_lag: bool,
    ) {
        if outcome == TxOutcome::Skipped {
            bump(&self.skipped, 1);
            return;
        }
        if tries > 1 {
            bump(&self.retried, 1);
            bump(&self.retries, u64::from(tries - 1));
        }
        if outcome == TxOutcome::Success {
            bump(&self.count, 1);
            bump_f64(&self.latency_sum, latency_us);
            bump_f64(&self.latency_sum2, latency_us * latency_us);
            if record_lag {
                bump_f64(&self.lag_sum, lag_us);
            }
        } else {
            bump(&self.failures, 1);
        }
    }

    /// Reads the current values (relaxed; a concurrent update may be half visible, as in pgbench).
    pub fn snapshot(&self) -> ProgressSnapshot {
        ProgressSnapshot {
            count: self.count.load(Ordering::Relaxed),
            latency_sum: f64::from_bits(self.latency_sum.load(Ordering::Relaxed)),
            latency_sum2: f64::from_bits(self.latency_sum2.load(Ordering::Relaxed)),
            lag_sum: f64::from_bits(self.lag_sum.load(Ordering::Relaxed)),
            failures: self.failures.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
            retried: self.retried.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
        }
    }
}

/// Cumulative values at one instant (summed over threads with [`ProgressSnapshot::add`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ProgressSnapshot {
    /// Successful transactions.
    pub count: u64,
    /// Sum of their latencies (µs).
    pub latency_sum: f64,
    /// Sum of the squares of their latencies (µs²).
    pub latency_sum2: f64,
    /// Sum of their schedule lags (µs; `-R` only).
    pub lag_sum: f64,
    /// Failed transactions (all kinds).
    pub failures: u64,
    /// Skipped transactions.
    pub skipped: u64,
    /// Retried transactions.
    pub retried: u64,
    /// Retries.
    pub retries: u64,
}

impl ProgressSnapshot {
    /// Adds another thread's snapshot.
    pub fn add(&mut self, o: &ProgressSnapshot) {
        self.count += o.count;
        self.latency_sum += o.latency_sum;
        self.latency_sum2 += o.latency_sum2;
        self.lag_sum += o.lag_sum;
        self.failures += o.failures;
        self.skipped += o.skipped;
        self.retried += o.retried;
        self.retries += o.retries;
    }

    /// Sums the snapshots of all blocks.
    pub fn sum<'a>(blocks: impl IntoIterator<Item = &'a ProgressCounters>) -> ProgressSnapshot {
        let mut s = ProgressSnapshot::default();
        for b in blocks {
            s.add(&b.snapshot());
        }
        s
    }

    /// The counts as [`TxCounters`]; failure kinds are not distinguished in progress
    /// counters, so all failures appear as `other_failures`.
    pub fn counters(&self) -> TxCounters {
        TxCounters {
            successful: self.count,
            skipped: self.skipped,
            serialization_failures: 0,
            deadlock_failures: 0,
            other_failures: self.failures,
            connection_failures: 0,
            retried: self.retried,
            retries: self.retries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn publish_and_sum() {
        let a = Arc::new(ProgressCounters::new());
        let b = Arc::new(ProgressCounters::new());
        let a2 = Arc::clone(&a);
        let h = std::thread::spawn(move || {
            for _ in 0..1000 {
                a2.record(TxOutcome::Success, 2.0, 1.0, 1, true);
            }
            a2.record(TxOutcome::SerializationFailure, 0.0, 0.0, 3, true);
            a2.record(TxOutcome::Skipped, 0.0, 0.0, 1, true);
        });
        b.record(TxOutcome::Success, 4.0, 7.0, 2, false);
        if h.join().is_err() {
            panic!("writer thread panicked");
        }
        let s = ProgressSnapshot::sum([&*a, &*b]);
        assert_eq!(s.count, 1001);
        assert_eq!(s.latency_sum, 2004.0);
        assert_eq!(s.latency_sum2, 4016.0);
        assert_eq!(s.lag_sum, 1000.0);
        assert_eq!(s.failures, 1);
        assert_eq!(s.skipped, 1);
        assert_eq!(s.retried, 2);
        assert_eq!(s.retries, 3);
        assert_eq!(s.counters().total(), 1003);
    }
}
