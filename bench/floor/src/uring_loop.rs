//! One thread's clients driven by one io_uring (`--io uring`): each client has one
//! multishot Recv armed for the whole run and at most one Send in flight; every pass of
//! the loop handles the completions, queues the Send of the next command of every client
//! whose response is complete, and makes exactly one `io_uring_enter` (submit and wait
//! for at least one completion) for the whole pass.
//!
//! The multishot Recv picks its buffers from a provided-buffer ring ([`BufRing`]); the
//! bytes are copied into the client's response buffer and the buffer handed back. It was
//! measured against one plain Recv per round trip into the response buffer (no copy, one
//! more submission per round trip) and was as cheap or cheaper (`bench/README.md`).

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use io_uring::{IoUring, cqueue, opcode, squeue, types};

use crate::buf_ring::BufRing;

use crate::error::FloorError;
use crate::event_loop::Stop;
use crate::response::{ResponseBuffer, Scan};
use crate::setup::Socket;
use crate::work::Work;

/// Set (to any value), this environment variable makes the ring setup fail with
/// `EPERM`, as under a seccomp filter that refuses `io_uring_setup`. It exists for the
/// tests of the fallback to epoll.
pub const REFUSE_ENV: &str = "PGRUSH_FLOOR_REFUSE_IO_URING";

/// Creates a ring with room for `clients` clients' operations (two each).
fn new_ring(clients: usize) -> io::Result<IoUring> {
    if std::env::var_os(REFUSE_ENV).is_some() {
        return Err(io::Error::from_raw_os_error(1)); // EPERM
    }
    let entries = (2 * clients).next_power_of_two().max(8);
    let entries = u32::try_from(entries).map_err(|_| io::Error::other("too many clients"))?;
    IoUring::new(entries)
}

/// Whether this process may use io_uring as the loop does: creates a small ring with a
/// provided-buffer ring (Linux 5.19 or later), and drops them.
pub fn probe() -> io::Result<()> {
    let ring = new_ring(1)?;
    let buffers = BufRing::register(&ring, 1, 64, BUFFER_GROUP)?;
    drop(ring);
    drop(buffers);
    Ok(())
}

/// `-errno` results a loop pass handles by trying again.
const EINTR: i32 = 4;
const ENOBUFS: i32 = 105;

/// The operation a completion belongs to (the low bit of its user data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Send = 0,
    Recv = 1,
}

fn user_data(client: usize, op: Op) -> u64 {
    ((client as u64) << 1) | op as u64
}

fn decode(user_data: u64) -> (usize, Op) {
    let op = if user_data & 1 == 0 {
        Op::Send
    } else {
        Op::Recv
    };
    ((user_data >> 1) as usize, op)
}

/// Where a client is in its transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Command `command` is being sent (`sent` bytes so far: a Send is in flight while
    /// some remain) and its response received (until `ready`: ReadyForQuery arrived).
    RoundTrip {
        command: usize,
        sent: usize,
        ready: bool,
    },
    /// No more transactions; nothing in flight.
    Done,
}

/// One connection and its script.
#[derive(Debug)]
struct Client {
    /// Owns the descriptor `fd` for the run.
    _socket: Socket,
    fd: RawFd,
    transaction: Work,
    phase: Phase,
    response: ResponseBuffer,
    completed: u64,
}

/// The buffer group of the multishot receives.
const BUFFER_GROUP: u16 = 0;
/// The size of a provided buffer: a response larger than this takes several.
const BUFFER_SIZE: usize = 4096;

/// The connections of one thread and their ring, ready to run.
pub struct UringClients {
    // Declared first so that it is dropped (and in-flight operations cancelled) before
    // the buffers they point to.
    ring: IoUring,
    clients: Vec<Client>,
    /// The provided buffers of the multishot receives.
    buffers: BufRing,
    completions: Vec<(u64, i32, u32)>,
}

