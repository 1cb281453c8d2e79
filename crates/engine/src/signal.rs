//! Ctrl-C handling: SIGINT and SIGTERM set an atomic flag and write one byte to a
//! self-pipe whose read end every worker registers in its event loop, so a
//! sleeping `epoll_wait` wakes up at once. A second signal ends the process
//! immediately with exit status 2.
//!
//! The handler only touches async-signal-safe things: an atomic counter, a
//! non-blocking `write(2)` and `_exit(2)`.

use std::io;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// Number of SIGINT/SIGTERM received since [`install`].
static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// Write end of the self-pipe (-1 before [`install`]).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// Read end of the self-pipe (-1 before [`install`]).
static PIPE_READ: AtomicI32 = AtomicI32::new(-1);
/// Serializes [`install`].
static INSTALL: Mutex<()> = Mutex::new(());

extern "C" fn on_signal(_sig: libc::c_int) {
    let before = SIGNALS.fetch_add(1, Ordering::SeqCst);
    if before >= 1 {
        // SAFETY: `_exit` is async-signal-safe and never returns.
        unsafe { libc::_exit(2) };
    }
    let fd = PIPE_WRITE.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = 1u8;
        // SAFETY: writing one byte from a valid stack buffer to a file descriptor
        // we own; `write` is async-signal-safe. The result is irrelevant: a full
        // pipe already wakes every loop.
        unsafe {
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
}

/// Installs the SIGINT/SIGTERM handlers (once per process) and returns the read
/// end of the self-pipe, which becomes readable at the first signal.
pub fn install() -> io::Result<RawFd> {
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let mut read_fd = PIPE_READ.load(Ordering::SeqCst);
    if read_fd < 0 {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is a valid two-element array for pipe2 to fill.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        PIPE_WRITE.store(fds[1], Ordering::SeqCst);
        PIPE_READ.store(fds[0], Ordering::SeqCst);
        read_fd = fds[0];
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
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

/// Restores the default SIGINT/SIGTERM dispositions (after a run) and forgets
/// signals received so far; the self-pipe stays open for a later [`install`].
pub fn uninstall() {
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if PIPE_READ.load(Ordering::SeqCst) < 0 {
        return;
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: resetting a signal to its default disposition.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    SIGNALS.store(0, Ordering::SeqCst);
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

/// True once a SIGINT or SIGTERM has been received.
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
