//! Why a capacity search failed ([`CapacityError`]).

use crate::child::ChildError;
use thiserror::Error;

/// Why a capacity search failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CapacityError {
    /// A child `pgrush` failed or could not be run.
    #[error(transparent)]
    Child(#[from] ChildError),
    /// A file could not be written or read.
    #[error("{0}")]
    Io(String),
    /// An SLO needs more transactions than the slowest step can give.
    #[error(
        "SLO \"{slo}\" cannot be measured: a step needs at least {needed} transactions to \
         show it holds, and {rate} tps for at most {max_step_s} s (--max-step) gives {gives}; \
         raise --max-step or --start-rate, or bound a lower percentile"
    )]
    Unmeasurable {
        /// The SLO.
        slo: String,
        /// The fewest transactions it needs.
        needed: u64,
        /// The lowest rate the search plans.
        rate: String,
        /// The longest step.
        max_step_s: u32,
        /// The transactions that gives.
        gives: u64,
    },
    /// The closed-loop probe completed no transaction.
    #[error("the closed-loop probe completed no transaction: give --start-rate")]
    EmptyProbe,
}
