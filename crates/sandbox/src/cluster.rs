//! Throwaway PostgreSQL clusters: configuration, start, administration and stop.

use std::fs::File;
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::testkit::clear_pg_env;

use crate::account::{Account, server_account};
use crate::error::SandboxError;
use crate::install::PgInstall;
use crate::tls::Authority;

/// How long a server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How many fresh ports are tried when the chosen one is taken meanwhile.
const PORT_ATTEMPTS: usize = 5;
/// The bootstrap superuser of every sandbox cluster.
const SUPERUSER: &str = "postgres";

/// The authentication method written to `pg_hba.conf` for everyone but the local superuser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Auth {
    /// No password (`trust`).
    #[default]
    Trust,
    /// Clear-text password (`password`); passwords stored as SCRAM.
    Password,
    /// `md5` (passwords stored as MD5, `password_encryption = md5`).
    Md5,
    /// `scram-sha-256`.
    Scram,
}

impl Auth {
    /// The `pg_hba.conf` method name.
    pub fn hba_method(self) -> &'static str {
        match self {
            Auth::Trust => "trust",
            Auth::Password => "password",
            Auth::Md5 => "md5",
            Auth::Scram => "scram-sha-256",
        }
    }

    fn password_encryption(self) -> &'static str {
        match self {
            Auth::Md5 => "md5",
            _ => "scram-sha-256",
        }
    }
}

/// Configures a [`Cluster`] before starting it.
#[derive(Debug, Clone, Default)]
pub struct ClusterBuilder {
    bin_dir: Option<PathBuf>,
    auth: Auth,
    users: Vec<(String, String)>,
    tls: bool,
    tls_cn_only: bool,
    settings: Vec<(String, String)>,
    listen_ipv6: bool,
    hba: Vec<String>,
}

