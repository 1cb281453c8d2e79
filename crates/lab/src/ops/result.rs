//! The results, as written to `--json` (schema `schema/pgrush-ops.v1.schema.json`).

use serde::{Deserialize, Serialize};

use crate::ops::config::StepKind;

pub use pgrush_report::outage::OutageWindowDoc;

/// The schema identifier of [`OpsDocument`] (one string with the one `pgrush report`'s
/// ops gates recognize).
pub use pgrush_report::assertion::ops::SCHEMA;

/// A whole `pgrush ops` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpsDocument {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// pgrush's version.
    pub pgrush_version: String,
    /// The server's `server_version`.
    pub server_version: String,
    /// The server's `server_version_num`.
    pub server_version_num: u32,
    /// `throwaway` or `server`.
    pub target: String,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// What was asked for.
    pub settings: OpsSettings,
    /// One entry per scale that ran (or started).
    pub scales: Vec<ScaleResult>,
    /// Why the series ended early (disk space, an error, Ctrl-C); `null` when complete.
    pub stopped: Option<String>,
}

/// The settings of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpsSettings {
    /// Scales asked for.
    pub scales: Vec<u32>,
    /// Steps asked for.
    pub steps: Vec<StepKind>,
    /// `-j`.
    pub jobs: u32,
    /// `--dump-format`.
    pub dump_format: String,
    /// `--repeat`.
    pub repeat: u32,
    /// Workload length of crash-recovery and pitr, seconds.
    pub workload_seconds: u32,
    /// `-F`.
    pub fillfactor: u32,
    /// `--unlogged-tables`.
    pub unlogged_tables: bool,
    /// `--partitions` (0: none).
    pub partitions: u32,
    /// The `-I` steps.
    pub init_steps: String,
}

/// One scale's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleResult {
    /// The scale factor.
    pub scale: u32,
    /// Estimated disk space the scale needs, bytes.
    pub estimated_bytes: u64,
    /// Free space before the scale, bytes.
    pub free_bytes: u64,
    /// Every step's result, in running order, for each repetition.
    pub steps: Vec<StepResult>,
}

/// One step's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// Which step.
    pub step: StepKind,
    /// Repetition number, from 1.
    pub round: u32,
    /// Wall-clock time of the step's main operation, seconds (0 when skipped).
    pub seconds: f64,
    /// The size it produced or handled, bytes.
    pub bytes: Option<u64>,
    /// Throughput: bytes per second of `bytes` (MB/s in the table).
    pub bytes_per_second: Option<f64>,
    /// The check's verdict (`null`: the step has none).
    pub check: Option<Check>,
    /// Why the step did not run (`null` when it ran).
    pub skipped: Option<String>,
    /// Step-specific measurements.
    pub details: Details,
}

impl StepResult {
    /// A step that did not run, and why.
    pub fn skipped(step: StepKind, round: u32, why: impl Into<String>) -> StepResult {
        StepResult {
            step,
            round,
            seconds: 0.0,
            bytes: None,
            bytes_per_second: None,
            check: None,
            skipped: Some(why.into()),
            details: Details::None,
        }
    }
}

/// A correctness check of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Whether it passed.
    pub passed: bool,
    /// What was compared.
    pub text: String,
}

/// The step-specific part of a [`StepResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Details {
    /// Nothing more (a skipped step).
    None,
    /// `load`.
    Load(LoadDetails),
    /// `dump`.
    Dump(DumpDetails),
    /// `restore`.
    Restore(RestoreDetails),
    /// `reindex`.
    Reindex(ReindexDetails),
    /// `basebackup`.
    Basebackup(BasebackupDetails),
    /// `crash-recovery` and `pitr`.
    Recovery(RecoveryDetails),
    /// `switchover` and `failover`.
    Failover(FailoverDetails),
}

/// What `load` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadDetails {
    /// The `-i` steps' own times, as `-i` prints them.
    pub init_steps: Vec<InitStepTime>,
    /// Rows in the four tables.
    pub rows: u64,
    /// Rows per second over the whole load.
    pub rows_per_second: f64,
    /// Heap (and TOAST) bytes of the pgbench tables.
    pub table_bytes: u64,
    /// Index bytes of the pgbench tables.
    pub index_bytes: u64,
    /// Table plus index bytes.
    pub total_bytes: u64,
    /// WAL written during the load (`pg_current_wal_lsn()` difference).
    pub wal_bytes: u64,
}

/// One `-i` step's time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitStepTime {
    /// pgbench's name (`client-side generate`, `vacuum`, ...).
    pub op: String,
    /// Seconds.
    pub seconds: f64,
}

/// What `dump` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DumpDetails {
    /// The format.
    pub format: String,
    /// `-j` (directory format only; 1 otherwise).
    pub jobs: u32,
}

/// What `restore` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestoreDetails {
    /// `-j` given to `pg_restore` (1 for plain dumps, restored with `psql`).
    pub jobs: u32,
    /// The parts of the restore (`null` for a plain dump, restored with `psql`).
    pub phases: Option<RestorePhases>,
    /// Per-table comparison of the restored copy with the original.
    pub tables: Vec<TableComparison>,
}

