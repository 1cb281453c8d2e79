//! Addresses and sockets: getaddrinfo, libpq's `connection to server ...` prefixes,
//! TCP/Unix connects with timeouts, TCP options and `requirepeer`.

use std::ffi::{CStr, CString};
use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Instant;

use super::failure::{Failure, Next, timed_out};
use crate::config::{Endpoint, EndpointKind, TcpSettings};
use crate::error::strerror;
use crate::transport::Socket;

/// One resolved address of an endpoint.
#[derive(Debug, Clone)]
pub(crate) enum Addr {
    Tcp(SocketAddr),
    Unix(PathBuf),
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
pub(crate) fn resolve(ep: &Endpoint) -> Result<Vec<Addr>, String> {
    match ep.kind {
        EndpointKind::Unix => {
            let path = ep.socket_path();
            let os_path = crate::lossless::to_path(&path);
            // sizeof(sun_path) - 1
            if os_path.as_os_str().len() > 107 {
                return Err(format!(
                    "Unix-domain socket path \"{path}\" is too long (maximum 107 bytes)"
                ));
            }
            Ok(vec![Addr::Unix(os_path)])
        }
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
pub(crate) fn prefix(ep: &Endpoint, addr: &Addr) -> String {
    match addr {
        Addr::Unix(path) => format!(
            "connection to server on socket \"{}\" failed: ",
            crate::lossless::from_bytes(path.as_os_str().as_bytes())
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

/// Opens the socket (honouring the deadline for TCP).
pub(crate) fn open_socket(
    addr: &Addr,
    deadline: Option<Instant>,
    tcp: &TcpSettings,
) -> Result<Socket, Failure> {
    match addr {
        Addr::Unix(path) => match connect_unix(path) {
            Ok(s) => Ok(Socket::Unix(s)),
            Err(e) => Err(Failure::new(
                format!(
                    "{}\n\tIs the server running locally and accepting connections on that socket?",
                    strerror(&e)
                ),
                Next::OtherAddr,
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
                    set_tcp_options(&s, tcp);
                    Ok(Socket::Tcp(s))
                }
                Err(e) if deadline.is_some() && timed_out(&e) && e.raw_os_error().is_none() => {
                    Err(Failure::new("timeout expired", Next::OtherAddr))
                }
                Err(e) => Err(Failure::new(
                    format!(
                        "{}\n\tIs the server running on that host and accepting TCP/IP connections?",
                        strerror(&e)
                    ),
                    Next::OtherAddr,
                )),
            }
        }
    }
}

/// Connects to a Unix socket; a path starting with `@` is in the abstract namespace.
pub(crate) fn connect_unix(path: &std::path::Path) -> io::Result<UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::ffi::OsStrExt;
    match path.as_os_str().as_bytes().strip_prefix(b"@") {
        Some(name) => {
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            UnixStream::connect_addr(&addr)
        }
        None => UnixStream::connect(path),
    }
}

/// libpq's `requirepeer` check: the server process's OS user on a Unix socket.
pub(crate) fn check_peer(sock: &UnixStream, required: &str) -> Result<(), Failure> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: valid fd, output buffer and length.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(Failure::new(
            format!("could not get peer credentials: {}", strerror(&e)),
            Next::Stop,
        ));
    }
    let name = user_name(cred.uid).ok_or_else(|| {
        Failure::new(
            format!(
                "could not look up local user ID {}: user does not exist",
                cred.uid
            ),
            Next::Stop,
        )
    })?;
    if name != required {
        return Err(Failure::new(
            format!(
                "requirepeer specifies \"{required}\", but actual peer user name is \"{name}\""
            ),
            Next::Stop,
        ));
    }
    Ok(())
}

fn user_name(uid: libc::uid_t) -> Option<String> {
    // SAFETY: an all-zero passwd is a valid output buffer for getpwuid_r.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers valid for the given sizes; pw_name points into buf.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: pw_name is a NUL-terminated string inside buf.
    Some(crate::lossless::from_bytes(
        unsafe { CStr::from_ptr(pwd.pw_name) }.to_bytes(),
    ))
}

fn set_int_opt(fd: std::os::fd::RawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) {
    // SAFETY: valid fd and option value for the duration of the call.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &value as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// libpq's TCP options: keepalives on unless disabled, optional tuning.
fn set_tcp_options(s: &TcpStream, tcp: &TcpSettings) {
    let fd = s.as_raw_fd();
    set_int_opt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_KEEPALIVE,
        i32::from(!tcp.keepalives_off),
    );
    if !tcp.keepalives_off {
        let opts = [
            (libc::TCP_KEEPIDLE, tcp.keepalives_idle),
            (libc::TCP_KEEPINTVL, tcp.keepalives_interval),
            (libc::TCP_KEEPCNT, tcp.keepalives_count),
        ];
        for (name, v) in opts {
            if let Some(v) = v.filter(|v| *v > 0) {
                set_int_opt(fd, libc::IPPROTO_TCP, name, v);
            }
        }
    }
    if let Some(v) = tcp.user_timeout.filter(|v| *v > 0) {
        set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, v);
    }
}
