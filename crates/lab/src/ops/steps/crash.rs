//! `crash-recovery`: checkpoints held off, a tpcb-like workload, `SIGKILL` of the
//! postmaster, then the restart timed until it accepts connections; the WAL replayed
//! (from the server log's redo positions) and a check that no commit was lost.

use std::time::Instant;

use pgrush_cluster::Cluster;

use crate::ops::config::{OpsConfig, StepKind};
use crate::ops::error::OpsError;
use crate::ops::lsn::redo_range;
use crate::ops::program::rate;
use crate::ops::result::{Check, Details, RecoveryDetails, StepResult};
use crate::ops::server::Server;
use crate::ops::steps::workload;
use crate::ticker::Ticker;

/// Settings of the workload: checkpoints held off, and every commit durable (the
/// check counts on it; a `--pgdata` cluster may run with `synchronous_commit = off`).
const CRASH_SETTINGS: &[(&str, &str)] = &[
    ("checkpoint_timeout", "1h"),
    ("max_wal_size", "64GB"),
    ("synchronous_commit", "on"),
];

/// Runs the crash and the recovery, each phase said on `progress`.
pub fn run(
    server: &Server,
    cfg: &OpsConfig,
    (scale, round): (u32, u32),
    progress: &Ticker,
) -> Result<StepResult, OpsError> {
    let cluster = server.own_cluster("crash-recovery")?;
    for (name, value) in CRASH_SETTINGS {
        cluster.alter_system(name, value)?;
    }
    cluster.reload()?;
    let phase = |what: &str| format!("scale {scale}: crash-recovery ({what})");
    let result = crash_and_recover(server, cluster, cfg, round, (progress, &phase));
    for (name, _) in CRASH_SETTINGS {
        cluster.alter_system_reset(name)?;
    }
    cluster.reload()?;
    if cfg.init.unlogged && result.is_ok() {
        // Recovery emptied the unlogged tables: load them again for the next steps.
        progress.phase_drawing_itself(phase("loading the emptied unlogged tables again"));
        super::load::run(server, cfg, scale, round)?;
    }
    result
}

fn crash_and_recover(
    server: &Server,
    cluster: &Cluster,
    cfg: &OpsConfig,
    round: u32,
    (progress, phase): (&Ticker, &dyn Fn(&str) -> String),
) -> Result<StepResult, OpsError> {
    let mut db = server.db(None)?;
    db.exec("CHECKPOINT")?;
    let before = db.number("SELECT count(*) FROM pgbench_history")?;
    drop(db);
    let workload = (progress, phase("workload"));
    let transactions = workload::run(server, cfg, cfg.workload_seconds, workload)?;
    let log_start = cluster.log_contents().len();
    progress.phase(phase("server killed, recovering"), None);
    cluster.kill()?;
    let start = Instant::now();
    cluster.start_server()?;
    let seconds = start.elapsed().as_secs_f64();
    let log = cluster.log_contents();
    let range = redo_range(log.get(log_start..).unwrap_or_default());
    let replayed = match &range {
        Some(r) => r.bytes()?,
        None => 0,
    };
    let after = server
        .db(None)?
        .number("SELECT count(*) FROM pgbench_history")?;
    let expected = before + transactions;
    let check = if cfg.init.unlogged {
        Check {
            passed: after == 0,
            text: format!(
                "unlogged tables are emptied by crash recovery: pgbench_history has {after} rows"
            ),
        }
    } else {
        Check {
            passed: after >= expected && replayed > 0,
            text: format!(
                "pgbench_history has {after} rows, {expected} expected ({transactions} committed); \
                 {replayed} bytes of WAL replayed"
            ),
        }
    };
    Ok(StepResult {
        step: StepKind::CrashRecovery,
        round,
        seconds,
        bytes: Some(replayed),
        bytes_per_second: rate(replayed, seconds),
        check: Some(check),
        skipped: None,
        details: Details::Recovery(RecoveryDetails {
            transactions,
            redo_start: range.as_ref().map(|r| r.start.clone()).unwrap_or_default(),
            redo_end: range.map(|r| r.end).unwrap_or_default(),
            wal_replayed_bytes: replayed,
            expected_history_rows: expected,
            history_rows: after,
            target: None,
            base_backup_seconds: None,
        }),
    })
}
