//! What the client state machine needs from the outside world, as two small traits:
//! [`ClientConn`] (one server connection: queue, flush, read, decode) and [`Network`]
//! (how a thread opens client connections and watches their sockets).
//!
//! Production uses [`pgrush_wire::Connection`] and [`Sockets`] (mio); the unit tests
//! of `client` use a scripted fake. The client is generic over both, so the hot path
//! is monomorphised: no `dyn`, no extra indirection.

use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::thread::JoinHandle;

use mio::unix::SourceFd;
use mio::{Interest, Token};
use pgrush_script::{SqlCommand, Variables};
use pgrush_stats::ServerIdentity;
use pgrush_wire::conninfo::ConnParams;
use pgrush_wire::{
    BackendMessage, BindHead, ClientEncoding, Connection, Error, PlainStop, PlainTally, ReadOutcome,
};

use crate::Targets;
use crate::messages;

/// A connection being opened by a thread of its own (`--reconnect`).
enum Attempt {
    /// The thread connects.
    Running(JoinHandle<Result<Opened<Connection>, String>>),
    /// No thread could be started.
    NotStarted(String),
}

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
/// client ids; a target is a [`Targets`](crate::Targets) index (0: the run's server).
pub(crate) trait Network {
    /// The connections it opens.
    type Conn: ClientConn;
    /// Opens a client connection to `target` (blocking) in non-blocking mode; on
    /// failure prints libpq's message and returns `None`.
    fn connect(&mut self, target: usize) -> Option<Self::Conn>;
    /// Starts watching `conn` for readability under `token`.
    fn register(&mut self, token: usize, conn: &Self::Conn) -> io::Result<()>;
    /// Watches `conn` for writability too (`writable`), or readability only.
    fn watch_writable(&mut self, token: usize, conn: &Self::Conn, writable: bool)
    -> io::Result<()>;
    /// Stops watching `conn`.
    fn deregister(&mut self, conn: &Self::Conn);
    /// Connects (blocking) and, for `--reconnect`'s report, asks which server
    /// answered; on failure prints libpq's message. The default asks nothing.
    fn connect_identified(&mut self, target: usize) -> Option<Opened<Self::Conn>> {
        self.connect(target)
            .map(|conn| Opened { conn, server: None })
    }
    /// Starts opening a connection to `target` for client `token` without blocking
    /// the thread (`--reconnect`); [`Network::poll_connect`] gives the outcome. The
    /// default does the work in `poll_connect`, at once.
    fn begin_connect(&mut self, _token: usize, _target: usize) {}
    /// The outcome of the connection to `target` begun for `token`: `None` while it
    /// is still being opened; an error is libpq's message.
    fn poll_connect(
        &mut self,
        _token: usize,
        target: usize,
    ) -> Option<Result<Opened<Self::Conn>, String>> {
        Some(
            self.connect_identified(target)
                .ok_or_else(|| "could not connect".to_string()),
        )
    }
    /// Forgets the connection being opened for `token` (the run ends first): it is
    /// closed when it opens.
    fn abandon_connect(&mut self, _token: usize) {}
}

/// A connection just opened, with the server that answered when asked.
pub(crate) struct Opened<C> {
    /// The connection, in non-blocking mode.
    pub(crate) conn: C,
    /// Which server it is (`--reconnect`).
    pub(crate) server: Option<ServerIdentity>,
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
    /// The targets other than the run's server (`--target`).
    targets: &'a Targets,
    progname: &'a str,
    registry: mio::Registry,
    /// The parameters of each target for connecting threads (`--reconnect`; copied
    /// on first use).
    shared_params: Vec<Option<Arc<ConnParams>>>,
    /// Connections being opened by threads, by client.
    attempts: HashMap<usize, Attempt>,
}

impl<'a> Sockets<'a> {
    /// Connects with `params` (and `targets`), printing errors under `progname`,
    /// registering in `registry`.
    pub(crate) fn new(
        params: &'a ConnParams,
        targets: &'a Targets,
        progname: &'a str,
        registry: mio::Registry,
    ) -> Self {
        Sockets {
            params,
            targets,
            progname,
            registry,
            shared_params: vec![None; targets.servers.len() + 1],
            attempts: HashMap::new(),
        }
    }

    /// The parameters of `target`.
    fn params_of(&self, target: usize) -> &'a ConnParams {
        self.targets.params(self.params, target)
    }
}

/// Connects (blocking), asks which server answered when `identify`, and turns
/// the connection non-blocking; an error is libpq's message.
fn open(params: &ConnParams, identify: bool) -> Result<Opened<Connection>, String> {
    let mut conn = Connection::connect(params).map_err(|e| e.to_string())?;
    let server = identify.then(|| identify_server(&mut conn));
    conn.set_nonblocking(true)
        .map_err(|e| format!("could not set the connection non-blocking: {e}"))?;
    Ok(Opened { conn, server })
}

/// The connection's host and port, whether the server is in recovery and its
/// system identifier (each `None` when the server does not tell this role).
fn identify_server(conn: &mut Connection) -> ServerIdentity {
    let mut ask = |sql: &str| {
        conn.simple_query(sql)
            .ok()
            .and_then(|r| r.first().and_then(|r| r.get(0, 0).map(str::to_string)))
    };
    let in_recovery = ask("select pg_is_in_recovery()").map(|v| v == "t");
    let system_identifier = ask("select system_identifier from pg_control_system()");
    ServerIdentity {
        host: conn.host().to_string(),
        port: conn.port().to_string(),
        in_recovery,
        system_identifier,
    }
}

impl Network for Sockets<'_> {
    type Conn = Connection;

    fn connect(&mut self, target: usize) -> Option<Connection> {
        match Connection::connect(self.params_of(target)) {
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

    fn connect_identified(&mut self, target: usize) -> Option<Opened<Connection>> {
        match open(self.params_of(target), true) {
            Ok(opened) => Some(opened),
            Err(e) => {
                messages::error(self.progname, &pgrush_wire::lossless::to_bytes(&e));
                None
            }
        }
    }

    fn begin_connect(&mut self, token: usize, target: usize) {
        let own = self.params_of(target);
        let params =
            Arc::clone(self.shared_params[target].get_or_insert_with(|| Arc::new(own.clone())));
        let spawned = std::thread::Builder::new()
            .name(format!("pgrush-connect-{token}"))
            .spawn(move || open(&params, true));
        let attempt = match spawned {
            Ok(handle) => Attempt::Running(handle),
            Err(e) => Attempt::NotStarted(format!("could not start a thread to connect: {e}")),
        };
        self.attempts.insert(token, attempt);
    }

    fn poll_connect(
        &mut self,
        token: usize,
        _target: usize,
    ) -> Option<Result<Opened<Connection>, String>> {
        if let Some(Attempt::Running(handle)) = self.attempts.get(&token)
            && !handle.is_finished()
        {
            return None;
        }
        Some(match self.attempts.remove(&token) {
            Some(Attempt::Running(handle)) => handle
                .join()
                .unwrap_or_else(|_| Err("the connecting thread failed".to_string())),
            Some(Attempt::NotStarted(e)) => Err(e),
            None => Err("no connection is being opened".to_string()),
        })
    }

    fn abandon_connect(&mut self, token: usize) {
        // A running thread is left to finish on its own: what it opens is dropped.
        self.attempts.remove(&token);
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
