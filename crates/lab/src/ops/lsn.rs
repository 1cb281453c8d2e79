//! WAL positions: `X/Y` text, and the replay range a server logs during recovery.

use crate::ops::error::OpsError;

/// `0/54B21E8` as a byte position.
pub fn parse(text: &str) -> Result<u64, OpsError> {
    let bad = || OpsError::Unexpected(format!("not a WAL position: {text:?}"));
    let (hi, lo) = text.trim().split_once('/').ok_or_else(bad)?;
    let hi = u64::from_str_radix(hi, 16).map_err(|_| bad())?;
    let lo = u64::from_str_radix(lo, 16).map_err(|_| bad())?;
    if hi > u64::from(u32::MAX) || lo > u64::from(u32::MAX) {
        return Err(bad());
    }
    Ok(hi << 32 | lo)
}

/// The positions a server logs for one recovery: `redo starts at A` and `redo done at B`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedoRange {
    /// `A` as logged.
    pub start: String,
    /// `B` as logged.
    pub end: String,
}

impl RedoRange {
    /// Bytes replayed: `B - A`.
    pub fn bytes(&self) -> Result<u64, OpsError> {
        Ok(parse(&self.end)?.saturating_sub(parse(&self.start)?))
    }
}

/// The last recovery's redo range in `log` (a server log's new part).
pub fn redo_range(log: &str) -> Option<RedoRange> {
    let after = |line: &str, key: &str| {
        line.split_once(key).map(|(_, rest)| {
            rest.split_whitespace()
                .next()
                .unwrap_or("")
                .trim_end_matches(',')
                .to_string()
        })
    };
    let start = log
        .lines()
        .rev()
        .find_map(|l| after(l, "redo starts at "))?;
    let end = log.lines().rev().find_map(|l| after(l, "redo done at "))?;
    Some(RedoRange { start, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_parse_as_pg_lsn() {
        assert_eq!(parse("0/54B21E8").unwrap(), 0x54B21E8);
        assert_eq!(parse("1/0").unwrap(), 1 << 32);
        assert!(parse("054B21E8").is_err());
        assert!(parse("0/xyz").is_err());
        assert!(parse("100000000/0").is_err());
    }

    #[test]
    fn redo_range_from_a_server_log() {
        let log = "LOG:  database system was not properly shut down; automatic recovery in progress\n\
                   LOG:  redo starts at 0/54B21E8\n\
                   LOG:  redo done at 0/9DE2168 system usage: CPU: user: 0.15 s, system: 0.11 s, elapsed: 0.27 s\n";
        let range = redo_range(log).unwrap();
        assert_eq!(range.start, "0/54B21E8");
        assert_eq!(range.end, "0/9DE2168");
        assert_eq!(range.bytes().unwrap(), 0x9DE2168 - 0x54B21E8);
        assert_eq!(redo_range("LOG:  redo starts at 0/1\n"), None);
    }
}
