//! Number parsing with the C library semantics pgbench relies on: `strtol`,
//! `atoi`, `atof`/`strtod` (longest valid prefix) and `sscanf("%lu%c")`, plus
//! PostgreSQL's `option_parse_int` rules.

/// C's `isspace` in the "C" locale.
pub fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn skip_spaces(s: &[u8]) -> usize {
    s.iter().take_while(|&&b| is_c_space(b)).count()
}

/// Result of a base-10 `strtol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrtolResult {
    /// The value, saturated at the `long` bounds on overflow.
    pub value: i64,
    /// Bytes consumed (0 when no digits were found).
    pub end: usize,
    /// True when the value overflowed (`errno == ERANGE`).
    pub overflow: bool,
}

/// `strtol(s, &end, 10)` on a 64-bit platform.
pub fn strtol(s: &[u8]) -> StrtolResult {
    let mut i = skip_spaces(s);
    let mut negative = false;
    if let Some(&sign @ (b'+' | b'-')) = s.get(i) {
        negative = sign == b'-';
        i += 1;
    }
    let digits_start = i;
    let mut magnitude: u128 = 0;
    let mut overflow = false;
    while let Some(&d) = s.get(i) {
        if !d.is_ascii_digit() {
            break;
        }
        if !overflow {
            magnitude = magnitude * 10 + u128::from(d - b'0');
            if magnitude > u128::from(u64::MAX) {
                overflow = true;
            }
        }
        i += 1;
    }
    if i == digits_start {
        return StrtolResult {
            value: 0,
            end: 0,
            overflow: false,
        };
    }
    let limit: u128 = if negative {
        1u128 << 63
    } else {
        (1u128 << 63) - 1
    };
    if overflow || magnitude > limit {
        return StrtolResult {
            value: if negative { i64::MIN } else { i64::MAX },
            end: i,
            overflow: true,
        };
    }
    let value = if negative {
        (magnitude as i128).wrapping_neg() as i64
    } else {
        magnitude as i64
    };
    StrtolResult {
        value,
        end: i,
        overflow: false,
    }
}

/// C's `atoi` as glibc implements it: `(int) strtol(s, NULL, 10)`.
pub fn atoi(s: &[u8]) -> i32 {
    strtol(s).value as i32
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
    let rest = &s[r.end..];
    if rest.iter().any(|&b| !is_c_space(b)) {
        return Err(IntOptionError::Invalid);
    }
    let fits = !r.overflow && r.value >= i64::from(i32::MIN) && r.value <= i64::from(i32::MAX);
    // strtoint truncates to int after flagging ERANGE; the range check fails anyway.
    let value = r.value as i32;
    if !fits || value < min || value > max {
        return Err(IntOptionError::OutOfRange);
    }
    Ok(value)
}

