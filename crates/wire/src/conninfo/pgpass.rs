//! Password files (`~/.pgpass`, `passfile`, `PGPASSFILE`).

use super::env::{Environment, ProcessEnvironment};
use super::params::{ConnParams, DEFAULT_PORT, HostTarget};

/// The outcome of a password-file lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PasswordLookup {
    /// The password found, if any.
    pub password: Option<String>,
    /// A warning for the caller to print on stderr (libpq's text, without
    /// the trailing newline), e.g. about an insecure file.
    pub warning: Option<String>,
}

/// Looks up the password for one host entry in the password file, as
/// libpq's `passwordFromFile` does; nothing is looked up when a password was
/// given. Uses the real file system.
pub fn lookup_password(params: &ConnParams, host: &HostTarget) -> PasswordLookup {
    lookup_password_with(params, host, &ProcessEnvironment)
}

/// [`lookup_password`] reading files through `env`.
pub fn lookup_password_with(
    params: &ConnParams,
    host: &HostTarget,
    env: &dyn Environment,
) -> PasswordLookup {
    let mut out = PasswordLookup::default();
    if params.password().is_some() {
        return out;
    }
    let Some(path) = params.passfile() else {
        return out;
    };
    let dbname = params.dbname();
    let user = params.user();
    if dbname.is_empty() || user.is_empty() {
        return out;
    }
    let mut hostname = match host.host.as_deref().filter(|h| !h.is_empty()) {
        Some(h) => h,
        None => host.hostaddr.as_deref().unwrap_or(""),
    };
    if hostname.is_empty()
        || ((hostname.starts_with('/') || hostname.starts_with('@'))
            && hostname == params.default_socket_dir())
    {
        hostname = "localhost";
    }
    let default_port = DEFAULT_PORT.to_string();
    let port = if host.port.is_empty() {
        default_port.as_str()
    } else {
        host.port.as_str()
    };

    let Ok(contents) = env.read_file(path) else {
        return out;
    };
    let shown = path.display();
    if !contents.is_regular {
        out.warning = Some(format!(
            "WARNING: password file \"{shown}\" is not a plain file"
        ));
        return out;
    }
    if contents.mode & 0o077 != 0 {
        out.warning = Some(format!(
            "WARNING: password file \"{shown}\" has group or world access; permissions should be u=rw (0600) or less"
        ));
        return out;
    }
    out.password = find_password(&contents.data, &[hostname, port, dbname, user]);
    out
}

/// Scans password-file lines for the first match of the four fields.
fn find_password(data: &[u8], fields: &[&str; 4]) -> Option<String> {
    for raw in data.split(|&c| c == b'\n') {
        let line = raw.split(|&c| c == 0).next().unwrap_or(&[]);
        if line.first() == Some(&b'#') {
            continue;
        }
        let mut line = line;
        while let Some((&last, head)) = line.split_last() {
            if last != b'\r' && last != b'\n' {
                break;
            }
            line = head;
        }
        if line.is_empty() {
            continue;
        }
        let mut rest = Some(line);
        for field in fields {
            rest = rest.and_then(|r| match_field(r, &crate::lossless::to_bytes(field)));
        }
        if let Some(rest) = rest {
            return Some(unescape_password(rest));
        }
    }
    None
}

/// libpq's `pwdfMatchesString`: `*:` matches anything; `\` escapes the next
/// character. Returns what follows the field's `:` on a match.
fn match_field<'a>(buf: &'a [u8], token: &[u8]) -> Option<&'a [u8]> {
    if buf.starts_with(b"*:") {
        return Some(&buf[2..]);
    }
    let mut i = 0;
    let mut t = 0;
    while i < buf.len() {
        let mut escaped = false;
        if buf[i] == b'\\' {
            i += 1;
            escaped = true;
        }
        let c = buf.get(i).copied();
        if c == Some(b':') && t == token.len() && !escaped {
            return Some(&buf[i + 1..]);
        }
        let tc = token.get(t)?;
        if c != Some(*tc) {
            return None;
        }
        i += 1;
        t += 1;
    }
    None
}

/// The password field: up to an unescaped `:`, with `\x` giving `x`.
fn unescape_password(field: &[u8]) -> String {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() && field[i] != b':' {
        if field[i] == b'\\' && i + 1 < field.len() {
            i += 1;
        }
        out.push(field[i]);
        i += 1;
    }
    crate::lossless::from_bytes(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(data: &str, f: [&str; 4]) -> Option<String> {
        find_password(data.as_bytes(), &f)
    }

    #[test]
    fn wildcards_and_escapes() {
        let data = "# comment\nh:5432:db:u:pw1\n*:*:*:bob:p\\:w\\\\x:tail\r\n";
        assert_eq!(find(data, ["h", "5432", "db", "u"]), Some("pw1".into()));
        assert_eq!(find(data, ["x", "1", "d", "bob"]), Some("p:w\\x".into()));
        assert_eq!(find(data, ["x", "1", "d", "carol"]), None);
        assert_eq!(
            find("a\\:b:1:d:u:pw", ["a:b", "1", "d", "u"]),
            Some("pw".into())
        );
        // A '*' not alone in its field is literal.
        assert_eq!(find("*x:1:d:u:pw", ["yx", "1", "d", "u"]), None);
        assert_eq!(
            find("*x:1:d:u:pw", ["*x", "1", "d", "u"]),
            Some("pw".into())
        );
        // Fewer fields than needed: no match.
        assert_eq!(find("h:1:d", ["h", "1", "d", "u"]), None);
        // A missing password field still matches (empty password).
        assert_eq!(find("h:1:d:u", ["h", "1", "d", "u"]), None);
        assert_eq!(find("h:1:d:u:", ["h", "1", "d", "u"]), Some(String::new()));
    }

    #[test]
    fn first_match_wins() {
        let data = "*:*:*:*:first\nh:1:d:u:second\n";
        assert_eq!(find(data, ["h", "1", "d", "u"]), Some("first".into()));
    }
}
