//! What a sweep is asked to do: its plan's key, seed, output directory, the `pgrush`
//! binary its children run and the server ([`Target`]).

use super::plan::PlanKey;
use pgrush_wire::conninfo::{ConnectRequest, redact_argv};
use std::path::PathBuf;

/// Where the runs go.
#[derive(Debug, Clone)]
pub enum Target {
    /// A throwaway cluster started for the sweep (the default).
    Throwaway,
    /// A server named by the command line or the environment.
    Given {
        /// The sweep's own setup connection.
        request: ConnectRequest,
        /// The connection arguments given to every child.
        child_args: Vec<String>,
    },
}

impl Target {
    /// How the plan file names the target (passwords redacted).
    pub fn describe(&self) -> String {
        match self {
            Target::Throwaway => "throwaway cluster".to_string(),
            Target::Given { child_args, .. } => redact_argv(child_args).join(" "),
        }
    }
}

/// A sweep to run.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// What defines the results.
    pub key: PlanKey,
    /// The order's seed, when given (`--seed`).
    pub seed: Option<u64>,
    /// The output directory.
    pub out_dir: PathBuf,
    /// The `pgrush` binary the children run.
    pub exe: PathBuf,
    /// The server.
    pub target: Target,
}
