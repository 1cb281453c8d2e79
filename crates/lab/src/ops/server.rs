//! The server the steps run against: a throwaway cluster pgrush controls, or a server
//! named by connection options; the PostgreSQL programs matching its major version; and
//! a scratch directory for dumps and backups.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pgrush_cluster::{Cluster, PgInstall, clear_pg_env};
use pgrush_wire::conninfo::ConnectRequest;

use crate::ops::config::{DumpFormat, OpsConfig, StepKind};
use crate::ops::db::Db;
use crate::ops::error::OpsError;

/// The database the steps use on a throwaway cluster.
const THROWAWAY_DB: &str = "postgres";

/// Settings of the throwaway cluster: durable commits (crash recovery must keep every
/// commit the client saw), the defaults a DBA would time, WAL archiving on (its
/// command, which needs no restart, copies segments only during pitr), and hint-bit
/// changes WAL-logged, which `pg_rewind` needs after a switchover on clusters without
/// data checksums (`initdb`'s default before PostgreSQL 18).
const THROWAWAY_SETTINGS: &[(&str, &str)] = &[
    ("fsync", "on"),
    ("synchronous_commit", "on"),
    ("full_page_writes", "on"),
    ("shared_buffers", "128MB"),
    ("max_wal_senders", "10"),
    ("wal_level", "replica"),
    ("archive_mode", "on"),
    ("archive_command", IDLE_ARCHIVE_COMMAND),
    ("wal_log_hints", "on"),
];

/// The throwaway cluster's `archive_command` outside pitr: every segment counts as
/// archived at once.
pub const IDLE_ARCHIVE_COMMAND: &str = "true";

/// `request` with the server's notices (`table ... does not exist, skipping`) turned off.
pub(crate) fn quiet(request: &ConnectRequest) -> ConnectRequest {
    let mut request = request.clone();
    request.extra.push((
        "options".to_string(),
        "-c client_min_messages=warning".to_string(),
    ));
    request
}

/// Where the programs connect: what `PQhost`/`PQport`/`PQuser`/`PQdb` reported.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Host name or socket directory.
    pub host: String,
    /// Port.
    pub port: String,
    /// User.
    pub user: String,
    /// Database.
    pub dbname: String,
}

/// A server ready for the steps.
pub struct Server {
    /// How to connect to the steps' database.
    pub request: ConnectRequest,
    /// The same, as the programs get it.
    pub endpoint: Endpoint,
    /// The programs matching the server's major version.
    pub tools: PgInstall,
    /// The cluster, when pgrush controls it.
    pub cluster: Option<Cluster>,
    /// Where dumps and backups go.
    pub scratch: PathBuf,
    /// `server_version`.
    pub version: String,
    /// `server_version_num`.
    pub version_num: u32,
    /// The `archive_command` outside pitr.
    pub idle_archive_command: String,
    /// Removes the scratch directory when the server is not a throwaway cluster.
    pub(crate) _scratch_dir: Option<tempfile::TempDir>,
}

impl Server {
    /// Checks the programs the steps need, then starts a throwaway cluster from the
    /// programs in `bin_dir` (or the discovered installation).
    pub(crate) fn start_throwaway(
        bin_dir: Option<&Path>,
        cfg: &OpsConfig,
    ) -> Result<Server, OpsError> {
        let install = match bin_dir {
            Some(dir) => PgInstall::from_bin_dir(dir)?,
            None => PgInstall::discover()?,
        };
        let major = install.major_version()?;
        check_tools(&install, major, cfg)?;
        Server::throwaway(install)
    }

    /// Connects to the server `request` names, then checks the programs matching its
    /// major version and the privileges the steps need.
    pub(crate) fn connect(request: &ConnectRequest, cfg: &OpsConfig) -> Result<Server, OpsError> {
        let request = &quiet(request);
        let mut db = Db::connect(request, None)?;
        let (version, version_num) = db.version();
        let major = version_num / 10000;
        let tools = PgInstall::for_major(major).map_err(|e| {
            OpsError::Tool(format!(
                "no PostgreSQL {major} programs (pg_dump, pg_restore, pg_basebackup) found \
                 for the server's version {version}: {e}"
            ))
        })?;
        check_tools(&tools, major, cfg)?;
        check_privileges(&mut db, cfg)?;
        let endpoint = endpoint_of(&mut db)?;
        let dir = tempfile::Builder::new()
            .prefix("pgrush-ops-")
            .tempdir()
            .map_err(|e| OpsError::io("create a scratch directory", e))?;
        Ok(Server {
            request: request.clone(),
            endpoint,
            tools,
            cluster: None,
            scratch: dir.path().to_path_buf(),
            version,
            version_num,
            idle_archive_command: IDLE_ARCHIVE_COMMAND.to_string(),
            _scratch_dir: Some(dir),
        })
    }