impl UringClients {
    /// Creates the thread's ring for the connected sockets, each with its script's
    /// commands.
    pub fn new(connections: Vec<(Socket, Work)>) -> Result<UringClients, FloorError> {
        let ring = new_ring(connections.len()).map_err(|e| FloorError::io("io_uring_setup", e))?;
        // Two buffers per client: a response is copied out and its buffer handed back
        // in the pass that sees it, so the kernel never runs short.
        let count = (2 * connections.len())
            .next_power_of_two()
            .clamp(16, 1 << 15);
        let count = u16::try_from(count).unwrap_or(1 << 15);
        let buffers = BufRing::register(&ring, count, BUFFER_SIZE, BUFFER_GROUP)
            .map_err(|e| FloorError::io("registering the buffer ring", e))?;
        let mut clients = Vec::with_capacity(connections.len());
        for (socket, transaction) in connections {
            let fd = match &socket {
                Socket::Unix(s) => s.as_raw_fd(),
                Socket::Tcp(s) => s.as_raw_fd(),
            };
            let response = if transaction.reads_rows() {
                ResponseBuffer::capturing_rows()
            } else {
                ResponseBuffer::default()
            };
            clients.push(Client {
                _socket: socket,
                fd,
                transaction,
                phase: Phase::Done,
                response,
                completed: 0,
            });
        }
        let completions = Vec::with_capacity(2 * clients.len());
        Ok(UringClients {
            ring,
            clients,
            buffers,
            completions,
        })
    }

    /// Runs until `stop`; returns the transactions completed by this thread's clients.
    pub fn run(mut self, stop: Stop) -> Result<u64, FloorError> {
        let mut active = self.clients.len();
        for (i, client) in self.clients.iter_mut().enumerate() {
            let mut queue = self.ring.submission();
            client.queue_recv(i, &mut queue)?;
            client.transaction.draw();
            client.start(0, i, &mut queue)?;
        }
        let mut stopping = false;
        while active > 0 {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(FloorError::io("io_uring_enter", e)),
            }
            if let Stop::At(end) = stop {
                // In-flight transactions complete (and count); no new one starts.
                stopping = stopping || Instant::now() >= end;
            }
            self.completions.clear();
            self.completions.extend(
                self.ring
                    .completion()
                    .map(|cqe| (cqe.user_data(), cqe.result(), cqe.flags())),
            );
            let mut queue = self.ring.submission();
            for &(data, result, flags) in &self.completions {
                let (i, op) = decode(data);
                let client = self.clients.get_mut(i).ok_or_else(|| {
                    FloorError::Protocol(format!("completion for unknown client {i}"))
                })?;
                match op {
                    Op::Send => client.on_send(result, i, &mut queue)?,
                    Op::Recv => {
                        client.on_recv(result, flags, &mut self.buffers, i, &mut queue)?;
                    }
                }
                let more = match stop {
                    Stop::At(_) => !stopping,
                    Stop::After(n) => client.completed + 1 < n,
                };
                if client.advance(more, i, &mut queue)? {
                    active -= 1;
                }
            }
        }
        Ok(self.clients.iter().map(|c| c.completed).sum())
    }
}

/// The byte count of a completion, or its error (`-errno`).
fn transferred(result: i32, context: &str) -> Result<usize, FloorError> {
    usize::try_from(result)
        .map_err(|_| FloorError::io(context.to_string(), io::Error::from_raw_os_error(-result)))
}

/// Queues `entry`; the ring has room for two operations per client, so it never fills.
fn push(queue: &mut squeue::SubmissionQueue<'_>, entry: &squeue::Entry) -> Result<(), FloorError> {
    // SAFETY: the buffers an entry points to (a command's bytes; the provided buffers)
    // are neither moved nor freed while the operation is in flight: clients live in a
    // Vec that is not resized during the run, commands are rewritten only between round
    // trips, and the ring is dropped before the clients and the buffer ring.
    unsafe { queue.push(entry) }
        .map_err(|_| FloorError::Protocol("the io_uring submission queue is full".into()))
}

impl Client {
    /// Starts command `command`: queues its Send (the Recv stays armed).
    fn start(
        &mut self,
        command: usize,
        index: usize,
        queue: &mut squeue::SubmissionQueue<'_>,
    ) -> Result<(), FloorError> {
        self.phase = Phase::RoundTrip {
            command,
            sent: 0,
            ready: false,
        };
        self.queue_send(command, 0, index, queue)
    }