impl ClusterBuilder {
    /// Uses the PostgreSQL programs in `path` instead of discovering them.
    pub fn bin_dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.bin_dir = Some(path.into());
        self
    }

    /// The authentication method for every connection except the local superuser's.
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// Adds a login role (a superuser) with this password, stored per [`ClusterBuilder::auth`].
    /// Naming `postgres` sets the bootstrap superuser's password instead.
    pub fn user(mut self, name: impl Into<String>, password: impl Into<String>) -> Self {
        self.users.push((name.into(), password.into()));
        self
    }

    /// Turns on TLS with a generated CA and a server certificate for
    /// `localhost`, `127.0.0.1` and `::1`.
    pub fn tls(mut self, on: bool) -> Self {
        self.tls = on;
        self
    }

    /// With TLS, issues the server certificate with `CN=localhost` and no subjectAltName
    /// (for libpq's common-name fallback). Implies `.tls(true)`.
    pub fn tls_cn_only(mut self, on: bool) -> Self {
        self.tls_cn_only = on;
        if on {
            self.tls = true;
        }
        self
    }

    /// Sets a `postgresql.conf` parameter (the value is quoted as needed).
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }

    /// Also listens on `::1`.
    pub fn listen_ipv6(mut self, on: bool) -> Self {
        self.listen_ipv6 = on;
        self
    }

    /// Adds `pg_hba.conf` lines, matched before the generated ones (but after the line
    /// giving the local superuser `trust`, which the harness needs).
    pub fn hba<I, S>(mut self, lines: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hba.extend(lines.into_iter().map(Into::into));
        self
    }

    /// Creates, configures and starts the cluster.
    pub fn start(self) -> Result<Cluster, SandboxError> {
        for (name, _) in &self.settings {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            {
                return Err(SandboxError::Invalid(format!("setting name {name:?}")));
            }
        }
        if self.hba.iter().any(|l| l.contains('\n')) {
            return Err(SandboxError::Invalid("pg_hba line with a newline".into()));
        }
        let install = match &self.bin_dir {
            Some(dir) => PgInstall::from_bin_dir(dir)?,
            None => PgInstall::discover()?,
        };
        let account = server_account()?;
        let server = install.reachable_by(account)?;

        let base = tempfile::Builder::new()
            .prefix("pgrush-sandbox-")
            .tempdir_in(crate::install::work_dir())
            .map_err(|e| SandboxError::io("create a temp dir", e))?;
        let base_path = base.path().to_path_buf();
        chmod(&base_path, 0o755)?;
        let socket_dir = base_path.join("sock");
        let tls_dir = base_path.join("tls");
        for dir in [&socket_dir, &tls_dir] {
            std::fs::create_dir(dir)
                .map_err(|e| SandboxError::io(format!("mkdir {}", dir.display()), e))?;
            chmod(dir, 0o755)?;
        }
        if let Some(acct) = account {
            acct.chown(&base_path)?;
            acct.chown(&socket_dir)?;
        }
        let data_dir = base_path.join("data");
        crate::template::instantiate(&server, account, &data_dir)?;
        let major = read_major(&data_dir)?;

        let authority = if self.tls {
            let ca = Authority::create(&tls_dir)?;
            let (crt, key) = ca.write_server(&tls_dir, self.tls_cn_only)?;
            if let Some(acct) = account {
                acct.chown(&crt)?;
                acct.chown(&key)?;
            }
            Some(ca)
        } else {
            None
        };

        let conf = self.config_text(&socket_dir, &tls_dir, major);
        append(&data_dir.join("postgresql.conf"), &conf)?;
        let hba = self.hba_text(authority.is_some());
        overwrite(&data_dir.join("pg_hba.conf"), &hba)?;

        let log_path = base_path.join("server.log");
        let mut cluster = Cluster {
            install,
            server,
            account,
            base_path,
            data_dir,
            socket_dir,
            log_path,
            port: 0,
            version_num: 0,
            authority,
            base: Mutex::new(Some(base)),
            postmaster: Mutex::new(None),
            watchdog: Mutex::new(None),
        };
        cluster.launch()?;
        cluster.version_num = cluster
            .psql("SHOW server_version_num")?
            .trim()
            .parse()
            .map_err(|_| SandboxError::Invalid("unreadable server_version_num".into()))?;
        let sql = self.roles_sql();
        if !sql.is_empty() {
            cluster.psql(&sql)?;
        }
        Ok(cluster)
    }

    /// SQL creating the extra roles (or setting the superuser's password).
    fn roles_sql(&self) -> String {
        let mut sql = String::new();
        for (name, password) in &self.users {
            let (verb, extra) = if name == SUPERUSER {
                ("ALTER ROLE", "")
            } else {
                ("CREATE ROLE", " LOGIN SUPERUSER")
            };
            sql.push_str(&format!(
                "{verb} {}{extra} PASSWORD {};\n",
                quote_ident(name),
                quote_literal(password)
            ));
        }
        sql
    }

    fn config_text(&self, socket_dir: &Path, tls_dir: &Path, major: u32) -> String {
        let listen = if self.listen_ipv6 {
            "127.0.0.1,::1"
        } else {
            "127.0.0.1"
        };
        let mut settings: Vec<(String, String)> = vec![
            ("listen_addresses".into(), listen.into()),
            (
                "unix_socket_directories".into(),
                socket_dir.display().to_string(),
            ),
            ("unix_socket_permissions".into(), "0777".into()),
            ("fsync".into(), "off".into()),
            ("synchronous_commit".into(), "off".into()),
            ("full_page_writes".into(), "off".into()),
            ("shared_buffers".into(), "32MB".into()),
            ("max_connections".into(), "200".into()),
            ("logging_collector".into(), "off".into()),
            // Segments in the data dir go away with it, even after a server is killed
            // (POSIX segments in /dev/shm would stay behind).
            ("dynamic_shared_memory_type".into(), "mmap".into()),
            (
                "password_encryption".into(),
                self.auth.password_encryption().into(),
            ),
        ];
        if major >= 18 {
            settings.push(("md5_password_warnings".into(), "off".into()));
        }
        if self.tls {
            settings.push(("ssl".into(), "on".into()));
            for (name, file) in [
                ("ssl_cert_file", "server.crt"),
                ("ssl_key_file", "server.key"),
                ("ssl_ca_file", "ca.crt"),
            ] {
                settings.push((name.into(), tls_dir.join(file).display().to_string()));
            }
        }
        settings.extend(self.settings.iter().cloned());
        let mut text = String::from("\n# pgrush sandbox\n");
        for (name, value) in settings {
            text.push_str(&format!("{name} = {}\n", quote_literal(&value)));
        }
        text
    }

    fn hba_text(&self, tls: bool) -> String {
        let method = self.auth.hba_method();
        let mut lines = vec![format!("local all {SUPERUSER} trust")];
        lines.extend(self.hba.iter().cloned());
        lines.push(format!("local all all {method}"));
        if tls {
            lines.push(format!("hostssl all all 127.0.0.1/32 {method}"));
            lines.push(format!("hostssl all all ::1/128 {method}"));
        }
        lines.push(format!("host all all 127.0.0.1/32 {method}"));
        lines.push(format!("host all all ::1/128 {method}"));
        let mut text = lines.join("\n");
        text.push('\n');
        text
    }
}

