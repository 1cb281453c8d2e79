//! Establishing a connection: host list, address resolution, sockets, SSL negotiation,
//! startup, authentication, target_session_attrs — with libpq's accumulated messages.

use std::ffi::{CStr, CString};
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Instant;

use postgres_protocol::message::frontend;

use crate::auth::{AuthFailure, AuthInput, authenticate};
use crate::cancel::CancelTarget;
use crate::config::{ConnectConfig, Endpoint, EndpointKind, SslMode, TargetSessionAttrs};
use crate::conn::{Connection, Identity};
use crate::error::{ConnectError, Error, strerror};
use crate::tls;
use crate::transport::{Socket, Transport, wait_fd};

/// One resolved address of an endpoint.
#[derive(Debug, Clone)]
enum Addr {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Give up (the error is final).
    Stop,
    /// Try the next address of this host, then the next host.
    NextAddr,
    /// Skip remaining addresses of this host.
    NextHost,
    /// Reconnect to the same address without TLS (`prefer`).
    RetryPlain,
    /// Reconnect to the same address with TLS (`allow`).
    RetryTls,
}

/// A failed attempt: text after the `connection to server ... failed: ` prefix
/// (ending with a newline), the SQLSTATE when the server sent an error, and what next.
struct Failure {
    text: String,
    sqlstate: Option<String>,
    next: Next,
}

impl Failure {
    fn new(text: impl Into<String>, next: Next) -> Self {
        let mut text = text.into();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        Failure {
            text,
            sqlstate: None,
            next,
        }
    }
}

fn gai_error(rc: libc::c_int) -> String {
    // SAFETY: gai_strerror returns a pointer to a static NUL-terminated string.
    unsafe { CStr::from_ptr(libc::gai_strerror(rc)) }
        .to_string_lossy()
        .into_owned()
}

/// getaddrinfo(host, port) with libpq's hints (any family, stream sockets).
fn resolve_host(host: &str, port: u16, numeric: bool) -> Result<Vec<SocketAddr>, String> {
    let c_host = CString::new(host).map_err(|_| "invalid host name".to_string())?;
    let c_port = CString::new(port.to_string()).map_err(|_| "invalid port".to_string())?;
    // SAFETY: an all-zero addrinfo is a valid "no hints" value.
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_family = libc::AF_UNSPEC;
    hints.ai_socktype = libc::SOCK_STREAM;
    if numeric {
        hints.ai_flags = libc::AI_NUMERICHOST;
    }
    let mut res: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: valid C strings and hints; res receives a list freed below.
    let rc = unsafe { libc::getaddrinfo(c_host.as_ptr(), c_port.as_ptr(), &hints, &mut res) };
    if rc != 0 {
        return Err(gai_error(rc));
    }
    let mut out = Vec::new();
    let mut cur = res;
    while !cur.is_null() {
        // SAFETY: cur is a node of the list returned by getaddrinfo.
        let ai = unsafe { &*cur };
        if !ai.ai_addr.is_null() {
            match ai.ai_family {
                libc::AF_INET => {
                    // SAFETY: family AF_INET guarantees a sockaddr_in.
                    let sa = unsafe { &*(ai.ai_addr as *const libc::sockaddr_in) };
                    let ip = std::net::Ipv4Addr::from(u32::from_be(sa.sin_addr.s_addr));
                    out.push(SocketAddr::new(IpAddr::V4(ip), port));
                }
                libc::AF_INET6 => {
                    // SAFETY: family AF_INET6 guarantees a sockaddr_in6.
                    let sa = unsafe { &*(ai.ai_addr as *const libc::sockaddr_in6) };
                    let ip = std::net::Ipv6Addr::from(sa.sin6_addr.s6_addr);
                    out.push(SocketAddr::V6(std::net::SocketAddrV6::new(
                        ip,
                        port,
                        sa.sin6_flowinfo,
                        sa.sin6_scope_id,
                    )));
                }
                _ => {}
            }
        }
        cur = ai.ai_next;
    }
    // SAFETY: res came from a successful getaddrinfo.
    unsafe { libc::freeaddrinfo(res) };
    Ok(out)
}

