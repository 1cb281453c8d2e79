//! GSSAPI encryption of the byte stream: every chunk of protocol bytes is
//! sealed with `gss_wrap` and sent as a packet (a 4-byte big-endian length,
//! then the token); incoming packets are unsealed with `gss_unwrap`. Works on
//! a non-blocking socket: partial reads and writes are kept in buffers.

use std::io::{self, Read, Write};

use super::context::{GssError, SecurityContext};

/// Largest packet either side may send once encryption is set up, length
/// word included (part of the protocol: PostgreSQL's `PQ_GSS_MAX_PACKET_SIZE`).
pub(crate) const MAX_PACKET: usize = 16384;

/// How many bytes one socket read asks for (about one packet: a benchmark may
/// hold thousands of connections, each with these buffers).
const READ_CHUNK: usize = MAX_PACKET;

/// How many wrapped bytes may wait for the socket before `write` accepts no
/// more plaintext.
const SEND_LIMIT: usize = 2 * MAX_PACKET;

fn gss_io(e: GssError) -> io::Error {
    io::Error::other(e.0)
}

/// An established, encrypting security context with its buffers.
pub(crate) struct GssStream {
    ctx: SecurityContext,
    /// Largest plaintext per packet (`gss_wrap_size_limit` for [`MAX_PACKET`]).
    max_plain: usize,
    /// Bytes read from the socket, not yet unwrapped (`raw_pos` = first unused).
    raw: Vec<u8>,
    raw_pos: usize,
    /// Unwrapped bytes not yet handed out (`plain_pos` = first unread).
    plain: Vec<u8>,
    plain_pos: usize,
    /// Wrapped packets not yet written (`send_pos` = first unsent).
    send: Vec<u8>,
    send_pos: usize,
}

impl std::fmt::Debug for GssStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GssStream")
            .field("max_plain", &self.max_plain)
            .finish_non_exhaustive()
    }
}

impl GssStream {
    /// Wraps an established context, sizing packets as the protocol requires.
    pub(crate) fn new(ctx: SecurityContext) -> Result<Self, GssError> {
        let max_plain = ctx.wrap_size_limit((MAX_PACKET - 4) as u32)?;
        if max_plain == 0 {
            return Err(GssError("GSSAPI size check error: no room for data".into()));
        }
        Ok(GssStream {
            ctx,
            max_plain,
            raw: Vec::new(),
            raw_pos: 0,
            plain: Vec::new(),
            plain_pos: 0,
            send: Vec::new(),
            send_pos: 0,
        })
    }

    /// Reads plaintext. `Ok(0)` = end of stream; `WouldBlock` = nothing now.
    pub(crate) fn read<S: Read>(&mut self, sock: &mut S, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.plain_pos < self.plain.len() {
                let n = buf.len().min(self.plain.len() - self.plain_pos);
                buf[..n].copy_from_slice(&self.plain[self.plain_pos..self.plain_pos + n]);
                self.plain_pos += n;
                return Ok(n);
            }
            if self.unwrap_one()? {
                continue;
            }
            if self.raw_pos > 0 {
                self.raw.drain(..self.raw_pos);
                self.raw_pos = 0;
            }
            let start = self.raw.len();
            self.raw.resize(start + READ_CHUNK, 0);
            let got = sock.read(&mut self.raw[start..]);
            self.raw.truncate(start + *got.as_ref().unwrap_or(&0));
            match got {
                Ok(0) => return Ok(0),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Unwraps the next complete packet in `raw` into `plain`; false when no
    /// complete packet is there.
    fn unwrap_one(&mut self) -> io::Result<bool> {
        let pending = &self.raw[self.raw_pos..];
        let Some(header) = pending.first_chunk::<4>() else {
            return Ok(false);
        };
        let len = u32::from_be_bytes(*header) as usize;
        if len > MAX_PACKET - 4 {
            return Err(io::Error::other(format!(
                "oversize GSSAPI packet sent by the server ({len} > {})",
                MAX_PACKET - 4
            )));
        }
        if pending.len() < 4 + len {
            return Ok(false);
        }
        let token = &pending[4..4 + len];
        let out = self.ctx.unwrap(token).map_err(gss_io)?;
        self.plain.clear();
        self.plain.extend_from_slice(out.bytes());
        self.plain_pos = 0;
        self.raw_pos += 4 + len;
        Ok(true)
    }

    /// Accepts plaintext, wrapping it into packets; returns how much was
    /// accepted (`WouldBlock` when earlier packets are still unsent and the
    /// socket takes no more). Accepted bytes reach the socket through this
    /// call or later ones, or [`GssStream::flush_pending`].
    pub(crate) fn write<S: Write>(&mut self, sock: &mut S, buf: &[u8]) -> io::Result<usize> {
        if !self.flush_pending(sock)? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut taken = 0;
        while taken < buf.len() && self.send.len() < SEND_LIMIT {
            let n = (buf.len() - taken).min(self.max_plain);
            let sealed = self.ctx.wrap(&buf[taken..taken + n]).map_err(gss_io)?;
            let token = sealed.bytes();
            if token.len() > MAX_PACKET - 4 {
                return Err(io::Error::other(format!(
                    "client tried to send oversize GSSAPI packet ({} > {})",
                    token.len(),
                    MAX_PACKET - 4
                )));
            }
            self.send
                .extend_from_slice(&(token.len() as u32).to_be_bytes());
            self.send.extend_from_slice(token);
            taken += n;
        }
        self.flush_pending(sock)?;
        Ok(taken)
    }

    /// Writes wrapped packets out; `true` when nothing is left.
    pub(crate) fn flush_pending<S: Write>(&mut self, sock: &mut S) -> io::Result<bool> {
        while self.send_pos < self.send.len() {
            match sock.write(&self.send[self.send_pos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.send_pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.send.clear();
        self.send_pos = 0;
        Ok(true)
    }
}
