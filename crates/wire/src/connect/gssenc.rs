//! GSSAPI encryption at the start of a TCP connection (`gssencmode`): the
//! GSSENCRequest, then the context tokens exchanged as length-prefixed packets
//! until the context is established; from then on the transport wraps every
//! byte ([`crate::gss::GssStream`]).

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::time::Instant;

use super::failure::{Failure, Next, io_failure, timed_out};
use super::net::Addr;
use crate::config::{ConnectConfig, Endpoint, EndpointKind, GssEncMode};
use crate::error::Error;
use crate::gss::{self, Credential, Initiator};
use crate::transport::{Socket, Transport, wait_fd};

/// The GSSENCRequest code (1234 << 16 | 5680).
const GSSENC_REQUEST_CODE: u32 = 80_877_104;

/// Largest packet during the context exchange, length word included
/// (PostgreSQL's `PQ_GSS_AUTH_BUFFER_SIZE`).
const MAX_AUTH_PACKET: usize = 65536;

/// Whether this attempt asks for GSSAPI encryption, with the credential to use:
/// `None` when it does not (`disable`; `prefer` on a Unix socket or without a
/// credential cache). `require` without a way to encrypt fails with libpq 18's
/// messages, which come before any socket and so without the `connection to
/// server ...` prefix (libpq 15 checked after connecting and said `GSSAPI
/// encryption required but was impossible (possibly no credential cache, no
/// server support, or using a local socket)`).
pub(crate) fn credential_for(
    cfg: &ConnectConfig,
    addr: &Addr,
) -> Result<Option<Credential>, Failure> {
    let require = match cfg.gss.enc_mode {
        GssEncMode::Disable => return Ok(None),
        GssEncMode::Prefer => false,
        GssEncMode::Require => true,
    };
    if matches!(addr, Addr::Unix(_)) {
        return if require {
            Err(Failure::new(
                "GSSAPI encryption required but it is not supported over a local socket",
                Next::Stop,
            )
            .unprefixed())
        } else {
            Ok(None)
        };
    }
    match gss::credential() {
        Some(cred) => Ok(Some(cred)),
        None if require => Err(Failure::new(
            "GSSAPI encryption required but no credential cache",
            Next::Stop,
        )
        .unprefixed()),
        None => Ok(None),
    }
}

/// Asks the server for GSSAPI encryption and sets it up. `Ok(true)`: the
/// transport now encrypts; `Ok(false)`: the server said no and `prefer` goes on
/// unencrypted on the same connection. A failure with `prefer` retries on a new
/// connection without GSSAPI.
pub(crate) fn start(
    cfg: &ConnectConfig,
    ep: &Endpoint,
    transport: &mut Transport,
    cred: Credential,
    deadline: Option<Instant>,
) -> Result<bool, Failure> {
    let prefer = cfg.gss.enc_mode == GssEncMode::Prefer;
    let retry = |f: Failure| {
        if prefer && f.next == Next::Stop {
            Failure {
                next: Next::RetryWithoutGss,
                ..f
            }
        } else {
            f
        }
    };
    let mut request = [0u8; 8];
    request[..4].copy_from_slice(&8u32.to_be_bytes());
    request[4..].copy_from_slice(&GSSENC_REQUEST_CODE.to_be_bytes());
    write_all(&mut transport.sock, &request, deadline)?;
    let mut answer = [0u8; 1];
    read_exact(&mut transport.sock, &mut answer, deadline)?;
    match answer[0] {
        b'G' => {}
        b'N' if prefer => return Ok(false),
        b'N' => {
            return Err(Failure::new(
                "server doesn't support GSSAPI encryption, but it was required",
                Next::Stop,
            ));
        }
        // An old server's error: libpq retries without GSSAPI, adding no text.
        b'E' => return Err(Failure::silent(Next::RetryWithoutGss)),
        other => {
            return Err(Failure::new(
                format!(
                    "received invalid response to GSSAPI negotiation: {}",
                    other as char
                ),
                Next::Stop,
            ));
        }
    }
    let stream = establish(cfg, ep, &mut transport.sock, cred, deadline).map_err(retry)?;
    transport.gss = Some(Box::new(stream));
    Ok(true)
}

