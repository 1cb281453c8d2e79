//! `pgrush ops`: how long the operations around a database take at each scale.
//!
//! # Brief overview
//!
//! - [`OpsConfig`] says what to run: scales, [`StepKind`]s (load, dump, restore,
//!   reindex, basebackup, crash-recovery, pitr, and on request switchover and failover:
//!   a streaming standby promoted under reconnecting clients, `steps/failover.rs`),
//!   `-j`, the [`DumpFormat`], the
//!   initialization settings and the [`Target`] (a throwaway cluster from the local
//!   binaries, an existing local cluster named with `--pgdata DIR`, or a server named
//!   by connection options).
//! - [`run`] opens the server (checking first that `pg_dump`, `pg_restore` and
//!   `pg_basebackup` exist and match the server's major version), then for each scale
//!   estimates the disk space needed against the free space, and runs each step
//!   (one module per step in `steps/`). Steps that need the server's files and process
//!   (crash-recovery, pitr, switchover, failover) are skipped, with a note, on a server pgrush does not control.
//! - `--pgdata DIR` (`adopted`): the cluster crate adopts the data directory
//!   (`Cluster::adopt`: binaries of its `PG_VERSION`, run as its owner, port and socket
//!   from `postmaster.pid`). A running server is restarted once (fast shutdown, then
//!   started as pgrush's child with the options of `postmaster.opts` and its output on
//!   the file it wrote to, such as `pg_ctl -l FILE`), because only the postmaster's
//!   parent can kill it and restart it at once; a stopped one is started with
//!   `postgres -D DIR`, its output in the adoption's private directory. The steps run in
//!   a scratch database `pgrush_ops` (an error if it exists), dropped at the end. What
//!   ops changes: `ALTER SYSTEM` for crash-recovery's workload (checkpoints held off,
//!   `synchronous_commit = on`) and pitr's `archive_command` (copying to pgrush's
//!   archive, then running the cluster's own command); when pitr needs archiving and
//!   the cluster has it off, `archive_mode = on` (and `wal_level = replica`,
//!   `max_wal_senders = 10` if needed), which takes a restart. At the end
//!   `postgresql.conf` and `postgresql.auto.conf` get their old contents back, the
//!   server is reloaded, restarted if a restored setting needs it (`archive_mode`), and
//!   left running (or stopped, if it was). What to undo is journalled in
//!   `DIR/pgrush-adopted.json` before each change; a run killed outright (`SIGKILL`)
//!   leaves it, and the next run hands the cluster back first and says so on stderr.
//!   pgrush connects over the Unix socket as the superuser (named after the directory's
//!   owner) without a password: that takes `trust`, or `peer` when pgrush runs as the
//!   owner.
//! - The results are an [`OpsDocument`] (serde; schema `schema/pgrush-ops.v1.schema.json`),
//!   handed to the caller after every step so that nothing measured is lost;
//!   [`text::table`] renders them as text, [`html::render`] as a page with log-log charts (and, for a switchover or a
//!   failover, its workload's throughput with the outage windows shaded).
//! - [`compare::Comparison`] puts several results side by side (`pgrush report`).
//! - [`interrupt`] is Ctrl-C, or `SIGINT`/`SIGTERM` sent to pgrush alone: it cancels
//!   the running statement, or ends the running program's process group (each program
//!   leads one); the throwaway cluster and scratch databases are removed, a `--pgdata`
//!   cluster handed back, on the way out. Off a terminal each step's start is a line
//!   on stderr (`pgrush ops: scale 1: dump`).
//!
//! The CLI part (option parsing) is `crates/cli/src/ops_cmd.rs`.

mod adopted;
mod chart;
pub mod compare;
mod config;
mod db;
mod disk;
mod error;
mod failover_chart;
pub mod html;
mod html_failover;
pub mod interrupt;
mod lsn;
mod program;
mod progress;
mod result;
mod runner;
mod server;
mod steps;
mod target;
pub mod text;

pub use config::{DumpFormat, OpsConfig, StepKind, Target};
pub use disk::{estimate, free_bytes};
pub use error::OpsError;
pub use result::{
    BasebackupDetails, Check, ClientOutageTimes, Details, DumpDetails, FailoverDetails,
    FailoverTimeline, InitStepTime, LoadDetails, OpsDocument, OpsSettings, RecoveryDetails,
    ReindexDetails, RestoreDetails, RestorePhases, SCHEMA, ScaleResult, StepResult,
    TableComparison, WorkloadInterval,
};
pub use runner::{Outcome, run};
