//! `postgresql://` URIs, as libpq parses them (values are stored and percent-decoded
//! by `store`).

use super::error::ConninfoError;
use super::keywords::{OptionSet, is_secret_name};
use super::store::{Missing, Strictness, bytes_to_string, percent_decode, store_value};

/// The two URI prefixes libpq recognises.
const URI_PREFIXES: [&str; 2] = ["postgresql://", "postgres://"];

/// Length of the URI prefix `s` starts with, or 0.
pub(crate) fn uri_prefix_length(s: &str) -> usize {
    URI_PREFIXES
        .iter()
        .find(|p| s.starts_with(*p))
        .map_or(0, |p| p.len())
}

/// Parses a URI into `set`:
/// `postgresql://[user[:password]@][host][:port][,...][/dbname][?param=value&...]`.
/// Under [`Strictness::SkipUnknown`], unknown query parameters are skipped.
pub(crate) fn parse_uri(
    uri: &str,
    set: &mut OptionSet,
    strictness: Strictness,
) -> Result<(), ConninfoError> {
    let b = uri.as_bytes();
    let n = b.len();
    let start = uri_prefix_length(uri);
    if start == 0 {
        return Err(ConninfoError::InvalidUriPrefix(uri.to_string()));
    }
    let at = |i: usize| -> u8 { b.get(i).copied().unwrap_or(0) };
    let hosts_start = parse_credentials(b, start, set)?;
    let (mut p, mut prev) = parse_hosts(uri, hosts_start, set)?;

    if prev != 0 && prev != b'?' {
        p += 1;
        let db_start = p;
        while p < n && b[p] != b'?' {
            p += 1;
        }
        prev = at(p);
        if p > db_start {
            let name = &b[db_start..p];
            store_value(set, "dbname", name, db_start..p, Missing::Error, true)?;
        }
    }
    if prev != 0 {
        parse_query(b, p + 1, set, strictness)?;
    }
    Ok(())
}

/// The `user[:password]@` part, if the URI (whose bytes are `b`, the prefix
/// ending at `start`) has an `@` before any `/`: stores what it holds and
/// returns the offset after the `@`, else returns `start`.
fn parse_credentials(b: &[u8], start: usize, set: &mut OptionSet) -> Result<usize, ConninfoError> {
    let n = b.len();
    let mut p = start;
    while p < n && b[p] != b'@' && b[p] != b'/' {
        p += 1;
    }
    if p >= n || b[p] != b'@' {
        return Ok(start);
    }
    let at = p;
    let user_end = b[start..at]
        .iter()
        .position(|&c| c == b':')
        .map_or(at, |i| start + i);
    if user_end + 1 < at {
        // Noted first: the user name's decoding may fail.
        set.note_secret(user_end + 1..at);
    }
    if user_end > start {
        let user = &b[start..user_end];
        store_value(set, "user", user, start..user_end, Missing::Error, true)?;
    }
    if user_end + 1 < at {
        let password = &b[user_end + 1..at];
        store_value(
            set,
            "password",
            password,
            user_end + 1..at,
            Missing::Error,
            true,
        )?;
    }
    Ok(at + 1)
}

/// One or more `host[:port]` items separated by commas, from offset `p`:
/// stores the comma-separated hosts and ports. Returns the offset where the
/// list ends and the byte there (0 at the end of the URI).
fn parse_hosts(uri: &str, mut p: usize, set: &mut OptionSet) -> Result<(usize, u8), ConninfoError> {
    let b = uri.as_bytes();
    let n = b.len();
    let at = |i: usize| -> u8 { b.get(i).copied().unwrap_or(0) };
    let mut hosts: Vec<u8> = Vec::new();
    let mut ports: Vec<u8> = Vec::new();
    let mut prev;
    loop {
        p = parse_host(uri, p, &mut hosts)?;
        prev = at(p);
        if prev == b':' {
            p += 1;
            let port_start = p;
            while p < n && !matches!(b[p], b'/' | b'?' | b',') {
                p += 1;
            }
            ports.extend_from_slice(&b[port_start..p]);
            prev = at(p);
        }
        if prev != b',' {
            break;
        }
        p += 1;
        hosts.push(b',');
        ports.push(b',');
    }
    if !hosts.is_empty() {
        store_value(set, "host", &hosts, 0..0, Missing::Error, true)?;
    }
    if !ports.is_empty() {
        store_value(set, "port", &ports, 0..0, Missing::Error, true)?;
    }
    Ok((p, prev))
}

