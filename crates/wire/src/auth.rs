//! The authentication exchange (trust, cleartext, md5, SCRAM-SHA-256[-PLUS]) up to
//! ReadyForQuery.

use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{self, ChannelBinding, ScramSha256};
use postgres_protocol::message::frontend;

use crate::backend::BackendMessage;
use crate::config::ChannelBindingMode;
use crate::conn::Connection;
use crate::error::{DbError, Error};

/// Why authentication/startup failed.
#[derive(Debug)]
pub(crate) enum AuthFailure {
    /// The server sent an ErrorResponse (flag: after AuthenticationOk).
    Server(DbError, bool),
    /// A client-side failure (message in libpq's words, no newline).
    Client(String),
    /// Transport failure.
    Io(Error),
}

impl From<Error> for AuthFailure {
    fn from(e: Error) -> Self {
        match e {
            Error::Db(db) => AuthFailure::Server(*db, false),
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
}

const NO_PASSWORD: &str = "fe_sendauth: no password supplied";

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
                    }
                    10 => {
                        let mechanisms: Vec<&[u8]> = data
                            .split(|&b| b == 0)
                            .take_while(|m| !m.is_empty())
                            .collect();
                        let offers = |m: &str| mechanisms.iter().any(|x| *x == m.as_bytes());
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
                return Err(AuthFailure::Server(fields.to_db_error(), authenticated));
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
            BackendMessage::NegotiateProtocolVersion(_) => {}
            _ => {
                return Err(client(
                    "expected authentication request from server, but received other message",
                ));
            }
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
