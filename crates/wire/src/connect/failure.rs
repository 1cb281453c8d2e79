//! The outcome of a failed connection attempt and what libpq does next.

use std::io;

use crate::error::Error;

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Give up (the error is final).
    Stop,
    /// Try the next address of this host, then the next host.
    OtherAddr,
    /// Skip remaining addresses of this host.
    OtherHost,
    /// Reconnect to the same address without TLS (`prefer`).
    RetryPlain,
    /// Reconnect to the same address with TLS (`allow`).
    RetryTls,
    /// Reconnect to the same address without GSSAPI encryption
    /// (`gssencmode=prefer` after a failed GSSAPI attempt).
    RetryWithoutGss,
}

/// A failed attempt: text after the `connection to server ... failed: ` prefix
/// (ending with a newline), the SQLSTATE when the server sent an error, and what next.
pub(crate) struct Failure {
    pub(crate) text: String,
    pub(crate) sqlstate: Option<String>,
    pub(crate) next: Next,
    /// Whether the socket was connected (something listened at the address);
    /// false when the attempt failed before any server could answer.
    pub(crate) reached: bool,
    /// Whether the text follows the `connection to server ... failed: `
    /// prefix (false for libpq's checks made before a socket exists).
    pub(crate) prefixed: bool,
}

impl Failure {
    pub(crate) fn new(text: impl Into<String>, next: Next) -> Self {
        let mut text = text.into();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        Failure {
            text,
            sqlstate: None,
            next,
            reached: true,
            prefixed: true,
        }
    }

    /// The same failure without the `connection to server ...` prefix.
    pub(crate) fn unprefixed(self) -> Self {
        Failure {
            prefixed: false,
            ..self
        }
    }

    /// A failure that adds no text of its own: only the `connection to
    /// server ...` prefix, which libpq writes as each attempt starts.
    pub(crate) fn silent(next: Next) -> Self {
        Failure {
            text: String::new(),
            sqlstate: None,
            next,
            reached: true,
            prefixed: true,
        }
    }

    /// The same failure, marked as one where no server was reached (refused,
    /// no such socket, unreachable, timed out while connecting).
    pub(crate) fn unreached(self) -> Self {
        Failure {
            reached: false,
            ..self
        }
    }
}

pub(crate) fn timed_out(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::TimedOut
}

/// Maps a transport error during startup to libpq's text.
pub(crate) fn io_failure(e: Error) -> Failure {
    match &e {
        Error::Recv(io) | Error::Send(io) if timed_out(io) => {
            Failure::new("timeout expired", Next::OtherAddr)
        }
        _ => Failure::new(e.to_string(), Next::Stop),
    }
}
