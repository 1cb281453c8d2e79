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
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes during the call.
    unsafe { transfer(libc::SYS_recvfrom, fd, buf.as_mut_ptr(), buf.len(), 0) }
}

/// Writes to socket `fd` with the system call std's `write` of a TCP or Unix stream
/// makes (`sendto(fd, buf, len, MSG_NOSIGNAL, NULL, 0)`), made directly, as
/// [`recv`] is.
#[inline]
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes during the call, and
    // `sendto` only reads it.
    let flags = libc::c_long::from(libc::MSG_NOSIGNAL);
    unsafe {
        transfer(
            libc::SYS_sendto,
            fd,
            buf.as_ptr().cast_mut(),
            buf.len(),
            flags,
        )
    }
}

/// `recvfrom` or `sendto` (`call`) of `len` bytes at `buf` on the connected socket
/// `fd` with `flags`, and no peer address (both address arguments 0): the count
/// moved, or the error in `errno`.
///
/// # Safety
/// `buf` must be valid for `len` bytes for what `call` does with them (written by
/// `recvfrom`, read by `sendto`) during the call.
#[inline(always)]
unsafe fn transfer(
    call: libc::c_long,
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    flags: libc::c_long,
) -> io::Result<usize> {
    // SAFETY: the caller vouches for `buf`; a null peer address (and length) is
    // what both calls take on a connected socket.
    let n = unsafe {
        libc::syscall(
            call,
            libc::c_long::from(fd),
            buf,
            len,
            flags,
            0 as libc::c_long,
            0 as libc::c_long,
        )
    };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}