    /// Starts a throwaway cluster from `install`, with the steps' settings.
    pub(crate) fn throwaway(install: PgInstall) -> Result<Server, OpsError> {
        let mut builder = Cluster::builder()
            .install(install.clone())
            .hba(["local replication all trust"]);
        for (name, value) in THROWAWAY_SETTINGS {
            builder = builder.setting(*name, *value);
        }
        let cluster = builder.start()?;
        let request = superuser_request(&cluster, THROWAWAY_DB);
        Server::on_cluster(cluster, request, IDLE_ARCHIVE_COMMAND.to_string())
    }

    /// A server on a cluster pgrush controls (a throwaway one, or one adopted with
    /// `--pgdata`), reached with `request`: its version and endpoint are read over a
    /// first connection, and dumps and backups go to the cluster's `ops` directory.
    pub(crate) fn on_cluster(
        cluster: Cluster,
        request: ConnectRequest,
        idle_archive_command: String,
    ) -> Result<Server, OpsError> {
        let mut db = Db::connect(&request, None)?;
        let (version, version_num) = db.version();
        let endpoint = endpoint_of(&mut db)?;
        let scratch = cluster.server_dir("ops")?;
        Ok(Server {
            request,
            endpoint,
            tools: cluster.install().clone(),
            scratch,
            version,
            version_num,
            idle_archive_command,
            cluster: Some(cluster),
            _scratch_dir: None,
        })
    }

    /// A connection to the steps' database (or `dbname`).
    pub fn db(&self, dbname: Option<&str>) -> Result<Db, OpsError> {
        Db::connect(&self.request, dbname)
    }

    /// A command for one of the PostgreSQL programs, pointed at the server with
    /// `PGHOST`/`PGPORT`/`PGUSER`/`PGDATABASE`.
    pub fn tool(&self, name: &str) -> Command {
        let mut cmd = self.tools.command(name);
        self.point_at_server(&mut cmd);
        cmd
    }

    /// Sets the `PG*` variables of `cmd` to this server, the password included (a
    /// throwaway cluster's command gets nothing else from the environment).
    pub fn point_at_server(&self, cmd: &mut Command) {
        if self.cluster.is_some() {
            clear_pg_env(cmd);
        }
        cmd.env("PGHOST", &self.endpoint.host)
            .env("PGPORT", &self.endpoint.port)
            .env("PGUSER", &self.endpoint.user)
            .env("PGDATABASE", &self.endpoint.dbname);
        if let Some(password) = self.password() {
            cmd.env("PGPASSWORD", password);
        }
    }

    /// The password of the steps' connection, for the programs' `PGPASSWORD` (never
    /// their command lines): given with the connection options or inside a connection
    /// string or URI, or from the environment for a server pgrush does not control.
    fn password(&self) -> Option<String> {
        if self.cluster.is_some() {
            return self.request.password.clone();
        }
        let params = pgrush_wire::conninfo::resolve(&self.request).ok()?;
        params.password().map(str::to_string)
    }

    /// The cluster, or why a step that needs one cannot run.
    pub fn controlled(&self) -> Result<&Cluster, String> {
        self.cluster.as_ref().ok_or_else(|| {
            "needs the server's files and process: runs only on the throwaway cluster \
             (give no connection options) or a local cluster named with --pgdata"
                .to_string()
        })
    }

    /// The cluster that `step` needs (crash recovery, PITR): an unexpected error without
    /// one (`run_step` skips such steps before they start).
    pub fn own_cluster(&self, step: &str) -> Result<&Cluster, OpsError> {
        self.cluster
            .as_ref()
            .ok_or_else(|| OpsError::Unexpected(format!("{step} needs a cluster")))
    }

    /// `throwaway`, `pgdata` (an adopted local cluster) or `server`.
    pub fn kind(&self) -> &'static str {
        match &self.cluster {
            Some(cluster) if cluster.adopted_running().is_some() => "pgdata",
            Some(_) => "throwaway",
            None => "server",
        }
    }
}