/// Resolves an endpoint; on failure returns libpq's message (not prefixed).
fn resolve(ep: &Endpoint) -> Result<Vec<Addr>, String> {
    match ep.kind {
        EndpointKind::Unix => Ok(vec![Addr::Unix(PathBuf::from(ep.socket_path()))]),
        EndpointKind::Tcp => {
            if let Some(addr) = ep.hostaddr.as_deref().filter(|a| !a.is_empty()) {
                return resolve_host(addr, ep.port_number(), true)
                    .map(|v| v.into_iter().map(Addr::Tcp).collect())
                    .map_err(|e| format!("could not parse network address \"{addr}\": {e}"));
            }
            let host = if ep.host.is_empty() {
                "localhost"
            } else {
                &ep.host
            };
            resolve_host(host, ep.port_number(), false)
                .map(|v| v.into_iter().map(Addr::Tcp).collect())
                .map_err(|e| format!("could not translate host name \"{host}\" to address: {e}"))
        }
    }
}

/// libpq's `connection to server ... failed: ` prefix for an address.
fn prefix(ep: &Endpoint, addr: &Addr) -> String {
    match addr {
        Addr::Unix(path) => format!(
            "connection to server on socket \"{}\" failed: ",
            path.display()
        ),
        Addr::Tcp(sa) => {
            let ip = sa.ip().to_string();
            let port = if ep.port.is_empty() { "5432" } else { &ep.port };
            match ep.hostaddr.as_deref().filter(|a| !a.is_empty()) {
                Some(hostaddr) => {
                    format!("connection to server at \"{hostaddr}\", port {port} failed: ")
                }
                None if ep.host != ip => {
                    format!(
                        "connection to server at \"{}\" ({ip}), port {port} failed: ",
                        ep.host
                    )
                }
                None => format!("connection to server at \"{ip}\", port {port} failed: "),
            }
        }
    }
}

fn timed_out(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::TimedOut
}

/// Opens the socket (honouring the deadline for TCP).
fn open_socket(addr: &Addr, deadline: Option<Instant>) -> Result<Socket, Failure> {
    match addr {
        Addr::Unix(path) => match UnixStream::connect(path) {
            Ok(s) => Ok(Socket::Unix(s)),
            Err(e) => Err(Failure::new(
                format!(
                    "{}\n\tIs the server running locally and accepting connections on that socket?",
                    strerror(&e)
                ),
                Next::NextAddr,
            )),
        },
        Addr::Tcp(sa) => {
            let r = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        Err(io::ErrorKind::TimedOut.into())
                    } else {
                        TcpStream::connect_timeout(sa, left)
                    }
                }
                None => TcpStream::connect(sa),
            };
            match r {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    set_keepalive(&s);
                    Ok(Socket::Tcp(s))
                }
                Err(e) if deadline.is_some() && timed_out(&e) && e.raw_os_error().is_none() => {
                    Err(Failure::new("timeout expired", Next::NextAddr))
                }
                Err(e) => Err(Failure::new(
                    format!(
                        "{}\n\tIs the server running on that host and accepting TCP/IP connections?",
                        strerror(&e)
                    ),
                    Next::NextAddr,
                )),
            }
        }
    }
}

fn set_keepalive(s: &TcpStream) {
    let on: libc::c_int = 1;
    // SAFETY: valid fd and option value for the duration of the call.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_KEEPALIVE,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Maps a transport error during startup to libpq's text.
fn io_failure(e: Error) -> Failure {
    match &e {
        Error::Recv(io) | Error::Send(io) if timed_out(io) => {
            Failure::new("timeout expired", Next::NextAddr)
        }
        _ => Failure::new(e.to_string(), Next::Stop),
    }
}

/// SSLRequest exchange; returns whether the server agreed.
fn negotiate_ssl(sock: &mut Socket, deadline: Option<Instant>) -> Result<bool, Failure> {
    let mut buf = bytes::BytesMut::new();
    frontend::ssl_request(&mut buf);
    let fd = sock.as_raw_fd();
    let mut sent = 0;
    while sent < buf.len() {
        match sock.write(&buf[sent..]) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait_fd(fd, libc::POLLOUT, deadline).map_err(|e| io_failure(Error::Send(e)))?
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_failure(Error::Send(e))),
        }
    }
    let mut answer = [0u8; 1];
    loop {
        match sock.read(&mut answer) {
            Ok(0) => return Err(io_failure(Error::Closed)),
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait_fd(fd, libc::POLLIN, deadline).map_err(|e| io_failure(Error::Recv(e)))?
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_failure(Error::Recv(e))),
        }
    }
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

