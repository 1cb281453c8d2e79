//! The authentication exchange (trust, cleartext, md5, SCRAM-SHA-256[-PLUS],
//! GSSAPI) up to ReadyForQuery.

use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{self, ChannelBinding, ScramSha256};
use postgres_protocol::message::frontend;

use crate::backend::BackendMessage;
use crate::config::{ChannelBindingMode, GssSettings};
use crate::conn::Connection;
use crate::conninfo::{RequireAuth, SaslMechanism};
use crate::error::{DbError, Error};

/// Why authentication/startup failed.
#[derive(Debug)]
pub(crate) enum AuthFailure {
    /// The server sent an ErrorResponse (flag: after AuthenticationOk).
    Server(Box<DbError>, bool),
    /// A client-side failure (message in libpq's words, no newline).
    Client(String),
    /// Transport failure.
    Io(Error),
}

impl From<Error> for AuthFailure {
    fn from(e: Error) -> Self {
        match e {
            Error::Db(db) => AuthFailure::Server(db, false),
            other => AuthFailure::Io(other),
        }
    }
}

/// What the authentication step needs to know.
pub(crate) struct AuthInput<'a> {
    pub(crate) user: &'a str,
    pub(crate) password: Option<&'a str>,
    pub(crate) channel_binding: ChannelBindingMode,
    /// `tls-server-end-point` data when TLS is in use.
    pub(crate) end_point: Option<Vec<u8>>,
    /// Lowest acceptable protocol minor version.
    pub(crate) min_protocol_minor: u16,
    /// `require_auth` as written, and its rules.
    pub(crate) require_auth: Option<&'a (String, RequireAuth)>,
    /// `krbsrvname`, `gssdelegation`.
    pub(crate) gss: &'a GssSettings,
    /// The host name GSSAPI authentication targets (the `host` value as given).
    pub(crate) gss_host: &'a str,
    /// Whether GSSAPI encryption is in use (it authenticates the client too).
    pub(crate) gss_encrypted: bool,
}

/// Handles NegotiateProtocolVersion: returns the minor version to use.
fn negotiate(body: &[u8], requested: u16, min: u16) -> Result<u16, AuthFailure> {
    let bad = |what: &str| {
        AuthFailure::Client(format!(
            "received invalid protocol negotiation message: {what}"
        ))
    };
    let (version, rest) = body
        .split_first_chunk::<4>()
        .ok_or_else(|| bad("message too short"))?;
    let version = u32::from_be_bytes(*version);
    let (count, rest) = rest
        .split_first_chunk::<4>()
        .ok_or_else(|| bad("message too short"))?;
    let count = i32::from_be_bytes(*count);
    if count > 0 {
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let name = String::from_utf8_lossy(&rest[..end]).into_owned();
        return Err(bad(&format!(
            "server reported an unsupported parameter that was not requested (\"{name}\")"
        )));
    }
    let (major, minor) = (version >> 16, (version & 0xffff) as u16);
    if major != 3 || minor > requested {
        return Err(bad(
            "server requested downgrade to a higher-numbered version",
        ));
    }
    if minor < min {
        return Err(AuthFailure::Client(format!(
            "server only supports protocol version 3.{minor}, but \"min_protocol_version\" was set to 3.{min}"
        )));
    }
    Ok(minor)
}

/// libpq's description of an authentication request, for `require_auth` failures.
fn request_description(code: i32) -> &'static str {
    match code {
        3 => "server requested a cleartext password",
        5 => "server requested a hashed password",
        7 | 8 => "server requested GSSAPI authentication",
        9 => "server requested SSPI authentication",
        10..=12 => "server requested SASL authentication",
        _ => "server requested an unknown authentication type",
    }
}

/// `require_auth` check for one request (`finished`: an exchange was completed).
fn check_required(input: &AuthInput<'_>, code: i32, finished: bool) -> Result<(), AuthFailure> {
    let Some((spec, rules)) = input.require_auth else {
        return Ok(());
    };
    let reason = match code {
        0 if rules.auth_required() && !finished => Some("server did not complete authentication"),
        0 => None,
        // Continuations of an exchange that was allowed to start.
        8 | 11 | 12 => None,
        c if !rules.allows_request(c as u32) => Some(request_description(c)),
        _ => None,
    };
    match reason {
        Some(r) => Err(AuthFailure::Client(format!(
            "authentication method requirement \"{spec}\" failed: {r}"
        ))),
        None => Ok(()),
    }
}

