//! Appending a message's fixed parts to a `BytesMut` through its spare capacity:
//! one capacity check for several fields, where `BufMut::put_*` checks (and
//! updates the length) field by field. The encoders of the messages sent on every
//! transaction use it.

use std::mem::MaybeUninit;

use bytes::buf::UninitSlice;
use bytes::{BufMut, BytesMut};

/// A cursor over a buffer's spare capacity: what it writes is appended to the
/// buffer when [`append`] returns.
pub(crate) struct Appender<'a> {
    spare: &'a mut [MaybeUninit<u8>],
    written: usize,
}

impl Appender<'_> {
    /// Writes `bytes` after what is already written. The room was reserved by
    /// [`append`]: writing more than that is a bug, caught by the slice bounds check.
    #[inline(always)]
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        let end = self.written + bytes.len();
        copy_short(&mut self.spare[self.written..end], bytes);
        self.written = end;
    }

    /// Writes the bytes of `N`, a fixed-size piece (copied without a `memcpy` call).
    #[inline(always)]
    pub(crate) fn put_array<const N: usize>(&mut self, bytes: [u8; N]) {
        self.put(&bytes);
    }
}

/// Copies `src` to `dst` (as long). Names are short: a copy of a length known only
/// at run time is a `memcpy` call, dearer than the two overlapping loads and stores
/// of fixed size that copy up to 32 bytes. The pieces are moved as integers: a
/// fixed-size slice copy may still become a `memcpy` call where the compiler
/// optimizes a block for size.
#[inline(always)]
fn copy_short(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    let n = src.len();
    let dst = &mut dst[..n];
    match n {
        0 => {}
        1..=3 => {
            dst[0].write(src[0]);
            dst[n / 2].write(src[n / 2]);
            dst[n - 1].write(src[n - 1]);
        }
        4..=8 => copy_two::<u32>(dst, src),
        9..=16 => copy_two::<u64>(dst, src),
        // A Bind's head with a short statement name (`P0_1`) is about 20 bytes.
        17..=SHORT => copy_two::<u128>(dst, src),
        _ => {
            dst.write_copy_of_slice(src);
        }
    }
}

/// The longest copy [`copy_short`] makes without a `memcpy` call.
const SHORT: usize = 32;

/// Copies `src` (of `size_of::<T>()` to twice that many bytes) to `dst` (as long)
/// as its first and its last `T`, which overlap unless the length is twice `T`'s.
#[inline(always)]
fn copy_two<T: Word>(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    let (n, size) = (src.len(), size_of::<T>());
    assert!(dst.len() == n && (size..=2 * size).contains(&n));
    // SAFETY: both reads lie within `src` and both writes within `dst` (checked
    // above: `size <= n` and the lengths are equal); `read_unaligned` and
    // `write_unaligned` need no alignment, and any bytes are a valid `T` (an
    // unsigned integer: [`Word`]).
    unsafe {
        let head = src.as_ptr().cast::<T>().read_unaligned();
        let tail = src.as_ptr().add(n - size).cast::<T>().read_unaligned();
        dst.as_mut_ptr().cast::<T>().write_unaligned(head);
        dst.as_mut_ptr()
            .add(n - size)
            .cast::<T>()
            .write_unaligned(tail);
    }
}

/// The unsigned integers [`copy_two`] moves bytes as: every bit pattern is a value.
trait Word: Copy {}
impl Word for u32 {}
impl Word for u64 {}
impl Word for u128 {}

/// A Bind parameter's text being appended to the output buffer: a `BufMut` whose
/// `put_slice` copies short pieces (a number's digits) without a `memcpy` call, where
/// `BytesMut`'s own calls one for every piece. What the parameter writers of
/// [`Connection::queue_bind_execute`](crate::Connection::queue_bind_execute) and
/// [`Connection::queue_bind`](crate::Connection::queue_bind) write to.
pub struct ParamBuf<'a> {
    buf: &'a mut BytesMut,
}

impl<'a> ParamBuf<'a> {
    pub(crate) fn new(buf: &'a mut BytesMut) -> Self {
        ParamBuf { buf }
    }
}

// SAFETY: every method passes through to `BytesMut`'s own implementation, except
// `put_slice`, which writes `src` into the spare capacity and then extends the length
// by exactly the bytes it wrote.
unsafe impl BufMut for ParamBuf<'_> {
    #[inline]
    fn remaining_mut(&self) -> usize {
        self.buf.remaining_mut()
    }

    #[inline]
    unsafe fn advance_mut(&mut self, cnt: usize) {
        // SAFETY: the caller's promise (the `cnt` bytes are initialized) is passed on.
        unsafe { self.buf.advance_mut(cnt) }
    }

    #[inline]
    fn chunk_mut(&mut self) -> &mut UninitSlice {
        self.buf.chunk_mut()
    }

    #[inline(always)]
    fn put_slice(&mut self, src: &[u8]) {
        if src.len() > SHORT {
            self.buf.extend_from_slice(src);
            return;
        }
        append(self.buf, src.len(), |a| a.put(src));
    }
}

/// Reserves `room` bytes in `buf`, lets `write` write at most that many through an
/// [`Appender`], and appends what it wrote.
#[inline(always)]
pub(crate) fn append<R>(
    buf: &mut BytesMut,
    room: usize,
    write: impl FnOnce(&mut Appender<'_>) -> R,
) -> R {
    buf.reserve(room);
    let mut appender = Appender {
        spare: buf.spare_capacity_mut(),
        written: 0,
    };
    let result = write(&mut appender);
    let written = appender.written;
    // SAFETY: the appender wrote (initialized) the first `written` bytes of the spare
    // capacity, in order and without gaps: `put` is the only write and advances
    // `written` by exactly what it copied, within the spare slice.
    unsafe { buf.set_len(buf.len() + written) };
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_what_was_written_after_what_was_there() {
        let mut buf = BytesMut::from(&b"ab"[..]);
        let n = append(&mut buf, 8, |a| {
            a.put(b"cd");
            a.put_array([b'e', 0]);
            a.put(b"");
            7
        });
        assert_eq!(n, 7);
        assert_eq!(&buf[..], b"abcde\0");
        append(&mut buf, 0, |_| ());
        assert_eq!(&buf[..], b"abcde\0");
    }

    #[test]
    fn parameter_text_of_every_length_is_appended_whatever_the_room() {
        let src: Vec<u8> = (1..=70).collect();
        for n in 0..=src.len() {
            for capacity in [1, n + 1, 128] {
                let mut buf = BytesMut::with_capacity(capacity);
                buf.put_u8(b'x');
                let mut param = ParamBuf::new(&mut buf);
                param.put_slice(&src[..n]);
                param.put_slice(b"-1");
                assert_eq!(&buf[1..n + 1], &src[..n], "{n} bytes, capacity {capacity}");
                assert_eq!(&buf[n + 1..], b"-1");
            }
        }
    }

    #[test]
    fn short_and_long_copies_copy_every_byte() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=src.len() {
            let mut buf = BytesMut::from(&b"x"[..]);
            append(&mut buf, n, |a| a.put(&src[..n]));
            assert_eq!(&buf[1..], &src[..n], "{n} bytes");
        }
    }

    #[test]
    #[should_panic]
    fn writing_past_the_reserved_room_is_caught() {
        let mut buf = BytesMut::new();
        append(&mut buf, 2, |a| {
            a.put(&[1; 64]);
            a.put(&[1; 4096]);
        });
    }
}
