//! pg_test_timing 18's rules for `-d`/`--duration`: the value is read as C's
//! `strtoul` (base 10) reads it — leading white space, an optional sign, a
//! negative value wrapping modulo 2^64 — and must be all digits after that,
//! must not overflow, must fit in 32 bits, and must not be 0.

/// A rejected `--duration` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// `invalid argument for option --duration` (not a number, trailing
    /// characters, overflow, more than 32 bits).
    #[error("invalid argument for option --duration")]
    Invalid,
    /// `--duration must be in range 1..4294967295` (the value 0).
    #[error("--duration must be in range 1..4294967295")]
    OutOfRange,
}

/// `strtoul(s, &end, 10)` with `*end == '\0'` required: `None` when no
/// digits were read, characters follow the number, or it overflowed.
pub fn strtoul_exact(s: &[u8]) -> Option<u64> {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits_start = i;
    let mut value: u64 = 0;
    let mut overflow = false;
    while i < s.len() && s[i].is_ascii_digit() {
        let d = u64::from(s[i] - b'0');
        match value.checked_mul(10).and_then(|v| v.checked_add(d)) {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == digits_start || i != s.len() || overflow {
        return None;
    }
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// Parses a `--duration` value in seconds.
pub fn parse_duration(arg: &[u8]) -> Result<u32, DurationError> {
    let value = strtoul_exact(arg).ok_or(DurationError::Invalid)?;
    let value = u32::try_from(value).map_err(|_| DurationError::Invalid)?;
    if value == 0 {
        return Err(DurationError::OutOfRange);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use DurationError::*;

    #[test]
    fn matrix_observed_from_pg_test_timing_18() {
        let cases: &[(&str, Result<u32, DurationError>)] = &[
            ("1", Ok(1)),
            (" 1", Ok(1)),
            ("\t\n+2", Ok(2)),
            ("4294967295", Ok(4_294_967_295)),
            ("-18446744073709551615", Ok(1)),
            ("-18446744069414584321", Ok(4_294_967_295)),
            ("0", Err(OutOfRange)),
            ("+0", Err(OutOfRange)),
            ("-0", Err(OutOfRange)),
            ("  -0", Err(OutOfRange)),
            ("-1", Err(Invalid)),
            ("abc", Err(Invalid)),
            ("5x", Err(Invalid)),
            ("1 ", Err(Invalid)),
            ("", Err(Invalid)),
            ("+", Err(Invalid)),
            ("0x1", Err(Invalid)),
            ("4294967296", Err(Invalid)),
            ("99999999999", Err(Invalid)),
            ("18446744073709551616", Err(Invalid)),
            ("-18446744069414584320", Err(Invalid)),
        ];
        for (arg, want) in cases {
            assert_eq!(parse_duration(arg.as_bytes()), *want, "{arg:?}");
        }
    }
}