/// Where the connection went, as the programs need it.
/// The connection to `dbname` of a local cluster pgrush controls: its superuser over its
/// Unix socket, quiet.
pub(crate) fn superuser_request(cluster: &Cluster, dbname: &str) -> ConnectRequest {
    quiet(&ConnectRequest {
        dbname: Some(dbname.to_string()),
        host: Some(cluster.socket_dir().display().to_string()),
        port: Some(cluster.port().to_string()),
        user: Some(cluster.superuser().to_string()),
        fallback_application_name: Some("pgrush-ops".to_string()),
        ..ConnectRequest::default()
    })
}

fn endpoint_of(db: &mut Db) -> Result<Endpoint, OpsError> {
    let row = db
        .rows("SELECT current_user, current_database()")?
        .into_iter()
        .next()
        .ok_or_else(|| OpsError::Unexpected("no current_user".into()))?;
    let (host, port) = db.host_port();
    Ok(Endpoint {
        host,
        port,
        user: row[0].clone(),
        dbname: row[1].clone(),
    })
}

/// The role may do what the chosen steps do: create the restore's scratch database,
/// take a base backup.
fn check_privileges(db: &mut Db, cfg: &OpsConfig) -> Result<(), OpsError> {
    let row = db
        .rows(
            "SELECT current_user, rolsuper, rolcreatedb, rolreplication \
             FROM pg_roles WHERE rolname = current_user",
        )?
        .into_iter()
        .next()
        .unwrap_or_default();
    let has =
        |i: usize| row.get(1).is_some_and(|v| v == "t") || row.get(i).is_some_and(|v| v == "t");
    let user = row.first().cloned().unwrap_or_default();
    let needs = [
        (
            StepKind::Restore,
            2,
            "CREATEDB",
            "restore creates a scratch database",
        ),
        (
            StepKind::Basebackup,
            3,
            "REPLICATION",
            "basebackup uses a replication connection",
        ),
    ];
    for (step, column, privilege, why) in needs {
        if cfg.steps.contains(&step) && !has(column) {
            return Err(OpsError::Privilege(format!(
                "role \"{user}\" lacks the {privilege} privilege ({why}): grant it, connect as \
                 another role, or leave {step} out of --steps"
            )));
        }
    }
    Ok(())
}

/// The programs the chosen steps need.
fn needed_tools(cfg: &OpsConfig) -> Vec<&'static str> {
    let mut tools = Vec::new();
    if cfg.steps.contains(&StepKind::Dump) {
        tools.push("pg_dump");
    }
    if cfg.steps.contains(&StepKind::Restore) {
        tools.push(if cfg.dump_format == DumpFormat::Plain {
            "psql"
        } else {
            "pg_restore"
        });
    }
    if cfg.steps.contains(&StepKind::Basebackup) || cfg.steps.contains(&StepKind::Pitr) {
        tools.push("pg_basebackup");
    }
    tools
}

/// Each needed program exists in `install` and is of the server's major version.
pub(crate) fn check_tools(
    install: &PgInstall,
    major: u32,
    cfg: &OpsConfig,
) -> Result<(), OpsError> {
    for name in needed_tools(cfg) {
        let path = install.program(name);
        if !path.is_file() {
            return Err(OpsError::Tool(format!(
                "{name} not found: {} does not exist (the steps need the PostgreSQL {major} \
                 programs beside the server's; install them or choose other --steps)",
                path.display()
            )));
        }
        let found = tool_major(install, name, &path)?;
        if found != major {
            return Err(OpsError::Tool(format!(
                "{} is version {found} but the server is PostgreSQL {major}: \
                 the programs must match the server's major version",
                path.display()
            )));
        }
    }
    Ok(())
}

/// The major version `NAME --version` reports.
fn tool_major(install: &PgInstall, name: &str, path: &Path) -> Result<u32, OpsError> {
    let out = install
        .command(name)
        .arg("--version")
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .map_err(|e| OpsError::Tool(format!("cannot run {}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "pg_dump (PostgreSQL) 18.1"
    text.split_once(") ")
        .and_then(|(_, v)| v.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .filter(|_| out.status.success())
        .ok_or_else(|| {
            OpsError::Tool(format!(
                "{} --version: unreadable output {:?}",
                path.display(),
                text.trim()
            ))
        })
}