pub(crate) const NO_PASSWORD: &str = "fe_sendauth: no password supplied";

fn client(msg: &str) -> AuthFailure {
    AuthFailure::Client(msg.to_string())
}

/// Runs authentication and waits for ReadyForQuery. Records the backend key.
///
/// Each backend message goes to [`Exchange::on_message`], which says what the
/// connection must do with it ([`Step`]); this loop does it.
pub(crate) fn authenticate(
    conn: &mut Connection,
    input: &AuthInput<'_>,
) -> Result<(), AuthFailure> {
    let requested_minor = conn.protocol_minor;
    let mut exchange = Exchange::new(input);
    loop {
        let step = exchange.on_message(conn.recv()?, requested_minor)?;
        match step {
            Step::Ready => return Ok(()),
            Step::Read => {}
            Step::Protocol(minor) => conn.protocol_minor = minor,
            Step::Key(pid, secret) => {
                conn.backend_pid = pid;
                conn.secret_key = secret;
            }
            Step::Reply(bytes) => {
                conn.out_buf().extend_from_slice(&bytes);
                conn.send_blocking()?;
            }
        }
    }
}

/// What the connection does after one backend message of the startup phase.
enum Step {
    /// Nothing: read the next message.
    Read,
    /// Send these bytes (a password or SASL message), then read on.
    Reply(Vec<u8>),
    /// Record the backend key (process id, secret key), then read on.
    Key(i32, Vec<u8>),
    /// Use this protocol minor version (NegotiateProtocolVersion), then read on.
    Protocol(u16),
    /// ReadyForQuery after AuthenticationOk: the connection is ready.
    Ready,
}

/// The client's side of the startup phase, one backend message at a time.
struct Exchange<'i, 'a> {
    /// What authentication needs to know.
    input: &'i AuthInput<'a>,
    /// The SCRAM exchange between AuthenticationSASL and AuthenticationSASLFinal.
    scram: Option<ScramSha256>,
    /// The GSSAPI exchange between AuthenticationGSS and its last GSSContinue.
    gss: Option<crate::gss::Initiator>,
    /// Whether SCRAM-SHA-256-PLUS (channel binding) was chosen.
    used_channel_binding: bool,
    /// Whether AuthenticationOk arrived.
    authenticated: bool,
    /// Whether a password was sent or a SASL exchange completed (`require_auth`).
    finished: bool,
}

impl<'i, 'a> Exchange<'i, 'a> {
    /// An exchange that has not seen any message yet.
    fn new(input: &'i AuthInput<'a>) -> Self {
        // libpq counts GSSAPI encryption as a finished GSSAPI exchange.
        let finished = input.gss_encrypted
            && input
                .require_auth
                .is_none_or(|(_, rules)| rules.allows_request(7));
        Exchange {
            input,
            scram: None,
            gss: None,
            used_channel_binding: false,
            authenticated: false,
            finished,
        }
    }

    /// Handles one backend message; `requested_minor` is the protocol minor
    /// version the startup packet asked for.
    fn on_message(
        &mut self,
        msg: BackendMessage<'_>,
        requested_minor: u16,
    ) -> Result<Step, AuthFailure> {
        match msg {
            BackendMessage::Authentication { code, data } => self.on_request(code, data),
            BackendMessage::ErrorResponse(fields) => Err(AuthFailure::Server(
                Box::new(fields.to_db_error()),
                self.authenticated,
            )),
            BackendMessage::BackendKeyData {
                process_id,
                secret_key,
            } => Ok(Step::Key(process_id, secret_key.to_vec())),
            BackendMessage::ReadyForQuery(_) => {
                if !self.authenticated {
                    return Err(client("unexpected message from server during startup"));
                }
                Ok(Step::Ready)
            }
            BackendMessage::NegotiateProtocolVersion(body) => Ok(Step::Protocol(negotiate(
                body,
                requested_minor,
                self.input.min_protocol_minor,
            )?)),
            _ => Err(client(
                "expected authentication request from server, but received other message",
            )),
        }
    }