/// `sscanf(s, "%lu%c", &v, &c) == 1`: optional whitespace, sign and digits,
/// nothing after them; negative values wrap, overflow saturates.
pub fn scan_u64_exact(s: &[u8]) -> Option<u64> {
    let mut i = skip_spaces(s);
    let mut negative = false;
    if let Some(&sign @ (b'+' | b'-')) = s.get(i) {
        negative = sign == b'-';
        i += 1;
    }
    let start = i;
    let mut value: u64 = 0;
    let mut overflow = false;
    while let Some(&d) = s.get(i) {
        if !d.is_ascii_digit() {
            break;
        }
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start || i != s.len() {
        return None;
    }
    if overflow {
        return Some(u64::MAX);
    }
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// C's `atof`: the longest prefix `strtod` accepts, 0.0 when there is none.
pub fn atof(s: &[u8]) -> f64 {
    let mut i = skip_spaces(s);
    let mut negative = false;
    if let Some(&sign @ (b'+' | b'-')) = s.get(i) {
        negative = sign == b'-';
        i += 1;
    }
    let body = &s[i..];
    let magnitude = special_value(body)
        .or_else(|| hex_float(body))
        .unwrap_or_else(|| decimal_float(body));
    if negative { -magnitude } else { magnitude }
}

fn starts_with_ignore_case(s: &[u8], word: &[u8]) -> bool {
    s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word)
}

/// `inf`, `infinity`, `nan`, `nan(chars)`.
fn special_value(s: &[u8]) -> Option<f64> {
    if starts_with_ignore_case(s, b"inf") {
        return Some(f64::INFINITY);
    }
    if starts_with_ignore_case(s, b"nan") {
        return Some(f64::NAN);
    }
    None
}

/// `0x1.8p3` style numbers; `None` when `s` is not a hex number (then `0x`
/// alone is read as the decimal `0`).
fn hex_float(s: &[u8]) -> Option<f64> {
    if !(starts_with_ignore_case(s, b"0x")) {
        return None;
    }
    let s = &s[2..];
    let mut mantissa: f64 = 0.0;
    let mut exponent: i64 = 0;
    let mut digits = 0;
    let mut i = 0;
    let mut seen_point = false;
    while let Some(&b) = s.get(i) {
        if b == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = (b as char).to_digit(16) {
            mantissa = mantissa * 16.0 + f64::from(d);
            if seen_point {
                exponent -= 4;
            }
            digits += 1;
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if let Some(&(b'p' | b'P')) = s.get(i) {
        let r = strtol(&s[i + 1..]);
        let exp_text = &s[i + 1..];
        let has_sign_or_digit = exp_text
            .first()
            .is_some_and(|b| b.is_ascii_digit() || *b == b'+' || *b == b'-');
        if r.end > 0 && has_sign_or_digit {
            exponent = exponent.saturating_add(r.value);
        }
    }
    let exponent = exponent.clamp(-2000, 2000) as i32;
    Some(mantissa * 2f64.powi(exponent))
}

/// Decimal digits with optional fraction and exponent; 0.0 when absent.
fn decimal_float(s: &[u8]) -> f64 {
    let mut i = 0;
    let int_digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        frac_digits = s[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if int_digits + frac_digits > 0 {
            i += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return 0.0;
    }
    if let Some(&(b'e' | b'E')) = s.get(i) {
        let mut j = i + 1;
        if let Some(&(b'+' | b'-')) = s.get(j) {
            j += 1;
        }
        let exp_digits = s[j.min(s.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if exp_digits > 0 {
            i = j + exp_digits;
        }
    }
    std::str::from_utf8(&s[..i])
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_basics() {
        assert_eq!(strtol(b"  -42x").value, -42);
        assert_eq!(strtol(b"  -42x").end, 5);
        assert_eq!(strtol(b"abc").end, 0);
        assert_eq!(strtol(b"+").end, 0);
        let big = strtol(b"99999999999999999999");
        assert!(big.overflow);
        assert_eq!(big.value, i64::MAX);
        assert_eq!(strtol(b"-9223372036854775808").value, i64::MIN);
        assert!(!strtol(b"-9223372036854775808").overflow);
    }

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
    fn scan_u64_rules() {
        assert_eq!(scan_u64_exact(b"5"), Some(5));
        assert_eq!(scan_u64_exact(b" +5"), Some(5));
        assert_eq!(scan_u64_exact(b"-1"), Some(u64::MAX));
        assert_eq!(scan_u64_exact(b"99999999999999999999999"), Some(u64::MAX));
        assert_eq!(scan_u64_exact(b"-99999999999999999999999"), Some(u64::MAX));
        assert_eq!(scan_u64_exact(b"5 "), None);
        assert_eq!(scan_u64_exact(b""), None);
        assert_eq!(scan_u64_exact(b" "), None);
        assert_eq!(scan_u64_exact(b"0x5"), None);
    }

    #[test]
    fn atof_prefixes() {
        assert_eq!(atof(b"10abc"), 10.0);
        assert_eq!(atof(b" -1.5e2x"), -150.0);
        assert_eq!(atof(b"1e"), 1.0);
        assert_eq!(atof(b".5"), 0.5);
        assert_eq!(atof(b"5."), 5.0);
        assert_eq!(atof(b"."), 0.0);
        assert_eq!(atof(b"abc"), 0.0);
        assert_eq!(atof(b"0x10"), 16.0);
        assert_eq!(atof(b"0x1p4"), 16.0);
        assert_eq!(atof(b"0x"), 0.0);
        assert_eq!(atof(b"0.0001"), 0.0001);
        assert!(atof(b"Infinity").is_infinite());
        assert!(atof(b"nan").is_nan());
        assert!(atof(b"1e400").is_infinite());
    }
}
