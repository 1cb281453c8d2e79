//! `Connection`: buffers, the non-blocking message path used by the engine, and the
//! blocking receive loop the helpers are built on.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;

use crate::backend::{self, BackendMessage, PlainStop, PlainTally, TransactionStatus};
use crate::cancel::{CancelTarget, CancelToken};
use crate::encoding::ClientEncoding;
use crate::error::{DbError, Error};
use crate::frontend::BindHead;
use crate::spare::ParamBuf;
use crate::transport::{Transport, wait_fd};

/// Initial size of each of a connection's two buffers: small, since a benchmark may open
/// thousands of connections; both grow on demand (the input buffer doubles when a read fills
/// it or a message does not fit, the output buffer as messages are queued).
const INITIAL_BUFFER: usize = 2 * 1024;

/// What `read_some` found on the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// This many bytes were appended to the input buffer.
    Data(usize),
    /// Nothing to read right now.
    WouldBlock,
    /// The server closed the connection.
    Closed,
}

/// Receives notices (NoticeResponse messages).
pub type NoticeHandler = Box<dyn FnMut(&DbError) + Send>;

/// libpq's default notice processor: the message on stderr, as the server's bytes.
fn default_notice_handler() -> NoticeHandler {
    Box::new(|n: &DbError| {
        use std::io::Write;
        let mut line = n.libpq_message_bytes(None);
        line.push(b'\n');
        let _ = std::io::stderr().lock().write_all(&line);
    })
}

/// Identity of the connected server as libpq's PQhost/PQport/PQdb/PQuser report it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Identity {
    pub(crate) host: String,
    pub(crate) port: String,
    pub(crate) db: String,
    pub(crate) user: String,
}

/// An established connection to a PostgreSQL server.
pub struct Connection {
    transport: Transport,
    out: BytesMut,
    out_pos: usize,
    inp: Vec<u8>,
    in_start: usize,
    in_end: usize,
    params: Vec<(String, String)>,
    /// The session's `client_encoding` (how to read the server's texts).
    client_encoding: ClientEncoding,
    pub(crate) backend_pid: i32,
    pub(crate) secret_key: Vec<u8>,
    notice_handler: NoticeHandler,
    nonblocking: bool,
    pub(crate) deadline: Option<Instant>,
    status: TransactionStatus,
    pub(crate) identity: Identity,
    pub(crate) cancel_target: Option<CancelTarget>,
    terminated: bool,
    pub(crate) protocol_minor: u16,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("host", &self.identity.host)
            .field("port", &self.identity.port)
            .field("backend_pid", &self.backend_pid)
            .finish_non_exhaustive()
    }
}

fn usage(e: io::Error) -> Error {
    Error::Usage(e.to_string())
}

impl Connection {
    pub(crate) fn from_transport(transport: Transport) -> Self {
        Connection {
            transport,
            out: BytesMut::with_capacity(INITIAL_BUFFER),
            out_pos: 0,
            inp: vec![0; INITIAL_BUFFER],
            in_start: 0,
            in_end: 0,
            params: Vec::new(),
            client_encoding: ClientEncoding::Utf8,
            backend_pid: 0,
            secret_key: Vec::new(),
            notice_handler: default_notice_handler(),
            nonblocking: false,
            deadline: None,
            status: TransactionStatus::Idle,
            identity: Identity::default(),
            cancel_target: None,
            terminated: false,
            protocol_minor: 0,
        }
    }

    // ----- accessors -------------------------------------------------------

    /// A run-time parameter reported by the server (`server_version`, `in_hot_standby`...).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `server_version` parameter.
    pub fn server_version(&self) -> &str {
        self.parameter("server_version").unwrap_or("")
    }

    /// The server version as a number (`150018` for 15.18, `90624` for 9.6.24).
    pub fn server_version_num(&self) -> u32 {
        parse_version_num(self.server_version())
    }

    /// Protocol version in use, as `PQfullProtocolVersion` (30000 for 3.0, 30002 for 3.2).
    pub fn protocol_version(&self) -> u32 {
        30000 + u32::from(self.protocol_minor)
    }

    /// Backend process id.
    pub fn backend_pid(&self) -> i32 {
        self.backend_pid
    }

