//! `switchover` and `failover`: what an application sees when its primary goes away.
//!
//! A streaming standby is built from the primary (`pg_basebackup -R` into a second
//! throwaway cluster; synchronous with `--sync-standby`). A tpcb-like workload runs with
//! `--reconnect` through `host=primary,standby target_session_attrs=read-write`; a
//! third of the way in, the primary is shut down cleanly (switchover) or its
//! postmaster killed (failover), and the standby promoted (`pg_promote()`). Timed: the
//! primary's end, the promotion, the clients' outage windows and throughput (from the
//! workload's run document, `failover_doc`), the WAL the standby still had to replay.
//! Then the check: every transaction the clients saw committed is in the new primary's
//! `pgbench_history` (with a synchronous standby none may be missing; with an
//! asynchronous one the missing are counted). After a switchover the old primary
//! rejoins as a standby of the promoted one (`pg_rewind` where needed; timed), then is
//! promoted back. Afterwards the standby is discarded and the original primary started
//! again, so that the next steps run where they ran before.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pgrush_cluster::{Cluster, ShutdownMode};
use pgrush_stats::wall_clock::unix_time_us;
use serde_json::Value;

use crate::ops::config::{OpsConfig, StepKind};
use crate::ops::error::OpsError;
use crate::ops::program::{remove, run_timed, wait_until};
use crate::ops::result::{Check, Details, FailoverDetails, StepResult};
use crate::ops::server::Server;
use crate::ops::steps::failover_doc::{self, Moments};
use crate::ops::steps::rejoin::rejoin_and_restore;
use crate::ops::steps::workload::committed;
use crate::ticker::Ticker;

/// How long the standby may take to stream, and the clients to reconnect.
const WAIT_LIMIT: Duration = Duration::from_secs(120);

/// The WAL the primary keeps while it has a standby (`wal_keep_size`): the standby
/// may fall behind, and after a switchover `pg_rewind` reads the old primary's WAL
/// back to the last checkpoint the two share (the base backup's at the latest),
/// which the old primary's shutdown checkpoint would otherwise remove.
const KEPT_WAL: &str = "1GB";

/// What happens to the primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// A clean (fast) shutdown.
    Switchover,
    /// `SIGKILL` of the postmaster.
    Failover,
}

/// Runs `step` (switchover or failover), each phase said on `progress`.
pub fn run(
    server: &Server,
    cfg: &OpsConfig,
    (step, scale, round): (StepKind, u32, u32),
    progress: &Ticker,
) -> Result<StepResult, OpsError> {
    let event = match step {
        StepKind::Failover => Event::Failover,
        _ => Event::Switchover,
    };
    let primary = server.own_cluster(step.name())?;
    let phase = |what: &str| format!("scale {scale}: {step} ({what})");
    progress.phase(phase("building a streaming standby"), None);
    let base = server.scratch.join("standby-base");
    let standby = build_standby(server, &base, cfg.sync_standby).inspect_err(|_| {
        let _ = reset_primary(primary, cfg.sync_standby);
    })?;
    let result = fail_over(server, (primary, &standby), cfg, event, (progress, &phase));
    // After a switchover the old primary rejoins as a standby of the promoted one,
    // then takes its place again.
    let rejoin = (result.is_ok() && event == Event::Switchover).then(|| {
        progress.phase(phase("the old primary rejoining as a standby"), None);
        rejoin_and_restore(primary, &standby)
    });
    // The original primary serves the next steps: the promoted standby goes.
    standby.discard();
    if !primary.is_running() {
        progress.phase(phase("starting the primary again"), None);
        primary.start_server()?;
    }
    reset_primary(primary, cfg.sync_standby)?;
    remove(&base)?;
    let mut result = result?;
    if let (Some(rejoin), Details::Failover(d)) = (rejoin.transpose()?, &mut result.details) {
        d.rejoin_seconds = Some(rejoin.seconds);
        d.rewound = Some(rejoin.rewound);
    }
    result.step = step;
    result.round = round;
    Ok(result)
}

