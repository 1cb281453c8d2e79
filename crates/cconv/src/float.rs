//! Floating-point conversions: `strtod`, `atof` and pgbench's `strtodouble`,
//! through the C library's own `strtod` (decimal and hexadecimal numbers,
//! `inf`, `infinity`, `nan`, correctly rounded), in the C locale.

use crate::conversion::{Conversion, WholeNumber};

/// The thread's `errno`.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "emscripten"))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno location; always valid.
    unsafe { libc::__errno_location() }
}

/// The thread's `errno`.
#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno location; always valid.
    unsafe { libc::__error() }
}

/// C's `strtod(s, &end)`. A C string ends at its first NUL byte, so the
/// conversion stops there too. `out_of_range` is `errno == ERANGE`: overflow
/// (the value is ±`HUGE_VAL`) or underflow (subnormal or zero results).
pub fn strtod(s: &[u8]) -> Conversion<f64> {
    let len = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    let c_string: Vec<u8> = s[..len].iter().copied().chain([0]).collect();
    let start: *const libc::c_char = c_string.as_ptr().cast();
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    let errno = errno_location();
    // SAFETY: `c_string` is NUL-terminated and outlives the call,
    // `end` is a valid out pointer, and errno is thread-local.
    let (value, err, consumed) = unsafe {
        *errno = 0;
        let value = libc::strtod(start, &mut end);
        let err = *errno;
        (value, err, end.offset_from(start) as usize)
    };
    Conversion {
        value,
        consumed,
        out_of_range: err == libc::ERANGE,
    }
}

/// C's `atof`: the value of [`strtod`] (0.0 when no number starts the string).
pub fn atof(s: &[u8]) -> f64 {
    strtod(s).value
}

/// pgbench's `strtodouble`: `strtod` over the whole string. Out of range
/// (overflow or underflow) is reported before the syntax; a NUL byte (which
/// a C string cannot hold) is a syntax error.
pub fn strtodouble(s: &[u8]) -> WholeNumber<f64> {
    if s.contains(&0) {
        return WholeNumber::Syntax;
    }
    strtod(s).whole(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtod_prefixes() {
        assert_eq!(atof(b"10abc"), 10.0);
        assert_eq!(atof(b" -1.5e2x"), -150.0);
        assert_eq!(strtod(b"1e").consumed, 1);
        assert_eq!(atof(b".5"), 0.5);
        assert_eq!(strtod(b".").consumed, 0);
        assert_eq!(atof(b"abc"), 0.0);
        assert_eq!(atof(b"0x10"), 16.0);
        assert_eq!(atof(b"0x1p4"), 16.0);
        assert!(atof(b"Infinity").is_infinite());
        assert!(atof(b"nan").is_nan());
        assert_eq!(strtod(b"12\x003").consumed, 2);
    }

    #[test]
    fn strtod_range_errors() {
        let over = strtod(b"1e400");
        assert!(over.out_of_range && over.value.is_infinite());
        assert!(strtod(b"1e-310").out_of_range);
        assert!(!strtod(b"1e308").out_of_range);
    }

    #[test]
    fn strtodouble_whole_strings() {
        assert_eq!(strtodouble(b"1e-310"), WholeNumber::Range);
        assert_eq!(strtodouble(b"1e400"), WholeNumber::Range);
        assert_eq!(strtodouble(b"0x10"), WholeNumber::Ok(16.0));
        assert_eq!(strtodouble(b"1.5 "), WholeNumber::Syntax);
        assert_eq!(strtodouble(b""), WholeNumber::Syntax);
        assert_eq!(strtodouble(b"1\0"), WholeNumber::Syntax);
        assert!(matches!(strtodouble(b" inf"), WholeNumber::Ok(v) if v.is_infinite()));
    }
}
