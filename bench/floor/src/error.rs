//! The floor client's errors.

use std::io;

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FloorError {
    /// The command line is wrong.
    #[error("{0}")]
    Usage(String),
    /// A socket operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The system's error.
        source: io::Error,
    },
    /// The server sent something the floor does not handle.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The server answered with an ErrorResponse.
    #[error("server error: {0}")]
    Server(String),
}

impl FloorError {
    /// An `Io` error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> FloorError {
        FloorError::Io {
            context: context.into(),
            source,
        }
    }
}