    /// Database name.
    pub fn db(&self) -> &str {
        &self.identity.db
    }

    /// User name.
    pub fn user(&self) -> &str {
        &self.identity.user
    }

    /// Host as PQhost reports it (host name, socket directory, or hostaddr).
    pub fn host(&self) -> &str {
        &self.identity.host
    }

    /// Port as PQport reports it.
    pub fn port(&self) -> &str {
        &self.identity.port
    }

    /// Whether the session runs over TLS.
    pub fn is_tls(&self) -> bool {
        self.transport.tls.is_some()
    }

    /// Whether the connection is encrypted with GSSAPI (`gssencmode`).
    pub fn is_gss_encrypted(&self) -> bool {
        self.transport.gss.is_some()
    }

    /// Transaction status from the last ReadyForQuery.
    pub fn transaction_status(&self) -> TransactionStatus {
        self.status
    }

    /// A token that can cancel the running query from another thread.
    pub fn cancel_token(&self) -> CancelToken {
        CancelToken::new(
            self.cancel_target.clone(),
            self.backend_pid,
            self.secret_key.clone(),
        )
    }

    /// Replaces the notice handler (default: print to stderr like libpq).
    pub fn set_notice_handler(&mut self, handler: NoticeHandler) {
        self.notice_handler = handler;
    }

    // ----- non-blocking path ---------------------------------------------

    /// In non-blocking mode `flush` returns `false` instead of waiting when the socket is full.
    /// The socket itself is always non-blocking; the blocking helpers wait with poll().
    pub fn set_nonblocking(&mut self, on: bool) -> io::Result<()> {
        self.nonblocking = on;
        Ok(())
    }

    /// The session's `client_encoding`, as the server last reported it: server
    /// texts are read as UTF-8 in UTF8, otherwise byte by byte ([`DbError::parse_in`]).
    pub fn client_encoding(&self) -> ClientEncoding {
        self.client_encoding
    }

    /// Whether `flush` is non-blocking.
    pub fn is_nonblocking(&self) -> bool {
        self.nonblocking
    }

    /// Queues a simple-protocol Query. The text is bytes, sent as given (no encoding
    /// is assumed: the server reads it in the client encoding); it must not contain NUL.
    pub fn queue_query(&mut self, sql: impl AsRef<[u8]>) -> Result<(), Error> {
        crate::frontend::query(sql.as_ref(), &mut self.out)
    }

    /// [`Connection::queue_query`] of text the caller wrote, counting as it wrote
    /// whether it holds a NUL byte (`holds_nul`, then refused as
    /// [`Connection::queue_query`] refuses it): the text is not searched again.
    #[inline]
    pub fn queue_written_query(&mut self, sql: &[u8], holds_nul: bool) -> Result<(), Error> {
        crate::frontend::written_query(sql, holds_nul, &mut self.out)
    }

    /// Queues Parse of `sql` (bytes, sent as given) as statement `name` ("" = unnamed).
    /// Like libpq's `PQsendPrepare`/`PQsendQueryParams` without `paramTypes` (what
    /// pgbench uses), no parameter types are sent whatever `n_params` is: the server
    /// infers all of them.
    pub fn queue_parse(
        &mut self,
        name: &str,
        sql: impl AsRef<[u8]>,
        n_params: usize,
    ) -> Result<(), Error> {
        let _ = n_params;
        crate::frontend::parse(name.as_bytes(), sql.as_ref(), &mut self.out)
    }

