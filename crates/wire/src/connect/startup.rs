//! One connection attempt on one address: SSL negotiation, TLS handshake, startup
//! packet, authentication.

use std::io;
use std::time::Instant;

use postgres_protocol::message::frontend;

use super::failure::{Failure, Next, io_failure, timed_out};
use super::gssenc;
use super::net::{Addr, check_peer, open_socket};
use crate::auth::{AuthFailure, AuthInput, authenticate};
use crate::cancel::CancelTarget;
use crate::config::{ConnectConfig, Endpoint, EndpointKind, GssEncMode, SslMode, TlsSettings};
use crate::conn::{Connection, Identity};
use crate::error::{DbError, strerror};
use crate::tls;
use crate::transport::{Socket, Transport};

/// SSLRequest exchange; returns whether the server agreed.
fn negotiate_ssl(sock: &mut Socket, deadline: Option<Instant>) -> Result<bool, Failure> {
    let mut buf = bytes::BytesMut::new();
    frontend::ssl_request(&mut buf);
    gssenc::write_all(sock, &buf, deadline)?;
    let mut answer = [0u8; 1];
    gssenc::read_exact(sock, &mut answer, deadline)?;
    match answer[0] {
        b'S' => Ok(true),
        b'N' => Ok(false),
        other => Err(Failure::new(
            format!(
                "received invalid response to SSL negotiation: {}",
                other as char
            ),
            Next::Stop,
        )),
    }
}

fn requires_tls(mode: SslMode) -> bool {
    matches!(
        mode,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
    )
}

/// Which encryption one attempt may try.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Encryption {
    /// TLS, as `sslmode` allows (on TCP only).
    pub(crate) try_tls: bool,
    /// GSSAPI encryption, as `gssencmode` allows (on TCP with a credential cache).
    pub(crate) try_gss: bool,
}

/// One attempt on one address: socket, optional GSSAPI encryption or TLS,
/// startup, authentication.
pub(crate) fn attempt(
    cfg: &ConnectConfig,
    ep: &Endpoint,
    addr: &Addr,
    choice: Encryption,
    password: Option<&str>,
) -> Result<Connection, Failure> {
    let deadline = cfg.connect_timeout.map(|t| Instant::now() + t);
    // As libpq 18: `gssencmode=require` fails before any socket when it cannot work.
    let cred = if choice.try_gss {
        gssenc::credential_for(cfg, addr)?
    } else {
        None
    };
    let mut transport = open_transport(cfg, addr, deadline)?;
    let gss_used = match cred {
        Some(cred) => gssenc::start(cfg, ep, &mut transport, cred, deadline)?,
        None => false,
    };
    let tls_allowed = cfg.gss.enc_mode != GssEncMode::Require;
    let (end_point, cert_record) =
        if !gss_used && tls_allowed && choice.try_tls && matches!(addr, Addr::Tcp(_)) {
            start_tls(cfg, ep, &mut transport, deadline)?
        } else {
            (None, None)
        };
    let mut conn = Connection::from_transport(transport);
    conn.deadline = deadline;
    conn.cancel_target = Some(match addr {
        Addr::Tcp(sa) => CancelTarget::Tcp(*sa),
        Addr::Unix(p) => CancelTarget::Unix(p.clone()),
    });
    send_startup(&mut conn, cfg)?;
    run_authentication(&mut conn, cfg, password, end_point, &ep.host)?;
    // libpq checks sslcertmode=require when authentication succeeds.
    if cfg.tls.cert_required
        && let Some(msg) = tls::CertRecord::require_failure(cert_record.as_ref())
    {
        return Err(Failure::new(msg, Next::Stop));
    }
    conn.deadline = None;
    conn.identity = identity(cfg, ep);
    Ok(conn)
}

/// The connected, non-blocking socket to `addr`, its peer checked against
/// `requirepeer` on a Unix socket.
fn open_transport(
    cfg: &ConnectConfig,
    addr: &Addr,
    deadline: Option<Instant>,
) -> Result<Transport, Failure> {
    let sock = open_socket(addr, deadline, &cfg.tcp).map_err(Failure::unreached)?;
    if let (Socket::Unix(s), Some(peer)) = (&sock, cfg.requirepeer.as_deref()) {
        check_peer(s, peer)?;
    }
    sock.set_nonblocking(true)
        .map_err(|e| Failure::new(strerror(&e), Next::Stop))?;
    Ok(Transport::new(sock))
}