/// Takes back what [`build_standby`] set on the primary (a running server).
fn reset_primary(primary: &Cluster, synchronous: bool) -> Result<(), OpsError> {
    primary.alter_system_reset("wal_keep_size")?;
    if synchronous {
        primary.alter_system_reset("synchronous_standby_names")?;
    }
    primary.reload()?;
    Ok(())
}

/// A base backup with `-R` (standby.signal, `primary_conninfo`), started as a second
/// cluster and waited for until it streams; the primary keeps its WAL meanwhile
/// ([`KEPT_WAL`]).
pub(super) fn build_standby(
    server: &Server,
    base: &Path,
    synchronous: bool,
) -> Result<Cluster, OpsError> {
    remove(base)?;
    let primary = server.own_cluster("standby")?;
    primary.alter_system("wal_keep_size", KEPT_WAL)?;
    primary.reload()?;
    let mut cmd = server.tool("pg_basebackup");
    cmd.arg("-D")
        .arg(base)
        .args(["-c", "fast", "-X", "stream", "-R"]);
    run_timed(cmd, "pg_basebackup -R")?;
    let mut standby = Cluster::builder().install(server.tools.clone()).start()?;
    standby.stop(ShutdownMode::Fast)?;
    standby.replace_data_dir(base)?;
    standby.set_superuser(&server.endpoint.user);
    standby.start_server()?;
    if synchronous {
        primary.alter_system("synchronous_standby_names", "*")?;
        primary.reload()?;
    }
    let streaming = format!(
        "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'{}",
        if synchronous {
            " AND sync_state = 'sync'"
        } else {
            ""
        }
    );
    wait_until(
        (WAIT_LIMIT, Duration::from_millis(50)),
        || Ok(primary.psql(&streaming)?.trim() == "1"),
        || {
            format!(
                "the standby did not stream within {} s",
                WAIT_LIMIT.as_secs()
            )
        },
    )?;
    Ok(standby)
}

/// What the primary's end and the promotion took, when they happened, and the WAL
/// still to replay.
struct Timings {
    stop_seconds: f64,
    promote_seconds: f64,
    replay_backlog_bytes: u64,
    moments: Moments,
}

