//! `--pgdata DIR`: the steps on an existing local cluster. The cluster crate adopts it
//! ([`Cluster::adopt`]: its binaries from `PG_VERSION`, run as its owner, restarted as
//! our child so that crash-recovery can kill it) and hands it back as found: its
//! configuration files restored, running or stopped as before. The steps run in a
//! scratch database, [`SCRATCH_DB`], created here (journalled first) and dropped when
//! the cluster is handed back; the user's own databases are never touched. A run
//! killed outright leaves the cluster's journal: the next run hands the cluster back
//! first ([`Cluster::hand_back_interrupted`]) and says so on standard error.
//!
//! What needs a restart: archiving for pitr (`archive_mode = on`, `wal_level` at least
//! `replica`, `max_wal_senders` above 0) when the cluster had it off; the server is
//! restarted once to switch it on, and once more at the end to switch it back.

use std::path::Path;

use pgrush_cluster::{Cluster, quote_ident};
use pgrush_wire::conninfo::ConnectRequest;

use crate::ops::config::{OpsConfig, StepKind};
use crate::ops::error::OpsError;
use crate::ops::server::{IDLE_ARCHIVE_COMMAND, Server, check_tools, superuser_request};

/// The database the steps use on an adopted cluster.
pub const SCRATCH_DB: &str = "pgrush_ops";

/// The database the scratch database is created from and dropped in.
const MAINTENANCE_DB: &str = "postgres";

/// Adopts `dir`, checks the programs, switches archiving on when pitr needs it and
/// creates the scratch database.
pub fn open(cfg: &OpsConfig, dir: &Path) -> Result<Server, OpsError> {
    let replayed = Cluster::hand_back_interrupted(dir)?;
    if !replayed.is_empty() {
        eprintln!(
            "pgrush ops: an earlier run on {} was killed before it handed the cluster back; \
             done now:",
            dir.display()
        );
        for line in replayed {
            eprintln!("pgrush ops:   {line}");
        }
    }
    let cluster = Cluster::adopt(dir)?;
    let major = cluster.version_num() / 10000;
    check_tools(cluster.install(), major, cfg)?;
    let idle_archive_command = if cfg.steps.contains(&StepKind::Pitr) {
        enable_archiving(&cluster)?
    } else {
        IDLE_ARCHIVE_COMMAND.to_string()
    };
    let request = superuser_request(&cluster, MAINTENANCE_DB);
    let mut db = crate::ops::db::Db::connect(&request, None)?;
    let exists = db.number(&format!(
        "SELECT count(*) FROM pg_database WHERE datname = '{SCRATCH_DB}'"
    ))?;
    if exists > 0 {
        return Err(OpsError::Usage(format!(
            "the cluster in {} already has a database \"{SCRATCH_DB}\" (left by an earlier run?): \
             pgrush ops runs its steps in a database of that name; drop it first",
            dir.display()
        )));
    }
    cluster.journal_scratch_database(SCRATCH_DB)?;
    db.exec(&format!("CREATE DATABASE {}", quote_ident(SCRATCH_DB)))?;
    let request = ConnectRequest {
        dbname: Some(SCRATCH_DB.to_string()),
        ..request
    };
    Server::on_cluster(cluster, request, idle_archive_command)
}

/// Switches WAL archiving on (restarting the server) when it is off; returns the
/// `archive_command` to keep outside pitr (the cluster's own when it archives already).
fn enable_archiving(cluster: &Cluster) -> Result<String, OpsError> {
    let mode = cluster.show("archive_mode")?;
    let command = cluster.show("archive_command")?;
    let mut changes = Vec::new();
    if mode == "off" {
        changes.push(("archive_mode", "on"));
        changes.push(("archive_command", IDLE_ARCHIVE_COMMAND));
    }
    if cluster.show("wal_level")? == "minimal" {
        changes.push(("wal_level", "replica"));
    }
    if cluster.show("max_wal_senders")? == "0" {
        changes.push(("max_wal_senders", "10"));
    }
    for (name, value) in &changes {
        cluster.alter_system(name, value)?;
    }
    if !changes.is_empty() {
        cluster.restart()?;
    }
    Ok(
        if mode == "off" || command.is_empty() || command == "(disabled)" {
            IDLE_ARCHIVE_COMMAND.to_string()
        } else {
            command
        },
    )
}