/// TLS on a TCP connection as `sslmode` and `sslnegotiation` ask: SSLRequest
/// (unless direct), then the handshake if the server agreed. Returns the
/// `tls-server-end-point` channel binding data and the client certificate's record
/// when TLS is in use.
fn start_tls(
    cfg: &ConnectConfig,
    ep: &Endpoint,
    transport: &mut Transport,
    deadline: Option<Instant>,
) -> Result<(Option<Vec<u8>>, Option<tls::CertRecord>), Failure> {
    // sslnegotiation=direct: TLS right away, no SSLRequest (PostgreSQL 17+).
    let agreed = cfg.tls.direct || negotiate_ssl(&mut transport.sock, deadline)?;
    if agreed {
        tls_handshake(cfg, ep, transport, deadline)
    } else if requires_tls(cfg.tls.mode) {
        Err(Failure::new(
            "server does not support SSL, but SSL was required",
            Next::Stop,
        ))
    } else {
        Ok((None, None))
    }
}

/// The TLS handshake (and, for direct SSL, the ALPN check). Returns the
/// server certificate's `tls-server-end-point` hash (None without one) and the
/// client certificate's record.
fn tls_handshake(
    cfg: &ConnectConfig,
    ep: &Endpoint,
    transport: &mut Transport,
    deadline: Option<Instant>,
) -> Result<(Option<Vec<u8>>, Option<tls::CertRecord>), Failure> {
    let (config, record) =
        tls::client_config(&cfg.tls, &ep.host).map_err(|e| Failure::new(e.0, Next::Stop))?;
    let name = tls::server_name(&ep.host, ep.hostaddr.as_deref());
    let session = rustls::ClientConnection::new(config, name)
        .map_err(|e| Failure::new(format!("SSL error: {e}"), Next::Stop))?;
    transport.tls = Some(Box::new(session));
    if let Err(e) = transport.handshake(deadline) {
        return Err(handshake_failure(&e, &cfg.tls));
    }
    if cfg.tls.direct
        && transport
            .tls
            .as_ref()
            .and_then(|t| t.alpn_protocol())
            .is_none_or(|p| p != b"postgresql")
    {
        return Err(Failure::new(
            "direct SSL connection was established without ALPN protocol negotiation extension",
            Next::Stop,
        ));
    }
    let end_point = transport
        .tls
        .as_ref()
        .and_then(|t| t.peer_certificates())
        .and_then(|c| c.first())
        .map(|c| tls::server_end_point(c.as_ref()));
    Ok((end_point, Some(record)))
}

/// A failed TLS handshake in libpq's words; `sslmode=prefer` retries without
/// TLS, a timeout moves on to the next address.
fn handshake_failure(e: &io::Error, settings: &TlsSettings) -> Failure {
    let retry = if settings.mode == SslMode::Prefer {
        Next::RetryPlain
    } else {
        Next::Stop
    };
    if timed_out(e) {
        return Failure::new("timeout expired", Next::OtherAddr);
    }
    let text = match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(inner) => tls::handshake_error_text(inner, settings),
        None if e.kind() == io::ErrorKind::UnexpectedEof => {
            "SSL SYSCALL error: EOF detected".to_string()
        }
        None => format!("SSL SYSCALL error: {}", strerror(e)),
    };
    Failure::new(text, retry)
}

/// Sends the startup packet for `cfg`'s protocol version.
fn send_startup(conn: &mut Connection, cfg: &ConnectConfig) -> Result<(), Failure> {
    let params = startup_params(cfg);
    write_startup(conn.out_buf(), cfg.protocol_minor, &params)
        .map_err(|e| Failure::new(e, Next::Stop))?;
    conn.protocol_minor = cfg.protocol_minor;
    conn.send_blocking().map_err(io_failure)
}

