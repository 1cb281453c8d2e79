//! Clock-overhead measurement for `pgrush timing` and the `pg_test_timing`
//! personality.
//!
//! - `clock`: the [`ClockSource`] trait, the clock names and the
//!   `clock_gettime` clocks; [`tsc`]: the CPU's invariant TSC, calibrated;
//!   `system`: [`SystemClock`], either kind opened by name.
//! - [`measure`]: the back-to-back reading loop with pg_test_timing 18's
//!   microsecond histogram, a nanosecond histogram, percentiles and
//!   backwards-step accounting (counted, or pg_test_timing's stop-at-first).
//! - [`text`]: pg_test_timing's output byte for byte plus pgrush's extras;
//!   [`report`]: measuring a named clock and the `--json` document.
//! - [`explain`]: the EXPLAIN ANALYZE overhead experiment against a server.
//! - [`check`]: the whole check as `pgrush timing` runs it (every clock
//!   opened and measured, the experiment's connection, what the results say),
//!   without option parsing and printing.
//! - [`duration`]: pg_test_timing's `--duration` argument rules.

#![deny(missing_docs)]

pub mod check;
mod clock;
pub mod duration;
pub mod explain;
pub mod measure;
pub mod report;
mod system;
pub mod text;
pub mod tsc;

pub use check::{CheckResults, ClockSet};
pub use clock::{ClockKind, ClockSource, ClockUnavailable, PosixClock};
pub use measure::{MeasureConfig, Measurement, measure};
pub use report::{ClockReport, JsonClock, JsonReport, measure_clock, measure_system};
pub use system::SystemClock;
