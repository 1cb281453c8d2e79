//! `pitr`: WAL archiving to a local directory (the cluster runs with `archive_mode =
//! on`; the copying `archive_command` is set with `ALTER SYSTEM` and a reload), a base
//! backup, a workload, a recorded target (a restore point and its LSN), more
//! workload; then the base backup restored into a second cluster with
//! `recovery_target_name`, timed until recovery ends (promotion), and a check that the
//! data is the data at the target.

use std::path::Path;
use std::time::{Duration, Instant};

use pgrush_cluster::{Cluster, quote_literal};

use crate::ops::config::{OpsConfig, StepKind};
use crate::ops::error::OpsError;
use crate::ops::lsn::redo_range;
use crate::ops::program::{rate, remove, wait_until};
use crate::ops::result::{Check, Details, RecoveryDetails, StepResult};
use crate::ops::server::{IDLE_ARCHIVE_COMMAND, Server};
use crate::ops::steps::{basebackup, workload};
use crate::ticker::Ticker;

/// The restore point the recovery stops at.
const TARGET_NAME: &str = "pgrush_ops_target";
/// How long archiving and recovery may take.
const WAIT_LIMIT: Duration = Duration::from_secs(600);

/// What was recorded at the target.
struct Target {
    lsn: String,
    time: String,
    history_rows: u64,
    transactions: u64,
}

/// Runs the whole point-in-time recovery, each phase said on `progress`.
pub fn run(
    server: &Server,
    cfg: &OpsConfig,
    (scale, round): (u32, u32),
    progress: &Ticker,
) -> Result<StepResult, OpsError> {
    let cluster = server.own_cluster("pitr")?;
    let archive = cluster.server_dir("archive")?;
    let base = server.scratch.join("pitr-base");
    let mut copy = format!("cp %p {}/%f", archive.display());
    if server.idle_archive_command != IDLE_ARCHIVE_COMMAND {
        // An adopted cluster's own archive keeps getting every segment.
        copy = format!("{copy} && ({})", server.idle_archive_command);
    }
    cluster.alter_system("archive_command", &copy)?;
    cluster.reload()?;
    let phase = move |what: &str| format!("scale {scale}: pitr ({what})");
    let result = archive_and_recover(server, cfg, round, (&archive, &base), (progress, &phase));
    cluster.alter_system("archive_command", &server.idle_archive_command)?;
    cluster.reload()?;
    remove(&base)?;
    empty_dir(&archive)?;
    result
}

fn archive_and_recover(
    server: &Server,
    cfg: &OpsConfig,
    round: u32,
    (archive, base): (&Path, &Path),
    (progress, phase): (&Ticker, &dyn Fn(&str) -> String),
) -> Result<StepResult, OpsError> {
    progress.phase(phase("base backup"), None);
    let base_backup_seconds = basebackup::take(server, base)?;
    let half = cfg.workload_seconds.div_ceil(2).max(1);
    let transactions = workload::run(
        server,
        cfg,
        half,
        (progress, phase("workload before the target")),
    )?;
    let mut db = server.db(None)?;
    let mut target = record_target(&mut db, transactions)?;
    workload::run(
        server,
        cfg,
        half,
        (progress, phase("workload after the target")),
    )?;
    progress.phase(phase("waiting for the WAL archive"), None);
    wait_archived(&mut db)?;
    drop(db);
    progress.phase(phase("recovering to the target"), None);
    let recovered = recover(server, archive, base)?;
    if cfg.init.unlogged {
        // Unlogged tables come back empty from any recovery.
        target.history_rows = 0;
    }
    Ok(result(round, base_backup_seconds, &recovered, &target))
}

/// Records the target: `pgbench_history`'s row count, then a restore point (its LSN
/// and time).
fn record_target(db: &mut crate::ops::db::Db, transactions: u64) -> Result<Target, OpsError> {
    let history_rows = db.number("SELECT count(*) FROM pgbench_history")?;
    let row = db.rows(&format!(
        "SELECT pg_create_restore_point({}), clock_timestamp()",
        quote_literal(TARGET_NAME)
    ))?;
    let at = |i: usize| {
        row.first()
            .and_then(|r| r.get(i))
            .cloned()
            .unwrap_or_default()
    };
    Ok(Target {
        lsn: at(0),
        time: at(1),
        history_rows,
        transactions,
    })
}

/// What the recovery of the base backup measured.
struct Recovered {
    seconds: f64,
    range: Option<crate::ops::lsn::RedoRange>,
    replayed: u64,
    history_rows: u64,
    stopped_at_target: bool,
}

