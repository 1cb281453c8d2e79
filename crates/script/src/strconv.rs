//! C-library compatible number parsing and formatting (`strtod`, `strtoll`, `atoi`,
//! `%.15g`, `%f`) with PostgreSQL's `snprintf` spelling of infinities and NaN.

use std::ffi::CString;

/// Outcome of a C `strtod` call on a whole string.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StrtodResult {
    /// The whole string was a number in range.
    Ok(f64),
    /// `errno` was set (overflow or underflow, including subnormal results).
    Range,
    /// Nothing or not everything was consumed.
    Syntax,
}

#[cfg(any(target_os = "linux", target_os = "android", target_os = "emscripten"))]
unsafe fn errno_ptr() -> *mut libc::c_int {
    // SAFETY: returns the thread-local errno location.
    unsafe { libc::__errno_location() }
}

#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
unsafe fn errno_ptr() -> *mut libc::c_int {
    // SAFETY: returns the thread-local errno location.
    unsafe { libc::__error() }
}

/// `strtod` over the whole string (C locale), as pgbench's `strtodouble` uses it.
pub fn strtod_whole(s: &[u8]) -> StrtodResult {
    let Ok(c) = CString::new(s) else {
        return StrtodResult::Syntax;
    };
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `c` is a valid NUL-terminated string, `end` a valid out pointer, and
    // errno is thread-local.
    let (v, err, consumed) = unsafe {
        *errno_ptr() = 0;
        let v = libc::strtod(c.as_ptr(), &mut end);
        let err = *errno_ptr();
        let consumed = end.offset_from(c.as_ptr()) as usize;
        (v, err, consumed)
    };
    if err != 0 {
        return StrtodResult::Range;
    }
    if consumed == 0 || consumed != s.len() {
        return StrtodResult::Syntax;
    }
    StrtodResult::Ok(v)
}

/// C `isspace` in the C locale.
pub fn c_isspace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Result of a `strtoll`/`strtol`-like prefix parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrtolResult {
    /// The value, saturated at the type bounds on overflow.
    pub value: i64,
    /// Bytes consumed (0 when no digits were found).
    pub consumed: usize,
    /// Whether the value overflowed (ERANGE).
    pub overflow: bool,
}

/// What C's `strtol`/`strtoul` skip before the digits: leading white space and one
/// sign. Returns the index of the first digit and whether the sign was `-`.
fn skip_space_and_sign(s: &[u8]) -> (usize, bool) {
    let mut i = 0;
    while i < s.len() && c_isspace(s[i]) {
        i += 1;
    }
    match s.get(i) {
        Some(b'-') => (i + 1, true),
        Some(b'+') => (i + 1, false),
        _ => (i, false),
    }
}

/// C `strtol(s, &end, 10)` with a 64-bit `long`.
pub fn strtol(s: &[u8]) -> StrtolResult {
    let (mut i, neg) = skip_space_and_sign(s);
    let start = i;
    let mut acc: u128 = 0;
    let mut overflow = false;
    while i < s.len() && s[i].is_ascii_digit() {
        if !overflow {
            acc = acc * 10 + u128::from(s[i] - b'0');
            let limit = if neg { 1u128 << 63 } else { (1u128 << 63) - 1 };
            if acc > limit {
                overflow = true;
            }
        }
        i += 1;
    }
    if i == start {
        return StrtolResult {
            value: 0,
            consumed: 0,
            overflow: false,
        };
    }
    let value = if overflow {
        if neg { i64::MIN } else { i64::MAX }
    } else if neg {
        (acc as i64).wrapping_neg()
    } else {
        acc as i64
    };
    StrtolResult {
        value,
        consumed: i,
        overflow,
    }
}

/// C `strtoul(s, &end, 10)` with a 64-bit `unsigned long` (negation wraps).
pub fn strtoul(s: &[u8]) -> (u64, usize) {
    let (mut i, neg) = skip_space_and_sign(s);
    let start = i;
    let mut acc: u64 = 0;
    let mut overflow = false;
    while i < s.len() && s[i].is_ascii_digit() {
        match acc
            .checked_mul(10)
            .and_then(|a| a.checked_add(u64::from(s[i] - b'0')))
        {
            Some(a) => acc = a,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return (0, 0);
    }
    if overflow {
        return (u64::MAX, i);
    }
    (if neg { acc.wrapping_neg() } else { acc }, i)
}

/// C `atoi`: `(int) strtol(s, NULL, 10)` (truncating to 32 bits as glibc does).
pub fn atoi(s: &[u8]) -> i32 {
    strtol(s).value as i32
}

/// pgbench's `strtoint64(str, errorOK, &result)` outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int64Parse {
    /// Parsed.
    Ok(i64),
    /// `value "%s" is out of range for type bigint`.
    Range,
    /// `invalid input syntax for type bigint: "%s"`.
    Syntax,
}

