//! One module per step. Each takes the [`Server`], the configuration and the round's
//! shared state, and returns a [`StepResult`].

pub mod basebackup;
pub mod crash;
pub mod dump;
pub mod failover;
mod failover_doc;
pub mod load;
pub mod pitr;
pub mod reindex;
mod rejoin;
pub mod restore;
mod restore_phases;
pub mod workload;

pub use dump::RoundState;

use crate::ops::config::{OpsConfig, StepKind};
use crate::ops::error::OpsError;
use crate::ops::result::StepResult;
use crate::ops::server::Server;
use crate::ticker::Ticker;

/// Runs `step` for `scale` (round `round`); the steps made of phases say each on
/// `progress`.
pub fn run_step(
    step: StepKind,
    server: &Server,
    cfg: &OpsConfig,
    scale: u32,
    round: u32,
    state: &mut RoundState,
    progress: &Ticker,
) -> Result<StepResult, OpsError> {
    if step.needs_control()
        && let Err(why) = server.controlled()
    {
        return Ok(StepResult::skipped(step, round, why));
    }
    match step {
        StepKind::Load => load::run(server, cfg, scale, round),
        StepKind::Dump => dump::run(server, cfg, round, state),
        StepKind::Restore => restore::run(server, cfg, round, state),
        StepKind::Reindex => reindex::run(server, round),
        StepKind::Basebackup => basebackup::run(server, round),
        StepKind::CrashRecovery => crash::run(server, cfg, (scale, round), progress),
        StepKind::Pitr => pitr::run(server, cfg, (scale, round), progress),
        StepKind::Switchover | StepKind::Failover => {
            failover::run(server, cfg, (step, scale, round), progress)
        }
    }
}
