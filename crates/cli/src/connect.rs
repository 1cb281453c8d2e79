//! The first connection of a run or an initialization, opened as pgbench opens it:
//! the options resolved as libpq does, and, when the server asks for a password and
//! none was given, one `Password: ` prompt and a second attempt.

use crate::options::Options;
use crate::prompt;
use pgrush_wire::Connection;
use pgrush_wire::conninfo::{ConnParams, resolve};

/// Resolves `opts` and connects, prompting once for a password when needed.
///
/// The returned parameters carry the password that worked, so later connections
/// (clients, parallel loaders) reuse it. The error is libpq's message text; the
/// caller adds its own `could not create connection for ...` line.
pub fn connect_prompting(opts: &Options) -> Result<(ConnParams, Connection), String> {
    let mut request = opts.connect_request();
    loop {
        let params = resolve(&request).map_err(|e| e.to_string())?;
        match Connection::connect(&params) {
            Ok(conn) => return Ok((params, conn)),
            Err(e) if e.needs_password() && request.password.is_none() => {
                match prompt::password("Password: ") {
                    Some(password) => request.password = Some(password),
                    None => return Err(e.to_string()),
                }
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}
