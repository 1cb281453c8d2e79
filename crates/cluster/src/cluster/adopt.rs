//! Adopting an existing data directory ([`Cluster::adopt`]): its binaries from
//! `PG_VERSION`, its owner as the server account, its port and socket from
//! `postmaster.pid`; and handing it back as it was found.
//!
//! To kill the postmaster as a crash would and restart it at once, this process must
//! be its parent (a killed postmaster stays a zombie, holding `postmaster.pid`'s PID,
//! until its parent reaps it). So a running server is stopped (fast shutdown) and
//! started again as a child, with the options of `postmaster.opts` (what `pg_ctl
//! restart` does) and its standard output and error on the regular file they went to
//! (`pg_ctl -l FILE`, found from `/proc/PID/fd` of the postmaster or of its logger); a
//! stopped one is started with `postgres -D DIR` (its configuration files choose port
//! and sockets, as `pg_ctl start` without `-o`). A server whose output went to no
//! regular file (a terminal, a pipe) writes to `server.log` in the adoption's private
//! directory (`pgrush-adopted-*` in the work dir), which is removed at hand back.
//! Nothing is created in the data directory but the journal.
//!
//! When dropped, the scratch databases the caller journalled
//! ([`Cluster::journal_scratch_database`]) are dropped, the configuration files
//! (`postgresql.conf`, `postgresql.auto.conf`) get their contents at adoption back,
//! and the server is left as found: a running one runs on (reloaded, or restarted when
//! a restored setting needs it, such as `archive_mode`), outliving this process; a
//! stopped one is stopped.
//!
//! Everything to undo is first written to a [`Journal`], `DIR/pgrush-adopted.json`,
//! before the first change (the restart) and before each scratch database is created,
//! and removed once handed back. When this process is killed outright, the next
//! adoption ([`Cluster::hand_back_interrupted`]) finds the journal and finishes the
//! hand back first.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::adopted::{Adopted, SavedFile};
use super::{Cluster, Location, ShutdownMode, chmod, lock, overwrite, read_major};
use crate::account::{Account, effective_uid, is_root, user_name};
use crate::builder::quote_ident;
use crate::error::ClusterError;
use crate::install::{PgInstall, work_dir};
use crate::journal::Journal;
use crate::process::{children_of, clear_pg_env, signal, still_running};

/// The configuration files restored when an adopted cluster is handed back.
const CONFIG_FILES: [&str; 2] = ["postgresql.conf", "postgresql.auto.conf"];
/// The journal of an adoption, in the data directory.
const JOURNAL_FILE: &str = "pgrush-adopted.json";
/// The server log, in the adoption's private directory, when the server's own output
/// went to no regular file.
const LOG_FILE: &str = "server.log";
/// How long the server found running may take to stop before it is restarted.
const TAKE_OVER_TIMEOUT: Duration = Duration::from_secs(60);

/// What the journal holds.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    /// How to hand the cluster back.
    adopted: Adopted,
    /// The scratch databases to drop.
    databases: Vec<String>,
}

/// What `postmaster.pid` says about a running server.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PidFile {
    pid: u32,
    port: u16,
    /// The first Unix socket directory, or else the first listen address.
    host: String,
}

impl PidFile {
    /// Reads `DIR/postmaster.pid` (PID, data dir, start time, port, socket dir, listen
    /// address, shared memory key, status).
    fn read(data_dir: &Path) -> Option<PidFile> {
        let text = std::fs::read_to_string(data_dir.join("postmaster.pid")).ok()?;
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let pid = lines.first()?.parse().ok()?;
        let port = lines.get(3)?.parse().ok()?;
        let socket = lines.get(4).copied().unwrap_or_default();
        let listen = lines.get(5).copied().unwrap_or_default();
        let host = match (socket, listen) {
            ("", "" | "*") => "127.0.0.1".to_string(),
            ("", addr) => addr.to_string(),
            (dir, _) => dir.to_string(),
        };
        Some(PidFile { pid, port, host })
    }
}

impl Cluster {
    /// Adopts the existing data directory `data_dir`: finds PostgreSQL binaries of its
    /// `PG_VERSION` ([`PgInstall::for_major`]), runs the server as the directory's owner
    /// (as root; otherwise this process must be the owner), and becomes the
    /// postmaster's parent (a running server is restarted, a stopped one started). An
    /// earlier adoption's journal is replayed first ([`Cluster::hand_back_interrupted`]).
    /// See the module documentation for what is changed and restored. Errors: not a
    /// data directory, an owner this process cannot become, no binaries of its version,
    /// a running server that does not answer.
    pub fn adopt(data_dir: impl AsRef<Path>) -> Result<Cluster, ClusterError> {
        let data_dir = data_dir_of(data_dir.as_ref())?;
        Cluster::hand_back_interrupted(&data_dir)?;
        Cluster::take_charge(&data_dir, None)
    }