fn fail_over(
    server: &Server,
    (primary, standby): (&Cluster, &Cluster),
    cfg: &OpsConfig,
    event: Event,
    (progress, phase): (&Ticker, &dyn Fn(&str) -> String),
) -> Result<StepResult, OpsError> {
    let before = server
        .db(None)?
        .number("SELECT count(*) FROM pgbench_history")?;
    let seconds = cfg.workload_seconds.max(3);
    let doc_path = server.scratch.join("failover-run.json");
    let workload = workload_command(server, (primary, standby), cfg, seconds, &doc_path);
    progress.phase(
        phase("workload, then the primary goes"),
        Some(Duration::from_secs(u64::from(seconds))),
    );
    let (report, timings) = std::thread::scope(|scope| {
        let clients = scope.spawn(|| run_timed(workload, "the workload (pgrush --reconnect)"));
        std::thread::sleep(Duration::from_secs_f64(f64::from(seconds) / 3.0));
        let timings = end_primary(primary, standby, event);
        let report = clients
            .join()
            .unwrap_or_else(|_| Err(OpsError::Unexpected("the workload thread panicked".into())));
        (report, timings)
    });
    let timings = timings?;
    let (report, _) = report?;
    let transactions = committed(&report).ok_or_else(|| {
        OpsError::Unexpected(format!(
            "the workload's report has no transaction count:\n{report}"
        ))
    })?;
    let doc: Value = std::fs::read_to_string(&doc_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let _ = std::fs::remove_file(&doc_path);
    let after: u64 = standby
        .psql_db(
            &server.endpoint.dbname,
            "SELECT count(*) FROM pgbench_history",
        )?
        .trim()
        .parse()
        .map_err(|e| OpsError::Unexpected(format!("pgbench_history's count: {e}")))?;
    Ok(result(
        event,
        cfg,
        &timings,
        &doc,
        (before, transactions, after),
    ))
}

/// `pgrush -n -b tpcb-like --reconnect` through both servers, writing its run document.
fn workload_command(
    server: &Server,
    (primary, standby): (&Cluster, &Cluster),
    cfg: &OpsConfig,
    seconds: u32,
    doc_path: &Path,
) -> Command {
    let mut cmd = Command::new(&cfg.pgrush_exe);
    server.point_at_server(&mut cmd);
    let conninfo = format!(
        "dbname={} host={},{} port={},{} target_session_attrs=read-write",
        server.endpoint.dbname,
        primary.socket_dir().display(),
        standby.socket_dir().display(),
        primary.port(),
        standby.port()
    );
    cmd.args(["-n", "-b", "tpcb-like", "--reconnect=60"])
        .arg(format!("-T{seconds}"))
        .arg(format!("-c{}", cfg.workload_clients.max(1)))
        .arg(format!("--json={}", doc_path.display()))
        .arg(conninfo);
    cmd
}

/// Ends the primary as `event` says and promotes the standby.
fn end_primary(primary: &Cluster, standby: &Cluster, event: Event) -> Result<Timings, OpsError> {
    let stopping_us = unix_time_us();
    let start = Instant::now();
    match event {
        Event::Switchover => primary.stop(ShutdownMode::Fast)?,
        Event::Failover => primary.kill()?,
    }
    let stop_seconds = start.elapsed().as_secs_f64();
    let down_us = unix_time_us();
    let backlog = standby.psql(
        "SELECT coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0)::bigint",
    )?;
    let start = Instant::now();
    standby.psql("SELECT pg_promote(true, 60)")?;
    Ok(Timings {
        stop_seconds,
        promote_seconds: start.elapsed().as_secs_f64(),
        replay_backlog_bytes: backlog.trim().parse().unwrap_or(0),
        moments: Moments {
            stopping_us,
            down_us,
            promoted_us: unix_time_us(),
        },
    })
}

fn result(
    event: Event,
    cfg: &OpsConfig,
    timings: &Timings,
    doc: &Value,
    (before, transactions, after): (u64, u64, u64),
) -> StepResult {
    let (outage_seconds, cut_off, connection_failures) = failover_doc::outage(doc);
    let clients = failover_doc::client_outages(doc);
    let expected = before + transactions;
    let lost = expected.saturating_sub(after);
    let standby = if cfg.sync_standby {
        "synchronous"
    } else {
        "asynchronous"
    };
    let check = Check {
        passed: lost == 0 || !cfg.sync_standby,
        text: format!(
            "pgbench_history has {after} rows on the new primary, {expected} expected \
             ({transactions} committed); {lost} committed transactions lost ({standby} standby)"
        ),
    };
    StepResult {
        step: match event {
            Event::Switchover => StepKind::Switchover,
            Event::Failover => StepKind::Failover,
        },
        round: 0,
        seconds: outage_seconds.unwrap_or(timings.stop_seconds + timings.promote_seconds),
        bytes: None,
        bytes_per_second: None,
        check: Some(check),
        skipped: None,
        details: Details::Failover(FailoverDetails {
            synchronous: cfg.sync_standby,
            stop_seconds: timings.stop_seconds,
            promote_seconds: timings.promote_seconds,
            outage_seconds,
            clients_cut_off: cut_off,
            connection_failures,
            replay_backlog_bytes: timings.replay_backlog_bytes,
            transactions,
            expected_history_rows: expected,
            history_rows: after,
            lost_transactions: lost,
            rejoin_seconds: None,
            rewound: None,
            outage_windows: failover_doc::windows(doc),
            timeline: failover_doc::timeline(doc, &timings.moments, &clients),
            workload_intervals: failover_doc::intervals(doc),
            client_outages: clients,
        }),
    }
}
