//! What the conversions return ([`Conversion`], [`WholeNumber`]) and the white space
//! they skip ([`is_space`]).

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

/// The outcome of pgbench's whole-string conversions ([`strtoint64`](crate::strtoint64),
/// [`strtodouble`](crate::strtodouble)).
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