/// The context exchange after the server's `G`.
fn establish(
    cfg: &ConnectConfig,
    ep: &Endpoint,
    sock: &mut Socket,
    cred: Credential,
    deadline: Option<Instant>,
) -> Result<gss::GssStream, Failure> {
    // libpq names the target after PQhost: the host, else the address.
    let host = match (&ep.kind, ep.host.is_empty()) {
        (EndpointKind::Tcp, true) => ep.hostaddr.clone().unwrap_or_default(),
        _ => ep.host.clone(),
    };
    if host.is_empty() {
        return Err(Failure::new("host name must be specified", Next::Stop));
    }
    let mut flags = gss::ENCRYPTION_FLAGS;
    if cfg.gss.delegation {
        flags |= gss::DELEGATION_FLAG;
    }
    let gss_failure = |e: gss::GssError| Failure::new(e.0, Next::Stop);
    let mut initiator =
        Initiator::new(&cfg.gss.service_name, &host, Some(cred), flags).map_err(gss_failure)?;
    let mut server_token: Option<Vec<u8>> = None;
    loop {
        let (token, complete) = initiator
            .step(
                server_token.as_deref(),
                "could not initiate GSSAPI security context",
            )
            .map_err(gss_failure)?;
        if !token.is_empty() {
            if token.len() > MAX_AUTH_PACKET - 4 {
                return Err(Failure::new(
                    format!(
                        "client tried to send oversize GSSAPI packet ({} > {})",
                        token.len(),
                        MAX_AUTH_PACKET - 4
                    ),
                    Next::Stop,
                ));
            }
            let mut packet = (token.len() as u32).to_be_bytes().to_vec();
            packet.extend_from_slice(&token);
            write_all(sock, &packet, deadline)?;
        }
        if complete {
            return initiator.into_stream().map_err(gss_failure);
        }
        server_token = Some(read_packet(sock, deadline)?);
    }
}

/// One packet of the exchange; an `E` instead of a length is the server's
/// error text, which runs to the end of the stream.
fn read_packet(sock: &mut Socket, deadline: Option<Instant>) -> Result<Vec<u8>, Failure> {
    // libpq adds no text when the server hangs up during the exchange (a
    // server without a keytab does).
    let eof = || Failure::silent(Next::Stop);
    let mut header = [0u8; 4];
    read_exact_or(sock, &mut header, deadline, eof)?;
    if header[0] == b'E' {
        let mut rest = header[1..].to_vec();
        let mut chunk = [0u8; 4096];
        while rest.len() < MAX_AUTH_PACKET - 2 {
            match read_some(sock, &mut chunk, deadline) {
                Ok(0) | Err(_) => break,
                Ok(n) => rest.extend_from_slice(&chunk[..n]),
            }
        }
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        return Err(Failure::new(
            String::from_utf8_lossy(&rest[..end]).into_owned(),
            Next::Stop,
        ));
    }
    let len = u32::from_be_bytes(header) as usize;
    if len > MAX_AUTH_PACKET - 4 {
        return Err(Failure::new(
            format!(
                "oversize GSSAPI packet sent by the server ({len} > {})",
                MAX_AUTH_PACKET - 4
            ),
            Next::Stop,
        ));
    }
    let mut body = vec![0u8; len];
    read_exact_or(sock, &mut body, deadline, eof)?;
    Ok(body)
}

/// Writes all of `buf`, waiting for the socket as needed.
pub(crate) fn write_all(
    sock: &mut Socket,
    buf: &[u8],
    deadline: Option<Instant>,
) -> Result<(), Failure> {
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
    Ok(())
}

/// Reads some bytes, waiting for the socket as needed (`Ok(0)`: end of stream).
fn read_some(sock: &mut Socket, buf: &mut [u8], deadline: Option<Instant>) -> io::Result<usize> {
    let fd = sock.as_raw_fd();
    loop {
        match sock.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_fd(fd, libc::POLLIN, deadline)?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// Fills `buf`, waiting for the socket as needed.
pub(crate) fn read_exact(
    sock: &mut Socket,
    buf: &mut [u8],
    deadline: Option<Instant>,
) -> Result<(), Failure> {
    read_exact_or(sock, buf, deadline, || io_failure(Error::Closed))
}

/// [`read_exact`] with `at_eof`'s failure when the stream ends first.
fn read_exact_or(
    sock: &mut Socket,
    buf: &mut [u8],
    deadline: Option<Instant>,
    at_eof: fn() -> Failure,
) -> Result<(), Failure> {
    let mut got = 0;
    while got < buf.len() {
        match read_some(sock, &mut buf[got..], deadline) {
            Ok(0) => return Err(at_eof()),
            Ok(n) => got += n,
            Err(e) if timed_out(&e) => {
                return Err(Failure::new("timeout expired", Next::OtherAddr));
            }
            Err(e) => return Err(io_failure(Error::Recv(e))),
        }
    }
    Ok(())
}
