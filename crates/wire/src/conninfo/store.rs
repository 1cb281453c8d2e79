//! Storing one parsed value as libpq's `conninfo_storeval` does (keyword check,
//! `requiressl`, percent-decoding with `conninfo_uri_decode`), shared by the
//! keyword/value parser and the URI parser.

use super::error::ConninfoError;
use super::keywords::{OptionSet, index_of, is_secret_name};
use std::ops::Range;

/// Converts bytes taken from the input (possibly percent-decoded) to a
/// `String`, keeping bytes that are not UTF-8 ([`crate::lossless`]).
pub(crate) fn bytes_to_string(b: &[u8]) -> String {
    crate::lossless::from_bytes(b)
}

/// How unknown keywords are treated.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strictness {
    /// As libpq: an unknown keyword or URI parameter is an error.
    Libpq,
    /// Unknown keywords, words without `=` and unknown URI parameters are
    /// skipped (to find every secret of a string libpq would refuse for another
    /// reason).
    SkipUnknown,
}

/// What happens when a keyword is unknown.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// Fail with `invalid connection option "..."`.
    Error,
    /// Report `Ok(false)` so the caller can word its own error.
    Ignore,
}

/// Stores one value as libpq's `conninfo_storeval` does, including the
/// historical `requiressl` translation. Returns `Ok(false)` for an unknown
/// keyword under [`Missing::Ignore`]. `source` is where the value was
/// written in the parsed text, noted for a secret keyword.
pub(crate) fn store_value(
    set: &mut OptionSet,
    keyword: &str,
    value: &[u8],
    source: Range<usize>,
    missing: Missing,
    uri_decode: bool,
) -> Result<bool, ConninfoError> {
    let (keyword, value): (&str, &[u8]) = if keyword == "requiressl" {
        let v: &[u8] = if value.first() == Some(&b'1') {
            b"require"
        } else {
            b"prefer"
        };
        ("sslmode", v)
    } else {
        (keyword, value)
    };
    if is_secret_name(keyword) {
        set.note_secret(source);
    }
    let Some(index) = index_of(keyword) else {
        return match missing {
            Missing::Error => Err(ConninfoError::InvalidOption(keyword.to_string())),
            Missing::Ignore => Ok(false),
        };
    };
    let stored = if uri_decode {
        percent_decode(value)?
    } else {
        value.to_vec()
    };
    set.set_index(index, bytes_to_string(&stored));
    Ok(true)
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

/// libpq's `conninfo_uri_decode`: `%xx` escapes, leading and trailing
/// spaces dropped, inner spaces and `%00` rejected.
pub(crate) fn percent_decode(raw: &[u8]) -> Result<Vec<u8>, ConninfoError> {
    let n = raw.len();
    let mut out = Vec::with_capacity(n);
    let mut q = 0;
    while q < n && raw[q] == b' ' {
        q += 1;
    }
    while q < n && raw[q] != b' ' {
        if raw[q] != b'%' {
            out.push(raw[q]);
            q += 1;
            continue;
        }
        let hi = raw.get(q + 1).copied().and_then(hex_value);
        let lo = raw.get(q + 2).copied().and_then(hex_value);
        let (Some(hi), Some(lo)) = (hi, lo) else {
            return Err(ConninfoError::InvalidPercentToken(bytes_to_string(raw)));
        };
        let c = (hi << 4) | lo;
        if c == 0 {
            return Err(ConninfoError::ForbiddenNul(bytes_to_string(raw)));
        }
        out.push(c);
        q += 3;
    }
    while q < n && raw[q] == b' ' {
        q += 1;
    }
    if q < n {
        return Err(ConninfoError::UnexpectedSpaces(bytes_to_string(raw)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_trims_outer_spaces() {
        assert_eq!(percent_decode(b"  a%41  ").ok(), Some(b"aA".to_vec()));
        assert!(percent_decode(b"%4").is_err());
        assert!(percent_decode(b"%").is_err());
    }
}
