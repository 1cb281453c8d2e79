//! `dump`: the real `pg_dump` in the chosen format (`-Fd -j N` for a directory).

use std::path::PathBuf;

use crate::ops::config::{DumpFormat, OpsConfig, StepKind};
use crate::ops::error::OpsError;
use crate::ops::program::{disk_usage, rate, remove, run_timed};
use crate::ops::result::{Details, DumpDetails, StepResult};
use crate::ops::server::Server;

/// What one step leaves for a later one in the same round.
#[derive(Debug, Default)]
pub struct RoundState {
    /// The dump `restore` restores.
    pub dump: Option<(PathBuf, DumpFormat)>,
}

/// Dumps the steps' database into the scratch directory.
pub fn run(
    server: &Server,
    cfg: &OpsConfig,
    round: u32,
    state: &mut RoundState,
) -> Result<StepResult, OpsError> {
    let format = cfg.dump_format;
    let path = server.scratch.join(format!("dump.{}", format.name()));
    remove(&path)?;
    let jobs = if format == DumpFormat::Directory {
        cfg.jobs.max(1)
    } else {
        1
    };
    let mut cmd = server.tool("pg_dump");
    cmd.arg(format!("-F{}", format.letter()))
        .arg("-f")
        .arg(&path);
    if jobs > 1 {
        cmd.arg(format!("-j{jobs}"));
    }
    cmd.arg(&server.endpoint.dbname);
    let (_, seconds) = run_timed(cmd, "pg_dump")?;
    let (bytes, _) = disk_usage(&path);
    state.dump = Some((path, format));
    Ok(StepResult {
        step: StepKind::Dump,
        round,
        seconds,
        bytes: Some(bytes),
        bytes_per_second: rate(bytes, seconds),
        check: None,
        skipped: None,
        details: Details::Dump(DumpDetails {
            format: format.name().to_string(),
            jobs,
        }),
    })
}