    /// Queues Bind of `stmt` to `portal` with text parameters (`None` = NULL) and
    /// text results ([`crate::frontend::bind`]). On an error nothing is queued.
    pub fn queue_bind<'p, I>(&mut self, portal: &str, stmt: &str, params: I) -> Result<(), Error>
    where
        I: IntoIterator<Item = Option<&'p [u8]>>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut params = params.into_iter();
        crate::frontend::bind(
            &mut self.out,
            portal,
            stmt,
            params.len(),
            |_, buf| match params.next().flatten() {
                Some(bytes) => {
                    buf.put_slice(bytes);
                    true
                }
                None => false,
            },
        )
    }

    /// Queues the Bind of `head` (its statement to the unnamed portal, text
    /// parameters, text results), Describe of the portal, Execute (all rows) and, with
    /// `sync`, Sync: the messages of [`Connection::queue_bind`],
    /// [`Connection::queue_describe_portal`], [`Connection::queue_execute`] and
    /// [`Connection::queue_sync`], byte for byte, in one pass. `param(i, buf)`
    /// appends parameter `i`'s text to `buf` and returns true, or appends nothing
    /// and returns false for NULL. On an error nothing is queued.
    #[inline]
    pub fn queue_bind_execute(
        &mut self,
        head: &BindHead,
        param: impl FnMut(usize, &mut ParamBuf<'_>) -> bool,
        sync: bool,
    ) -> Result<(), Error> {
        crate::frontend::bind_execute(self.out_buf(), head, param, sync)
    }

    /// Queues Describe of a portal.
    pub fn queue_describe_portal(&mut self, portal: &str) -> Result<(), Error> {
        frontend::describe(b'P', portal, &mut self.out).map_err(usage)
    }

    /// Queues Describe of a prepared statement.
    pub fn queue_describe_statement(&mut self, name: &str) -> Result<(), Error> {
        frontend::describe(b'S', name, &mut self.out).map_err(usage)
    }

    /// Queues Execute (`max_rows` 0 = all rows).
    pub fn queue_execute(&mut self, portal: &str, max_rows: i32) -> Result<(), Error> {
        frontend::execute(portal, max_rows, &mut self.out).map_err(usage)
    }

    /// Queues Close of a prepared statement.
    pub fn queue_close_statement(&mut self, name: &str) -> Result<(), Error> {
        frontend::close(b'S', name, &mut self.out).map_err(usage)
    }

    /// Queues Sync.
    pub fn queue_sync(&mut self) {
        frontend::sync(&mut self.out);
    }

    /// Queues Flush.
    pub fn queue_flush(&mut self) {
        frontend::flush(&mut self.out);
    }

    /// Queues CopyData.
    pub fn queue_copy_data(&mut self, data: &[u8]) -> Result<(), Error> {
        let len =
            i32::try_from(data.len() + 4).map_err(|_| Error::Usage("COPY data too long".into()))?;
        self.out.extend_from_slice(b"d");
        self.out.extend_from_slice(&len.to_be_bytes());
        self.out.extend_from_slice(data);
        Ok(())
    }

    /// Whether queued output is still waiting to be sent.
    pub fn has_pending_output(&self) -> bool {
        self.out_pos < self.out.len()
    }

    /// Sends queued output. Returns `true` when everything was sent; in non-blocking
    /// mode `false` means the socket is full (wait for POLLOUT and call again).
    /// In blocking mode it waits (reading incoming data meanwhile to avoid deadlock).
    #[inline]
    pub fn flush(&mut self) -> io::Result<bool> {
        if self.nonblocking {
            self.try_flush()
        } else {
            self.flush_blocking()
        }
    }

    /// [`Connection::flush`] in blocking mode.
    fn flush_blocking(&mut self) -> io::Result<bool> {
        while !self.try_flush()? {
            self.wait(libc::POLLOUT | libc::POLLIN)?;
            if self.read_some()? == ReadOutcome::Closed {
                return Err(io::ErrorKind::ConnectionReset.into());
            }
        }
        Ok(true)
    }

    /// Writes queued output until all of it is sent (`true`) or the socket is full.
    fn try_flush(&mut self) -> io::Result<bool> {
        while self.out_pos < self.out.len() {
            match self.transport.write(&self.out[self.out_pos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.out_pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.out_pos = 0;
        self.transport.flush_pending()
    }

    fn wait(&self, events: libc::c_short) -> io::Result<()> {
        wait_fd(self.transport.sock.as_raw_fd(), events, self.deadline)
    }

    /// Reads whatever the socket has into the input buffer (never blocks).
    pub fn read_some(&mut self) -> io::Result<ReadOutcome> {
        if self.in_start == self.in_end {
            // All consumed (the common case): the whole buffer is free, and it always
            // holds more than a message header.
            self.in_start = 0;
            self.in_end = 0;
        } else {
            self.make_room();
        }
        match self.transport.read(&mut self.inp[self.in_end..]) {
            Ok(0) => Ok(ReadOutcome::Closed),
            Ok(n) => {
                self.in_end += n;
                Ok(ReadOutcome::Data(n))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(ReadOutcome::WouldBlock),
            Err(e) => Err(e),
        }
    }

    /// Ensures free space after `in_end`, large enough for the message being received.
    fn make_room(&mut self) {
        if self.in_start == self.in_end {
            self.in_start = 0;
            self.in_end = 0;
        }
        let pending = &self.inp[self.in_start..self.in_end];
        let needed = if pending.len() >= 5 {
            1 + u32::from_be_bytes([pending[1], pending[2], pending[3], pending[4]]) as usize
        } else {
            5
        };
        let room_for_message = self.inp.len() - self.in_start >= needed.max(pending.len() + 1);
        if self.in_end < self.inp.len() && room_for_message {
            return;
        }
        if self.in_start > 0 {
            self.inp.copy_within(self.in_start..self.in_end, 0);
            self.in_end -= self.in_start;
            self.in_start = 0;
        }
        let want = needed.max(self.in_end + 1).max(self.inp.len());
        if want > self.inp.len() || self.in_end == self.inp.len() {
            let new_len = (want.max(self.inp.len() * 2)).next_power_of_two();
            self.inp.resize(new_len, 0);
        }
    }

    /// Finds the next complete message that is not absorbed (notices go to the handler,
    /// ParameterStatus updates the parameters, notifications are dropped).
    fn frame(&mut self) -> Result<Option<(u8, usize, usize)>, Error> {
        loop {
            let Some((tag, total)) = backend::frame_len(&self.inp[self.in_start..self.in_end])?
            else {
                return Ok(None);
            };
            let body = self.in_start + 5;
            let end = self.in_start + total;
            match tag {
                b'N' => {
                    let notice = DbError::parse_in(&self.inp[body..end], self.client_encoding);
                    self.in_start = end;
                    (self.notice_handler)(&notice);
                }
                b'S' => {
                    if let Ok(BackendMessage::ParameterStatus { name, value }) =
                        backend::decode(tag, &self.inp[body..end])
                    {
                        if name == "client_encoding" {
                            self.client_encoding = ClientEncoding::from_name(value);
                        }
                        match self.params.iter_mut().find(|(n, _)| n == name) {
                            Some((_, v)) => {
                                if v != value {
                                    *v = value.to_string();
                                }
                            }
                            None => self.params.push((name.to_string(), value.to_string())),
                        }
                    }
                    self.in_start = end;
                }
                b'A' => self.in_start = end,
                _ => return Ok(Some((tag, body, end))),
            }
        }
    }

    /// Reads what has arrived without blocking and tells whether the next complete
    /// message (notices and parameter reports aside) is an ErrorResponse; the message
    /// stays in the input buffer.
    pub fn error_arrived(&mut self) -> Result<bool, Error> {
        if self.read_some().map_err(Error::Recv)? == ReadOutcome::Closed {
            return Err(Error::Closed);
        }
        Ok(matches!(self.frame()?, Some((b'E', _, _))))
    }

    /// Decodes the next complete message from the input buffer without copying, or
    /// `None` when more data must be read. Notices, parameter reports and
    /// notifications are handled internally and never returned.
    pub fn next_message(&mut self) -> Result<Option<BackendMessage<'_>>, Error> {
        let Some((tag, body, end)) = self.frame()? else {
            return Ok(None);
        };
        self.in_start = end;
        let msg = backend::decode(tag, &self.inp[body..end])?;
        if let BackendMessage::ReadyForQuery(s) = msg {
            self.status = s;
        }
        Ok(Some(msg))
    }

    /// The fast path of reading a plain result (see [`backend::scan_plain`]): consumes
    /// the buffered messages such a result is made of, adding their effects to `tally`,
    /// up to and including a ReadyForQuery (whose status it records and returns). Any
    /// other message, notices and parameter reports included, stops it and is left for
    /// [`Connection::next_message`].
    #[inline]
    pub fn next_plain(&mut self, tally: &mut PlainTally) -> PlainStop {
        if self.in_end - self.in_start < 5 {
            // Not even a header: nothing to scan (the first look after a wait).
            return PlainStop::NeedMore;
        }
        let (used, stop) = backend::scan_plain(&self.inp[self.in_start..self.in_end], tally);
        self.in_start += used;
        if let PlainStop::Ready(status) = stop {
            self.status = status;
        }
        stop
    }

    /// Blocks until a message arrives (honouring the connect deadline while connecting).
    pub fn recv(&mut self) -> Result<BackendMessage<'_>, Error> {
        loop {
            if let Some((tag, body, end)) = self.frame()? {
                self.in_start = end;
                let msg = backend::decode(tag, &self.inp[body..end])?;
                if let BackendMessage::ReadyForQuery(s) = msg {
                    self.status = s;
                }
                return Ok(msg);
            }
            match self.read_some().map_err(Error::Recv)? {
                ReadOutcome::Data(_) => {}
                ReadOutcome::Closed => return Err(Error::Closed),
                ReadOutcome::WouldBlock => self.wait(libc::POLLIN).map_err(Error::Recv)?,
            }
        }
    }

    /// Sends all queued output, waiting as needed (regardless of the non-blocking flag).
    pub fn send_blocking(&mut self) -> Result<(), Error> {
        let was = self.nonblocking;
        self.nonblocking = false;
        let r = self.flush();
        self.nonblocking = was;
        match r {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => Err(Error::Closed),
            Err(e) => Err(Error::Send(e)),
        }
    }

    /// Reads and discards messages up to and including the next ReadyForQuery,
    /// returning the first server error seen.
    pub fn drain_until_ready(&mut self) -> Result<(), Error> {
        let mut first: Option<DbError> = None;
        loop {
            let encoding = self.client_encoding;
            match self.recv().map_err(|e| e.after(&first))? {
                BackendMessage::ReadyForQuery(_) => break,
                BackendMessage::ErrorResponse(f) if first.is_none() => {
                    first = Some(f.to_db_error_in(encoding));
                }
                _ => {}
            }
        }
        match first {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    pub(crate) fn out_buf(&mut self) -> &mut BytesMut {
        &mut self.out
    }

    /// Sends Terminate and closes the connection.
    pub fn close(mut self) -> Result<(), Error> {
        self.terminate()
    }

    fn terminate(&mut self) -> Result<(), Error> {
        if self.terminated {
            return Ok(());
        }
        self.terminated = true;
        // Drop anything half-queued; a Terminate must be a whole message.
        if self.out_pos == 0 {
            self.out.clear();
        }
        frontend::terminate(&mut self.out);
        self.send_blocking()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if !self.terminated {
            self.terminated = true;
            if self.out_pos == 0 {
                self.out.clear();
            }
            frontend::terminate(&mut self.out);
            let _ = self.try_flush();
        }
    }
}

impl AsRawFd for Connection {
    fn as_raw_fd(&self) -> RawFd {
        self.transport.sock.as_raw_fd()
    }
}

/// `server_version` text to PQserverVersion's number.
pub(crate) fn parse_version_num(v: &str) -> u32 {
    let nums: Vec<u32> = v
        .split(|c: char| !c.is_ascii_digit())
        .take_while(|s| !s.is_empty())
        .take(3)
        .filter_map(|s| s.parse().ok())
        .collect();
    match nums.as_slice() {
        [major, rest @ ..] if *major >= 10 => major * 10000 + rest.first().copied().unwrap_or(0),
        [major, minor, rest @ ..] => {
            major * 10000 + minor * 100 + rest.first().copied().unwrap_or(0)
        }
        [major] => major * 10000,
        [] => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_numbers() {
        assert_eq!(parse_version_num("15.18 (Debian 15.18-0+deb12u1)"), 150018);
        assert_eq!(parse_version_num("18.1"), 180001);
        assert_eq!(parse_version_num("18devel"), 180000);
        assert_eq!(parse_version_num("9.6.24"), 90624);
        assert_eq!(parse_version_num(""), 0);
    }
}

#[cfg(test)]
mod send_tests {
    fn assert_send<T: Send>() {}
    fn assert_sync<T: Sync>() {}

    #[test]
    fn connection_can_move_between_threads() {
        assert_send::<super::Connection>();
        assert_send::<crate::CancelToken>();
        assert_sync::<crate::CancelToken>();
    }
}
