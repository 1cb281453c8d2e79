//! The authentication exchange (trust, cleartext, md5, SCRAM-SHA-256[-PLUS]) up to
//! ReadyForQuery.

use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{self, ChannelBinding, ScramSha256};
use postgres_protocol::message::frontend;

use crate::backend::BackendMessage;
use crate::config::ChannelBindingMode;
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
pub(crate) fn authenticate(
    conn: &mut Connection,
    input: &AuthInput<'_>,
) -> Result<(), AuthFailure> {
    let mut scram: Option<ScramSha256> = None;
    let mut used_channel_binding = false;
    let mut authenticated = false;
    let requested_minor = conn.protocol_minor;
    let mut negotiated: Option<u16> = None;
    let mut finished = false;
    loop {
        let mut reply: Option<Vec<u8>> = None;
        let mut key: Option<(i32, Vec<u8>)> = None;
        match conn.recv()? {
            BackendMessage::Authentication { code, data } => {
                if authenticated {
                    return Err(client(
                        "unexpected authentication request after authentication",
                    ));
                }
                check_required(input, code, finished)?;
                match code {
                    0 => {
                        if input.channel_binding == ChannelBindingMode::Require
                            && !used_channel_binding
                        {
                            return Err(client(
                                "channel binding required, but server authenticated client without channel binding",
                            ));
                        }
                        if scram.is_some() {
                            return Err(client(
                                "server sent AuthenticationOk before completing SASL authentication",
                            ));
                        }
                        authenticated = true;
                    }
                    3 | 5 => {
                        if input.channel_binding == ChannelBindingMode::Require {
                            return Err(client(
                                "channel binding required but not supported by server's authentication request",
                            ));
                        }
                        let password = input.password.ok_or_else(|| client(NO_PASSWORD))?;
                        let mut buf = bytes::BytesMut::new();
                        if code == 3 {
                            frontend::password_message(password.as_bytes(), &mut buf)
                        } else {
                            let salt: [u8; 4] = data
                                .get(..4)
                                .and_then(|s| s.try_into().ok())
                                .ok_or_else(|| client("insufficient data left in message"))?;
                            let hash = md5_hash(input.user.as_bytes(), password.as_bytes(), salt);
                            frontend::password_message(hash.as_bytes(), &mut buf)
                        }
                        .map_err(|e| AuthFailure::Client(e.to_string()))?;
                        reply = Some(buf.to_vec());
                        finished = true;
                    }
                    10 => {
                        let mechanisms: Vec<&[u8]> = data
                            .split(|&b| b == 0)
                            .take_while(|m| !m.is_empty())
                            .collect();
                        let offers = |m: &str| mechanisms.contains(&m.as_bytes());
                        let password = input.password.ok_or_else(|| client(NO_PASSWORD))?;
                        let (mechanism, binding) = match (&input.end_point, input.channel_binding) {
                            (Some(ep), mode)
                                if mode != ChannelBindingMode::Disable
                                    && offers(sasl::SCRAM_SHA_256_PLUS) =>
                            {
                                used_channel_binding = true;
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
                            (Some(_), ChannelBindingMode::Prefer)
                                if offers(sasl::SCRAM_SHA_256) =>
                            {
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
                        };
                        if let Some((spec, rules)) = input.require_auth
                            && !rules.allows_mechanism(SaslMechanism::Scram)
                        {
                            return Err(AuthFailure::Client(format!(
                                "authentication method requirement \"{spec}\" failed: server requested {mechanism} authentication"
                            )));
                        }
                        let s = ScramSha256::new(password.as_bytes(), binding);
                        let mut buf = bytes::BytesMut::new();
                        frontend::sasl_initial_response(mechanism, s.message(), &mut buf)
                            .map_err(|e| AuthFailure::Client(e.to_string()))?;
                        scram = Some(s);
                        reply = Some(buf.to_vec());
                    }
                    11 => {
                        let s = scram
                            .as_mut()
                            .ok_or_else(|| client("unexpected SASL challenge"))?;
                        s.update(data)
                            .map_err(|e| AuthFailure::Client(e.to_string()))?;
                        let mut buf = bytes::BytesMut::new();
                        frontend::sasl_response(s.message(), &mut buf)
                            .map_err(|e| AuthFailure::Client(e.to_string()))?;
                        reply = Some(buf.to_vec());
                    }
                    12 => {
                        let mut s = scram
                            .take()
                            .ok_or_else(|| client("unexpected SASL final message"))?;
                        s.finish(data)
                            .map_err(|e| AuthFailure::Client(e.to_string()))?;
                        finished = true;
                    }
                    2 => return Err(client("Kerberos 5 authentication not supported")),
                    7 | 8 => return Err(client("GSSAPI authentication not supported")),
                    9 => return Err(client("SSPI authentication not supported")),
                    other => {
                        return Err(AuthFailure::Client(format!(
                            "authentication method {other} not supported"
                        )));
                    }
                }
            }
            BackendMessage::ErrorResponse(fields) => {
                return Err(AuthFailure::Server(
                    Box::new(fields.to_db_error()),
                    authenticated,
                ));
            }
            BackendMessage::BackendKeyData {
                process_id,
                secret_key,
            } => {
                key = Some((process_id, secret_key.to_vec()));
            }
            BackendMessage::ReadyForQuery(_) => {
                if !authenticated {
                    return Err(client("unexpected message from server during startup"));
                }
                return Ok(());
            }
            BackendMessage::NegotiateProtocolVersion(body) => {
                negotiated = Some(negotiate(body, requested_minor, input.min_protocol_minor)?);
            }
            _ => {
                return Err(client(
                    "expected authentication request from server, but received other message",
                ));
            }
        }
        if let Some(minor) = negotiated.take() {
            conn.protocol_minor = minor;
        }
        if let Some((pid, secret)) = key {
            conn.backend_pid = pid;
            conn.secret_key = secret;
        }
        if let Some(bytes) = reply {
            conn.out_buf().extend_from_slice(&bytes);
            conn.send_blocking()?;
        }
    }
}
