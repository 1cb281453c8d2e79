//! A system clock of any kind, opened by name: a `clock_gettime` clock or the
//! calibrated TSC.

use crate::clock::{ClockKind, ClockUnavailable, PosixClock};
use crate::tsc::TscClock;

/// A ready-to-read system clock of any kind.
#[derive(Debug, Clone, Copy)]
pub enum SystemClock {
    /// A `clock_gettime` clock.
    Posix(PosixClock),
    /// The calibrated TSC.
    Tsc(TscClock),
}

impl SystemClock {
    /// Opens `kind`, calibrating the TSC if that is the one asked for.
    pub fn open(kind: ClockKind) -> Result<SystemClock, ClockUnavailable> {
        match kind.clock_id() {
            Some(id) => PosixClock::new(id).map(SystemClock::Posix),
            None => TscClock::calibrate().map(SystemClock::Tsc),
        }
    }

    /// The clock's resolution in nanoseconds (`clock_getres`, or one TSC tick).
    pub fn resolution_ns(&self) -> Option<f64> {
        match self {
            SystemClock::Posix(c) => c.resolution_ns(),
            SystemClock::Tsc(c) => Some(c.ns_per_tick()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ClockSource;

    #[test]
    fn posix_clocks_advance() {
        for k in [
            ClockKind::Monotonic,
            ClockKind::MonotonicRaw,
            ClockKind::Realtime,
        ] {
            let mut c = SystemClock::open(k).unwrap();
            let SystemClock::Posix(ref mut p) = c else {
                panic!("not posix")
            };
            let a = p.now_ns();
            std::thread::sleep(std::time::Duration::from_millis(2));
            let b = p.now_ns();
            assert!(b - a >= 1_000_000, "{k}: {a} -> {b}");
            let res = c.resolution_ns().unwrap();
            assert!(res > 0.0 && res < 1e8, "{k}: {res}");
        }
    }
}
