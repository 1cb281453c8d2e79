//! Signals that end a run. The first SIGINT or SIGTERM sets an atomic flag and
//! writes one byte to a self-pipe whose read end every worker registers in its event
//! loop, so a sleeping `epoll_wait` wakes up at once, and the run stops gracefully
//! (partial report, exit status 2).
//!
//! A second SIGINT or SIGTERM, and SIGHUP or SIGQUIT at any time, end the process at
//! once, as they end pgbench (which is killed by them), but without losing the `-l`
//! lines still buffered: each worker that sees the signal flushes the complete lines
//! of its log and says so ([`worker_settled`]); a watchdog thread waits for every
//! worker of the run (at most [`SETTLE_WAIT`]) and then lets the signal kill the
//! process with its default action, so the parent sees the same status as for
//! pgbench (a shell prints 128 + the signal number).
//!
//! The handler only touches async-signal-safe things: atomics and non-blocking
//! `write(2)`s.

use std::io;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Number of handled signals received since [`install`].
static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// The signal that ends the process at once (0: none yet).
static ENDING: AtomicI32 = AtomicI32::new(0);
/// Write end of the self-pipe (-1 before [`install`]).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// Read end of the self-pipe (-1 before [`install`]).
static PIPE_READ: AtomicI32 = AtomicI32::new(-1);
/// Write end of the watchdog's pipe (-1 before [`install`]).
static WATCHDOG_WRITE: AtomicI32 = AtomicI32::new(-1);
/// Workers of the current run that must flush their logs before the process ends.
static WORKERS: AtomicUsize = AtomicUsize::new(0);
/// Workers of the current run that flushed their logs (or finished).
static SETTLED: AtomicUsize = AtomicUsize::new(0);
/// Serializes [`install`].
static INSTALL: Mutex<()> = Mutex::new(());

/// The signals handled while a run (or `-i`) is going on.
const HANDLED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// How long the watchdog waits for the workers to flush their logs once a signal
/// ends the process (a worker blocked outside its event loop is not waited for longer).
pub const SETTLE_WAIT: Duration = Duration::from_secs(2);

