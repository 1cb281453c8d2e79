//! A provided-buffer ring (`io_uring_register_buf_ring`): the buffers multishot
//! receives pick from. The kernel takes a buffer per completion; the loop copies the
//! bytes out and hands the buffer back by advancing the ring's tail (no system call).

use std::alloc::{self, Layout};
use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::IoUring;
use io_uring::types::BufRingEntry;

/// The ring's buffers and its entries, registered with one io_uring.
pub struct BufRing {
    entries: *mut BufRingEntry,
    layout: Layout,
    buffers: Vec<u8>,
    buffer_size: usize,
    count: u16,
    tail: u16,
}

/// The page size the ring's entries must be aligned to.
const PAGE: usize = 4096;

impl BufRing {
    /// Allocates `count` (a power of two) buffers of `buffer_size` bytes and registers
    /// them with `ring` as buffer group `group`.
    pub fn register(
        ring: &IoUring,
        count: u16,
        buffer_size: usize,
        group: u16,
    ) -> io::Result<BufRing> {
        if !count.is_power_of_two() {
            return Err(io::Error::other("buffer count is not a power of two"));
        }
        let size = usize::from(count) * std::mem::size_of::<BufRingEntry>();
        let layout = Layout::from_size_align(size.max(PAGE), PAGE).map_err(io::Error::other)?;
        // SAFETY: the layout has a non-zero size.
        let entries = unsafe { alloc::alloc_zeroed(layout) }.cast::<BufRingEntry>();
        if entries.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        let mut this = BufRing {
            entries,
            layout,
            buffers: vec![0; usize::from(count) * buffer_size],
            buffer_size,
            count,
            tail: 0,
        };
        for bid in 0..count {
            this.recycle(bid);
        }
        // SAFETY: the entries stay allocated until `self` is dropped, which the owner
        // does after the ring.
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(entries as u64, count, group, 0)
        }?;
        Ok(this)
    }

    /// The first `len` bytes of buffer `bid`, as the kernel filled them.
    pub fn filled(&self, bid: u16, len: usize) -> Option<&[u8]> {
        let start = usize::from(bid) * self.buffer_size;
        self.buffers.get(start..start + len.min(self.buffer_size))
    }

    /// Hands buffer `bid` back to the kernel.
    pub fn recycle(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (self.count - 1));
        let addr = self.buffers.as_mut_ptr() as u64 + (usize::from(bid) * self.buffer_size) as u64;
        // SAFETY: `slot` < `count`, the number of entries allocated; the tail is the
        // reserved field of the first entry, published with release ordering after the
        // entry is written, as the kernel's interface asks.
        unsafe {
            let entry = &mut *self.entries.add(slot);
            entry.set_addr(addr);
            entry.set_len(self.buffer_size as u32);
            entry.set_bid(bid);
            self.tail = self.tail.wrapping_add(1);
            let tail = BufRingEntry::tail(self.entries).cast_mut();
            (*tail.cast::<AtomicU16>()).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `register` with this layout.
        unsafe { alloc::dealloc(self.entries.cast(), self.layout) };
    }
}
