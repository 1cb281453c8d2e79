//! Unix time in µs written as a UTC date and time: [`rfc3339_utc`] for documents,
//! [`file_stamp_utc`] for the default names of files and directories.

/// Formats Unix time in µs as RFC 3339 UTC with milliseconds (`2026-11-22T11:25:05.123Z`).
pub fn rfc3339_utc(unix_us: i64) -> String {
    let (y, m, d, sod) = civil_utc(unix_us);
    let ms = unix_us.rem_euclid(1_000_000) / 1000;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// Formats Unix time in µs as `YYYYMMDD-HHMMSS` (UTC), the stamp of a default file
/// name such as `pgrush-sweep-20261122-102446`.
pub fn file_stamp_utc(unix_us: i64) -> String {
    let (y, m, d, sod) = civil_utc(unix_us);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// (year, month, day, second of the day) of Unix time in µs, UTC.
fn civil_utc(unix_us: i64) -> (i64, u32, u32, i64) {
    let secs = unix_us.div_euclid(1_000_000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    (y, m, d, secs.rem_euclid(86_400))
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian calendar.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_utc(951_782_400_000_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            rfc3339_utc(1_795_343_086_006_123),
            "2026-11-22T10:24:46.006Z"
        );
        assert_eq!(rfc3339_utc(-1_000), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn file_stamps_are_the_date_and_time_digits() {
        assert_eq!(file_stamp_utc(0), "19700101-000000");
        assert_eq!(file_stamp_utc(1_795_343_086_006_123), "20261122-102446");
        assert_eq!(file_stamp_utc(-1_000), "19691231-235959");
    }
}