/// A running throwaway PostgreSQL cluster; dropping it stops the server and deletes its files.
#[derive(Debug)]
pub struct Cluster {
    install: PgInstall,
    server: PgInstall,
    account: Option<Account>,
    base_path: PathBuf,
    data_dir: PathBuf,
    socket_dir: PathBuf,
    log_path: PathBuf,
    port: u16,
    version_num: u32,
    authority: Option<Authority>,
    base: Mutex<Option<TempDir>>,
    postmaster: Mutex<Option<Child>>,
    watchdog: Mutex<Option<Child>>,
}

impl Cluster {
    /// Starts a cluster with trust authentication and no TLS, from the discovered installation.
    pub fn start() -> Result<Cluster, SandboxError> {
        ClusterBuilder::default().start()
    }

    /// A builder for other configurations.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// The TCP port (also the Unix socket's port number).
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

    /// The bootstrap superuser's name: `postgres`.
    pub fn superuser(&self) -> &str {
        SUPERUSER
    }

    /// libpq environment for reaching this cluster over its Unix socket as the superuser:
    /// `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE=postgres`.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PGHOST".into(), self.socket_dir.display().to_string()),
            ("PGPORT".into(), self.port.to_string()),
            ("PGUSER".into(), SUPERUSER.into()),
            ("PGDATABASE".into(), "postgres".into()),
        ]
    }

    /// Runs SQL in database `postgres` as the superuser with
    /// `psql -X -A -t -q -v ON_ERROR_STOP=1`; returns its output without the final newline.
    pub fn psql(&self, sql: &str) -> Result<String, SandboxError> {
        self.psql_db("postgres", sql)
    }

    /// Like [`Cluster::psql`], in database `db`.
    pub fn psql_db(&self, db: &str, sql: &str) -> Result<String, SandboxError> {
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
    ) -> Result<String, SandboxError> {
        let mut cmd = self.install.command("psql");
        clear_pg_env(&mut cmd);
        cmd.envs(env.iter().copied());
        cmd.args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(&self.socket_dir)
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                SUPERUSER,
                "-d",
                db,
                "-f",
                "-",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| SandboxError::io("run psql", e))?;
        let writer = child.stdin.take().map(|mut stdin| {
            let sql = sql.as_ref().to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&sql);
            })
        });
        let out = child
            .wait_with_output()
            .map_err(|e| SandboxError::io("run psql", e))?;
        if let Some(w) = writer {
            let _ = w.join();
        }
        if !out.status.success() {
            return Err(SandboxError::Command {
                program: "psql".into(),
                status: out.status.to_string(),
                output: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.strip_suffix('\n').unwrap_or(&text).to_string())
    }

    /// Creates a database owned by the superuser.
    pub fn create_database(&self, name: &str) -> Result<(), SandboxError> {
        self.psql(&format!("CREATE DATABASE {}", quote_ident(name)))
            .map(drop)
    }

    /// The bin dir of the installation (as discovered or given, not a private copy).
    pub fn bin_dir(&self) -> &Path {
        self.install.bin_dir()
    }

    /// The installation (bin dir and library dir) this cluster's client programs come from.
    pub fn install(&self) -> &PgInstall {
        &self.install
    }

    /// `server_version_num`, e.g. 180001.
    pub fn version_num(&self) -> u32 {
        self.version_num
    }

    /// The CA certificate's path, when started with TLS.
    pub fn ca_cert(&self) -> Option<&Path> {
        self.authority.as_ref().map(Authority::cert_path)
    }

    /// Issues a client certificate for `user` signed by the cluster's CA; returns the
    /// certificate and key paths (key mode 0600, owned by the caller).
    pub fn client_cert(&self, user: &str) -> Result<(PathBuf, PathBuf), SandboxError> {
        let ca = self.authority.as_ref().ok_or(SandboxError::NoTls)?;
        ca.write_client(&self.base_path.join("tls"), user)
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The server log (the postmaster's standard error).
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The server log's contents so far.
    pub fn log_contents(&self) -> String {
        std::fs::read(&self.log_path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// The postmaster's process id, while running.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.postmaster).as_ref().map(Child::id)
    }

    /// Stops the server (immediate shutdown) and deletes the cluster's files.
    /// Idempotent; also done on drop.
    pub fn stop(&self) {
        if let Some(mut child) = lock(&self.postmaster).take() {
            stop_child(&mut child, libc::SIGQUIT, Duration::from_secs(10));
        }
        if let Some(mut child) = lock(&self.watchdog).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = lock(&self.base).take() {
            let _ = dir.close();
        }
    }

    /// Starts the postmaster on a free port (retrying on a port collision) and its watchdog.
    fn launch(&mut self) -> Result<(), SandboxError> {
        let mut last_err = None;
        for _ in 0..PORT_ATTEMPTS {
            self.port = free_port()?;
            match self.spawn_postmaster() {
                Ok(mut child) => {
                    let watchdog = match spawn_watchdog(child.id(), &self.base_path) {
                        Ok(w) => w,
                        Err(e) => {
                            stop_child(&mut child, libc::SIGQUIT, Duration::from_secs(10));
                            return Err(e);
                        }
                    };
                    *lock(&self.postmaster) = Some(child);
                    *lock(&self.watchdog) = Some(watchdog);
                    return Ok(());
                }
                Err((err, true)) => last_err = Some(err),
                Err((err, false)) => return Err(err),
            }
        }
        Err(last_err.unwrap_or_else(|| SandboxError::Invalid("no port attempts".into())))
    }

    /// Spawns the postmaster and waits until it accepts connections. On failure the
    /// flag says whether another port is worth a try.
    fn spawn_postmaster(&self) -> Result<Child, (SandboxError, bool)> {
        let fail = |reason: String, log: &Path| SandboxError::Start {
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
                    SandboxError::io(format!("open {}", self.log_path.display()), e),
                    false,
                )
            })?;
        let log_err = log
            .try_clone()
            .map_err(|e| (SandboxError::io("dup the log file", e), false))?;
        let mut cmd = self.server.command("postgres");
        clear_pg_env(&mut cmd);
        cmd.arg("-D")
            .arg(&self.data_dir)
            .args(["-p", &self.port.to_string()])
            .current_dir(&self.base_path)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .process_group(0);
        if let Some(acct) = self.account {
            acct.apply(&mut cmd);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| (SandboxError::io("start postgres", e), false))?;
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
                Err(e) => return Err((SandboxError::io("wait for postgres", e), false)),
            }
            if pid_file_ready(&self.data_dir) {
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
        self.stop();
    }
}

/// Locks a mutex, ignoring poisoning (the data stays usable for cleanup).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sends `signal`, waits up to `grace`, then kills and reaps the child.
fn stop_child(child: &mut Child, signal: i32, grace: Duration) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill has no memory-safety preconditions; the pid is our unreaped child.
        unsafe {
            libc::kill(pid, signal);
        }
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A helper process that stops the postmaster and deletes the files if this process
/// dies without cleaning up (abort, SIGKILL, a `Cluster` that is never dropped).
fn spawn_watchdog(postmaster: u32, base: &Path) -> Result<Child, SandboxError> {
    const SCRIPT: &str = r#"while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
kill -QUIT "$2" 2>/dev/null
i=0; while kill -0 "$2" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
kill -KILL "$2" 2>/dev/null; rm -rf "$3""#;
    Command::new("/bin/sh")
        .args(["-c", SCRIPT, "pgrush-sandbox-watchdog"])
        .arg(std::process::id().to_string())
        .arg(postmaster.to_string())
        .arg(base)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| SandboxError::io("start the watchdog", e))
}

