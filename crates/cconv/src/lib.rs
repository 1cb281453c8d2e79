//! C library number conversions with glibc's exact semantics.
//!
//! pgbench, libpq and pg_test_timing read numbers with the C library
//! (`strtol`, `strtoul`, `strtod`, `atoi`, `atof`) and with PostgreSQL's
//! wrappers around it (`strtoint`, pgbench's `strtoint64` and `strtodouble`).
//! Their quirks are visible to users: `atoi("12abc")` is 12, `atoi` of an
//! overflowing number is `(int) LONG_MAX`, `strtoul("-1")` is `ULONG_MAX`,
//! white space is skipped before a number but not after it. This crate has
//! one implementation of each, on byte strings, in the C locale, with the
//! 64-bit `long` of Linux x86-64 and aarch64.
//!
//! # Brief overview
//!
//! * Prefix conversions return a [`Conversion`]: the value, how many bytes
//!   were consumed (C's `endptr`; 0 when no number was found) and whether the
//!   value was out of range (C's `errno == ERANGE`): [`strtol`], [`strtoul`],
//!   [`strtoint`], [`strtod`].
//! * Conversions that ignore everything but the value: [`atoi`], [`atof`].
//! * Whole-string conversions as pgbench's expression and variable code uses
//!   them return a [`WholeNumber`]: [`strtoint64`], [`strtodouble`].
//! * [`is_space`] is C's `isspace`, which the conversions skip before a number.
//!
//! Callers whose rules differ (libpq's integer connection options reject
//! trailing garbage, pg_test_timing's `--duration` rejects even trailing
//! spaces) keep those rules in thin wrappers over these primitives, beside
//! the code that needs them.
//!
//! ```
//! use pgrush_cconv::{atoi, strtol, strtoul};
//!
//! assert_eq!(atoi(b" 42 tries"), 42);
//! let r = strtol(b"99999999999999999999x");
//! assert!(r.out_of_range && r.value == i64::MAX && r.consumed == 20);
//! assert_eq!(strtoul(b"-1").value, u64::MAX);
//! ```

#![deny(missing_docs)]

mod conversion;
mod float;
mod int;

pub use conversion::{Conversion, WholeNumber, is_space};
pub use float::{atof, strtod, strtodouble};
pub use int::{atoi, strtoint, strtoint64, strtol, strtoul};
