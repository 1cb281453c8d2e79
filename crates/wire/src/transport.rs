//! The byte stream under a connection: a non-blocking TCP or Unix socket, optionally
//! wrapped in TLS (rustls driven by hand so that it works on a non-blocking socket)
//! or in GSSAPI encryption (`gssencmode`, see [`crate::gss::GssStream`]).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use crate::gss::GssStream;

/// A connected socket.
#[derive(Debug)]
pub(crate) enum Socket {
    /// TCP.
    Tcp(TcpStream),
    /// Unix-domain socket.
    Unix(UnixStream),
}

impl Socket {
    pub(crate) fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_nonblocking(on),
            Socket::Unix(s) => s.set_nonblocking(on),
        }
    }
}

impl Read for Socket {
    #[cfg(target_os = "linux")]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        crate::socket_io::recv(self.as_raw_fd(), buf)
    }

    #[cfg(not(target_os = "linux"))]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    #[cfg(target_os = "linux")]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        crate::socket_io::send(self.as_raw_fd(), buf)
    }

    #[cfg(not(target_os = "linux"))]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Socket::Tcp(s) => s.as_raw_fd(),
            Socket::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// Socket plus optional TLS session or GSSAPI encryption (never both). All
/// operations are non-blocking.
#[derive(Debug)]
pub(crate) struct Transport {
    pub(crate) sock: Socket,
    pub(crate) tls: Option<Box<rustls::ClientConnection>>,
    pub(crate) gss: Option<Box<GssStream>>,
}

fn tls_err(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl Transport {
    pub(crate) fn new(sock: Socket) -> Self {
        Transport {
            sock,
            tls: None,
            gss: None,
        }
    }

    /// Whether bytes go over the socket as they are (no TLS, no GSSAPI encryption).
    #[inline(always)]
    fn is_plain(&self) -> bool {
        self.tls.is_none() && self.gss.is_none()
    }

    /// Reads plaintext. `Ok(0)` = end of stream; `WouldBlock` = nothing available now.
    #[inline]
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.is_plain() {
            return retry_interrupted(|| self.sock.read(buf));
        }
        self.read_encrypted(buf)
    }

    /// Writes plaintext; returns how much was accepted (`WouldBlock` if none).
    #[inline]
    pub(crate) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.is_plain() {
            return retry_interrupted(|| self.sock.write(buf));
        }
        self.write_encrypted(buf)
    }

    /// Pushes buffered TLS records or GSSAPI packets out; `true` when nothing
    /// is left pending.
    #[inline]
    pub(crate) fn flush_pending(&mut self) -> io::Result<bool> {
        if self.is_plain() {
            return Ok(true);
        }
        self.flush_encrypted()
    }

    // The encrypted paths are kept out of line (and out of the way: `cold` makes
    // the compiler lay them out apart), so that the plain path every transaction
    // of an unencrypted run takes is a few compact instructions in its callers.

    /// [`Transport::read`] through TLS or GSSAPI.
    #[cold]
    #[inline(never)]
    fn read_encrypted(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(gss) = self.gss.as_mut() {
            return gss.read(&mut self.sock, buf);
        }
        let Some(tls) = self.tls.as_mut() else {
            return retry_interrupted(|| self.sock.read(buf));
        };
        loop {
            match tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            let n = match tls.read_tls(&mut self.sock) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => other?,
            };
            if n == 0 {
                return Ok(0);
            }
            tls.process_new_packets().map_err(tls_err)?;
            if tls.wants_write() {
                let _ = write_tls_all(tls, &mut self.sock);
            }
        }
    }

    /// [`Transport::write`] through TLS or GSSAPI.
    #[cold]
    #[inline(never)]
    fn write_encrypted(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(gss) = self.gss.as_mut() {
            return gss.write(&mut self.sock, buf);
        }
        let Some(tls) = self.tls.as_mut() else {
            return retry_interrupted(|| self.sock.write(buf));
        };
        let mut drained = write_tls_all(tls, &mut self.sock)?;
        let n = tls.writer().write(buf)?;
        if n > 0 {
            drained = write_tls_all(tls, &mut self.sock)?;
        }
        if n == 0 && !drained {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    /// [`Transport::flush_pending`] of TLS or GSSAPI.
    #[cold]
    #[inline(never)]
    fn flush_encrypted(&mut self) -> io::Result<bool> {
        if let Some(gss) = self.gss.as_mut() {
            return gss.flush_pending(&mut self.sock);
        }
        match self.tls.as_mut() {
            Some(tls) => write_tls_all(tls, &mut self.sock),
            None => Ok(true),
        }
    }

    /// Runs the TLS handshake to completion, waiting with poll() until `deadline`.
    pub(crate) fn handshake(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(());
        };
        while tls.is_handshaking() {
            if tls.wants_write() {
                if !write_tls_all(tls, &mut self.sock)? {
                    wait_fd(self.sock.as_raw_fd(), libc::POLLOUT, deadline)?;
                }
                continue;
            }
            match tls.read_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => {
                    if let Err(e) = tls.process_new_packets() {
                        // Send the alert before reporting.
                        let _ = write_tls_all(tls, &mut self.sock);
                        return Err(tls_err(e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    wait_fd(self.sock.as_raw_fd(), libc::POLLIN, deadline)?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        write_tls_all(tls, &mut self.sock)?;
        Ok(())
    }
}

/// Runs `op` again while a signal interrupts it.
#[inline(always)]
fn retry_interrupted(mut op: impl FnMut() -> io::Result<usize>) -> io::Result<usize> {
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

fn write_tls_all(tls: &mut rustls::ClientConnection, sock: &mut Socket) -> io::Result<bool> {
    while tls.wants_write() {
        match tls.write_tls(sock) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Waits until `fd` is ready for `events` (POLLIN/POLLOUT) or `deadline` passes
/// (`TimedOut`).
pub(crate) fn wait_fd(
    fd: RawFd,
    events: libc::c_short,
    deadline: Option<Instant>,
) -> io::Result<()> {
    loop {
        let timeout_ms: libc::c_int = match deadline {
            None => -1,
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                let ms = (d - now).as_millis().saturating_add(1);
                ms.min(i32::MAX as u128) as libc::c_int
            }
        };
        let mut pfd = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: pfd is a valid pollfd for the duration of the call; nfds = 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if rc > 0 {
            return Ok(());
        }
    }
}
