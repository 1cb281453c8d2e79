//! `--start-at TIME`: RFC 3339 (`2026-11-24T01:00:00Z`) or Unix seconds (`1795482000`,
//! fractions allowed), read as an instant on the server's clock.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The furthest `--start-at` may lie ahead: anything later is a mistake.
pub const MAX_AHEAD_US: i64 = 24 * 3600 * 1_000_000;

/// A `--start-at` that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StartAtError {
    /// Neither RFC 3339 nor Unix seconds.
    #[error(
        "invalid start time \"{0}\" (expecting RFC 3339 like 2026-11-24T01:00:00Z, or Unix seconds)"
    )]
    Syntax(String),
    /// Already past on the server's clock.
    #[error("start time {given} is {late_ms:.0} ms in the past on the server's clock")]
    Past {
        /// As given.
        given: String,
        /// How late.
        late_ms: f64,
    },
    /// More than a day ahead.
    #[error("start time {given} is more than 24 hours ahead of the server's clock")]
    TooFar {
        /// As given.
        given: String,
    },
}

/// Parses a `--start-at` value into Unix µs.
pub fn parse(value: &str) -> Result<i64, StartAtError> {
    let syntax = || StartAtError::Syntax(value.to_string());
    let trimmed = value.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let seconds: f64 = trimmed.parse().map_err(|_| syntax())?;
        let us = seconds * 1e6;
        // Beyond year 2500 is no start time (and would not fit an i64 of µs much later).
        if !us.is_finite() || us > 16_725_225_600e6 {
            return Err(syntax());
        }
        return Ok(us.round() as i64);
    }
    let t = OffsetDateTime::parse(trimmed, &Rfc3339).map_err(|_| syntax())?;
    i64::try_from(t.unix_timestamp_nanos() / 1000).map_err(|_| syntax())
}

/// Checks that `start_us` lies ahead of the server's `now_us`, by at most a day.
pub fn check_ahead(given: &str, start_us: i64, now_us: i64) -> Result<(), StartAtError> {
    if start_us <= now_us {
        return Err(StartAtError::Past {
            given: given.to_string(),
            late_ms: (now_us - start_us) as f64 / 1000.0,
        });
    }
    if start_us - now_us > MAX_AHEAD_US {
        return Err(StartAtError::TooFar {
            given: given.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_and_unix_seconds() {
        assert_eq!(parse("2026-11-24T01:00:00Z"), Ok(1_795_482_000_000_000));
        assert_eq!(
            parse("2026-11-24T02:00:00+01:00"),
            Ok(1_795_482_000_000_000)
        );
        assert_eq!(parse("2026-11-24T01:00:00.25Z"), Ok(1_795_482_000_250_000));
        assert_eq!(parse("1795482000"), Ok(1_795_482_000_000_000));
        assert_eq!(parse("1795482000.5"), Ok(1_795_482_000_500_000));
        for bad in [
            "",
            "tomorrow",
            "2026-13-01T00:00:00Z",
            "1.2.3",
            "-5",
            "99999999999999999",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_start_must_lie_ahead_by_at_most_a_day() {
        assert!(check_ahead("x", 2_000_000, 1_000_000).is_ok());
        assert!(matches!(
            check_ahead("x", 1_000_000, 2_000_000),
            Err(StartAtError::Past { .. })
        ));
        assert!(matches!(
            check_ahead("x", MAX_AHEAD_US + 2, 1),
            Err(StartAtError::TooFar { .. })
        ));
    }
}
