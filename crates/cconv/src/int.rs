//! Integer conversions: `strtol`, `strtoul`, `atoi`, PostgreSQL's `strtoint`
//! and pgbench's `strtoint64`.

use crate::conversion::{Conversion, WholeNumber, is_space};

/// What `strtol`/`strtoul` skip before the digits: white space and one sign.
/// Returns the index of the first digit and whether the sign was `-`.
fn skip_space_and_sign(s: &[u8]) -> (usize, bool) {
    let spaces = s.iter().take_while(|&&b| is_space(b)).count();
    match s.get(spaces) {
        Some(b'-') => (spaces + 1, true),
        Some(b'+') => (spaces + 1, false),
        _ => (spaces, false),
    }
}

/// The decimal digits from `start`: their magnitude (saturated at
/// `u64::MAX`, flagged) and the index after the last one.
fn digits(s: &[u8], start: usize) -> (u64, bool, usize) {
    let count = s[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut magnitude: u64 = 0;
    let mut overflow = false;
    for &b in &s[start..start + count] {
        match magnitude
            .checked_mul(10)
            .and_then(|m| m.checked_add(u64::from(b - b'0')))
        {
            Some(m) => magnitude = m,
            None => overflow = true,
        }
    }
    (magnitude, overflow, start + count)
}

/// C's `strtol(s, &end, 10)` with a 64-bit `long`: white space, a sign, the
/// digits; `LONG_MIN`/`LONG_MAX` and `out_of_range` on overflow.
pub fn strtol(s: &[u8]) -> Conversion<i64> {
    let (start, negative) = skip_space_and_sign(s);
    let (magnitude, overflow, end) = digits(s, start);
    if end == start {
        return Conversion {
            value: 0,
            consumed: 0,
            out_of_range: false,
        };
    }
    let limit = if negative {
        i64::MIN.unsigned_abs()
    } else {
        i64::MAX.unsigned_abs()
    };
    let out_of_range = overflow || magnitude > limit;
    let value = match (out_of_range, negative) {
        (true, true) => i64::MIN,
        (true, false) => i64::MAX,
        // In range: the magnitude fits, and -2^63 wraps to itself.
        (false, true) => (magnitude as i64).wrapping_neg(),
        (false, false) => magnitude as i64,
    };
    Conversion {
        value,
        consumed: end,
        out_of_range,
    }
}

/// C's `strtoul(s, &end, 10)` with a 64-bit `unsigned long`: a `-` sign
/// negates modulo 2^64 (`"-1"` is `ULONG_MAX`, not an error); `ULONG_MAX` and
/// `out_of_range` when the digits overflow.
pub fn strtoul(s: &[u8]) -> Conversion<u64> {
    let (start, negative) = skip_space_and_sign(s);
    let (magnitude, overflow, end) = digits(s, start);
    if end == start {
        return Conversion {
            value: 0,
            consumed: 0,
            out_of_range: false,
        };
    }
    let value = match (overflow, negative) {
        (true, _) => u64::MAX,
        (false, true) => magnitude.wrapping_neg(),
        (false, false) => magnitude,
    };
    Conversion {
        value,
        consumed: end,
        out_of_range: overflow,
    }
}

/// C's `atoi` as glibc implements it: `(int) strtol(s, NULL, 10)`, so an
/// overflow gives the low 32 bits of `LONG_MAX`/`LONG_MIN` (-1 and 0) and
/// anything after the number is ignored.
pub fn atoi(s: &[u8]) -> i32 {
    strtol(s).value as i32
}

/// PostgreSQL's `strtoint` (src/common/string.c): `strtol` narrowed to a C
/// `int`; a value that does not fit is `out_of_range` (its low 32 bits are
/// returned, as the C cast does).
pub fn strtoint(s: &[u8]) -> Conversion<i32> {
    let wide = strtol(s);
    let value = wide.value as i32;
    Conversion {
        value,
        consumed: wide.consumed,
        out_of_range: wide.out_of_range || i64::from(value) != wide.value,
    }
}

/// pgbench's `strtoint64`: `strtoi64` over the whole string. Overflow is
/// reported before the syntax (so `"99999999999999999999x"` is out of range).
pub fn strtoint64(s: &[u8]) -> WholeNumber<i64> {
    strtol(s).whole(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_skips_space_and_sign_only_before_digits() {
        let r = strtol(b" \t-12abc");
        assert_eq!((r.value, r.consumed, r.out_of_range), (-12, 5, false));
        assert_eq!(strtol(b"  ").consumed, 0);
        assert_eq!(strtol(b"-").consumed, 0);
        assert_eq!(strtol(b"+ 1").consumed, 0);
        assert_eq!(strtol(b"0x10").value, 0);
        assert_eq!(strtol(b"0x10").consumed, 1);
        assert_eq!(strtol(b"").consumed, 0);
    }

    #[test]
    fn strtol_saturates_on_overflow() {
        let max = strtol(b"9223372036854775807");
        assert_eq!((max.value, max.out_of_range), (i64::MAX, false));
        let min = strtol(b"-9223372036854775808");
        assert_eq!((min.value, min.out_of_range), (i64::MIN, false));
        let over = strtol(b"9223372036854775808");
        assert_eq!((over.value, over.out_of_range), (i64::MAX, true));
        let under = strtol(b"-99999999999999999999999 ");
        assert_eq!(
            (under.value, under.consumed, under.out_of_range),
            (i64::MIN, 24, true)
        );
    }

    #[test]
    fn strtoul_wraps_negative_values() {
        assert_eq!(strtoul(b"-1").value, u64::MAX);
        assert_eq!(strtoul(b"-18446744073709551615").value, 1);
        let max = strtoul(b"18446744073709551615");
        assert_eq!((max.value, max.out_of_range), (u64::MAX, false));
        let over = strtoul(b"-18446744073709551616");
        assert_eq!((over.value, over.out_of_range), (u64::MAX, true));
        assert_eq!(strtoul(b"x").consumed, 0);
    }

    #[test]
    fn atoi_truncates_like_glibc() {
        assert_eq!(atoi(b"abc"), 0);
        assert_eq!(atoi(b"4294967296"), 0);
        assert_eq!(atoi(b"99999999999"), 1_215_752_191);
        assert_eq!(atoi(b"99999999999999999999"), -1);
        assert_eq!(atoi(b"-99999999999999999999"), 0);
        assert_eq!(atoi(b" 7 tries"), 7);
    }

    #[test]
    fn strtoint_flags_values_beyond_int() {
        let fits = strtoint(b"-2147483648");
        assert_eq!((fits.value, fits.out_of_range), (i32::MIN, false));
        let wide = strtoint(b"2147483648");
        assert_eq!((wide.value, wide.out_of_range), (i32::MIN, true));
        assert!(strtoint(b"99999999999999999999").out_of_range);
    }

    #[test]
    fn strtoint64_checks_range_before_syntax() {
        assert_eq!(strtoint64(b"9223372036854775808"), WholeNumber::Range);
        assert_eq!(strtoint64(b"9223372036854775808x"), WholeNumber::Range);
        assert_eq!(
            strtoint64(b"-9223372036854775808"),
            WholeNumber::Ok(i64::MIN)
        );
        assert_eq!(strtoint64(b" +5"), WholeNumber::Ok(5));
        assert_eq!(strtoint64(b"5 "), WholeNumber::Syntax);
        assert_eq!(strtoint64(b"  "), WholeNumber::Syntax);
        assert_eq!(strtoint64(b""), WholeNumber::Syntax);
    }

    #[test]
    fn conversion_helpers() {
        let input = b" 12 \t";
        let r = strtol(input);
        assert!(r.rest_is_space(input));
        assert!(!r.is_whole(input));
        assert!(strtol(b"12").is_whole(b"12"));
        assert!(!strtol(b"12x").rest_is_space(b"12x"));
    }
}
