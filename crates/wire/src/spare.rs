//! Appending a message's fixed parts to a `BytesMut` through its spare capacity:
//! one capacity check for several fields, where `BufMut::put_*` checks (and
//! updates the length) field by field. The encoders of the messages sent on every
//! transaction use it.

use std::mem::MaybeUninit;

use bytes::BytesMut;

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
/// of fixed size that copy up to 32 bytes.
#[inline(always)]
fn copy_short(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            dst[0].write(src[0]);
            dst[n / 2].write(src[n / 2]);
            dst[n - 1].write(src[n - 1]);
        }
        4..=8 => {
            dst[..4].write_copy_of_slice(&src[..4]);
            dst[n - 4..].write_copy_of_slice(&src[n - 4..]);
        }
        9..=16 => {
            dst[..8].write_copy_of_slice(&src[..8]);
            dst[n - 8..].write_copy_of_slice(&src[n - 8..]);
        }
        // A Bind's head with a short statement name (`P0_1`) is about 20 bytes.
        17..=32 => {
            dst[..16].write_copy_of_slice(&src[..16]);
            dst[n - 16..].write_copy_of_slice(&src[n - 16..]);
        }
        _ => {
            dst.write_copy_of_slice(src);
        }
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
