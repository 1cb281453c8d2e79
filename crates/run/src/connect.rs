//! The first connection of a run or an initialization, opened as pgbench opens it:
//! the options resolved as libpq does, and, when the server asks for a password and
//! none was given, one `Password: ` prompt and a second attempt. The prompt itself is
//! the binary's (a [`PasswordPrompt`] handed in).

use std::fmt;
use std::io::IsTerminal;

use crate::failure::{Failure, Line};
use crate::options::Options;
use pgrush_wire::Connection;
use pgrush_wire::conninfo::{ConnParams, resolve};

/// Why the first connection failed: libpq's message, and whether any server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectFailure {
    /// libpq's message text (every attempted host).
    pub message: String,
    /// False when no PostgreSQL server answered at any address (refused, no socket,
    /// unknown host): then a person at a terminal is told about `pgrush demo`.
    pub server_reached: bool,
}

impl fmt::Display for ConnectFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl ConnectFailure {
    /// The extra line printed after pgbench's error lines when no server answered and
    /// standard error is a terminal; `None` otherwise, so that piped or logged stderr
    /// stays exactly pgbench's.
    pub fn terminal_hint(&self, progname: &str) -> Option<String> {
        no_server_hint(
            progname,
            self.server_reached,
            std::io::stderr().is_terminal(),
        )
    }
}

/// Asks for a password (the argument is the prompt, `Password: `); `None` when nothing
/// could be read.
pub type PasswordPrompt<'a> = &'a dyn Fn(&str) -> Option<String>;

impl ConnectFailure {
    /// pgbench's lines for a first connection that failed: libpq's message, then
    /// `could not create connection for <what>` (`setup`), then the terminal-only hint.
    pub fn into_failure(self, progname: &str, what: &str) -> Failure {
        let hint = self.terminal_hint(progname);
        let failure = Failure::error(pgrush_wire::lossless::to_bytes(&self.message)).then(
            Line::Error(format!("could not create connection for {what}").into_bytes()),
        );
        match hint {
            Some(hint) => failure.then(Line::Verbatim(hint.into_bytes())),
            None => failure,
        }
    }
}

/// The `pgrush demo` hint, when no server answered and stderr is a terminal.
fn no_server_hint(progname: &str, server_reached: bool, terminal: bool) -> Option<String> {
    (!server_reached && terminal).then(|| {
        format!(
            "{progname}: hint: no PostgreSQL server answered; \"pgrush demo\" benchmarks a throwaway local cluster\n"
        )
    })
}

/// Resolves `opts` and connects, asking `prompt` once for a password when needed.
///
/// The returned parameters carry the password that worked, so later connections
/// (clients, parallel loaders) reuse it. The error holds libpq's message text; the
/// caller adds its own `could not create connection for ...` line, then
/// [`ConnectFailure::terminal_hint`].
pub fn connect_prompting(
    opts: &Options,
    prompt: PasswordPrompt<'_>,
) -> Result<(ConnParams, Connection), ConnectFailure> {
    let mut request = opts.connect_request();
    loop {
        let params = resolve(&request).map_err(|e| ConnectFailure {
            message: e.to_string(),
            server_reached: true,
        })?;
        match Connection::connect(&params) {
            Ok(conn) => return Ok((params, conn)),
            Err(e) if e.needs_password() && request.password.is_none() => {
                match prompt("Password: ") {
                    Some(password) => request.password = Some(password),
                    None => return Err(failure(&e)),
                }
            }
            Err(e) => return Err(failure(&e)),
        }
    }
}

fn failure(e: &pgrush_wire::ConnectError) -> ConnectFailure {
    ConnectFailure {
        message: e.to_string(),
        server_reached: e.server_reached(),
    }
}

#[cfg(test)]
mod tests {
    use super::{ConnectFailure, no_server_hint};
    use crate::failure::Line;

    #[test]
    fn hint_only_at_a_terminal_when_no_server_answered() {
        let hint = no_server_hint("pgrush", false, true).expect("hint");
        assert!(hint.starts_with("pgrush: hint: "), "{hint}");
        assert!(hint.contains("pgrush demo"), "{hint}");
        assert!(hint.ends_with('\n'));
        assert_eq!(no_server_hint("pgrush", false, false), None);
        assert_eq!(no_server_hint("pgrush", true, true), None);
    }

    #[test]
    fn a_failed_first_connection_says_libpqs_message_then_what_it_was_for() {
        let failure = ConnectFailure {
            message: "connection to server failed: no".to_string(),
            server_reached: true,
        }
        .into_failure("pgbench", "setup");
        assert_eq!(failure.status(), 1);
        assert_eq!(
            failure.lines(),
            [
                Line::Error(b"connection to server failed: no".to_vec()),
                Line::Error(b"could not create connection for setup".to_vec())
            ]
        );
    }
}