    /// Finishes the hand back of an adoption whose process ended before it could hand
    /// the cluster back (killed outright): when `data_dir` holds its journal, adopts
    /// the cluster as that adoption found it, drops its scratch databases, restores the
    /// configuration files, leaves the server running or stopped as it was found and
    /// removes the private directories. Returns what it did, a line each (nothing when
    /// there was no journal).
    pub fn hand_back_interrupted(data_dir: impl AsRef<Path>) -> Result<Vec<String>, ClusterError> {
        let data_dir = data_dir_of(data_dir.as_ref())?;
        let journal = Journal::at(data_dir.join(JOURNAL_FILE));
        let Some(record) = journal.read::<Record>() else {
            return Ok(Vec::new());
        };
        let notes = replay_notes(&record);
        drop(Cluster::take_charge(&data_dir, Some(record))?);
        if journal.path().exists() {
            return Err(ClusterError::Invalid(format!(
                "could not hand back what an interrupted run changed in {} (its journal {} \
                 stays for the next try)",
                data_dir.display(),
                journal.path().display()
            )));
        }
        Ok(notes)
    }

    /// Adopts the cluster in `data_dir` (a canonical path) as `record` found it, or as
    /// it is now.
    fn take_charge(data_dir: &Path, record: Option<Record>) -> Result<Cluster, ClusterError> {
        let major = read_major(data_dir)?;
        let (account, superuser) = owner_of(data_dir)?;
        let install = PgInstall::for_major(major)?;
        let server = install.reachable_by(account)?;
        let found = PidFile::read(data_dir).filter(|p| !still_running(&[p.pid]).is_empty());
        if let Some(pid_file) = &found {
            check_reachable(&install, data_dir, pid_file, &superuser)?;
        }
        let base = tempfile::Builder::new()
            .prefix("pgrush-adopted-")
            .tempdir_in(work_dir())
            .map_err(|e| ClusterError::io("create a temp dir", e))?;
        let base_path = base.path().to_path_buf();
        chmod(&base_path, 0o755)?;
        if let Some(acct) = account {
            acct.chown(&base_path)?;
        }
        let (mut adopted, databases) = match record {
            Some(record) => (record.adopted, record.databases),
            None => (found_now(data_dir, found.as_ref())?, Vec::new()),
        };
        adopted.dirs.push(base_path.clone());
        let log_path = match &adopted.log {
            Some(file) => file.clone(),
            None => prepare_log(&base_path, account)?,
        };
        write_journal(data_dir, account, &adopted, &databases)?;
        if let Some(pid_file) = &found {
            take_over(data_dir, pid_file.pid)?;
        }
        let mut cluster = Cluster {
            install,
            server,
            account,
            superuser,
            location: Location::Adopted(Box::new(adopted)),
            socket_dir: base_path.clone(),
            base_path,
            data_dir: data_dir.to_path_buf(),
            log_path,
            port: 0,
            version_num: 0,
            tls: false,
            ca_path: None,
            auth: crate::builder::Auth::Trust,
            hba: Mutex::new(Vec::new()),
            base: Mutex::new(Some(base)),
            postmaster: Mutex::new(None),
            watchdog: Mutex::new(None),
            scratch_databases: Mutex::new(databases),
        };
        let child = cluster.spawn_postmaster().map_err(|(e, _)| e)?;
        *lock(&cluster.postmaster) = Some(child);
        let pid_file = PidFile::read(&cluster.data_dir).ok_or_else(|| {
            ClusterError::Invalid("the adopted server wrote no readable postmaster.pid".into())
        })?;
        cluster.port = pid_file.port;
        cluster.socket_dir = PathBuf::from(pid_file.host);
        cluster.version_num = cluster
            .psql("SHOW server_version_num")?
            .trim()
            .parse()
            .map_err(|_| ClusterError::Invalid("unreadable server_version_num".into()))?;
        Ok(cluster)
    }

    /// Whether this cluster was adopted ([`Cluster::adopt`]) and its server ran then.
    pub fn adopted_running(&self) -> Option<bool> {
        match &self.location {
            Location::Adopted(adopted) => Some(adopted.was_running),
            _ => None,
        }
    }

