//! pgrush's results model: per-thread collectors, mergeable HDR histograms, lock-free
//! progress counters, pgbench's `-l` / `--aggregate-interval` log line formats, and
//! [`RunSummary`], the input of every report format.
//!
//! Typical engine use:
//! 1. build a [`RunSummary::empty`] (config + scripts) and take its [`RunSummary::layout`];
//! 2. each worker thread owns a [`ThreadStats::new`]`(&layout)` (optionally
//!    [`ThreadStats::with_progress`] for `-P`, [`ThreadStats::with_series`] for the
//!    per-interval [`TimeSeries`]) and calls [`ThreadStats::record_tx`] (or
//!    [`ThreadStats::record_tx_at`] with the end instant), [`ThreadStats::record_command`]
//!    (or [`ThreadStats::record_command_at`], for the series' per-command figures),
//!    … — none of these allocate, except a histogram's counts on its first value (a
//!    per-command [`GrowingHistogram`] also when a value falls outside its window, a few
//!    times at most) and the series storing a closed interval once per interval;
//! 3. thread 0 sums [`ProgressCounters`] snapshots for progress lines;
//!    with `--metrics-listen` each thread also records into a [`live::LiveRecorder`] and
//!    publishes its deltas at interval edges for the endpoint's [`live::LiveTotals`];
//! 4. after the run, merge the threads into `summary.stats` and fill durations (a
//!    recording thread's latency histograms are complete only after a merge or
//!    [`ThreadStats::flush`]: latencies reach them in bulk).
#![deny(missing_docs)]

mod aggregate;
pub mod cfmt;
pub mod coarse;
mod counters;
pub mod growing;
pub mod histogram;
pub mod live;
mod outage;
mod pending;
pub mod progress;
mod series_parts;
pub mod server;
mod simple;
pub mod stages;
mod summary;
mod thread;
mod timeseries;
mod txlog;
pub mod wall_clock;

pub use aggregate::AggregateInterval;
pub use coarse::{INTERVAL_SIGFIG, SparseHistogram, coarse_value};
pub use counters::{TxCounters, TxOutcome, TxRecord};
pub use growing::GrowingHistogram;
pub use histogram::LatencyHistogram;
pub use outage::{ClientOutage, OutageWindow, ServerIdentity, outage_windows};
pub use progress::{ProgressCounters, ProgressSnapshot};
pub use series_parts::{CommandInterval, ScriptInterval};
pub use simple::SimpleStats;
pub use summary::{
    PartitionMethod, Partitioning, QueryMode, RunConfig, RunLimit, RunSummary, ScriptInfo,
    StageSummary, TargetInfo,
};
pub use thread::{CommandStats, ScriptStats, StatsLayout, ThreadStats, TxStats};
pub use timeseries::{IntervalStats, TimeSeries};
pub use txlog::{LogFormat, TxLogRecord, log_file_name};
