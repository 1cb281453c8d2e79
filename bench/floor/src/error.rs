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
    /// The server ended the connection: an end of file, or a reset (a backend
    /// terminated while a query was on its way reads as one).
    pub fn closed() -> FloorError {
        FloorError::Protocol("the server closed the connection".into())
    }

    /// An error of receiving: a reset is the server's closing the connection.
    pub fn receiving(source: io::Error) -> FloorError {
        if source.kind() == io::ErrorKind::ConnectionReset {
            FloorError::closed()
        } else {
            FloorError::io("receiving", source)
        }
    }

    /// An `Io` error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> FloorError {
        FloorError::Io {
            context: context.into(),
            source,
        }
    }
}
