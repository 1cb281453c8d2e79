//! `basebackup`: `pg_basebackup -D DIR` (WAL streamed), its time, size and rate.

use std::path::Path;

use crate::ops::config::StepKind;
use crate::ops::error::OpsError;
use crate::ops::program::{disk_usage, rate, remove, run_timed};
use crate::ops::result::{BasebackupDetails, Details, StepResult};
use crate::ops::server::Server;

/// Takes a base backup into `dir` (replaced); returns its seconds.
pub fn take(server: &Server, dir: &Path) -> Result<f64, OpsError> {
    remove(dir)?;
    let mut cmd = server.tool("pg_basebackup");
    cmd.arg("-D").arg(dir).args(["-c", "fast", "-X", "stream"]);
    run_timed(cmd, "pg_basebackup").map(|(_, seconds)| seconds)
}

/// Takes, measures and removes a base backup.
pub fn run(server: &Server, round: u32) -> Result<StepResult, OpsError> {
    let dir = server.scratch.join("basebackup");
    let seconds = take(server, &dir)?;
    let (bytes, files) = disk_usage(&dir);
    remove(&dir)?;
    Ok(StepResult {
        step: StepKind::Basebackup,
        round,
        seconds,
        bytes: Some(bytes),
        bytes_per_second: rate(bytes, seconds),
        check: None,
        skipped: None,
        details: Details::Basebackup(BasebackupDetails { files }),
    })
}
