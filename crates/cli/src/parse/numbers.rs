//! Number parsing with the C library semantics pgbench relies on: PostgreSQL's
//! `option_parse_int`, `atoi` and `atof`.

use pgrush_script::strconv::{c_isspace, strtol};
use std::ffi::CString;

/// C's `atoi` as glibc implements it: `(int) strtol(s, NULL, 10)`.
pub fn atoi(s: &[u8]) -> i32 {
    strtol(s).value as i32
}

/// C's `atof` (`strtod` of the longest valid prefix, 0.0 when there is none):
/// decimal and hexadecimal numbers, `inf`, `nan`, in the C locale.
pub fn atof(s: &[u8]) -> f64 {
    // Command-line arguments cannot contain NUL bytes; stop at one if present.
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    let Ok(c) = CString::new(&s[..end]) else {
        return 0.0;
    };
    // SAFETY: `c` is a valid NUL-terminated string; strtod only reads it and
    // accepts a null end pointer.
    unsafe { libc::strtod(c.as_ptr(), std::ptr::null_mut()) }
}

/// Why [`option_parse_int`] rejected a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOptionError {
    /// Something other than trailing whitespace follows the number.
    Invalid,
    /// The number is outside the allowed range (or empty).
    OutOfRange,
}

/// PostgreSQL's `option_parse_int`: `strtoint`, trailing whitespace allowed,
/// then a range check.
pub fn option_parse_int(s: &[u8], min: i32, max: i32) -> Result<i32, IntOptionError> {
    let r = strtol(s);
    if s[r.consumed..].iter().any(|&b| !c_isspace(b)) {
        return Err(IntOptionError::Invalid);
    }
    match i32::try_from(r.value) {
        Ok(v) if !r.overflow && v >= min && v <= max => Ok(v),
        _ => Err(IntOptionError::OutOfRange),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_truncates_like_glibc() {
        assert_eq!(atoi(b"abc"), 0);
        assert_eq!(atoi(b"4294967296"), 0);
        assert_eq!(atoi(b"99999999999999999999"), -1);
        assert_eq!(atoi(b" 7 tries"), 7);
    }

    #[test]
    fn option_int_rules() {
        assert_eq!(option_parse_int(b" 2 ", 1, i32::MAX), Ok(2));
        assert_eq!(option_parse_int(b"+3", 1, i32::MAX), Ok(3));
        assert_eq!(
            option_parse_int(b"", 1, i32::MAX),
            Err(IntOptionError::OutOfRange)
        );
        assert_eq!(
            option_parse_int(b"  ", 1, i32::MAX),
            Err(IntOptionError::OutOfRange)
        );
        assert_eq!(
            option_parse_int(b"0x1", 1, i32::MAX),
            Err(IntOptionError::Invalid)
        );
        assert_eq!(
            option_parse_int(b"5x", 1, i32::MAX),
            Err(IntOptionError::Invalid)
        );
        assert_eq!(
            option_parse_int(b"99999999999", 1, i32::MAX),
            Err(IntOptionError::OutOfRange)
        );
        assert_eq!(
            option_parse_int(b"-1", 0, i32::MAX),
            Err(IntOptionError::OutOfRange)
        );
        assert_eq!(option_parse_int(b"0", 0, i32::MAX), Ok(0));
    }

    #[test]
    fn atof_prefixes() {
        assert_eq!(atof(b"10abc"), 10.0);
        assert_eq!(atof(b" -1.5e2x"), -150.0);
        assert_eq!(atof(b"1e"), 1.0);
        assert_eq!(atof(b".5"), 0.5);
        assert_eq!(atof(b"."), 0.0);
        assert_eq!(atof(b"abc"), 0.0);
        assert_eq!(atof(b"0x10"), 16.0);
        assert_eq!(atof(b"0x1p4"), 16.0);
        assert_eq!(atof(b"0.0001"), 0.0001);
        assert!(atof(b"Infinity").is_infinite());
        assert!(atof(b"nan").is_nan());
        assert!(atof(b"1e400").is_infinite());
    }
}
