//! Clock sources: the [`ClockSource`] trait the measurement loop reads, the
//! clocks `--clock` names, the `clock_gettime` clocks and their resolution.
//! The TSC is in [`crate::tsc`]; [`crate::system`] opens either kind.

use std::fmt;

/// Something that can be read like a clock: nanoseconds since an arbitrary epoch.
///
/// Readings are signed so that a clock stepping backwards (or a TSC read on a
/// core whose counter is behind the calibration point) is representable.
pub trait ClockSource {
    /// One reading, in nanoseconds.
    fn now_ns(&mut self) -> i64;
}

/// The clocks `--clock` can select.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockKind {
    /// `CLOCK_MONOTONIC`, the clock PostgreSQL's instrumentation uses on Linux.
    Monotonic,
    /// `CLOCK_MONOTONIC_RAW` (not slewed by NTP).
    MonotonicRaw,
    /// `CLOCK_MONOTONIC_COARSE` (tick resolution, cheap).
    MonotonicCoarse,
    /// `CLOCK_REALTIME` (wall clock; may be stepped).
    Realtime,
    /// The CPU's time-stamp counter, calibrated against `CLOCK_MONOTONIC`.
    Tsc,
}

impl ClockKind {
    /// Every clock, in the order `--all-clocks` prints them.
    pub const ALL: [ClockKind; 5] = [
        ClockKind::Monotonic,
        ClockKind::MonotonicRaw,
        ClockKind::MonotonicCoarse,
        ClockKind::Realtime,
        ClockKind::Tsc,
    ];

    /// The name used by `--clock` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::Monotonic => "monotonic",
            ClockKind::MonotonicRaw => "monotonic_raw",
            ClockKind::MonotonicCoarse => "monotonic_coarse",
            ClockKind::Realtime => "realtime",
            ClockKind::Tsc => "tsc",
        }
    }

    /// Parses a `--clock` value (exact, lower case).
    pub fn parse(name: &str) -> Option<ClockKind> {
        ClockKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The POSIX clock id, for every kind but TSC.
    pub fn clock_id(self) -> Option<libc::clockid_t> {
        match self {
            ClockKind::Monotonic => Some(libc::CLOCK_MONOTONIC),
            ClockKind::MonotonicRaw => Some(libc::CLOCK_MONOTONIC_RAW),
            ClockKind::MonotonicCoarse => Some(libc::CLOCK_MONOTONIC_COARSE),
            ClockKind::Realtime => Some(libc::CLOCK_REALTIME),
            ClockKind::Tsc => None,
        }
    }
}

impl fmt::Display for ClockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a clock cannot be measured here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockUnavailable {
    /// The CPU does not advertise an invariant TSC (or is not x86_64).
    #[error("the CPU has no invariant TSC")]
    NoInvariantTsc,
    /// `clock_gettime` refused the clock id.
    #[error("clock_gettime does not support it")]
    Unsupported,
    /// The TSC did not advance during calibration.
    #[error("the TSC could not be calibrated")]
    Calibration,
}

/// A POSIX clock read with `clock_gettime`.
#[derive(Debug, Clone, Copy)]
pub struct PosixClock {
    id: libc::clockid_t,
}

impl PosixClock {
    /// Opens clock `id` after checking that the system supports it.
    pub fn new(id: libc::clockid_t) -> Result<PosixClock, ClockUnavailable> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime only writes the timespec we pass.
        if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
            return Err(ClockUnavailable::Unsupported);
        }
        Ok(PosixClock { id })
    }

    /// `clock_getres` in nanoseconds, when the system reports one.
    pub fn resolution_ns(&self) -> Option<f64> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_getres only writes the timespec we pass.
        if unsafe { libc::clock_getres(self.id, &mut ts) } != 0 {
            return None;
        }
        Some(ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64)
    }
}

impl ClockSource for PosixClock {
    #[inline]
    #[allow(clippy::unnecessary_cast)] // time_t and c_long are i32 on some targets
    fn now_ns(&mut self) -> i64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime only writes the timespec we pass; the id was
        // validated in `new`, so the call cannot fail.
        unsafe { libc::clock_gettime(self.id, &mut ts) };
        (ts.tv_sec as i64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(ts.tv_nsec as i64)
    }
}

/// Monotonic nanoseconds, for calibration and for timing queries.
pub fn monotonic_ns() -> i64 {
    PosixClock {
        id: libc::CLOCK_MONOTONIC,
    }
    .now_ns()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in ClockKind::ALL {
            assert_eq!(ClockKind::parse(k.name()), Some(k));
        }
        assert_eq!(ClockKind::parse("MONOTONIC"), None);
        assert_eq!(ClockKind::parse("tai"), None);
    }

    #[test]
    fn bad_clock_id_is_unavailable() {
        assert_eq!(
            PosixClock::new(12345).unwrap_err(),
            ClockUnavailable::Unsupported
        );
    }
}