/// The startup packet's parameters: `cfg.startup` as given, or user,
/// database, options, application name and client encoding where set.
fn startup_params(cfg: &ConnectConfig) -> Vec<(&str, &str)> {
    let app = cfg
        .application_name
        .as_deref()
        .filter(|a| !a.is_empty())
        .or(cfg
            .fallback_application_name
            .as_deref()
            .filter(|a| !a.is_empty()));
    let mut params: Vec<(&str, &str)> = Vec::new();
    if cfg.startup.is_empty() {
        params.push(("user", cfg.user.as_str()));
        if !cfg.dbname.is_empty() {
            params.push(("database", cfg.dbname.as_str()));
        }
        if let Some(o) = cfg.options.as_deref().filter(|o| !o.is_empty()) {
            params.push(("options", o));
        }
        if let Some(a) = app {
            params.push(("application_name", a));
        }
        if let Some(enc) = cfg.client_encoding.as_deref().filter(|e| !e.is_empty()) {
            params.push(("client_encoding", enc));
        }
    } else {
        params.extend(cfg.startup.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    }
    params
}

/// Authentication up to ReadyForQuery; its failure says what to try next.
fn run_authentication(
    conn: &mut Connection,
    cfg: &ConnectConfig,
    password: Option<&str>,
    end_point: Option<Vec<u8>>,
    gss_host: &str,
) -> Result<(), Failure> {
    let gss_encrypted = conn.is_gss_encrypted();
    let input = AuthInput {
        user: &cfg.user,
        password,
        channel_binding: cfg.channel_binding,
        end_point,
        require_auth: cfg.require_auth.as_ref(),
        min_protocol_minor: cfg.min_protocol_minor,
        gss: &cfg.gss,
        gss_host,
        gss_encrypted,
    };
    let tls_used = conn.is_tls();
    match authenticate(conn, &input) {
        Ok(()) => Ok(()),
        Err(AuthFailure::Server(db, authenticated_phase)) => {
            let mut failure = server_failure(&db, authenticated_phase, cfg.tls.mode, tls_used);
            // libpq: an error over GSSAPI encryption that was only preferred
            // retries without it.
            if gss_encrypted && cfg.gss.enc_mode == GssEncMode::Prefer && failure.next == Next::Stop
            {
                failure.next = Next::RetryWithoutGss;
            }
            Err(failure)
        }
        Err(AuthFailure::Client(msg)) => Err(Failure::new(msg, Next::Stop)),
        Err(AuthFailure::Io(e)) => Err(io_failure(e)),
    }
}

/// The server's error during startup (`authenticated_phase`: after
/// AuthenticationOk), with what to try next: another host when the server is
/// starting up, the other TLS choice where `sslmode` allows one.
fn server_failure(
    db: &DbError,
    authenticated_phase: bool,
    mode: SslMode,
    tls_used: bool,
) -> Failure {
    let mut text = db.libpq_message(None);
    text.push('\n');
    let next = if db.code == "57P03" {
        Next::OtherHost
    } else if authenticated_phase {
        Next::Stop
    } else if mode == SslMode::Allow && !tls_used {
        Next::RetryTls
    } else if mode == SslMode::Prefer && tls_used {
        Next::RetryPlain
    } else {
        Next::Stop
    };
    Failure {
        text,
        sqlstate: Some(db.code.clone()),
        next,
        reached: true,
        prefixed: true,
    }
}

/// Host, port, database and user as the connection reports them: the host
/// as given (the address when only `hostaddr` was), port 5432 by default.
fn identity(cfg: &ConnectConfig, ep: &Endpoint) -> Identity {
    Identity {
        host: match ep.kind {
            EndpointKind::Unix => ep.host.clone(),
            EndpointKind::Tcp if ep.host.is_empty() => ep.hostaddr.clone().unwrap_or_default(),
            EndpointKind::Tcp => ep.host.clone(),
        },
        port: if ep.port.is_empty() {
            "5432".to_string()
        } else {
            ep.port.clone()
        },
        db: cfg.dbname.clone(),
        user: cfg.user.clone(),
    }
}

/// The StartupMessage for protocol 3.`minor`.
fn write_startup(
    buf: &mut bytes::BytesMut,
    minor: u16,
    params: &[(&str, &str)],
) -> Result<(), String> {
    let start = buf.len();
    buf.extend_from_slice(&[0; 4]);
    buf.extend_from_slice(&(3u32 << 16 | u32::from(minor)).to_be_bytes());
    for (k, v) in params {
        if k.contains('\0') || v.contains('\0') {
            return Err("invalid startup parameter".to_string());
        }
        buf.extend_from_slice(k.as_bytes());
        buf.extend_from_slice(b"\0");
        buf.extend_from_slice(&crate::lossless::to_bytes(v));
        buf.extend_from_slice(b"\0");
    }
    buf.extend_from_slice(b"\0");
    let len =
        u32::try_from(buf.len() - start).map_err(|_| "startup packet too long".to_string())?;
    buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}
