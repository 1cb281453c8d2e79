//! The cluster library's error type.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while finding PostgreSQL or running a local cluster.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// No usable PostgreSQL installation (a bin dir with `initdb` and `postgres`) was found.
    #[error(
        "no PostgreSQL binaries found (tried {tried}): run scripts/install-deps or set PGRUSH_PG_BIN"
    )]
    NoBinaries {
        /// The places that were looked at, comma separated.
        tried: String,
    },
    /// No installation of the requested major version was found.
    #[error("no PostgreSQL {major} binaries found (found: {found}): set PGRUSH_PG_BIN")]
    NoMatchingMajor {
        /// The major version asked for.
        major: u32,
        /// The installations that were found, as `version at bin dir`, comma separated
        /// (`none` when there were none).
        found: String,
    },
    /// A bin dir given explicitly lacks a program.
    #[error("{dir}: no {program} in this PostgreSQL bin dir")]
    MissingProgram {
        /// The bin dir.
        dir: PathBuf,
        /// The missing program's name.
        program: String,
    },
    /// A file-system or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A helper program (initdb, psql, useradd, cp) exited unsuccessfully.
    #[error("{program} failed ({status}): {output}")]
    Command {
        /// The program that failed.
        program: String,
        /// Its exit status, as text.
        status: String,
        /// Its standard error (and output), trimmed.
        output: String,
    },
    /// The server did not come up.
    #[error("server did not start: {reason}\n--- tail of {log} ---\n{tail}")]
    Start {
        /// Why starting was given up.
        reason: String,
        /// The server log's path.
        log: PathBuf,
        /// The last lines of the server log.
        tail: String,
    },
    /// The server did not stop within the time allowed.
    #[error("server did not stop within {seconds}s ({mode} shutdown)")]
    Stop {
        /// The shutdown mode that was asked for.
        mode: &'static str,
        /// How long was waited.
        seconds: u64,
    },
    /// The operation needs a running server and the server is stopped.
    #[error("the server is not running")]
    NotRunning,
    /// The operation needs a stopped server and the server is running.
    #[error("the server is already running")]
    AlreadyRunning,
    /// The cluster's files were removed ([`Cluster::discard`](crate::Cluster::discard)).
    #[error("the cluster was discarded")]
    Discarded,
    /// The unprivileged account the server must run under (as root) is unusable.
    #[error("cannot run the server as user postgres: {0}")]
    Account(String),
    /// A TLS operation was asked of a cluster started without TLS.
    #[error("this cluster was started without TLS")]
    NoTls,
    /// The directory given to [`Cluster::adopt`](crate::Cluster::adopt) is not a
    /// PostgreSQL data directory.
    #[error("{0}: not a PostgreSQL data directory (no PG_VERSION file)")]
    NotDataDir(PathBuf),
    /// The data directory belongs to an account this process cannot become.
    #[error("{dir}: {why}")]
    Owner {
        /// The data directory.
        dir: PathBuf,
        /// Who owns it and what would work.
        why: String,
    },
    /// The data directory's server runs but does not answer.
    #[error(
        "the server of {dir} runs (PID {pid}) but cannot be reached on {host}, port {port} as \
         its superuser {user} without a password (that needs trust, or peer authentication \
         when run as the directory's owner): {output}"
    )]
    Unreachable {
        /// The data directory.
        dir: PathBuf,
        /// The postmaster's PID (from `postmaster.pid`).
        pid: u32,
        /// The socket directory or address tried.
        host: String,
        /// The port tried.
        port: u16,
        /// The role tried.
        user: String,
        /// psql's message.
        output: String,
    },
    /// An argument is not acceptable (a setting name, a pg_hba line, a directory).
    #[error("invalid cluster setting: {0}")]
    Invalid(String),
}

impl ClusterError {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        ClusterError::Io {
            context: context.into(),
            source,
        }
    }
}