/// Whether `postmaster.pid` says the server is ready for connections.
fn pid_file_ready(data_dir: &Path) -> bool {
    std::fs::read_to_string(data_dir.join("postmaster.pid"))
        .is_ok_and(|text| text.lines().nth(7).is_some_and(|l| l.trim() == "ready"))
}

/// A TCP port nobody listens on right now.
fn free_port() -> Result<u16, SandboxError> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| SandboxError::io("find a free port", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| SandboxError::io("find a free port", e))?
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
fn read_major(data_dir: &Path) -> Result<u32, SandboxError> {
    let path = data_dir.join("PG_VERSION");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| SandboxError::io(format!("read {}", path.display()), e))?;
    text.trim()
        .parse()
        .map_err(|_| SandboxError::Invalid(format!("{}: {:?}", path.display(), text.trim())))
}

fn chmod(path: &Path, mode: u32) -> Result<(), SandboxError> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| SandboxError::io(format!("chmod {}", path.display()), e))
}

fn append(path: &Path, text: &str) -> Result<(), SandboxError> {
    let mut file = File::options()
        .append(true)
        .open(path)
        .map_err(|e| SandboxError::io(format!("open {}", path.display()), e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| SandboxError::io(format!("write {}", path.display()), e))
}

/// Replaces a file's contents, keeping its owner and mode.
fn overwrite(path: &Path, text: &str) -> Result<(), SandboxError> {
    let mut file = File::options()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| SandboxError::io(format!("open {}", path.display()), e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| SandboxError::io(format!("write {}", path.display()), e))
}

/// Runs a helper program to completion, failing with its output when it fails.
pub(crate) fn run_checked(cmd: &mut Command, program: &str) -> Result<(), SandboxError> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SandboxError::io(format!("run {program}"), e))?;
    if out.status.success() {
        return Ok(());
    }
    let mut output = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if output.is_empty() {
        output = String::from_utf8_lossy(&out.stdout).trim().to_string();
    }
    Err(SandboxError::Command {
        program: program.to_string(),
        status: out.status.to_string(),
        output,
    })
}