/// One host at offset `p`, a name or a bracketed IPv6 address, appended to
/// `hosts`. Returns the offset after it.
fn parse_host(uri: &str, mut p: usize, hosts: &mut Vec<u8>) -> Result<usize, ConninfoError> {
    let b = uri.as_bytes();
    let n = b.len();
    let at = |i: usize| -> u8 { b.get(i).copied().unwrap_or(0) };
    if at(p) != b'[' {
        let host_start = p;
        while p < n && !matches!(b[p], b':' | b'/' | b'?' | b',') {
            p += 1;
        }
        hosts.extend_from_slice(&b[host_start..p]);
        return Ok(p);
    }
    p += 1;
    let host_start = p;
    while p < n && b[p] != b']' {
        p += 1;
    }
    if p >= n {
        return Err(ConninfoError::UnterminatedIpv6(uri.to_string()));
    }
    if p == host_start {
        return Err(ConninfoError::EmptyIpv6(uri.to_string()));
    }
    hosts.extend_from_slice(&b[host_start..p]);
    p += 1;
    let c = at(p);
    if c != 0 && !matches!(c, b':' | b'/' | b'?' | b',') {
        let ch = uri[p..].chars().next().unwrap_or(char::from(c));
        return Err(ConninfoError::UnexpectedUriCharacter {
            ch,
            position: p + 1,
            uri: uri.to_string(),
        });
    }
    Ok(p)
}

/// The `?key=value&...` part, `params[start..]` (`params` is the whole URI,
/// so that the offsets noted for secrets are the URI's).
fn parse_query(
    params: &[u8],
    start: usize,
    set: &mut OptionSet,
    strictness: Strictness,
) -> Result<(), ConninfoError> {
    let n = params.len();
    let mut p = start;
    while p < n {
        let key_start = p;
        let mut eq: Option<usize> = None;
        let end;
        loop {
            match params.get(p) {
                Some(b'=') => {
                    if eq.is_some() {
                        let raw = eq.map_or(&params[key_start..p], |e| &params[key_start..e]);
                        return Err(ConninfoError::ExtraQuerySeparator(bytes_to_string(raw)));
                    }
                    eq = Some(p);
                    p += 1;
                }
                Some(b'&') | None => {
                    end = p;
                    if p < n {
                        p += 1;
                    }
                    break;
                }
                Some(_) => p += 1,
            }
        }
        let Some(eq) = eq else {
            return Err(ConninfoError::MissingQuerySeparator(bytes_to_string(
                &params[key_start..end],
            )));
        };
        let keyword = bytes_to_string(&percent_decode(&params[key_start..eq])?);
        if is_secret_name(&keyword) {
            // Before the value is decoded, which may fail.
            set.note_secret(eq + 1..end);
        }
        let value = percent_decode(&params[eq + 1..end])?;
        let (keyword, value): (String, Vec<u8>) = if keyword == "ssl" && value == b"true" {
            ("sslmode".to_string(), b"require".to_vec())
        } else {
            (keyword, value)
        };
        let source = eq + 1..end;
        let stored = store_value(set, &keyword, &value, source, Missing::Ignore, false)?;
        if !stored && strictness == Strictness::Libpq {
            return Err(ConninfoError::InvalidQueryParameter(keyword));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse_conninfo;

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
    fn full_uri() {
        assert_eq!(
            p("postgresql://u%40x:p%3Aw@h1:1,[::1]:2/db?application_name=a%20b&ssl=true"),
            kv(&[
                ("user", "u@x"),
                ("password", "p:w"),
                ("dbname", "db"),
                ("host", "h1,::1"),
                ("port", "1,2"),
                ("application_name", "a b"),
                ("sslmode", "require"),
            ])
        );
    }

    #[test]
    fn empty_parts() {
        assert_eq!(p("postgres://"), kv(&[]));
        assert_eq!(p("postgresql://@/?"), kv(&[]));
        assert_eq!(
            p("postgresql://,h2/"),
            kv(&[("host", ",h2"), ("port", ",")])
        );
        assert_eq!(p("postgresql://:5/"), kv(&[("port", "5")]));
        assert_eq!(
            p("postgresql:///db?host=%2Ftmp"),
            kv(&[("dbname", "db"), ("host", "/tmp")])
        );
    }

    #[test]
    fn uri_errors() {
        assert_eq!(
            p("postgresql://[::1"),
            Err("end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgresql://[::1\"".into())
        );
        assert_eq!(
            p("postgresql://[]"),
            Err("IPv6 host address may not be empty in URI: \"postgresql://[]\"".into())
        );
        assert_eq!(
            p("postgresql://[::1]x"),
            Err("unexpected character \"x\" at position 19 in URI (expected \":\" or \"/\"): \"postgresql://[::1]x\"".into())
        );
        assert_eq!(
            p("postgresql://h/%zz"),
            Err("invalid percent-encoded token: \"%zz\"".into())
        );
        assert_eq!(
            p("postgresql://h/a%00"),
            Err("forbidden value %00 in percent-encoded value: \"a%00\"".into())
        );
        assert_eq!(
            p("postgresql://h?a=b=c"),
            Err("extra key/value separator \"=\" in URI query parameter: \"a\"".into())
        );
        assert_eq!(
            p("postgresql://h?ab&c=d"),
            Err("missing key/value separator \"=\" in URI query parameter: \"ab\"".into())
        );
        assert_eq!(
            p("postgresql://h?foo=1"),
            Err("invalid URI query parameter: \"foo\"".into())
        );
        assert_eq!(
            p("postgresql://h/a b"),
            Err(
                "unexpected spaces found in \"a b\", use percent-encoded spaces (%20) instead"
                    .into()
            )
        );
    }
}