/// One attempt on one address: socket, optional TLS, startup, authentication.
fn attempt(
    cfg: &ConnectConfig,
    ep: &Endpoint,
    addr: &Addr,
    try_tls: bool,
    password: Option<&str>,
) -> Result<Connection, Failure> {
    let deadline = cfg.connect_timeout.map(|t| Instant::now() + t);
    let sock = open_socket(addr, deadline)?;
    sock.set_nonblocking(true)
        .map_err(|e| Failure::new(strerror(&e), Next::Stop))?;
    let mode = cfg.tls.mode;
    let mut transport = Transport::new(sock);
    let mut end_point = None;
    if try_tls && matches!(addr, Addr::Tcp(_)) {
        let agreed = negotiate_ssl(&mut transport.sock, deadline)?;
        if agreed {
            let config = tls::client_config(&cfg.tls, &ep.host)
                .map_err(|e| Failure::new(e.0, Next::Stop))?;
            let name = tls::server_name(&ep.host, ep.hostaddr.as_deref());
            let session = rustls::ClientConnection::new(config, name)
                .map_err(|e| Failure::new(format!("SSL error: {e}"), Next::Stop))?;
            transport.tls = Some(Box::new(session));
            if let Err(e) = transport.handshake(deadline) {
                let retry = if mode == SslMode::Prefer {
                    Next::RetryPlain
                } else {
                    Next::Stop
                };
                if timed_out(&e) {
                    return Err(Failure::new("timeout expired", Next::NextAddr));
                }
                let text = match e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                {
                    Some(rustls::Error::General(msg)) => msg.clone(),
                    Some(other) => format!("SSL error: {other}"),
                    None if e.kind() == io::ErrorKind::UnexpectedEof => {
                        "SSL SYSCALL error: EOF detected".to_string()
                    }
                    None => format!("SSL SYSCALL error: {}", strerror(&e)),
                };
                return Err(Failure::new(text, retry));
            }
            end_point = transport
                .tls
                .as_ref()
                .and_then(|t| t.peer_certificates())
                .and_then(|c| c.first())
                .map(|c| tls::server_end_point(c.as_ref()));
        } else if requires_tls(mode) {
            return Err(Failure::new(
                "server does not support SSL, but SSL was required",
                Next::Stop,
            ));
        }
    }
    let mut conn = Connection::from_transport(transport);
    conn.deadline = deadline;
    conn.cancel_target = Some(match addr {
        Addr::Tcp(sa) => CancelTarget::Tcp(*sa),
        Addr::Unix(p) => CancelTarget::Unix(p.clone()),
    });
    // Startup packet.
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
    frontend::startup_message(params.iter().copied(), conn.out_buf())
        .map_err(|e| Failure::new(e.to_string(), Next::Stop))?;
    conn.send_blocking().map_err(io_failure)?;
    let input = AuthInput {
        user: &cfg.user,
        password,
        channel_binding: cfg.channel_binding,
        end_point,
    };
    let tls_used = conn.is_tls();
    match authenticate(&mut conn, &input) {
        Ok(()) => {}
        Err(AuthFailure::Server(db, authenticated_phase)) => {
            let mut text = String::new();
            db.render(&mut text, None);
            let next = if db.code == "57P03" {
                Next::NextHost
            } else if authenticated_phase {
                Next::Stop
            } else if mode == SslMode::Allow && !tls_used {
                Next::RetryTls
            } else if mode == SslMode::Prefer && tls_used {
                Next::RetryPlain
            } else {
                Next::Stop
            };
            return Err(Failure {
                text,
                sqlstate: Some(db.code.clone()),
                next,
            });
        }
        Err(AuthFailure::Client(msg)) => return Err(Failure::new(msg, Next::Stop)),
        Err(AuthFailure::Io(e)) => return Err(io_failure(e)),
    }
    conn.deadline = None;
    conn.identity = Identity {
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
    };
    Ok(conn)
}

