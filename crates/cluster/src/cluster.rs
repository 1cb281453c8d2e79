//! A running (or stopped) local cluster: creation, server control, administration and
//! removal.

use std::fs::File;
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tempfile::TempDir;

mod adopt;
mod adopted;
mod files;

use crate::account::{Account, server_account};
use crate::builder::{
    Auth, ClusterBuilder, SUPERUSER, check_hba_lines, check_setting_name, hba_text, quote_ident,
    quote_literal, setting_line,
};
use crate::error::ClusterError;
use crate::install::PgInstall;
use crate::process::{
    WatchdogPlan, children_of, clear_pg_env, group_alive, signal, signal_group, spawn_watchdog,
    still_running, stop_child, wait_exit,
};

/// How long a server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a smart or fast shutdown may take.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an immediate shutdown may take before the postmaster is killed.
const IMMEDIATE_GRACE: Duration = Duration::from_secs(10);
/// How long the postmaster's children may take to exit after it was killed.
const ORPHAN_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a reload may take to reach new sessions.
const RELOAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How many fresh ports are tried when the chosen one is taken meanwhile.
const PORT_ATTEMPTS: usize = 5;

/// Where a cluster's files live and what happens to them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A fresh temp dir, deleted with the cluster.
    Throwaway,
    /// A directory chosen by the caller, kept.
    Kept(PathBuf),
    /// An existing data directory ([`Cluster::adopt`]): never deleted, handed back as
    /// found.
    Adopted(Box<adopted::Adopted>),
}

/// How the server is shut down ([`Cluster::stop`]): PostgreSQL's three modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownMode {
    /// Waits for every session to end, then checkpoints (`SIGTERM`).
    Smart,
    /// Ends the sessions, then checkpoints (`SIGINT`): `pg_ctl stop`'s default.
    Fast,
    /// Stops every process at once without a checkpoint (`SIGQUIT`): the next start
    /// performs crash recovery.
    Immediate,
}

impl ShutdownMode {
    fn signal(self) -> i32 {
        match self {
            ShutdownMode::Smart => libc::SIGTERM,
            ShutdownMode::Fast => libc::SIGINT,
            ShutdownMode::Immediate => libc::SIGQUIT,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ShutdownMode::Smart => "smart",
            ShutdownMode::Fast => "fast",
            ShutdownMode::Immediate => "immediate",
        }
    }
}

/// A local PostgreSQL cluster: its files, and its server while it runs.
///
/// A throwaway cluster ([`Cluster::start`], or a [`ClusterBuilder`] without
/// [`ClusterBuilder::directory`]) lives in a private temp dir; dropping it stops the
/// server and deletes every file, and a watchdog process does the same if this process
/// dies first. A kept cluster lives in the caller's directory; dropping it stops the
/// server (fast shutdown) and leaves the files.
///
/// Every method takes `&self`, so one cluster can be shared between threads.
#[derive(Debug)]
pub struct Cluster {
    install: PgInstall,
    server: PgInstall,
    account: Option<Account>,
    superuser: String,
    location: Location,
    base_path: PathBuf,
    data_dir: PathBuf,
    socket_dir: PathBuf,
    log_path: PathBuf,
    port: u16,
    version_num: u32,
    tls: bool,
    ca_path: Option<PathBuf>,
    auth: Auth,
    hba: Mutex<Vec<String>>,
    base: Mutex<Option<TempDir>>,
    postmaster: Mutex<Option<Child>>,
    watchdog: Mutex<Option<Child>>,
    /// The scratch databases dropped when an adopted cluster is handed back.
    scratch_databases: Mutex<Vec<String>>,
}

impl ClusterBuilder {
    /// Creates, configures and starts the cluster.
    pub fn start(self) -> Result<Cluster, ClusterError> {
        let install = self.checked_install()?;
        let location = match self.kept_directory() {
            Some(dir) => Location::Kept(dir.to_path_buf()),
            None => Location::Throwaway,
        };
        Cluster::create(self, install, location)
    }
}

