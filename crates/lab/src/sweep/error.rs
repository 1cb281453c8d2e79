//! Why a sweep failed ([`SweepError`]).

use super::plan::{PLAN_FILE, PlanError};
use std::path::PathBuf;
use thiserror::Error;

/// Why a sweep failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SweepError {
    /// The plan cannot be made or resumed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The output directory holds files that are not a sweep's.
    #[error(
        "output directory \"{}\" is not empty and holds no sweep (no {PLAN_FILE}): \
         choose a new or empty directory with --out",
        .0.display()
    )]
    ForeignOutDir(PathBuf),
    /// A file could not be written or read, or a process started.
    #[error("{0}")]
    Io(String),
    /// The throwaway cluster failed.
    #[error("throwaway cluster: {0}")]
    Cluster(String),
    /// The setup connection failed.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The setup connection is gone.
    #[error("not connected")]
    NotConnected,
    /// A statement of the sweep failed.
    #[error("{sql}: {message}")]
    Query {
        /// The statement.
        sql: String,
        /// The server's message.
        message: String,
    },
    /// A child `pgrush` failed or could not be run.
    #[error(transparent)]
    Child(#[from] crate::child::ChildError),
    /// A `set:` axis names no server setting.
    #[error("unknown server setting \"{0}\"")]
    UnknownSetting(String),
    /// A setting needs a restart, and the server is not pgrush's.
    #[error(
        "setting {0} needs a server restart, which pgrush does only for its own throwaway \
         cluster (run without connection options, or restart the server yourself)"
    )]
    NeedsRestart(String),
    /// A restart was asked of a server pgrush does not control.
    #[error("pgrush cannot restart a server it did not start")]
    CannotRestart,
    /// The configuration reload did not show up.
    #[error("the server did not reload its configuration within {0} s")]
    ReloadTimeout(u64),
}