    /// An Authentication message: request `code` with the bytes after it.
    fn on_request(&mut self, code: i32, data: &[u8]) -> Result<Step, AuthFailure> {
        if self.authenticated {
            return Err(client(
                "unexpected authentication request after authentication",
            ));
        }
        check_required(self.input, code, self.finished)?;
        match code {
            0 => self.on_ok(),
            3 | 5 => self.password(code, data),
            10 => self.sasl_start(data),
            11 => self.sasl_continue(data),
            12 => self.sasl_final(data),
            2 => Err(client("Kerberos 5 authentication not supported")),
            // Without native SSPI, libpq answers SSPI with GSSAPI too.
            7 | 9 => self.gss_start(),
            8 => self.gss_continue(data),
            other => Err(AuthFailure::Client(format!(
                "authentication method {other} not supported"
            ))),
        }
    }

    /// AuthenticationOk: refused while channel binding is required but unused,
    /// or in the middle of a SASL exchange.
    fn on_ok(&mut self) -> Result<Step, AuthFailure> {
        if self.input.channel_binding == ChannelBindingMode::Require && !self.used_channel_binding {
            return Err(client(
                "channel binding required, but server authenticated client without channel binding",
            ));
        }
        if self.scram.is_some() {
            return Err(client(
                "server sent AuthenticationOk before completing SASL authentication",
            ));
        }
        self.authenticated = true;
        Ok(Step::Read)
    }

    /// AuthenticationGSS (7) or AuthenticationSSPI (9): imports the target
    /// name `krbsrvname@host` and sends the first token.
    fn gss_start(&mut self) -> Result<Step, AuthFailure> {
        if let Err(reason) = crate::gss::library() {
            return Err(AuthFailure::Client(format!(
                "GSSAPI authentication not supported: {reason}"
            )));
        }
        if self.input.gss_host.is_empty() {
            return Err(client("host name must be specified"));
        }
        if self.gss.is_some() {
            return Err(client("duplicate GSS authentication request"));
        }
        let mut flags = crate::gss::AUTH_FLAGS;
        if self.input.gss.delegation {
            flags |= crate::gss::DELEGATION_FLAG;
        }
        let initiator = crate::gss::Initiator::new(
            &self.input.gss.service_name,
            self.input.gss_host,
            crate::gss::credential(),
            flags,
        )
        .map_err(|e| AuthFailure::Client(e.0))?;
        self.gss = Some(initiator);
        self.gss_step(None)
    }

    /// AuthenticationGSSContinue (8, the server's token in `data`).
    fn gss_continue(&mut self, data: &[u8]) -> Result<Step, AuthFailure> {
        if self.gss.is_none() {
            return self.gss_start();
        }
        self.gss_step(Some(data))
    }

    /// One context step; its token goes back in a GSSResponse (`p`).
    fn gss_step(&mut self, server_token: Option<&[u8]>) -> Result<Step, AuthFailure> {
        let Some(initiator) = self.gss.as_mut() else {
            return Err(client("unexpected GSSAPI continuation"));
        };
        let (token, complete) = initiator
            .step(server_token, "GSSAPI continuation error")
            .map_err(|e| {
                self.gss = None;
                AuthFailure::Client(e.0)
            })?;
        if complete {
            self.gss = None;
            self.finished = true;
        }
        if token.is_empty() {
            return Ok(Step::Read);
        }
        let mut buf = Vec::with_capacity(5 + token.len());
        buf.push(b'p');
        buf.extend_from_slice(&((token.len() + 4) as u32).to_be_bytes());
        buf.extend_from_slice(&token);
        Ok(Step::Reply(buf))
    }

    /// AuthenticationCleartextPassword (3) or AuthenticationMD5Password (5, the
    /// salt in `data`): the PasswordMessage.
    fn password(&mut self, code: i32, data: &[u8]) -> Result<Step, AuthFailure> {
        let input = self.input;
        if input.channel_binding == ChannelBindingMode::Require {
            return Err(client(
                "channel binding required but not supported by server's authentication request",
            ));
        }
        let password = input.password.ok_or_else(|| client(NO_PASSWORD))?;
        let mut buf = bytes::BytesMut::new();
        if code == 3 {
            frontend::password_message(&crate::lossless::to_bytes(password), &mut buf)
        } else {
            let salt: [u8; 4] = data
                .get(..4)
                .and_then(|s| s.try_into().ok())
                .ok_or_else(|| client("insufficient data left in message"))?;
            let hash = md5_hash(
                &crate::lossless::to_bytes(input.user),
                &crate::lossless::to_bytes(password),
                salt,
            );
            frontend::password_message(hash.as_bytes(), &mut buf)
        }
        .map_err(|e| AuthFailure::Client(e.to_string()))?;
        self.finished = true;
        Ok(Step::Reply(buf.to_vec()))
    }