impl Cluster {
    /// Starts a throwaway cluster with trust authentication and no TLS, from the
    /// discovered installation ([`PgInstall::discover`]).
    pub fn start() -> Result<Cluster, ClusterError> {
        ClusterBuilder::default().start()
    }

    /// A builder for other configurations.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// Creates the files from the `initdb` template, configures them and starts the
    /// server (the second half of [`ClusterBuilder::start`]).
    pub(crate) fn create(
        config: ClusterBuilder,
        install: PgInstall,
        location: Location,
    ) -> Result<Cluster, ClusterError> {
        let account = server_account()?;
        let server = install.reachable_by(account)?;

        let (base, base_path) = match &location {
            Location::Throwaway => {
                let base = tempfile::Builder::new()
                    .prefix("pgrush-sandbox-")
                    .tempdir_in(crate::install::work_dir())
                    .map_err(|e| ClusterError::io("create a temp dir", e))?;
                let path = base.path().to_path_buf();
                (Some(base), path)
            }
            Location::Kept(dir) => {
                let path = prepare_kept_dir(dir)?;
                let parent = path.parent().unwrap_or(&path);
                if account.is_some_and(|acct| !acct.can_reach(parent)) {
                    return Err(ClusterError::Invalid(format!(
                        "cluster directory {}: the postgres account cannot reach it \
                         (a parent directory lacks search permission for others)",
                        path.display()
                    )));
                }
                (None, path)
            }
            Location::Adopted(_) => {
                return Err(ClusterError::Invalid(
                    "an adopted cluster is not created (Cluster::adopt)".into(),
                ));
            }
        };
        chmod(&base_path, 0o755)?;
        let socket_dir = base_path.join("sock");
        let tls_dir = base_path.join("tls");
        for dir in [&socket_dir, &tls_dir] {
            std::fs::create_dir(dir)
                .map_err(|e| ClusterError::io(format!("mkdir {}", dir.display()), e))?;
            chmod(dir, 0o755)?;
        }
        if let Some(acct) = account {
            acct.chown(&base_path)?;
            acct.chown(&socket_dir)?;
        }
        let data_dir = base_path.join("data");
        crate::template::instantiate(&server, account, &data_dir)?;
        let major = read_major(&data_dir)?;

        let (tls_settings, ca_path) = match config.server_tls() {
            Some(tls) => {
                let installed = tls.install(&tls_dir, account)?;
                (installed.settings, installed.ca_path)
            }
            None => (Vec::new(), None),
        };
        let conf = config.config_text(&socket_dir, major, &tls_settings);
        append(&data_dir.join("postgresql.conf"), &conf)?;
        let tls = config.server_tls().is_some();
        let hba = hba_text(config.auth_method(), config.custom_hba(), tls);
        overwrite(&data_dir.join("pg_hba.conf"), &hba)?;

        let log_path = base_path.join("server.log");
        let mut cluster = Cluster {
            install,
            server,
            account,
            superuser: SUPERUSER.to_string(),
            location,
            base_path,
            data_dir,
            socket_dir,
            log_path,
            port: 0,
            version_num: 0,
            tls,
            ca_path,
            auth: config.auth_method(),
            hba: Mutex::new(config.custom_hba().to_vec()),
            base: Mutex::new(base),
            postmaster: Mutex::new(None),
            watchdog: Mutex::new(None),
            scratch_databases: Mutex::new(Vec::new()),
        };
        cluster.launch_on_free_port()?;
        cluster.version_num = cluster
            .psql("SHOW server_version_num")?
            .trim()
            .parse()
            .map_err(|_| ClusterError::Invalid("unreadable server_version_num".into()))?;
        let sql = config.roles_sql();
        if !sql.is_empty() {
            cluster.psql(&sql)?;
        }
        Ok(cluster)
    }

    // ---- where it is ----------------------------------------------------------------

    /// The TCP port (also the Unix socket's port number); it stays the same across
    /// restarts.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory holding the Unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The TCP host the server listens on: `127.0.0.1`.
    pub fn tcp_host(&self) -> &str {
        "127.0.0.1"
    }

