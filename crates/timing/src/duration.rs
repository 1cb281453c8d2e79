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

/// pg_test_timing's reading of `--duration`: `strtoul(s, &end, 10)`, then it
/// insists on `end != s && *end == '\0' && errno == 0`. Unlike PostgreSQL's
/// `option_parse_int` it allows no trailing white space, and unlike `atoi` it
/// rejects trailing characters and overflow, so this is a wrapper of its own
/// over the shared `strtoul`. `None` when the value is rejected.
pub fn strtoul_exact(s: &[u8]) -> Option<u64> {
    let r = pgrush_cconv::strtoul(s);
    (r.is_whole(s) && !r.out_of_range).then_some(r.value)
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
