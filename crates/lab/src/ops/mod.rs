//! `pgrush ops`: how long the operations around a database take at each scale.
//!
//! # Brief overview
//!
//! - [`OpsConfig`] says what to run: scales, [`StepKind`]s (load, dump, restore,
//!   reindex, basebackup, crash-recovery, pitr), `-j`, the [`DumpFormat`], the
//!   initialization settings and the [`Target`] (a throwaway cluster from the local
//!   binaries, or a server named by connection options).
//! - [`run`] opens the server (checking first that `pg_dump`, `pg_restore` and
//!   `pg_basebackup` exist and match the server's major version), then for each scale
//!   estimates the disk space needed against the free space, and runs each step
//!   (one module per step in `steps/`). Steps that need the server's files and process
//!   (crash-recovery, pitr) are skipped, with a note, on a server pgrush does not control.
//! - The results are an [`OpsDocument`] (serde; schema `schema/pgrush-ops.v1.schema.json`),
//!   handed to the caller after every step so that nothing measured is lost;
//!   [`text::table`] renders them as text, [`html::render`] as a page with log-log charts.
//! - [`compare::Comparison`] puts several results side by side (`pgrush report`).
//! - [`interrupt`] is Ctrl-C: it cancels the running statement or program; the
//!   throwaway cluster and scratch databases are removed on the way out.
//!
//! The CLI part (option parsing) is `crates/cli/src/ops_cmd.rs`.

mod adopted;
mod chart;
pub mod compare;
mod config;
mod db;
mod disk;
mod error;
pub mod html;
pub mod interrupt;
mod lsn;
mod program;
mod progress;
mod result;
mod runner;
mod server;
mod steps;
pub mod text;

pub use config::{DumpFormat, OpsConfig, StepKind, Target};
pub use disk::{estimate, free_bytes};
pub use error::OpsError;
pub use result::{
    BasebackupDetails, Check, Details, DumpDetails, InitStepTime, LoadDetails, OpsDocument,
    OpsSettings, RecoveryDetails, ReindexDetails, RestoreDetails, RestorePhases, SCHEMA,
    ScaleResult, StepResult, TableComparison,
};
pub use runner::{Outcome, run};
