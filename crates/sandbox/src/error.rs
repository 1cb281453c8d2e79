//! The sandbox's error type.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while finding PostgreSQL or running a throwaway cluster.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// No usable PostgreSQL installation (a bin dir with `initdb` and `postgres`) was found.
    #[error(
        "no PostgreSQL binaries found (tried {tried}): run scripts/install-deps or set PGRUSH_PG_BIN"
    )]
    NoBinaries {
        /// The places that were looked at, comma separated.
        tried: String,
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
    /// The unprivileged account the server must run under (as root) is unusable.
    #[error("cannot run the server as user postgres: {0}")]
    Account(String),
    /// Generating TLS material failed.
    #[error("TLS certificate generation failed: {0}")]
    Tls(String),
    /// A TLS operation was asked of a cluster started without `.tls(true)`.
    #[error("this cluster was started without TLS")]
    NoTls,
    /// A builder argument is not acceptable.
    #[error("invalid sandbox setting: {0}")]
    Invalid(String),
}

impl SandboxError {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        SandboxError::Io {
            context: context.into(),
            source,
        }
    }
}