    fn queue_send(
        &self,
        command: usize,
        sent: usize,
        index: usize,
        queue: &mut squeue::SubmissionQueue<'_>,
    ) -> Result<(), FloorError> {
        let rest = &self.transaction.bytes(command)[sent..];
        let len = u32::try_from(rest.len())
            .map_err(|_| FloorError::Protocol("command over 4 GiB".into()))?;
        let entry = opcode::Send::new(types::Fd(self.fd), rest.as_ptr(), len)
            .build()
            .user_data(user_data(index, Op::Send));
        push(queue, &entry)
    }

    /// Arms the client's multishot Recv.
    fn queue_recv(
        &mut self,
        index: usize,
        queue: &mut squeue::SubmissionQueue<'_>,
    ) -> Result<(), FloorError> {
        let entry = opcode::RecvMulti::new(types::Fd(self.fd), BUFFER_GROUP)
            .build()
            .user_data(user_data(index, Op::Recv));
        push(queue, &entry)
    }

    /// A Send completed: the rest of a partly sent command is sent again.
    fn on_send(
        &mut self,
        result: i32,
        index: usize,
        queue: &mut squeue::SubmissionQueue<'_>,
    ) -> Result<(), FloorError> {
        let Phase::RoundTrip { command, sent, .. } = &mut self.phase else {
            return Err(FloorError::Protocol(
                "a send completed after the end".into(),
            ));
        };
        let command = *command;
        if result != -EINTR {
            // (Interrupted: the same bytes again.)
            *sent += transferred(result, "sending")?;
        }
        let sent = *sent;
        if sent < self.transaction.bytes(command).len() {
            self.queue_send(command, sent, index, queue)?;
        }
        Ok(())
    }

    /// A multishot Recv completed: the bytes are copied out of their provided buffer,
    /// which goes back to the ring, and scanned; the Recv is armed again when the kernel
    /// ended it (no `F_MORE`: out of buffers, or an interruption).
    fn on_recv(
        &mut self,
        result: i32,
        flags: u32,
        buffers: &mut BufRing,
        index: usize,
        queue: &mut squeue::SubmissionQueue<'_>,
    ) -> Result<(), FloorError> {
        let rearm = !cqueue::more(flags);
        if result == -ENOBUFS || result == -EINTR {
            return if rearm {
                self.queue_recv(index, queue)
            } else {
                Ok(())
            };
        }
        let n = usize::try_from(result)
            .map_err(|_| FloorError::receiving(io::Error::from_raw_os_error(-result)))?;
        if n == 0 {
            return Err(FloorError::closed());
        }
        let bid = cqueue::buffer_select(flags)
            .ok_or_else(|| FloorError::Protocol("a receive without its buffer".into()))?;
        let bytes = buffers
            .filled(bid, n)
            .ok_or_else(|| FloorError::Protocol(format!("no provided buffer {bid}")))?;
        let mut copied = 0;
        while copied < bytes.len() {
            let spare = self.response.spare();
            let take = spare.len().min(bytes.len() - copied);
            spare[..take].copy_from_slice(&bytes[copied..copied + take]);
            self.response.filled(take);
            copied += take;
        }
        buffers.recycle(bid);
        if rearm {
            self.queue_recv(index, queue)?;
        }
        let Phase::RoundTrip { ready, .. } = &mut self.phase else {
            return Err(FloorError::Protocol("data received after the end".into()));
        };
        if self.response.scan()? == Scan::Ready {
            *ready = true;
        }
        Ok(())
    }

    /// Once the command is sent and its response complete, starts the next command, or
    /// the next transaction when `more` allows. Returns true when the client has just
    /// become done.
    fn advance(
        &mut self,
        more: bool,
        index: usize,
        queue: &mut squeue::SubmissionQueue<'_>,
    ) -> Result<bool, FloorError> {
        let Phase::RoundTrip {
            command,
            sent,
            ready: true,
        } = self.phase
        else {
            return Ok(false);
        };
        if sent < self.transaction.bytes(command).len() {
            return Ok(false);
        }
        match self.transaction.after_response(
            command,
            self.response.last_row(),
            more,
            &mut self.completed,
        ) {
            Some(next) => {
                self.start(next, index, queue)?;
                Ok(false)
            }
            None => {
                self.phase = Phase::Done;
                Ok(true)
            }
        }
    }
}