/// Writes one wake-up byte to `fd` (async-signal-safe; a full pipe already wakes).
fn poke(fd: RawFd) {
    if fd >= 0 {
        let byte = 1u8;
        // SAFETY: writing one byte from a valid stack buffer to a file descriptor
        // we own; `write` is async-signal-safe. The result is irrelevant: a full
        // pipe already wakes every reader.
        unsafe {
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let at_once =
        sig == libc::SIGHUP || sig == libc::SIGQUIT || SIGNALS.load(Ordering::SeqCst) >= 1;
    if at_once {
        // The first signal that ends the process is the one it dies of.
        let _ = ENDING.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
        poke(WATCHDOG_WRITE.load(Ordering::SeqCst));
    }
    SIGNALS.fetch_add(1, Ordering::SeqCst);
    poke(PIPE_WRITE.load(Ordering::SeqCst));
}

/// A non-blocking, close-on-exec pipe: (read end, write end).
fn new_pipe() -> io::Result<(RawFd, RawFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid two-element array for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((fds[0], fds[1]))
}

/// Starts the watchdog thread (once per process): it sleeps until a signal ends the
/// process, waits for the workers to flush their logs, then dies of that signal.
fn start_watchdog() -> io::Result<()> {
    if WATCHDOG_WRITE.load(Ordering::SeqCst) >= 0 {
        return Ok(());
    }
    let (read_fd, write_fd) = new_pipe()?;
    std::thread::Builder::new()
        .name("signal-watchdog".into())
        .spawn(move || {
            while ENDING.load(Ordering::SeqCst) == 0 {
                // A wake-up without a signal (or EINTR) only looks again.
                let _ = wait(read_fd);
            }
            let deadline = Instant::now() + SETTLE_WAIT;
            while SETTLED.load(Ordering::SeqCst) < WORKERS.load(Ordering::SeqCst)
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            die_of(ENDING.load(Ordering::SeqCst));
        })?;
    WATCHDOG_WRITE.store(write_fd, Ordering::SeqCst);
    Ok(())
}

/// Ends the process with `sig`'s default action (as if never handled).
fn die_of(sig: libc::c_int) -> ! {
    // SAFETY: restoring the default action, unblocking and raising the signal; if
    // the process somehow survives, `_exit` ends it with the shell's status for it.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
        libc::_exit(128 + sig)
    }
}

/// Sets the number of workers whose logs the watchdog waits for (at the start of
/// a run; 0 after it).
pub(crate) fn expect_workers(n: usize) {
    SETTLED.store(0, Ordering::SeqCst);
    WORKERS.store(n, Ordering::SeqCst);
}

/// A worker flushed its log, or finished: the watchdog need not wait for it.
pub(crate) fn worker_settled() {
    SETTLED.fetch_add(1, Ordering::SeqCst);
}

/// True once a signal ends the process at once (the worker then flushes its log,
/// calls [`worker_settled`] and waits for the end).
pub(crate) fn ending_at_once() -> bool {
    ENDING.load(Ordering::SeqCst) != 0
}

/// Waits for the watchdog to end the process (after [`ending_at_once`]).
pub(crate) fn await_end() -> ! {
    loop {
        std::thread::park();
    }
}

/// Installs the SIGINT, SIGTERM, SIGHUP and SIGQUIT handlers and the watchdog (once
/// per process) and returns the read end of the self-pipe, which becomes readable at
/// the first signal.
pub fn install() -> io::Result<RawFd> {
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let mut read_fd = PIPE_READ.load(Ordering::SeqCst);
    if read_fd < 0 {
        let (r, w) = new_pipe()?;
        PIPE_WRITE.store(w, Ordering::SeqCst);
        PIPE_READ.store(r, Ordering::SeqCst);
        read_fd = r;
    }
    start_watchdog()?;
    for sig in HANDLED {
        // SAFETY: a zeroed sigaction is a valid starting point; we set the handler
        // to a function with the C signature and an empty mask.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(read_fd)
}

/// Restores the default dispositions of the handled signals (after a run) and forgets
/// signals received so far; the self-pipe stays open for a later [`install`].
pub fn uninstall() {
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if PIPE_READ.load(Ordering::SeqCst) < 0 {
        return;
    }
    for sig in HANDLED {
        // SAFETY: resetting a signal to its default disposition.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    if ending_at_once() {
        // The watchdog is ending the process.
        return;
    }
    SIGNALS.store(0, Ordering::SeqCst);
    expect_workers(0);
    // Drain the pipe so the next run does not wake up at once.
    let fd = PIPE_READ.load(Ordering::SeqCst);
    let mut buf = [0u8; 64];
    // SAFETY: reading into a valid buffer from our non-blocking pipe.
    while unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
}

/// Blocks until the self-pipe returned by [`install`] is readable (a signal arrived),
/// then consumes one wake-up byte.
pub fn wait(read_fd: RawFd) -> io::Result<()> {
    loop {
        let mut pfd = libc::pollfd {
            fd: read_fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `pfd` is one valid pollfd; -1 waits without a timeout.
        let rc = unsafe { libc::poll(&mut pfd, 1, -1) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let mut byte = 0u8;
        // SAFETY: reading one byte into a valid stack buffer from our non-blocking pipe.
        if unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) } == 1 {
            return Ok(());
        }
    }
}

/// True once a handled signal has been received.
pub(crate) fn interrupted() -> bool {
    SIGNALS.load(Ordering::Relaxed) > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_sets_flag_and_wakes_pipe() {
        let fd = install().expect("install handlers");
        assert!(!interrupted());
        // SAFETY: raising a signal we installed a handler for.
        unsafe { libc::raise(libc::SIGTERM) };
        assert!(interrupted());
        let mut buf = [0u8; 4];
        // SAFETY: reading into a valid buffer from our pipe.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        assert_eq!(n, 1);
        // Installing again returns the same pipe; uninstalling clears the flag.
        assert_eq!(install().expect("reinstall"), fd);
        uninstall();
        assert!(!interrupted());
    }
}
