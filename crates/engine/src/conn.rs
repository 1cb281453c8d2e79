//! What the client state machine needs from the outside world, as two small traits:
//! [`ClientConn`] (one server connection: queue, flush, read, decode) and [`Network`]
//! (how a thread opens client connections and watches their sockets).
//!
//! Production uses [`pgrush_wire::Connection`] and [`Sockets`] (mio); the unit tests
//! of `client` use a scripted fake. The client is generic over both, so the hot path
//! is monomorphised: no `dyn`, no extra indirection.

use std::io;
use std::os::fd::AsRawFd;

use mio::unix::SourceFd;
use mio::{Interest, Token};
use pgrush_script::{SqlCommand, Variables};
use pgrush_wire::conninfo::ConnParams;
use pgrush_wire::{
    BackendMessage, BindHead, ClientEncoding, Connection, Error, PlainStop, PlainTally, ReadOutcome,
};

use crate::messages;

/// One client's server connection, in non-blocking mode. The `queue_*` methods
/// append to the output buffer and may refuse (e.g. SQL text holding a NUL byte),
/// leaving the buffer as it was; [`ClientConn::flush`] writes what is queued.
pub(crate) trait ClientConn {
    /// Queues a simple-protocol Query of `sql`, which the caller wrote knowing
    /// whether it holds a NUL byte (`holds_nul`: then refused, as the wire crate
    /// refuses it; [`SqlCommand::write_simple`] tells).
    fn queue_query(&mut self, sql: &[u8], holds_nul: bool) -> Result<(), Error>;
    /// Queues Parse of `sql` as statement `name` ("" = unnamed).
    fn queue_parse(&mut self, name: &str, sql: &[u8], n_params: usize) -> Result<(), Error>;
    /// Queues the Bind of `head` (its statement to the unnamed portal) with `sql`'s
    /// parameters as text (NULL for an undefined variable, [`SqlCommand::write_param`]),
    /// Describe of the portal, Execute (all rows) and, with `sync`, Sync.
    fn queue_bind_execute(
        &mut self,
        head: &BindHead,
        sql: &SqlCommand,
        vars: &Variables,
        sync: bool,
    ) -> Result<(), Error>;
    /// Queues Sync.
    fn queue_sync(&mut self);
    /// Writes queued output; `Ok(true)` when all of it went out.
    fn flush(&mut self) -> io::Result<bool>;
    /// Reads what the socket has into the input buffer.
    fn read_some(&mut self) -> io::Result<ReadOutcome>;
    /// Decodes the next complete buffered message (`None`: more must be read).
    fn next_message(&mut self) -> Result<Option<BackendMessage<'_>>, Error>;
    /// The fast path of reading a plain result (no `\gset`/`\aset`): consumes the
    /// buffered messages such a result is made of, up to and including a
    /// ReadyForQuery, adding their effects to `tally`; stops before any other message
    /// (left for [`ClientConn::next_message`]). See [`pgrush_wire::scan_plain`].
    fn next_plain(&mut self, tally: &mut PlainTally) -> PlainStop;
    /// The session's client encoding (how to read the server's texts).
    fn client_encoding(&self) -> ClientEncoding;
    /// Blocks until the socket is writable (`writable`) or readable (a synchronous
    /// exchange, as libpq's blocking calls).
    fn wait_socket(&self, writable: bool) -> io::Result<()>;
    /// Asks the server to cancel the statement in progress (blocking, best effort:
    /// pgbench ignores the outcome too).
    fn cancel(&self);
    /// Sends Terminate and closes (pgbench's `PQfinish`: nothing is reported).
    fn close(self);
}

/// How a thread opens client connections and watches their sockets. Tokens are
/// client ids.
pub(crate) trait Network {
    /// The connections it opens.
    type Conn: ClientConn;
    /// Opens a client connection (blocking) in non-blocking mode; on failure prints
    /// libpq's message and returns `None`.
    fn connect(&mut self) -> Option<Self::Conn>;
    /// Starts watching `conn` for readability under `token`.
    fn register(&mut self, token: usize, conn: &Self::Conn) -> io::Result<()>;
    /// Watches `conn` for writability too (`writable`), or readability only.
    fn watch_writable(&mut self, token: usize, conn: &Self::Conn, writable: bool)
    -> io::Result<()>;
    /// Stops watching `conn`.
    fn deregister(&mut self, conn: &Self::Conn);
}