    /// Journals that the caller is about to create database `name` on an adopted
    /// cluster: it is dropped at hand back, by this process or, if this one is killed
    /// first, by the next adoption. Does nothing on a cluster that was not adopted.
    pub fn journal_scratch_database(&self, name: &str) -> Result<(), ClusterError> {
        let Location::Adopted(adopted) = &self.location else {
            return Ok(());
        };
        let databases = {
            let mut databases = lock(&self.scratch_databases);
            if !databases.iter().any(|d| d == name) {
                databases.push(name.to_string());
            }
            databases.clone()
        };
        write_journal(&self.data_dir, self.account, adopted, &databases)
    }

    /// Restores an adopted cluster's configuration files and leaves its server as it
    /// was found. Runs once (the private temp dir is its token); the journal goes once
    /// everything in it was undone.
    pub(crate) fn hand_back(&self) {
        let Location::Adopted(adopted) = &self.location else {
            return;
        };
        let Some(base) = lock(&self.base).take() else {
            return;
        };
        let databases = lock(&self.scratch_databases).clone();
        if !self.is_running() && (adopted.was_running || !databases.is_empty()) {
            let _ = self.start_server();
        }
        let dropped = databases.iter().all(|name| self.drop_database(name));
        let restored = if adopted.was_running {
            let restored = restore_config(&adopted.saved);
            if self.reload().is_ok() && self.pending_restart().is_ok_and(|p| !p.is_empty()) {
                let _ = self.restart();
            }
            // Runs on after this process, as it did before.
            drop(lock(&self.postmaster).take());
            restored
        } else {
            if self.stop(ShutdownMode::Fast).is_err() {
                let _ = self.stop(ShutdownMode::Immediate);
            }
            restore_config(&adopted.saved)
        };
        for dir in adopted.dirs.iter().filter(|d| d.as_path() != base.path()) {
            let _ = std::fs::remove_dir_all(dir);
        }
        let _ = base.close();
        if dropped && restored {
            Journal::at(self.data_dir.join(JOURNAL_FILE)).remove();
        }
    }

    /// `DROP DATABASE IF EXISTS name`, ending its sessions (from PostgreSQL 13); true
    /// when it is gone.
    fn drop_database(&self, name: &str) -> bool {
        let force = if self.version_num >= 130_000 {
            " WITH (FORCE)"
        } else {
            ""
        };
        self.psql(&format!(
            "DROP DATABASE IF EXISTS {}{force}",
            quote_ident(name)
        ))
        .is_ok()
    }
}

/// `data_dir`, canonical, when it holds a `PG_VERSION` file.
fn data_dir_of(given: &Path) -> Result<PathBuf, ClusterError> {
    if !given.join("PG_VERSION").is_file() {
        return Err(ClusterError::NotDataDir(given.to_path_buf()));
    }
    std::fs::canonicalize(given)
        .map_err(|e| ClusterError::io(format!("resolve {}", given.display()), e))
}

/// How the cluster is now: running (`found`) or not, its arguments, log and
/// configuration files.
fn found_now(data_dir: &Path, found: Option<&PidFile>) -> Result<Adopted, ClusterError> {
    Ok(Adopted {
        was_running: found.is_some(),
        server_args: match found {
            Some(_) => recorded_args(data_dir),
            None => vec!["-D".into(), data_dir.into()],
        },
        log: found.and_then(|p| log_destination(p.pid)),
        saved: save_config(data_dir)?,
        dirs: Vec::new(),
    })
}

/// Writes the journal of the adoption of `data_dir`, owned by the server account (a
/// base backup reads every file of the data directory as that account).
fn write_journal(
    data_dir: &Path,
    account: Option<Account>,
    adopted: &Adopted,
    databases: &[String],
) -> Result<(), ClusterError> {
    let journal = Journal::at(data_dir.join(JOURNAL_FILE));
    let record = Record {
        adopted: adopted.clone(),
        databases: databases.to_vec(),
    };
    journal
        .write(&record)
        .map_err(|e| ClusterError::io(format!("write {}", journal.path().display()), e))?;
    match account {
        Some(acct) => acct.chown(journal.path()),
        None => Ok(()),
    }
}