    /// AuthenticationSASL (10, the offered mechanisms in `data`): picks a
    /// mechanism and sends SASLInitialResponse.
    fn sasl_start(&mut self, data: &[u8]) -> Result<Step, AuthFailure> {
        let mechanisms: Vec<&[u8]> = data
            .split(|&b| b == 0)
            .take_while(|m| !m.is_empty())
            .collect();
        let password = self.input.password.ok_or_else(|| client(NO_PASSWORD))?;
        let (mechanism, binding) = self.choose_mechanism(&mechanisms)?;
        if let Some((spec, rules)) = self.input.require_auth
            && !rules.allows_mechanism(SaslMechanism::Scram)
        {
            return Err(AuthFailure::Client(format!(
                "authentication method requirement \"{spec}\" failed: server requested {mechanism} authentication"
            )));
        }
        let s = ScramSha256::new(&crate::lossless::to_bytes(password), binding);
        let mut buf = bytes::BytesMut::new();
        frontend::sasl_initial_response(mechanism, s.message(), &mut buf)
            .map_err(|e| AuthFailure::Client(e.to_string()))?;
        self.scram = Some(s);
        Ok(Step::Reply(buf.to_vec()))
    }

    /// The SASL mechanism and channel binding to use among those offered, as
    /// libpq chooses them under `channel_binding`.
    fn choose_mechanism(
        &mut self,
        mechanisms: &[&[u8]],
    ) -> Result<(&'static str, ChannelBinding), AuthFailure> {
        let offers = |m: &str| mechanisms.contains(&m.as_bytes());
        let input = self.input;
        Ok(match (&input.end_point, input.channel_binding) {
            (Some(ep), mode)
                if mode != ChannelBindingMode::Disable && offers(sasl::SCRAM_SHA_256_PLUS) =>
            {
                self.used_channel_binding = true;
                (
                    sasl::SCRAM_SHA_256_PLUS,
                    ChannelBinding::tls_server_end_point(ep.clone()),
                )
            }
            (_, ChannelBindingMode::Require) => {
                return Err(client(if input.end_point.is_none() {
                    "channel binding required, but SSL not in use"
                } else {
                    "channel binding is required, but server did not offer an authentication method that supports channel binding"
                }));
            }
            (Some(_), ChannelBindingMode::Prefer) if offers(sasl::SCRAM_SHA_256) => {
                (sasl::SCRAM_SHA_256, ChannelBinding::unrequested())
            }
            _ if offers(sasl::SCRAM_SHA_256) => {
                (sasl::SCRAM_SHA_256, ChannelBinding::unsupported())
            }
            _ => {
                return Err(client(
                    "none of the server's SASL authentication mechanisms are supported",
                ));
            }
        })
    }

    /// AuthenticationSASLContinue (11, the server-first message in `data`):
    /// sends the client-final message.
    fn sasl_continue(&mut self, data: &[u8]) -> Result<Step, AuthFailure> {
        let s = self
            .scram
            .as_mut()
            .ok_or_else(|| client("unexpected SASL challenge"))?;
        s.update(data)
            .map_err(|e| AuthFailure::Client(e.to_string()))?;
        let mut buf = bytes::BytesMut::new();
        frontend::sasl_response(s.message(), &mut buf)
            .map_err(|e| AuthFailure::Client(e.to_string()))?;
        Ok(Step::Reply(buf.to_vec()))
    }

    /// AuthenticationSASLFinal (12, the server-final message in `data`):
    /// verifies the server's signature, which ends the SCRAM exchange.
    fn sasl_final(&mut self, data: &[u8]) -> Result<Step, AuthFailure> {
        let mut s = self
            .scram
            .take()
            .ok_or_else(|| client("unexpected SASL final message"))?;
        s.finish(data)
            .map_err(|e| AuthFailure::Client(e.to_string()))?;
        self.finished = true;
        Ok(Step::Read)
    }
}