impl ClientConn for Connection {
    #[inline]
    fn queue_query(&mut self, sql: &[u8], holds_nul: bool) -> Result<(), Error> {
        Connection::queue_written_query(self, sql, holds_nul)
    }

    #[inline]
    fn queue_parse(&mut self, name: &str, sql: &[u8], n_params: usize) -> Result<(), Error> {
        Connection::queue_parse(self, name, sql, n_params)
    }

    #[inline]
    fn queue_bind_execute(
        &mut self,
        head: &BindHead,
        sql: &SqlCommand,
        vars: &Variables,
        sync: bool,
    ) -> Result<(), Error> {
        debug_assert_eq!(head.n_params(), sql.params().len());
        Connection::queue_bind_execute(self, head, |i, out| sql.write_param(vars, i, out), sync)
    }

    #[inline]
    fn queue_sync(&mut self) {
        Connection::queue_sync(self);
    }

    #[inline]
    fn flush(&mut self) -> io::Result<bool> {
        Connection::flush(self)
    }

    #[inline]
    fn read_some(&mut self) -> io::Result<ReadOutcome> {
        Connection::read_some(self)
    }

    #[inline]
    fn next_message(&mut self) -> Result<Option<BackendMessage<'_>>, Error> {
        Connection::next_message(self)
    }

    #[inline]
    fn next_plain(&mut self, tally: &mut PlainTally) -> PlainStop {
        Connection::next_plain(self, tally)
    }

    #[inline]
    fn client_encoding(&self) -> ClientEncoding {
        Connection::client_encoding(self)
    }

    fn wait_socket(&self, writable: bool) -> io::Result<()> {
        let events = if writable {
            libc::POLLOUT
        } else {
            libc::POLLIN
        };
        let mut fd = libc::pollfd {
            fd: self.as_raw_fd(),
            events,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd for the duration of the call.
            if unsafe { libc::poll(&mut fd, 1, -1) } >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    fn cancel(&self) {
        // As pgbench's PQcancel at the end of an interrupted run: a failed
        // request changes nothing (the connection is closed right after).
        let _ignored = self.cancel_token().cancel();
    }

    fn close(self) {
        // As pgbench's PQfinish: a connection that cannot say goodbye is closed anyway.
        let _ignored = Connection::close(self);
    }
}

/// The production [`Network`]: blocking connects with the run's parameters, sockets
/// watched by the thread's mio poll.
pub(crate) struct Sockets<'a> {
    params: &'a ConnParams,
    progname: &'a str,
    registry: mio::Registry,
}

impl<'a> Sockets<'a> {
    /// Connects with `params`, printing errors under `progname`, registering in `registry`.
    pub(crate) fn new(params: &'a ConnParams, progname: &'a str, registry: mio::Registry) -> Self {
        Sockets {
            params,
            progname,
            registry,
        }
    }
}

impl Network for Sockets<'_> {
    type Conn = Connection;

    fn connect(&mut self) -> Option<Connection> {
        match Connection::connect(self.params) {
            Ok(mut c) => c.set_nonblocking(true).is_ok().then_some(c),
            Err(e) => {
                messages::error(
                    self.progname,
                    &pgrush_wire::lossless::to_bytes(&e.to_string()),
                );
                None
            }
        }
    }

    fn register(&mut self, token: usize, conn: &Connection) -> io::Result<()> {
        let fd = conn.as_raw_fd();
        self.registry
            .register(&mut SourceFd(&fd), Token(token), Interest::READABLE)
    }

    fn watch_writable(
        &mut self,
        token: usize,
        conn: &Connection,
        writable: bool,
    ) -> io::Result<()> {
        let fd = conn.as_raw_fd();
        let interest = if writable {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        self.registry
            .reregister(&mut SourceFd(&fd), Token(token), interest)
    }

    fn deregister(&mut self, conn: &Connection) {
        let fd = conn.as_raw_fd();
        // The connection is closed right after: a socket epoll no longer knows is fine.
        let _ignored = self.registry.deregister(&mut SourceFd(&fd));
    }
}
