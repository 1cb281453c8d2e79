//! Errors that stop a run ([`EngineError`]).

/// Errors that stop a run: before it starts, or while the threads set up and
/// make their initial connections. Messages are pgbench's (without the
/// `pgbench: error: ` prefix); a caller that prints one exits with status 1, as
/// pgbench does.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The configuration is inconsistent (e.g. generator counts).
    #[error("invalid engine configuration: {0}")]
    Config(String),
    /// Installing the signal handlers failed.
    #[error("could not install signal handlers: {0}")]
    Signal(std::io::Error),
    /// A worker thread could not be started.
    #[error("could not create thread: {0}")]
    Thread(std::io::Error),
    /// A worker thread could not create its event loop.
    #[error("could not create event loop: {0}")]
    EventLoop(std::io::Error),
    /// A `-l` log file could not be created.
    #[error("could not open logfile \"{name}\": {}", pgrush_wire::strerror(.source))]
    LogFile {
        /// The file name.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// An initial client connection failed (libpq's message was printed when it failed).
    #[error("could not create connection for client {client}")]
    Connection {
        /// The client's number.
        client: u32,
    },
    /// An initial client connection could not be watched by its thread's event loop.
    #[error("could not register connection of client {client}: {source}")]
    Register {
        /// The client's number.
        client: u32,
        /// Why.
        source: std::io::Error,
    },
}
