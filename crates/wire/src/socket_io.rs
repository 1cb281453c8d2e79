//! Reading and writing a connected socket with the system calls std's streams make
//! (`recvfrom`, `sendto` with `MSG_NOSIGNAL`), made directly (Linux only).
//!
//! libc's `recv` and `send` are thread cancellation points: their bookkeeping
//! costs more user-space instructions than the call itself (some 80 a round trip),
//! and nothing here cancels threads. The floor client (`bench/floor`) makes its
//! calls the same way, so that it stays the least work a client can do.

use std::io;
use std::os::fd::RawFd;

/// Reads from socket `fd` with the system call std's `read` of a TCP or Unix stream
/// makes (`recvfrom(fd, buf, len, 0, NULL, NULL)`), made directly: libc's `recv`
/// is a thread cancellation point whose bookkeeping costs more user-space
/// instructions than the call itself, and pgrush cancels no threads.
#[inline]
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes during the call; the
    // address arguments are null (no peer address asked for).
    let n = unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            libc::c_long::from(fd),
            buf.as_mut_ptr(),
            buf.len(),
            0 as libc::c_long,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        )
    };
    syscall_result(n)
}

/// Writes to socket `fd` with the system call std's `write` of a TCP or Unix stream
/// makes (`sendto(fd, buf, len, MSG_NOSIGNAL, NULL, 0)`), made directly, as
/// [`recv`] is.
#[inline]
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes during the call; no
    // destination address is given (a connected socket).
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            libc::c_long::from(fd),
            buf.as_ptr(),
            buf.len(),
            libc::c_long::from(libc::MSG_NOSIGNAL),
            std::ptr::null::<libc::sockaddr>(),
            0 as libc::c_long,
        )
    };
    syscall_result(n)
}

/// A system call's return: a count, or -1 with the error in `errno`.
fn syscall_result(n: libc::c_long) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}