/// Restores the base backup into a second throwaway cluster and recovers it to the
/// target from the archive, timed from the server's start to its promotion.
fn recover(server: &Server, archive: &Path, base: &Path) -> Result<Recovered, OpsError> {
    let mut restored = Cluster::builder().install(server.tools.clone()).start()?;
    restored.stop(pgrush_cluster::ShutdownMode::Fast)?;
    restored.replace_data_dir(base)?;
    // The backup's roles: a --pgdata cluster's superuser may have another name.
    restored.set_superuser(&server.endpoint.user);
    // The copy's ALTER SYSTEM settings (archiving into the archive read here) go.
    let auto_conf = restored.data_dir().join("postgresql.auto.conf");
    std::fs::write(&auto_conf, b"")
        .map_err(|e| OpsError::io(format!("empty {}", auto_conf.display()), e))?;
    let restore = format!("cp {}/%f %p", archive.display());
    for (name, value) in [
        ("archive_mode", "off"),
        ("restore_command", restore.as_str()),
        ("recovery_target_name", TARGET_NAME),
        ("recovery_target_action", "promote"),
    ] {
        restored.write_setting(name, value)?;
    }
    let signal = restored.data_dir().join("recovery.signal");
    std::fs::write(&signal, b"").map_err(|e| OpsError::io("write recovery.signal", e))?;
    let start = Instant::now();
    restored.start_server()?;
    wait_promoted(&restored)?;
    let seconds = start.elapsed().as_secs_f64();
    let log = restored.log_contents();
    let range = redo_range(&log);
    let replayed = match &range {
        Some(r) => r.bytes()?,
        None => 0,
    };
    let history_rows = restored
        .psql_db(
            &server.endpoint.dbname,
            "SELECT count(*) FROM pgbench_history",
        )?
        .trim()
        .parse::<u64>()
        .map_err(|_| OpsError::Unexpected("unreadable pgbench_history count".into()))?;
    let stopped_at_target = log.contains(&format!(
        "recovery stopping at restore point \"{TARGET_NAME}\""
    ));
    Ok(Recovered {
        seconds,
        range,
        replayed,
        history_rows,
        stopped_at_target,
    })
}

fn result(round: u32, base_backup_seconds: f64, r: &Recovered, target: &Target) -> StepResult {
    let passed = r.stopped_at_target && r.history_rows == target.history_rows;
    StepResult {
        step: StepKind::Pitr,
        round,
        seconds: r.seconds,
        bytes: Some(r.replayed),
        bytes_per_second: rate(r.replayed, r.seconds),
        check: Some(Check {
            passed,
            text: format!(
                "recovery {} at restore point {TARGET_NAME} ({}); pgbench_history has {} rows, \
                 {} at the target",
                if r.stopped_at_target {
                    "stopped"
                } else {
                    "did not stop"
                },
                target.lsn,
                r.history_rows,
                target.history_rows
            ),
        }),
        skipped: None,
        details: Details::Recovery(RecoveryDetails {
            transactions: target.transactions,
            redo_start: r
                .range
                .as_ref()
                .map(|x| x.start.clone())
                .unwrap_or_default(),
            redo_end: r.range.as_ref().map(|x| x.end.clone()).unwrap_or_default(),
            wal_replayed_bytes: r.replayed,
            expected_history_rows: target.history_rows,
            history_rows: r.history_rows,
            target: Some(format!("{TARGET_NAME} at {} ({})", target.lsn, target.time)),
            base_backup_seconds: Some(base_backup_seconds),
        }),
    }
}

/// Switches to a new WAL segment and waits until the archiver has copied the old one.
fn wait_archived(db: &mut crate::ops::db::Db) -> Result<(), OpsError> {
    let segment = db.value("SELECT pg_walfile_name(pg_current_wal_lsn())")?;
    db.exec("SELECT pg_switch_wal()")?;
    let check = format!(
        "SELECT coalesce(last_archived_wal >= {}, false) FROM pg_stat_archiver",
        quote_literal(&segment)
    );
    wait_until(
        (WAIT_LIMIT, Duration::from_millis(50)),
        || Ok(db.value(&check)? == "t"),
        || {
            format!(
                "WAL segment {segment} not archived after {}s",
                WAIT_LIMIT.as_secs()
            )
        },
    )
}

/// Waits until the restored server has left recovery (promoted at the target).
fn wait_promoted(restored: &Cluster) -> Result<(), OpsError> {
    wait_until(
        (WAIT_LIMIT, Duration::from_millis(20)),
        || Ok(restored.psql("SELECT pg_is_in_recovery()")? == "f"),
        || {
            format!(
                "the restored server was still in recovery after {}s (see {})",
                WAIT_LIMIT.as_secs(),
                restored.log_path().display()
            )
        },
    )
}

/// Removes everything inside `dir`, keeping `dir`.
fn empty_dir(dir: &Path) -> Result<(), OpsError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| OpsError::io(format!("read {}", dir.display()), e))?;
    for entry in entries.flatten() {
        remove(&entry.path())?;
    }
    Ok(())
}