/// `strtoll` over the whole string.
pub fn strtoint64(s: &[u8]) -> Int64Parse {
    let r = strtol(s);
    if r.overflow {
        return Int64Parse::Range;
    }
    if r.consumed == 0 || r.consumed != s.len() {
        return Int64Parse::Syntax;
    }
    Int64Parse::Ok(r.value)
}

/// C cast of a double to int64 as x86-64 does it (`cvttsd2si`): truncation toward
/// zero, and `INT64_MIN` for NaN and out-of-range values.
pub fn c_double_to_i64(d: f64) -> i64 {
    if d.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// `%.15g` as PostgreSQL's `snprintf` prints it (`Infinity`, `-Infinity`, `NaN`).
pub fn format_g15(x: f64) -> String {
    let mut s = Vec::new();
    write_g15(&mut s, x);
    String::from_utf8_lossy(&s).into_owned()
}

/// Append `%.15g` of `x` to `out`.
pub fn write_g15(out: &mut Vec<u8>, x: f64) {
    use std::io::Write;
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x < 0.0 { b"-Infinity" } else { b"Infinity" });
        return;
    }
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    const P: i32 = 15;
    let sci = format!("{:.*e}", (P - 1) as usize, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..P).contains(&exp) {
        let mant = strip_zeros(mant);
        let _ = write!(
            out,
            "{}e{}{:02}",
            mant,
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        );
    } else {
        let prec = (P - 1 - exp).max(0) as usize;
        let fixed = format!("{:.*}", prec, x);
        out.extend_from_slice(strip_zeros(&fixed).as_bytes());
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `%f` as PostgreSQL's `snprintf` prints it.
pub fn format_f(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x < 0.0 {
            "-Infinity".to_string()
        } else {
            "Infinity".to_string()
        }
    } else {
        format!("{:.6}", x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g15_matches_c() {
        assert_eq!(format_g15(1.0 / 3.0), "0.333333333333333");
        assert_eq!(format_g15(1e300), "1e+300");
        assert_eq!(format_g15(1e-5), "1e-05");
        assert_eq!(format_g15(1e20), "1e+20");
        assert_eq!(format_g15(1234567.0 * 1e9), "1.234567e+15");
        assert_eq!(format_g15(100000000000000.5), "100000000000000");
        assert_eq!(format_g15(123_456_789.123_456_79), "123456789.123457");
        assert_eq!(format_g15(f64::from_bits(1)), "4.94065645841247e-324");
        assert_eq!(format_g15(3.0), "3");
        assert_eq!(format_g15(-0.0), "-0");
        assert_eq!(format_g15(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(format_g15(0.0001), "0.0001");
        assert_eq!(format_g15(999999999999999.9), "1e+15");
    }

    #[test]
    fn strtod_ranges() {
        assert_eq!(strtod_whole(b"1e-310"), StrtodResult::Range);
        assert_eq!(strtod_whole(b"1e400"), StrtodResult::Range);
        assert_eq!(strtod_whole(b"0x10"), StrtodResult::Ok(16.0));
        assert_eq!(strtod_whole(b"1.5 "), StrtodResult::Syntax);
        assert_eq!(strtod_whole(b""), StrtodResult::Syntax);
        assert!(matches!(strtod_whole(b" inf"), StrtodResult::Ok(v) if v.is_infinite()));
    }

    #[test]
    fn strtol_like_c() {
        assert_eq!(atoi(b"99999999999"), 1215752191);
        assert_eq!(atoi(b" -12abc"), -12);
        assert_eq!(strtoint64(b"9223372036854775808"), Int64Parse::Range);
        assert_eq!(
            strtoint64(b"-9223372036854775808"),
            Int64Parse::Ok(i64::MIN)
        );
        assert_eq!(strtoint64(b"  "), Int64Parse::Syntax);
        assert_eq!(strtoul(b"-1"), (u64::MAX, 2));
        assert_eq!(c_double_to_i64(f64::NAN), i64::MIN);
        assert_eq!(c_double_to_i64(-3.9), -3);
    }
}