/// What replaying `record` does, a line each.
fn replay_notes(record: &Record) -> Vec<String> {
    let mut notes = Vec::new();
    for (path, contents) in &record.adopted.saved {
        if std::fs::read(path).ok() != *contents {
            notes.push(format!("restored {}", path.display()));
        }
    }
    for name in &record.databases {
        notes.push(format!("dropped the scratch database \"{name}\""));
    }
    for dir in record.adopted.dirs.iter().filter(|d| d.exists()) {
        notes.push(format!("removed {}", dir.display()));
    }
    let state = if record.adopted.was_running {
        "running"
    } else {
        "stopped"
    };
    notes.push(format!("left the server {state}, as that run found it"));
    notes
}

/// The regular file a running postmaster's standard error (or output) goes to, such as
/// `pg_ctl -l FILE`; with the logging collector on, the postmaster's own output is a
/// pipe and its logger child holds the file.
fn log_destination(pid: u32) -> Option<PathBuf> {
    let mut pids = vec![pid];
    pids.extend(children_of(pid));
    pids.iter()
        .flat_map(|p| [2, 1].map(|fd| format!("/proc/{p}/fd/{fd}")))
        .filter_map(|link| std::fs::read_link(link).ok())
        .find(|path| std::fs::metadata(path).is_ok_and(|m| m.is_file()))
}

/// The account the server runs under (as root: the directory's owner) and the
/// superuser's name (the owner's name, as `initdb` chooses it).
fn owner_of(data_dir: &Path) -> Result<(Option<Account>, String), ClusterError> {
    let meta = std::fs::metadata(data_dir)
        .map_err(|e| ClusterError::io(format!("stat {}", data_dir.display()), e))?;
    let owner = |why: String| ClusterError::Owner {
        dir: data_dir.to_path_buf(),
        why,
    };
    let name = user_name(meta.uid())
        .ok_or_else(|| owner(format!("its owner (uid {}) is no known user", meta.uid())))?;
    if is_root() {
        if meta.uid() == 0 {
            return Err(owner(
                "it belongs to root, and PostgreSQL does not run as root".into(),
            ));
        }
        let account = Account {
            uid: meta.uid(),
            gid: meta.gid(),
        };
        return Ok((Some(account), name));
    }
    if meta.uid() != effective_uid() {
        return Err(owner(format!(
            "it belongs to user {name} (uid {}): run pgrush as that user or as root",
            meta.uid()
        )));
    }
    Ok((None, name))
}