/// A restore's parts, from `pg_restore --verbose` (with `-j N` they overlap: each runs
/// from the first line of its kind to the first line of the next).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestorePhases {
    /// Tables and other definitions (pre-data), seconds.
    pub schema_seconds: f64,
    /// Table data, seconds.
    pub data_seconds: f64,
    /// Indexes and constraints (post-data), seconds.
    pub index_and_constraint_seconds: f64,
}

/// One table, original against restored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableComparison {
    /// Table name.
    pub table: String,
    /// Rows in the original.
    pub rows: u64,
    /// Rows in the copy.
    pub restored_rows: u64,
    /// Checksum of the original (`md5` of the rows in key order).
    pub checksum: String,
    /// Checksum of the copy.
    pub restored_checksum: String,
}

/// What `reindex` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReindexDetails {
    /// `REINDEX TABLE pgbench_accounts`, seconds.
    pub plain_seconds: f64,
    /// `REINDEX TABLE CONCURRENTLY pgbench_accounts`, seconds.
    pub concurrently_seconds: f64,
    /// Index bytes of `pgbench_accounts` afterwards.
    pub index_bytes: u64,
}

/// What `basebackup` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BasebackupDetails {
    /// Files in the backup.
    pub files: u64,
}

/// What crash recovery or point-in-time recovery measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryDetails {
    /// Transactions the workload's clients saw committed.
    pub transactions: u64,
    /// Where replay started (`redo starts at`).
    pub redo_start: String,
    /// Where replay ended (`redo done at`).
    pub redo_end: String,
    /// WAL replayed, bytes (end minus start).
    pub wal_replayed_bytes: u64,
    /// `pgbench_history` rows expected after recovery.
    pub expected_history_rows: u64,
    /// `pgbench_history` rows found after recovery.
    pub history_rows: u64,
    /// pitr: the recovery target (restore point name and LSN).
    pub target: Option<String>,
    /// pitr: seconds to take the base backup.
    pub base_backup_seconds: Option<f64>,
}

/// What a switchover or a failover measured. The step's `seconds` is the clients'
/// outage window (or, when no client lost its connection, the shutdown plus the
/// promotion).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailoverDetails {
    /// Whether the standby was synchronous (`--sync-standby`).
    pub synchronous: bool,
    /// Seconds the primary took to end (fast shutdown, or `SIGKILL`).
    pub stop_seconds: f64,
    /// Seconds `pg_promote()` took on the standby (it polls, every 0.1 s, until the
    /// promotion is done: up to 0.1 s more than the promotion).
    pub promote_seconds: f64,
    /// The clients' outage window: from the first connection failure to the last
    /// client's first commit after it (none when no client lost its connection).
    pub outage_seconds: Option<f64>,
    /// Clients that lost their connection.
    pub clients_cut_off: u64,
    /// Transactions counted as connection failures.
    pub connection_failures: u64,
    /// WAL received but not yet replayed by the standby when the primary ended, bytes.
    pub replay_backlog_bytes: u64,
    /// Transactions the workload's clients saw committed.
    pub transactions: u64,
    /// `pgbench_history` rows expected on the new primary.
    pub expected_history_rows: u64,
    /// `pgbench_history` rows found on the new primary.
    pub history_rows: u64,
    /// Switchover: seconds the old primary took to rejoin as a standby of the new
    /// one, from its start (its `pg_rewind` included) until it streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejoin_seconds: Option<f64>,
    /// Switchover: whether the old primary needed `pg_rewind` to rejoin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewound: Option<bool>,
    /// Committed transactions missing on the new primary.
    pub lost_transactions: u64,
    /// The clients' outage windows, as the workload's run document gives them (times in
    /// seconds from the start of its measured run; none when no client lost its
    /// connection, or in documents of older pgrush versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outage_windows: Vec<OutageWindowDoc>,
    /// When the primary went and the standby took over, on the same time axis (absent
    /// when the workload wrote no run document, or in documents of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<FailoverTimeline>,
    /// The workload's throughput per interval (one second), on the same time axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workload_intervals: Vec<WorkloadInterval>,
    /// Each client's outage, on the same time axis, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_outages: Vec<ClientOutageTimes>,
}

/// When one client lost its connection and when it committed again.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClientOutageTimes {
    /// The client's number.
    pub client: u32,
    /// Its transaction failed on the lost connection, seconds from the start of the
    /// measured run.
    pub start_s: f64,
    /// Its first commit after it (none: the run ended first).
    pub end_s: Option<f64>,
}

/// A switchover's or a failover's moments, in seconds from the start of its workload's
/// measured run (the time axis of the outage windows).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FailoverTimeline {
    /// The primary was told to go (a fast shutdown began, or `SIGKILL` was sent).
    pub primary_stopping_s: f64,
    /// The primary was down (its shutdown done, or its postmaster gone).
    pub primary_down_s: f64,
    /// `pg_promote()` returned on the standby.
    pub promoted_s: f64,
    /// The first transaction a client committed after losing its connection (none
    /// when no client lost it, or none committed again).
    pub first_commit_s: Option<f64>,
}

/// One interval of the workload's time series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInterval {
    /// Where its benchmark time starts, seconds from the start of the measured run.
    pub start_s: f64,
    /// Where it ends.
    pub end_s: f64,
    /// Successful transactions per second.
    pub tps: f64,
    /// Failed transactions in it (connection failures among them).
    pub failures: u64,
}
