//! Time in integer microseconds, as pgbench keeps it (`pg_time_usec_t`).
//!
//! All intervals come from the monotonic clock; `Clock::epoch_us` converts a
//! monotonic instant to Unix time for log lines and `--progress-timestamp`. Public:
//! [`monotonic_us`] and [`strong_random_u64`] (the `--random-seed` sources).

/// Microseconds since the clock's origin (monotonic).
pub(crate) type Micros = i64;

/// A monotonic microsecond clock with a fixed mapping to Unix time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// [`monotonic_us`] at the origin.
    origin: i64,
    /// Unix time in µs at `origin`.
    epoch_at_origin: i64,
}

impl Clock {
    /// Starts a clock whose origin is now.
    pub(crate) fn new() -> Clock {
        let origin = monotonic_us() as i64;
        let epoch_at_origin = pgrush_stats::wall_clock::unix_time_us();
        Clock {
            origin,
            epoch_at_origin,
        }
    }

    /// Microseconds elapsed since the origin. Read straight from the monotonic clock
    /// (the one `Instant` uses) in integer µs: `Instant::elapsed` goes through checked
    /// `Duration` arithmetic and a 128-bit conversion, several times the cost of the
    /// vDSO read itself, and this runs a few times per transaction.
    #[inline]
    pub(crate) fn now(&self) -> Micros {
        monotonic_us() as i64 - self.origin
    }

    /// Unix time in µs of the monotonic instant `t`.
    #[inline]
    pub(crate) fn epoch_us(&self, t: Micros) -> i64 {
        self.epoch_at_origin + t
    }

    /// The monotonic instant of the Unix time `unix_us` (inverse of [`Clock::epoch_us`]).
    pub(crate) fn monotonic_of_epoch_us(&self, unix_us: i64) -> Micros {
        unix_us - self.epoch_at_origin
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

/// A lazily read "now": read the clock once per step when first needed, as
/// pgbench's `pg_time_now_lazy`, so the logged latency equals the counted one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LazyNow(Option<Micros>);

impl LazyNow {
    /// An unread instant.
    pub(crate) fn new() -> LazyNow {
        LazyNow(None)
    }

    /// The instant, reading `clock` the first time.
    #[inline]
    pub(crate) fn get(&mut self, clock: &Clock) -> Micros {
        match self.0 {
            Some(t) => t,
            None => {
                let t = clock.now();
                self.0 = Some(t);
                t
            }
        }
    }

    /// Re-reads the clock (after a slow operation such as connecting or a shell command).
    #[inline]
    pub(crate) fn refresh(&mut self, clock: &Clock) -> Micros {
        let t = clock.now();
        self.0 = Some(t);
        t
    }

    /// The instant if it was read, without reading the clock.
    #[inline]
    pub(crate) fn peek(&self) -> Option<Micros> {
        self.0
    }

    /// Forgets the cached instant.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.0 = None;
    }
}

/// The raw monotonic clock in µs (pgbench's `--random-seed=time` value).
#[inline]
pub fn monotonic_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the valid timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000)
        .wrapping_add(ts.tv_nsec as u64 / 1000)
}

/// A strong random u64 (`--random-seed=rand`), from `getrandom(2)`.
pub fn strong_random_u64() -> u64 {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n == 8 {
        u64::from_ne_bytes(buf)
    } else {
        monotonic_us() ^ (u64::from(std::process::id()) << 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazy_now_caches_until_refresh() {
        let clock = Clock::new();
        let mut now = LazyNow::new();
        let a = now.get(&clock);
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(now.get(&clock), a);
        let b = now.refresh(&clock);
        assert!(b >= a + 2000, "{a} {b}");
        now.reset();
        assert!(now.get(&clock) >= b);
        assert!(clock.epoch_us(0) > 1_600_000_000_000_000);
    }
}