/// `SELECT 1` on the running server, as its superuser.
fn check_reachable(
    install: &PgInstall,
    data_dir: &Path,
    pid_file: &PidFile,
    superuser: &str,
) -> Result<(), ClusterError> {
    let mut cmd = install.command("psql");
    clear_pg_env(&mut cmd);
    let out = cmd
        .args(["-X", "-A", "-t", "-q", "-c", "SELECT 1", "-d", "postgres"])
        .args(["-h", &pid_file.host, "-p", &pid_file.port.to_string()])
        .args(["-U", superuser])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ClusterError::io("run psql", e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(ClusterError::Unreachable {
        dir: data_dir.to_path_buf(),
        pid: pid_file.pid,
        host: pid_file.host.clone(),
        port: pid_file.port,
        user: superuser.to_string(),
        output: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// The running server's arguments from `postmaster.opts` (`PROGRAM "ARG" "ARG" ...`),
/// with `-D` naming `data_dir` (absolute: a relative one was relative to another
/// working directory), added when missing.
fn recorded_args(data_dir: &Path) -> Vec<OsString> {
    let text = std::fs::read_to_string(data_dir.join("postmaster.opts")).unwrap_or_default();
    let mut args: Vec<OsString> = parse_opts(&text).into_iter().map(OsString::from).collect();
    match args.iter().position(|a| a == "-D") {
        Some(i) if i + 1 < args.len() => args[i + 1] = data_dir.as_os_str().to_owned(),
        _ => {
            args.retain(|a| a != "-D");
            args.splice(
                0..0,
                [OsString::from("-D"), data_dir.as_os_str().to_owned()],
            );
        }
    }
    args
}

/// The double-quoted arguments of a `postmaster.opts` line.
fn parse_opts(text: &str) -> Vec<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Stops the server found running (fast shutdown) and waits until its PID file is gone
/// and it no longer runs (a zombie left to its parent is fine: it holds nothing).
fn take_over(data_dir: &Path, pid: u32) -> Result<(), ClusterError> {
    signal(pid, libc::SIGINT);
    let started = Instant::now();
    loop {
        let pid_file_gone = PidFile::read(data_dir).is_none_or(|p| p.pid != pid);
        if pid_file_gone && still_running(&[pid]).is_empty() {
            return Ok(());
        }
        if started.elapsed() > TAKE_OVER_TIMEOUT {
            return Err(ClusterError::Stop {
                mode: "fast",
                seconds: TAKE_OVER_TIMEOUT.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Creates `server.log` in the adoption's private directory `base` for the server
/// account.
fn prepare_log(base: &Path, account: Option<Account>) -> Result<PathBuf, ClusterError> {
    let path = base.join(LOG_FILE);
    std::fs::File::options()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| ClusterError::io(format!("open {}", path.display()), e))?;
    if let Some(acct) = account {
        acct.chown(&path)?;
    }
    Ok(path)
}

/// The configuration files' contents now.
fn save_config(data_dir: &Path) -> Result<Vec<SavedFile>, ClusterError> {
    CONFIG_FILES
        .iter()
        .map(|name| {
            let path = data_dir.join(name);
            match std::fs::read(&path) {
                Ok(bytes) => Ok((path, Some(bytes))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((path, None)),
                Err(e) => Err(ClusterError::io(format!("read {}", path.display()), e)),
            }
        })
        .collect()
}

/// Puts the saved contents back (on the way out: every file is tried); true when all
/// are back.
fn restore_config(saved: &[SavedFile]) -> bool {
    saved.iter().fold(true, |ok, (path, contents)| {
        let done = match contents {
            Some(bytes) => overwrite(path, bytes).is_ok(),
            None => match std::fs::remove_file(path) {
                Ok(()) => true,
                Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            },
        };
        ok && done
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postmaster_opts_arguments_are_the_quoted_words() {
        let line = "/usr/lib/postgresql/15/bin/postgres \"-D\" \"/srv/my data\" \"-p\" \"5433\"\n";
        assert_eq!(parse_opts(line), ["-D", "/srv/my data", "-p", "5433"]);
        assert_eq!(parse_opts("/usr/bin/postgres\n"), Vec::<String>::new());
    }

    #[test]
    fn recorded_arguments_name_the_data_directory_absolutely() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let opts = data.join("postmaster.opts");
        std::fs::write(&opts, "/bin/postgres \"-D\" \"rel/data\" \"-p\" \"5433\"\n").unwrap();
        let want = |rest: &[&str]| {
            let mut v = vec![OsString::from("-D"), data.as_os_str().to_owned()];
            v.extend(rest.iter().map(OsString::from));
            v
        };
        assert_eq!(recorded_args(data), want(&["-p", "5433"]));
        std::fs::write(&opts, "/bin/postgres \"-p\" \"5433\"\n").unwrap();
        assert_eq!(recorded_args(data), want(&["-p", "5433"]));
        std::fs::remove_file(&opts).unwrap();
        assert_eq!(recorded_args(data), want(&[]));
    }

    #[test]
    fn pid_file_gives_port_and_socket_or_address() {
        let dir = tempfile::tempdir().unwrap();
        let write = |socket: &str, listen: &str| {
            let text =
                format!("42\n/data\n1700000000\n5433\n{socket}\n{listen}\n  1  2\nready   \n");
            std::fs::write(dir.path().join("postmaster.pid"), text).unwrap();
            PidFile::read(dir.path()).unwrap()
        };
        let found = write("/run/pg", "localhost");
        assert_eq!((found.pid, found.port), (42, 5433));
        assert_eq!(found.host, "/run/pg");
        assert_eq!(write("", "10.0.0.1").host, "10.0.0.1");
        assert_eq!(write("", "*").host, "127.0.0.1");
        std::fs::write(dir.path().join("postmaster.pid"), "garbage").unwrap();
        assert_eq!(PidFile::read(dir.path()), None);
    }

    #[test]
    fn the_log_destination_is_the_regular_file_of_standard_error() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let file = std::fs::File::create(&log).unwrap();
        let spawn = |stderr: Stdio| {
            std::process::Command::new("sleep")
                .arg("30")
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .unwrap()
        };
        let mut to_file = spawn(Stdio::from(file));
        let mut to_pipe = spawn(Stdio::piped());
        let found = (log_destination(to_file.id()), log_destination(to_pipe.id()));
        for child in [&mut to_file, &mut to_pipe] {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert_eq!(found, (Some(log), None));
    }

    #[test]
    fn a_directory_without_pg_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = Cluster::adopt(dir.path()).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("not a PostgreSQL data directory (no PG_VERSION file)"),
            "{err}"
        );
    }
}
