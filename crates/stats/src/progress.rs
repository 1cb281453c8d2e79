//! Lock-free progress counters (`-P`): each thread publishes, thread 0 snapshots; and
//! the progress line thread 0 prints from two snapshots ([`format_progress_line`]).
//!
//! Each worker thread is the only writer of its own [`ProgressCounters`] (updated by
//! [`crate::ThreadStats::record_tx`]); thread 0 reads every thread's block with relaxed
//! loads, like pgbench reads the other threads' statistics without locking.

mod counters;
mod line;

pub use counters::{ProgressCounters, ProgressSnapshot};
pub use line::{ProgressOptions, ProgressTime, format_progress_line, push_progress_line};