/// An SQL identifier, double-quoted.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// An SQL string literal, single-quoted.
pub fn quote_literal(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hba_keeps_superuser_trust_first_then_custom_lines() {
        let b = ClusterBuilder::default()
            .auth(Auth::Md5)
            .hba(["hostssl all certuser 127.0.0.1/32 cert"])
            .tls(true);
        let hba = b.hba_text(true);
        let lines: Vec<&str> = hba.lines().collect();
        assert_eq!(lines[0], "local all postgres trust");
        assert_eq!(lines[1], "hostssl all certuser 127.0.0.1/32 cert");
        assert_eq!(lines[2], "local all all md5");
        assert!(lines.contains(&"hostssl all all 127.0.0.1/32 md5"));
        assert_eq!(lines.last(), Some(&"host all all ::1/128 md5"));
        let plain = ClusterBuilder::default().hba_text(false);
        assert!(!plain.contains("hostssl"));
        assert!(plain.contains("host all all 127.0.0.1/32 trust\n"));
    }

    #[test]
    fn config_quotes_values_and_follows_options() {
        let b = ClusterBuilder::default()
            .auth(Auth::Md5)
            .listen_ipv6(true)
            .tls_cn_only(true)
            .setting("search_path", "a'b");
        let conf = b.config_text(Path::new("/s"), Path::new("/t"), 18);
        assert!(conf.contains("listen_addresses = '127.0.0.1,::1'\n"));
        assert!(conf.contains("unix_socket_directories = '/s'\n"));
        assert!(conf.contains("password_encryption = 'md5'\n"));
        assert!(conf.contains("md5_password_warnings = 'off'\n"));
        assert!(conf.contains("ssl = 'on'\n"));
        assert!(conf.contains("ssl_key_file = '/t/server.key'\n"));
        assert!(conf.contains("search_path = 'a''b'\n"));
        let old = ClusterBuilder::default().config_text(Path::new("/s"), Path::new("/t"), 15);
        assert!(!old.contains("md5_password_warnings"));
        assert!(!old.contains("ssl"));
        assert!(old.contains("password_encryption = 'scram-sha-256'\n"));
    }

    #[test]
    fn roles_sql_quotes_names_and_passwords() {
        let b = ClusterBuilder::default()
            .user("al\"ice", "pa'ss")
            .user("postgres", "pw");
        assert_eq!(
            b.roles_sql(),
            "CREATE ROLE \"al\"\"ice\" LOGIN SUPERUSER PASSWORD 'pa''ss';\n\
             ALTER ROLE \"postgres\" PASSWORD 'pw';\n"
        );
    }
}
