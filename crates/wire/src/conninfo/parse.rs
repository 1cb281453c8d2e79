//! `PQconninfoParse`: keyword/value strings and the dispatch to the URI parser.

use super::error::ConninfoError;
use super::keywords::{OptionSet, is_secret_name};
use super::store::{Missing, Strictness, bytes_to_string, store_value};
use super::uri::{self, uri_prefix_length};
use pgrush_cconv::is_space;

/// Whether libpq treats `s` as a connection string when it is passed as a
/// database name with `expand_dbname`: a URI prefix or any `=`.
pub fn is_connection_string(s: &str) -> bool {
    uri_prefix_length(s) != 0 || s.contains('=')
}

/// Parses a conninfo string (keyword/value or URI) exactly as libpq's
/// `PQconninfoParse` does, returning the keywords that were set, in libpq's
/// keyword order (later duplicates replace earlier ones).
pub fn parse_conninfo(conninfo: &str) -> Result<Vec<(String, String)>, ConninfoError> {
    parse_to_set(conninfo).map(|s| s.to_pairs())
}

/// Parses a conninfo string into an [`OptionSet`].
pub(crate) fn parse_to_set(conninfo: &str) -> Result<OptionSet, ConninfoError> {
    let mut set = OptionSet::new();
    parse_into(conninfo, &mut set, Strictness::Libpq)?;
    Ok(set)
}

/// Parses `conninfo` into `set`, which also notes where secret values were
/// read, even when the parse fails later.
pub(crate) fn parse_into(
    conninfo: &str,
    set: &mut OptionSet,
    strictness: Strictness,
) -> Result<(), ConninfoError> {
    // A C string ends at the first NUL byte.
    let conninfo = conninfo.split('\0').next().unwrap_or("");
    if uri_prefix_length(conninfo) != 0 {
        uri::parse_uri(conninfo, set, strictness)
    } else {
        parse_keyword_value(conninfo.as_bytes(), set, strictness)
    }
}

/// The keyword/value syntax: `kw = value kw='quoted \' value'`.
fn parse_keyword_value(
    b: &[u8],
    set: &mut OptionSet,
    strictness: Strictness,
) -> Result<(), ConninfoError> {
    let n = b.len();
    let mut i = 0;
    while i < n {
        if is_space(b[i]) {
            i += 1;
            continue;
        }
        // The keyword runs to '=' or whitespace.
        let name_start = i;
        while i < n && b[i] != b'=' && !is_space(b[i]) {
            i += 1;
        }
        let name = bytes_to_string(&b[name_start..i]);
        while i < n && is_space(b[i]) {
            i += 1;
        }
        if i >= n || b[i] != b'=' {
            if strictness == Strictness::SkipUnknown {
                continue; // a word without '=': the next one may be a keyword
            }
            return Err(ConninfoError::MissingEquals(name));
        }
        i += 1;
        while i < n && is_space(b[i]) {
            i += 1;
        }
        let mut value = Vec::new();
        let value_start = i;
        if i < n && b[i] == b'\'' {
            i += 1;
            loop {
                match b.get(i) {
                    None => {
                        if is_secret_name(&name) {
                            set.note_secret(value_start..n);
                        }
                        return Err(ConninfoError::UnterminatedQuote);
                    }
                    Some(b'\\') => {
                        i += 1;
                        if let Some(&c) = b.get(i) {
                            value.push(c);
                            i += 1;
                        }
                    }
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < n {
                let c = b[i];
                if is_space(c) {
                    break;
                }
                if c == b'\\' {
                    i += 1;
                    if let Some(&e) = b.get(i) {
                        value.push(e);
                        i += 1;
                    }
                } else {
                    value.push(c);
                    i += 1;
                }
            }
        }
        let missing = match strictness {
            Strictness::Libpq => Missing::Error,
            Strictness::SkipUnknown => Missing::Ignore,
        };
        store_value(set, &name, &value, value_start..i, missing, false)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Vec<(String, String)>, String> {
        parse_conninfo(s).map_err(|e| e.to_string())
    }

    fn kv(pairs: &[(&str, &str)]) -> Result<Vec<(String, String)>, String> {
        Ok(pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    #[test]
    fn plain_pairs_and_spaces() {
        assert_eq!(
            p("  port = 5433   host=h  "),
            kv(&[("host", "h"), ("port", "5433")])
        );
        assert_eq!(p(""), kv(&[]));
        assert_eq!(p("host=a host=b"), kv(&[("host", "b")]));
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(p(r"user='a b\'c'"), kv(&[("user", "a b'c")]));
        assert_eq!(p(r"user=a\ b"), kv(&[("user", "a b")]));
        assert_eq!(p("user=''"), kv(&[("user", "")]));
        assert_eq!(
            p("user='x"),
            Err("unterminated quoted string in connection info string".into())
        );
    }

    #[test]
    fn blanks_after_equals_swallow_next_pair() {
        assert_eq!(p("host= port=1"), kv(&[("host", "port=1")]));
        assert_eq!(p("host="), kv(&[("host", "")]));
    }

    #[test]
    fn errors() {
        assert_eq!(
            p("host"),
            Err("missing \"=\" after \"host\" in connection info string".into())
        );
        assert_eq!(
            p("host x=1"),
            Err("missing \"=\" after \"host\" in connection info string".into())
        );
        assert_eq!(p("foo=1"), Err("invalid connection option \"foo\"".into()));
        assert_eq!(p("=1"), Err("invalid connection option \"\"".into()));
    }

    #[test]
    fn requiressl_translation() {
        assert_eq!(p("requiressl=1"), kv(&[("sslmode", "require")]));
        assert_eq!(p("requiressl=0"), kv(&[("sslmode", "prefer")]));
    }

    #[test]
    fn connection_string_recognition() {
        assert!(is_connection_string("postgres://x"));
        assert!(is_connection_string("a=b"));
        assert!(!is_connection_string("mydb"));
        assert!(!is_connection_string("postgresql:/x"));
    }
}