    /// The superuser's name: `postgres` (for an adopted cluster, the data directory
    /// owner's name, as `initdb` names the bootstrap superuser).
    pub fn superuser(&self) -> &str {
        &self.superuser
    }

    /// libpq environment for reaching this cluster over its Unix socket as the superuser:
    /// `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE=postgres`.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PGHOST".into(), self.socket_dir.display().to_string()),
            ("PGPORT".into(), self.port.to_string()),
            ("PGUSER".into(), self.superuser.clone()),
            ("PGDATABASE".into(), "postgres".into()),
        ]
    }

    /// The bin dir of the installation (as discovered or given, not a private copy).
    pub fn bin_dir(&self) -> &Path {
        self.install.bin_dir()
    }

    /// The installation (bin dir and library dir) this cluster's client programs come from.
    pub fn install(&self) -> &PgInstall {
        &self.install
    }

    /// A command for one of the programs that work on the data directory itself
    /// (`pg_rewind`, `pg_controldata`): from the installation the server runs from
    /// (as root, a copy the server account can reach when the installation is not),
    /// as the account the server runs under, without this process's `PG*`
    /// environment, in the cluster's base directory.
    pub fn server_command(&self, name: &str) -> std::process::Command {
        let mut cmd = self.server.command(name);
        clear_pg_env(&mut cmd);
        cmd.current_dir(&self.base_path);
        if let Some(acct) = self.account {
            acct.apply(&mut cmd);
        }
        cmd
    }

    /// `server_version_num` at creation, e.g. 180001.
    pub fn version_num(&self) -> u32 {
        self.version_num
    }

    /// The authentication method of the generated `pg_hba.conf` lines.
    pub fn auth(&self) -> Auth {
        self.auth
    }

    /// Whether the server was configured with TLS.
    pub fn tls(&self) -> bool {
        self.tls
    }

    /// The cluster's copy of the CA certificate, when TLS was configured with one.
    pub fn ca_cert(&self) -> Option<&Path> {
        self.ca_path.as_deref()
    }

    /// The directory holding everything: `data/`, `sock/`, `tls/` and `server.log`.
    pub fn base_dir(&self) -> &Path {
        &self.base_path
    }

    /// The data directory. Copy it only while the server is stopped (or use
    /// `pg_basebackup`); as root it belongs to the `postgres` account.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The server log (the postmaster's standard error, appended to across restarts).
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The server log's contents so far.
    pub fn log_contents(&self) -> String {
        std::fs::read(&self.log_path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Whether the files are kept when the cluster is dropped ([`ClusterBuilder::directory`],
    /// [`Cluster::adopt`]).
    pub fn is_kept(&self) -> bool {
        !matches!(self.location, Location::Throwaway)
    }

    // ---- SQL ------------------------------------------------------------------------

    /// Runs SQL in database `postgres` as the superuser with
    /// `psql -X -A -t -q -v ON_ERROR_STOP=1`; returns its output without the final newline.
    pub fn psql(&self, sql: &str) -> Result<String, ClusterError> {
        self.psql_db("postgres", sql)
    }

    /// Like [`Cluster::psql`], in database `db`.
    pub fn psql_db(&self, db: &str, sql: &str) -> Result<String, ClusterError> {
        self.psql_in(db, sql, &[])
    }

    /// Like [`Cluster::psql_db`], with SQL given as bytes (any encoding) and extra
    /// environment variables for psql (e.g. `PGCLIENTENCODING`). The output is decoded
    /// lossily.
    pub fn psql_in(
        &self,
        db: &str,
        sql: impl AsRef<[u8]>,
        env: &[(&str, &str)],
    ) -> Result<String, ClusterError> {
        let mut cmd = self.install.command("psql");
        clear_pg_env(&mut cmd);
        cmd.envs(env.iter().copied());
        cmd.args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(&self.socket_dir)
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                &self.superuser,
                "-d",
                db,
                "-f",
                "-",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A terminal's Ctrl-C is for this process, which decides what to stop.
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| ClusterError::io("run psql", e))?;
        let writer = child.stdin.take().map(|mut stdin| {
            let sql = sql.as_ref().to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&sql);
            })
        });
        let out = child
            .wait_with_output()
            .map_err(|e| ClusterError::io("run psql", e))?;
        if let Some(w) = writer {
            let _ = w.join();
        }
        if !out.status.success() {
            return Err(ClusterError::Command {
                program: "psql".into(),
                status: out.status.to_string(),
                output: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.strip_suffix('\n').unwrap_or(&text).to_string())
    }

    /// Creates a database owned by the superuser.
    pub fn create_database(&self, name: &str) -> Result<(), ClusterError> {
        self.psql(&format!("CREATE DATABASE {}", quote_ident(name)))
            .map(drop)
    }

    // ---- settings -------------------------------------------------------------------

    /// A setting's current value as a new session sees it (`SHOW name`).
    pub fn show(&self, name: &str) -> Result<String, ClusterError> {
        check_setting_name(name)?;
        self.psql(&format!("SHOW {name}"))
    }

    /// `ALTER SYSTEM SET name = 'value'` (written to `postgresql.auto.conf`, which
    /// overrides `postgresql.conf`); it takes effect at the next [`Cluster::reload`],
    /// or [`Cluster::restart`] for settings that need one. Needs a running server.
    pub fn alter_system(&self, name: &str, value: &str) -> Result<(), ClusterError> {
        check_setting_name(name)?;
        self.psql(&format!(
            "ALTER SYSTEM SET {name} = {}",
            quote_literal(value)
        ))
        .map(drop)
    }

    /// `ALTER SYSTEM RESET name`: back to the `postgresql.conf` value at the next
    /// reload or restart. Needs a running server.
    pub fn alter_system_reset(&self, name: &str) -> Result<(), ClusterError> {
        check_setting_name(name)?;
        self.psql(&format!("ALTER SYSTEM RESET {name}")).map(drop)
    }

    /// Appends `name = 'value'` to `postgresql.conf` (the last line for a name wins);
    /// works whether the server runs or not, and takes effect at the next reload or
    /// restart. `ALTER SYSTEM` values still override it.
    pub fn write_setting(&self, name: &str, value: &str) -> Result<(), ClusterError> {
        check_setting_name(name)?;
        append(
            &self.data_dir.join("postgresql.conf"),
            &setting_line(name, value),
        )
    }

    /// The settings changed in the files whose new value waits for a restart
    /// (`pg_settings.pending_restart`), by name.
    pub fn pending_restart(&self) -> Result<Vec<String>, ClusterError> {
        let text = self.psql("SELECT name FROM pg_settings WHERE pending_restart ORDER BY name")?;
        Ok(text.lines().map(str::to_string).collect())
    }

    /// Replaces the custom `pg_hba.conf` lines (those of [`ClusterBuilder::hba`]); the
    /// superuser's `trust` line and the generated lines stay. Takes effect at the next
    /// [`Cluster::reload`].
    pub fn set_hba<I, S>(&self, lines: I) -> Result<(), ClusterError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let lines: Vec<String> = lines.into_iter().map(Into::into).collect();
        check_hba_lines(&lines)?;
        let text = hba_text(self.auth, &lines, self.tls);
        overwrite(&self.data_dir.join("pg_hba.conf"), &text)?;
        *lock(&self.hba) = lines;
        Ok(())
    }

    /// The custom `pg_hba.conf` lines now in the file.
    pub fn hba_lines(&self) -> Vec<String> {
        lock(&self.hba).clone()
    }

    // ---- server control -------------------------------------------------------------

    /// The postmaster's process id, while running.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.postmaster).as_ref().map(Child::id)
    }

    /// Whether the server runs (started by this cluster and not exited since).
    pub fn is_running(&self) -> bool {
        let mut guard = lock(&self.postmaster);
        match guard.as_mut() {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Re-reads the configuration files (`SIGHUP` to the postmaster, as `pg_ctl
    /// reload`), and returns once new sessions see the new configuration
    /// (`pg_conf_load_time()` has moved on).
    pub fn reload(&self) -> Result<(), ClusterError> {
        let before = self.psql("SELECT pg_conf_load_time()")?;
        let pid = self.pid().ok_or(ClusterError::NotRunning)?;
        signal(pid, libc::SIGHUP);
        let check = format!(
            "SELECT pg_conf_load_time() > {}::timestamptz",
            quote_literal(&before)
        );
        let started = Instant::now();
        loop {
            if self.psql(&check)? == "t" {
                return Ok(());
            }
            if started.elapsed() > RELOAD_TIMEOUT {
                return Err(ClusterError::Invalid(format!(
                    "configuration not reloaded after {}s (see {})",
                    RELOAD_TIMEOUT.as_secs(),
                    self.log_path.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server and keeps the files; [`Cluster::start_server`] starts it again.
    /// Stopping a stopped server does nothing.
    pub fn stop(&self, mode: ShutdownMode) -> Result<(), ClusterError> {
        let mut guard = lock(&self.postmaster);
        let Some(child) = guard.as_mut() else {
            return Ok(());
        };
        signal(child.id(), mode.signal());
        let limit = match mode {
            ShutdownMode::Immediate => IMMEDIATE_GRACE,
            _ => STOP_TIMEOUT,
        };
        if !wait_exit(child, limit) {
            if mode != ShutdownMode::Immediate {
                return Err(ClusterError::Stop {
                    mode: mode.name(),
                    seconds: limit.as_secs(),
                });
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        *guard = None;
        drop(guard);
        self.watch(None)
    }

    /// Kills the postmaster with `SIGKILL`, as a crash would, and waits until its
    /// children have noticed and exited. The next [`Cluster::start_server`] performs
    /// crash recovery (replays the WAL since the last checkpoint). Transactions
    /// committed with `synchronous_commit = off` (this cluster's default) in the last
    /// moments may be lost, as in a real crash; set it to `on` to keep every commit.
    pub fn kill(&self) -> Result<(), ClusterError> {
        let mut guard = lock(&self.postmaster);
        let Some(child) = guard.as_mut() else {
            return Err(ClusterError::NotRunning);
        };
        let pgid = child.id();
        // Backends lead process groups of their own: note them while the postmaster
        // is still their parent.
        let children = children_of(pgid);
        let _ = child.kill();
        let _ = child.wait();
        *guard = None;
        drop(guard);
        // Wait for the children to notice and exit (they hold the shared memory a new
        // postmaster must not find in use), and kill the stragglers.
        let started = Instant::now();
        loop {
            let left = still_running(&children);
            if left.is_empty() && !group_alive(pgid) {
                break;
            }
            if started.elapsed() > ORPHAN_TIMEOUT {
                signal_group(pgid, libc::SIGKILL);
                for pid in left {
                    signal(pid, libc::SIGKILL);
                }
                std::thread::sleep(Duration::from_millis(100));
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.watch(None)
    }

    /// Starts the stopped server again, on the same port and socket, and waits until it
    /// accepts connections.
    pub fn start_server(&self) -> Result<(), ClusterError> {
        if lock(&self.base).is_none() && !self.is_kept() {
            return Err(ClusterError::Discarded);
        }
        let mut guard = lock(&self.postmaster);
        if guard
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
        {
            return Err(ClusterError::AlreadyRunning);
        }
        *guard = None;
        let child = self.spawn_postmaster().map_err(|(e, _)| e)?;
        let pid = child.id();
        *guard = Some(child);
        drop(guard);
        self.watch(Some(pid))
    }

    /// Stops the server with a fast shutdown and starts it again (what settings that
    /// need a restart, such as `shared_buffers`, wait for).
    pub fn restart(&self) -> Result<(), ClusterError> {
        self.stop(ShutdownMode::Fast)?;
        self.start_server()
    }

    /// Stops the server (immediate shutdown) and deletes the cluster's files (for a kept
    /// cluster: what the cluster created in its directory, then the directory if empty).
    /// Idempotent; what dropping a throwaway cluster does.
    pub fn discard(&self) {
        if matches!(self.location, Location::Adopted(_)) {
            self.hand_back();
            return;
        }
        if let Some(mut child) = lock(&self.postmaster).take() {
            stop_child(&mut child, libc::SIGQUIT, IMMEDIATE_GRACE);
        }
        if let Some(mut child) = lock(&self.watchdog).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = lock(&self.base).take() {
            let _ = dir.close();
        }
        if self.is_kept() {
            for name in ["data", "sock", "tls", "server.log"] {
                let path = self.base_path.join(name);
                let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
            }
            let _ = std::fs::remove_dir(&self.base_path);
        }
    }

    /// Replaces the watchdog: one that stops `postmaster` (if given) and, for a
    /// throwaway cluster, deletes the files when this process is gone.
    fn watch(&self, postmaster: Option<u32>) -> Result<(), ClusterError> {
        let mut guard = lock(&self.watchdog);
        if let Some(mut old) = guard.take() {
            let _ = old.kill();
            let _ = old.wait();
        }
        let (remove, signal) = match self.location {
            Location::Throwaway => (Some(self.base_path.as_path()), "QUIT"),
            Location::Kept(_) => (None, "INT"),
            // An adopted server outlives this process, as it was found.
            Location::Adopted(_) => return Ok(()),
        };
        if postmaster.is_none() && remove.is_none() {
            return Ok(());
        }
        let plan = WatchdogPlan {
            postmaster,
            signal,
            remove,
        };
        *guard = Some(spawn_watchdog(&plan)?);
        Ok(())
    }

    /// Starts the postmaster on a free port (retrying on a port collision) and its watchdog.
    fn launch_on_free_port(&mut self) -> Result<(), ClusterError> {
        let mut last_err = None;
        for _ in 0..PORT_ATTEMPTS {
            self.port = free_port()?;
            match self.spawn_postmaster() {
                Ok(child) => {
                    let pid = child.id();
                    *lock(&self.postmaster) = Some(child);
                    return self.watch(Some(pid));
                }
                Err((err, true)) => last_err = Some(err),
                Err((err, false)) => return Err(err),
            }
        }
        Err(last_err.unwrap_or_else(|| ClusterError::Invalid("no port attempts".into())))
    }

    /// Spawns the postmaster and waits until it accepts connections. On failure the
    /// flag says whether another port is worth a try.
    fn spawn_postmaster(&self) -> Result<Child, (ClusterError, bool)> {
        let fail = |reason: String, log: &Path| ClusterError::Start {
            reason,
            log: log.to_path_buf(),
            tail: log_tail(log, 30),
        };
        let log = File::options()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .map_err(|e| {
                (
                    ClusterError::io(format!("open {}", self.log_path.display()), e),
                    false,
                )
            })?;
        let log_err = log
            .try_clone()
            .map_err(|e| (ClusterError::io("dup the log file", e), false))?;
        let mut cmd = self.server.command("postgres");
        clear_pg_env(&mut cmd);
        match &self.location {
            Location::Adopted(adopted) => cmd.args(&adopted.server_args),
            _ => cmd
                .arg("-D")
                .arg(&self.data_dir)
                .args(["-p", &self.port.to_string()]),
        };
        cmd.current_dir(&self.base_path)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .process_group(0);
        if let Some(acct) = self.account {
            acct.apply(&mut cmd);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| (ClusterError::io("start postgres", e), false))?;
        let started = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    let tail = log_tail(&self.log_path, 30);
                    let collision =
                        tail.contains("could not bind") || tail.contains("already in use");
                    return Err((
                        fail(format!("postgres exited ({status})"), &self.log_path),
                        collision,
                    ));
                }
                Ok(None) => {}
                Err(e) => return Err((ClusterError::io("wait for postgres", e), false)),
            }
            if pid_file_ready(&self.data_dir, child.id()) {
                return Ok(child);
            }
            if started.elapsed() > START_TIMEOUT {
                stop_child(&mut child, libc::SIGKILL, Duration::from_secs(5));
                let reason = format!("not ready after {}s", START_TIMEOUT.as_secs());
                return Err((fail(reason, &self.log_path), false));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        match self.location {
            Location::Throwaway => self.discard(),
            Location::Adopted(_) => self.hand_back(),
            Location::Kept(_) => {
                if self.stop(ShutdownMode::Fast).is_err() {
                    let _ = self.stop(ShutdownMode::Immediate);
                }
                if let Some(mut child) = lock(&self.watchdog).take() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
    }
}

/// Locks a mutex, ignoring poisoning (the data stays usable for cleanup).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A kept cluster's directory: created if missing, else it must be empty.
fn prepare_kept_dir(dir: &Path) -> Result<PathBuf, ClusterError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| ClusterError::io(format!("mkdir {}", dir.display()), e))?;
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| ClusterError::io(format!("read {}", dir.display()), e))?;
    if entries.next().is_some() {
        return Err(ClusterError::Invalid(format!(
            "cluster directory {} is not empty",
            dir.display()
        )));
    }
    std::fs::canonicalize(dir)
        .map_err(|e| ClusterError::io(format!("resolve {}", dir.display()), e))
}

/// Whether `postmaster.pid` names this postmaster and says it is ready for connections
/// (a file left by a killed server names another process).
fn pid_file_ready(data_dir: &Path, pid: u32) -> bool {
    std::fs::read_to_string(data_dir.join("postmaster.pid")).is_ok_and(|text| {
        let mut lines = text.lines();
        lines.next().is_some_and(|l| l.trim() == pid.to_string())
            && lines.nth(6).is_some_and(|l| l.trim() == "ready")
    })
}

/// A TCP port nobody listens on right now.
fn free_port() -> Result<u16, ClusterError> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| ClusterError::io("find a free port", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| ClusterError::io("find a free port", e))?
        .port();
    Ok(port)
}

/// The last `n` lines of a file.
fn log_tail(path: &Path, n: usize) -> String {
    let text = std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The major version from `PG_VERSION`.
fn read_major(data_dir: &Path) -> Result<u32, ClusterError> {
    let path = data_dir.join("PG_VERSION");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ClusterError::io(format!("read {}", path.display()), e))?;
    text.trim()
        .parse()
        .map_err(|_| ClusterError::Invalid(format!("{}: {:?}", path.display(), text.trim())))
}

fn chmod(path: &Path, mode: u32) -> Result<(), ClusterError> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| ClusterError::io(format!("chmod {}", path.display()), e))
}

fn append(path: &Path, text: &str) -> Result<(), ClusterError> {
    let mut file = File::options()
        .append(true)
        .open(path)
        .map_err(|e| ClusterError::io(format!("open {}", path.display()), e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| ClusterError::io(format!("write {}", path.display()), e))
}

/// Replaces a file's contents, keeping its owner and mode.
fn overwrite(path: &Path, text: impl AsRef<[u8]>) -> Result<(), ClusterError> {
    let mut file = File::options()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| ClusterError::io(format!("open {}", path.display()), e))?;
    file.write_all(text.as_ref())
        .map_err(|e| ClusterError::io(format!("write {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_file_must_name_this_postmaster_and_say_ready() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("postmaster.pid");
        assert!(!pid_file_ready(dir.path(), 42));
        let text = |pid: u32, status: &str| {
            format!("{pid}\n/data\n1700000000\n5432\n/sock\n127.0.0.1\n  1  2\n{status}\n")
        };
        std::fs::write(&pid_file, text(42, "starting")).unwrap();
        assert!(!pid_file_ready(dir.path(), 42));
        std::fs::write(&pid_file, text(42, "ready   ")).unwrap();
        assert!(pid_file_ready(dir.path(), 42));
        assert!(!pid_file_ready(dir.path(), 43));
    }

    #[test]
    fn kept_dir_must_be_empty() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("new/cluster");
        assert_eq!(
            prepare_kept_dir(&fresh).unwrap(),
            std::fs::canonicalize(&fresh).unwrap()
        );
        std::fs::write(fresh.join("x"), b"").unwrap();
        let err = prepare_kept_dir(&fresh).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
    }
}