/// Checks `target_session_attrs`; returns the mismatch message.
fn check_session(conn: &mut Connection, want: TargetSessionAttrs) -> Result<(), Failure> {
    if want == TargetSessionAttrs::Any {
        return Ok(());
    }
    let standby = match conn.parameter("in_hot_standby") {
        Some(v) => v == "on",
        None => query_bool(conn, "SELECT pg_catalog.pg_is_in_recovery()")?,
    };
    let read_only = |conn: &mut Connection| -> Result<bool, Failure> {
        match (
            conn.parameter("default_transaction_read_only"),
            conn.parameter("in_hot_standby"),
        ) {
            (Some(v), Some(_)) => Ok(v == "on" || standby),
            _ => query_bool(conn, "SHOW transaction_read_only"),
        }
    };
    let problem = match want {
        TargetSessionAttrs::ReadWrite => read_only(conn)?.then_some("session is read-only"),
        TargetSessionAttrs::ReadOnly => (!read_only(conn)?).then_some("session is not read-only"),
        TargetSessionAttrs::Primary => standby.then_some("server is in hot standby mode"),
        TargetSessionAttrs::Standby | TargetSessionAttrs::PreferStandby => {
            (!standby).then_some("server is not in hot standby mode")
        }
        TargetSessionAttrs::Any => None,
    };
    match problem {
        Some(p) => Err(Failure::new(p, Next::NextHost)),
        None => Ok(()),
    }
}

fn query_bool(conn: &mut Connection, sql: &str) -> Result<bool, Failure> {
    let results = conn
        .simple_query(sql)
        .map_err(|e| Failure::new(e.libpq_message(Some(sql)), Next::NextHost))?;
    let v = results
        .first()
        .and_then(|r| r.get(0, 0))
        .unwrap_or("")
        .to_string();
    Ok(v == "on" || v == "t")
}

impl Connection {
    /// Connects with fully resolved settings (see [`ConnectConfig`]). The error text is
    /// libpq's `PQerrorMessage` for the same attempt, every failed host included.
    pub fn connect_config(cfg: &ConnectConfig) -> Result<Connection, ConnectError> {
        let mut errors = String::new();
        let mut sqlstate = None;
        let passes = match cfg.target_session_attrs {
            TargetSessionAttrs::PreferStandby => {
                vec![TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
            }
            other => vec![other],
        };
        for want in passes {
            for ep in &cfg.endpoints {
                let addrs = match resolve(ep) {
                    Ok(a) => a,
                    Err(msg) => {
                        errors.push_str(&msg);
                        errors.push('\n');
                        continue;
                    }
                };
                let (password, pgpass_file) = match (&cfg.password, &ep.pgpass) {
                    (Some(p), _) => (Some(p.as_str()), None),
                    (None, Some((p, file))) => (Some(p.as_str()), Some(file.as_str())),
                    (None, None) => (None, None),
                };
                'addr: for addr in &addrs {
                    let pre = prefix(ep, addr);
                    let mut try_tls = match cfg.tls.mode {
                        SslMode::Disable | SslMode::Allow => false,
                        _ => true,
                    };
                    let mut retried = false;
                    loop {
                        let failure = match attempt(cfg, ep, addr, try_tls, password) {
                            Ok(mut conn) => match check_session(&mut conn, want) {
                                Ok(()) => return Ok(conn),
                                Err(f) => {
                                    let _ = conn.close();
                                    f
                                }
                            },
                            Err(f) => f,
                        };
                        errors.push_str(&pre);
                        errors.push_str(&failure.text);
                        if failure.sqlstate.as_deref() == Some("28P01")
                            && let Some(file) = pgpass_file
                        {
                            errors.push_str(&format!("password retrieved from file \"{file}\"\n"));
                        }
                        if failure.sqlstate.is_some() {
                            sqlstate = failure.sqlstate.clone();
                        }
                        match failure.next {
                            Next::Stop => return Err(ConnectError::new(errors, sqlstate)),
                            Next::NextAddr => continue 'addr,
                            Next::NextHost => break 'addr,
                            Next::RetryPlain | Next::RetryTls if retried => {
                                return Err(ConnectError::new(errors, sqlstate));
                            }
                            Next::RetryPlain => try_tls = false,
                            Next::RetryTls => try_tls = true,
                        }
                        retried = true;
                    }
                }
            }
        }
        Err(ConnectError::new(errors, sqlstate))
    }
}
