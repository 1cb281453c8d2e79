//! What the server was doing during a run (`--server-stats`): per-interval deltas of
//! the server's cumulative statistics, the share of the benchmark's backend time in
//! each wait, events (checkpoints, autovacuum runs) with their times, per-table
//! totals, and findings that explain the result. Times are seconds from the run's
//! start, on the same axis as the client's time series.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The server-side timeline of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerTimeline {
    /// Counter sampling interval (s).
    pub interval_s: f64,
    /// Wait sampling period (s).
    pub wait_sample_s: f64,
    /// `server_version_num` of the sampled server.
    pub server_version_num: u32,
    /// One entry per counter interval, in time order.
    pub intervals: Vec<ServerInterval>,
    /// Share of the benchmark's backend time in each wait over the whole run
    /// (`Type:Event`, `CPU` for active without a wait), descending.
    pub waits: Vec<WaitShare>,
    /// Checkpoints and autovacuum runs seen during the run.
    pub events: Vec<ServerEvent>,
    /// Totals over the run for the benchmark's tables.
    pub tables: Vec<TableActivity>,
    /// Totals over the run for the database.
    pub database: DatabaseActivity,
    /// What could not be sampled (missing privileges, a lost connection...).
    pub warnings: Vec<String>,
    /// Plain-sentence explanations, each with its evidence.
    pub findings: Vec<Finding>,
}

/// One counter interval: deltas of the cumulative statistics over it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInterval {
    /// Start, seconds from the run's start.
    pub start_s: f64,
    /// Length (s).
    pub duration_s: f64,
    /// Share of sampled backend time per wait in this interval.
    pub waits: BTreeMap<String, f64>,
    /// Database counters (deltas).
    pub database: DatabaseActivity,
    /// WAL bytes written (from `pg_stat_wal` or the WAL position).
    pub wal_bytes: u64,
    /// WAL records (`pg_stat_wal`; 0 where unknown).
    pub wal_records: u64,
    /// Full-page images (`pg_stat_wal`; 0 where unknown).
    pub wal_fpi: u64,
    /// Checkpoints requested or timed (counter deltas).
    pub checkpoints: u64,
    /// Buffers written by checkpoints.
    pub checkpoint_buffers: u64,
    /// `pg_stat_io` reads, writes, extends and fsyncs, all backend types (16+).
    pub io: IoCounts,
    /// Waiting lock requests seen in the wait samples, by `locktype` or
    /// `locktype:relation`.
    pub lock_waits: BTreeMap<String, u64>,
}

/// Database-wide counters (`pg_stat_database`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseActivity {
    /// Commits.
    pub commits: u64,
    /// Rollbacks.
    pub rollbacks: u64,
    /// Blocks found in shared buffers.
    pub blocks_hit: u64,
    /// Blocks read (from the OS).
    pub blocks_read: u64,
    /// Rows returned, fetched, inserted, updated, deleted.
    pub tuples_returned: u64,
    /// Rows fetched.
    pub tuples_fetched: u64,
    /// Rows inserted.
    pub tuples_inserted: u64,
    /// Rows updated.
    pub tuples_updated: u64,
    /// Rows deleted.
    pub tuples_deleted: u64,
    /// Temporary file bytes.
    pub temp_bytes: u64,
    /// Deadlocks.
    pub deadlocks: u64,
    /// Recovery conflicts.
    pub conflicts: u64,
}

impl DatabaseActivity {
    /// Share of block requests served from shared buffers, if any were made.
    pub fn hit_ratio(&self) -> Option<f64> {
        let total = self.blocks_hit + self.blocks_read;
        (total > 0).then(|| self.blocks_hit as f64 / total as f64)
    }
}

/// `pg_stat_io` totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCounts {
    /// Read operations.
    pub reads: u64,
    /// Write operations.
    pub writes: u64,
    /// Relation extensions.
    pub extends: u64,
    /// fsync calls.
    pub fsyncs: u64,
}

/// A wait and its share of backend time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitShare {
    /// `Type:Event`, or `CPU`.
    pub wait: String,
    /// Share in [0, 1].
    pub share: f64,
}

/// Something the server did during the run, with when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerEvent {
    /// What it was.
    pub kind: EventKind,
    /// On which table (autovacuum), if known.
    pub relation: Option<String>,
    /// Start, seconds from the run's start.
    pub start_s: f64,
    /// End, seconds from the run's start.
    pub end_s: f64,
}

/// The kinds of [`ServerEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A checkpoint.
    Checkpoint,
    /// An autovacuum worker vacuuming (and maybe analyzing) a table.
    Autovacuum,
    /// An autovacuum worker only analyzing a table.
    Autoanalyze,
}

/// Totals over the run for one table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableActivity {
    /// Table name.
    pub name: String,
    /// Rows updated.
    pub updates: u64,
    /// Of which HOT updates.
    pub hot_updates: u64,
    /// Dead rows at the end.
    pub dead_tuples_end: u64,
    /// Autovacuum runs that finished during the run.
    pub autovacuums: u64,
    /// Autoanalyze runs that finished during the run.
    pub autoanalyzes: u64,
    /// Heap blocks hit and read.
    pub heap_hit: u64,
    /// Heap blocks read.
    pub heap_read: u64,
    /// Index blocks hit.
    pub index_hit: u64,
    /// Index blocks read.
    pub index_read: u64,
    /// The table's `fillfactor` storage parameter, if set.
    pub fillfactor: Option<u32>,
}

impl TableActivity {
    /// Share of updates that were HOT, if there were updates.
    pub fn hot_share(&self) -> Option<f64> {
        (self.updates > 0).then(|| self.hot_updates as f64 / self.updates as f64)
    }
}

/// An explanation in one sentence, with the figures it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable name of the rule that produced it (`checkpoint-during-run`...).
    pub rule: String,
    /// The sentence.
    pub text: String,
    /// The figures behind it, by name.
    pub evidence: BTreeMap<String, f64>,
}
