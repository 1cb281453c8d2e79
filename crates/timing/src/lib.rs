//! Clock-overhead measurement for `pgrush timing` and the `pg_test_timing`
//! personality.
//!
//! - `clock`: the [`ClockSource`] trait, the system clocks (`clock_gettime`
//!   with each clock id) and [`tsc`] (the CPU's invariant TSC, calibrated).
//! - [`measure`]: the back-to-back reading loop with pg_test_timing 18's
//!   microsecond histogram, a nanosecond histogram, percentiles and
//!   backwards-step accounting (counted, or pg_test_timing's stop-at-first).
//! - [`text`]: pg_test_timing's output byte for byte plus pgrush's extras;
//!   [`report`]: measuring a named clock and the `--json` document.
//! - [`explain`]: the EXPLAIN ANALYZE overhead experiment against a server.
//! - [`duration`]: pg_test_timing's `--duration` argument rules.

#![deny(missing_docs)]

mod clock;
pub mod duration;
pub mod explain;
pub mod measure;
pub mod report;
pub mod text;
pub mod tsc;

pub use clock::{ClockKind, ClockSource, ClockUnavailable, PosixClock, SystemClock};
pub use measure::{MeasureConfig, Measurement, measure};
pub use report::{ClockReport, JsonClock, JsonReport, measure_clock, measure_system};
