//! One thread's clients driven by one `mio::Poll`: per round trip one `write` of the
//! pre-encoded command and, once the socket is readable, `read`s until ReadyForQuery
//! (one `read` when the whole response has arrived, as it has for small responses).

use std::io;
#[cfg(not(target_os = "linux"))]
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use mio::event::Source;
use mio::{Events, Interest, Poll, Token};

use crate::error::FloorError;
use crate::response::{ResponseBuffer, Scan};
use crate::setup::Socket;
use crate::work::Work;

/// A non-blocking connection registered with the thread's poll.
#[derive(Debug)]
enum Stream {
    Unix(mio::net::UnixStream),
    Tcp(mio::net::TcpStream),
}

impl Stream {
    fn from_socket(socket: Socket) -> Result<Stream, FloorError> {
        let nonblocking = |r: io::Result<()>| r.map_err(|e| FloorError::io("set_nonblocking", e));
        Ok(match socket {
            Socket::Unix(s) => {
                nonblocking(s.set_nonblocking(true))?;
                Stream::Unix(mio::net::UnixStream::from_std(s))
            }
            Socket::Tcp(s) => {
                nonblocking(s.set_nonblocking(true))?;
                Stream::Tcp(mio::net::TcpStream::from_std(s))
            }
        })
    }

    fn source(&mut self) -> &mut dyn Source {
        match self {
            Stream::Unix(s) => s,
            Stream::Tcp(s) => s,
        }
    }

    /// The socket's descriptor.
    #[cfg(target_os = "linux")]
    fn fd(&self) -> RawFd {
        match self {
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tcp(s) => s.as_raw_fd(),
        }
    }

    /// Reads with the cheapest call there is: the system call itself on Linux, as
    /// pgrush makes it ([`pgrush_wire::socket_io`]), not libc's wrapper.
    #[cfg(target_os = "linux")]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        pgrush_wire::socket_io::recv(self.fd(), buf)
    }

    /// Writes with the system call itself, as [`Stream::read`] reads.
    #[cfg(target_os = "linux")]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        pgrush_wire::socket_io::send(self.fd(), buf)
    }

    #[cfg(not(target_os = "linux"))]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(buf),
            Stream::Tcp(s) => s.write(buf),
        }
    }
}

/// Where a client is in its transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Command `command` is partly sent (the socket's buffer was full).
    Sending { command: usize, sent: usize },
    /// Command `command` is sent; its response is awaited.
    Receiving { command: usize },
    /// No more transactions.
    Done,
}

/// One connection and its script.
#[derive(Debug)]
struct Client {
    stream: Stream,
    transaction: Work,
    phase: Phase,
    response: ResponseBuffer,
    completed: u64,
}

/// When a thread stops starting transactions.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    /// At this instant.
    At(Instant),
    /// After this many transactions per client.
    After(u64),
}

/// The connections of one thread, ready to run.
#[derive(Debug)]
pub struct ThreadClients {
    poll: Poll,
    clients: Vec<Client>,
}

impl ThreadClients {
    /// Registers the connected sockets, each with its script's commands.
    pub fn new(connections: Vec<(Socket, Work)>) -> Result<ThreadClients, FloorError> {
        let poll = Poll::new().map_err(|e| FloorError::io("creating the poll", e))?;
        let mut clients = Vec::with_capacity(connections.len());
        for (i, (socket, transaction)) in connections.into_iter().enumerate() {
            let mut stream = Stream::from_socket(socket)?;
            poll.registry()
                .register(stream.source(), Token(i), Interest::READABLE)
                .map_err(|e| FloorError::io("registering a socket", e))?;
            let response = if transaction.reads_rows() {
                ResponseBuffer::capturing_rows()
            } else {
                ResponseBuffer::default()
            };
            clients.push(Client {
                stream,
                transaction,
                phase: Phase::Done,
                response,
                completed: 0,
            });
        }
        Ok(ThreadClients { poll, clients })
    }

    /// Runs until `stop`; returns the transactions completed by this thread's clients.
    pub fn run(mut self, stop: Stop) -> Result<u64, FloorError> {
        let registry = self
            .poll
            .registry()
            .try_clone()
            .map_err(|e| FloorError::io("poll", e))?;
        let mut active = self.clients.len();
        for (i, client) in self.clients.iter_mut().enumerate() {
            client.transaction.draw();
            client.start(0, &registry, Token(i))?;
        }
        let mut events = Events::with_capacity(self.clients.len().max(16));
        let mut stopping = false;
        while active > 0 {
            let timeout = match stop {
                Stop::At(end) if !stopping => Some(end.saturating_duration_since(Instant::now())),
                _ => None,
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(FloorError::io("poll", e)),
            }
            for event in events.iter() {
                let Token(i) = event.token();
                let client = &mut self.clients[i];
                let more = match stop {
                    Stop::At(_) => !stopping,
                    Stop::After(n) => client.completed + 1 < n,
                };
                if client.drive(more, &registry, Token(i))? {
                    active -= 1;
                }
            }
            if let Stop::At(end) = stop {
                // In-flight transactions complete (and count); no new one starts.
                stopping = stopping || Instant::now() >= end;
            }
        }
        Ok(self.clients.iter().map(|c| c.completed).sum())
    }
}

impl Client {
    /// Sends command `command` of the transaction.
    fn start(
        &mut self,
        command: usize,
        registry: &mio::Registry,
        token: Token,
    ) -> Result<(), FloorError> {
        self.phase = Phase::Sending { command, sent: 0 };
        self.continue_send(registry, token)
    }

    /// Writes what is left of the current command; waits for writability if the socket
    /// buffer is full.
    fn continue_send(&mut self, registry: &mio::Registry, token: Token) -> Result<(), FloorError> {
        let Phase::Sending { command, mut sent } = self.phase else {
            return Ok(());
        };
        let bytes = &self.transaction.bytes(command);
        let was_partial = sent > 0;
        while sent < bytes.len() {
            match self.stream.write(&bytes[sent..]) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.phase = Phase::Sending { command, sent };
                    return registry
                        .reregister(
                            self.stream.source(),
                            token,
                            Interest::READABLE | Interest::WRITABLE,
                        )
                        .map_err(|e| FloorError::io("reregistering", e));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FloorError::io("sending", e)),
            }
        }
        if was_partial {
            registry
                .reregister(self.stream.source(), token, Interest::READABLE)
                .map_err(|e| FloorError::io("reregistering", e))?;
        }
        self.phase = Phase::Receiving { command };
        Ok(())
    }

    /// Handles readiness; `more` says whether another transaction may start after the
    /// current one. Returns true when the client has just become done.
    fn drive(
        &mut self,
        more: bool,
        registry: &mio::Registry,
        token: Token,
    ) -> Result<bool, FloorError> {
        if let Phase::Sending { .. } = self.phase {
            self.continue_send(registry, token)?;
        }
        let Phase::Receiving { command } = self.phase else {
            return Ok(false);
        };
        loop {
            match self.stream.read(self.response.spare()) {
                Ok(0) => return Err(FloorError::closed()),
                Ok(n) => self.response.filled(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(FloorError::receiving(e)),
            }
            if self.response.scan()? == Scan::Ready {
                break;
            }
        }
        match self.transaction.after_response(
            command,
            self.response.last_row(),
            more,
            &mut self.completed,
        ) {
            Some(next) => {
                self.start(next, registry, token)?;
                Ok(false)
            }
            None => {
                self.phase = Phase::Done;
                Ok(true)
            }
        }
    }
}
