//! Why `pgrush ops` stopped.

use std::path::PathBuf;

/// A failure of the operations timings. Messages start lowercase; the CLI prefixes
/// `pgrush: error: ops: `.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpsError {
    /// A bad command line.
    #[error("{0}")]
    Usage(String),
    /// A PostgreSQL program the steps need is missing or of another major version.
    #[error("{0}")]
    Tool(String),
    /// The role lacks a privilege a chosen step needs.
    #[error("{0}")]
    Privilege(String),
    /// The throwaway cluster could not be started or controlled.
    #[error("{0}")]
    Cluster(#[from] pgrush_cluster::ClusterError),
    /// Connecting to the server failed.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// A statement failed.
    #[error("{sql}: {message}")]
    Sql {
        /// The statement (or what it was for).
        sql: String,
        /// The server's message.
        message: String,
    },
    /// A program exited with an error.
    #[error("{program} failed ({status}): {output}")]
    Program {
        /// The program's name.
        program: String,
        /// Its exit status.
        status: String,
        /// The end of its standard error.
        output: String,
    },
    /// The initialization (`-i`) failed.
    #[error("initialization failed: {0}")]
    Init(String),
    /// Not enough disk space for the next scale.
    #[error(
        "scale {scale} needs about {need_mb} MB of disk in {dir} but only {free_mb} MB are free; \
         stopping before it (the smaller scales' results are kept)"
    )]
    Disk {
        /// The scale that would not fit.
        scale: u32,
        /// The estimate, in MB.
        need_mb: u64,
        /// The free space, in MB.
        free_mb: u64,
        /// The directory whose file system was measured.
        dir: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Ctrl-C (or SIGTERM) stopped the run.
    #[error("interrupted")]
    Interrupted,
    /// A result could not be understood (a log line, a program's output).
    #[error("{0}")]
    Unexpected(String),
}

impl OpsError {
    /// An I/O failure while doing `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> OpsError {
        OpsError::Io {
            what: what.into(),
            source,
        }
    }

    /// A failed statement.
    pub fn sql(sql: impl Into<String>, err: impl std::fmt::Display) -> OpsError {
        OpsError::Sql {
            sql: sql.into(),
            message: err.to_string().trim().to_string(),
        }
    }
}
