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

mod float;
mod int;

pub use float::{atof, strtod, strtodouble};
pub use int::{atoi, strtoint, strtoint64, strtol, strtoul};

/// C's `isspace` in the C locale: space, `\t`, `\n`, `\v`, `\f`, `\r`.
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// What a C prefix conversion (`strtol(s, &end, 10)` and friends) returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conversion<T> {
    /// The value; on overflow the C function's saturated value (`LONG_MAX`,
    /// `ULONG_MAX`, `HUGE_VAL`, ...).
    pub value: T,
    /// Bytes consumed, white space and sign included (`end - s`); 0 when no
    /// number was found, even if white space or a sign was skipped.
    pub consumed: usize,
    /// The C function set `errno` to `ERANGE` (overflow, or underflow for `strtod`).
    pub out_of_range: bool,
}

impl<T> Conversion<T> {
    /// True when a number was found and it is all of `input` (C's
    /// `end != s && *end == '\0'`).
    pub fn is_whole(&self, input: &[u8]) -> bool {
        self.consumed > 0 && self.consumed == input.len()
    }

    /// True when only white space follows the number in `input` (also true
    /// when no number was found and `input` is all white space).
    pub fn rest_is_space(&self, input: &[u8]) -> bool {
        input[self.consumed..].iter().all(|&b| is_space(b))
    }

    /// pgbench's whole-string verdict on this conversion of `input`: out of range
    /// first, then the syntax (a number that is all of `input`).
    pub fn whole(self, input: &[u8]) -> WholeNumber<T> {
        if self.out_of_range {
            WholeNumber::Range
        } else if self.is_whole(input) {
            WholeNumber::Ok(self.value)
        } else {
            WholeNumber::Syntax
        }
    }
}

/// The outcome of pgbench's whole-string conversions ([`strtoint64`],
/// [`strtodouble`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WholeNumber<T> {
    /// The whole string is a number in range.
    Ok(T),
    /// Out of range (pgbench: `value "%s" is out of range for type bigint`);
    /// checked before the syntax.
    Range,
    /// Empty, not a number, or followed by something (pgbench: `invalid input
    /// syntax for type bigint: "%s"`).
    Syntax,
}
