//! Secrets hidden from command lines before they are written anywhere (result
//! documents, HTML pages, logs, plan files): the one redaction every crate uses.

use super::keywords::{OptionSet, index_of, is_secret_name};
use super::parse::{is_connection_string, parse_conninfo, parse_into};
use super::store::Strictness;
use std::ops::Range;

/// What a secret is replaced by.
pub const REDACTED: &str = "***";

/// `argv` with every secret replaced by [`REDACTED`], word by word
/// ([`redact_argument`]).
pub fn redact_argv<S: AsRef<str>>(argv: &[S]) -> Vec<String> {
    argv.iter().map(|a| redact_argument(a.as_ref())).collect()
}

/// One command-line word with its secrets replaced by [`REDACTED`]:
/// - a connection string, parsed as libpq parses it (keyword/value with any
///   quoting, or a `postgresql://` URI): the values of `password` and
///   `sslpassword` (`password='a b'` becomes `password=***`), a URI's
///   `user:password@` password and `?password=` parameters, and the value of
///   any other keyword whose name holds `password`, `passwd` or `secret`;
/// - `NAME=value` with such a name that is no libpq keyword (`PGPASSWORD=x`),
///   or that starts a string libpq refuses (`password=a b`): everything after
///   the first `=`;
/// - the value of an option so named (`--sslpassword=x`);
/// - an option's attached value (`--dbname=...`, `-dVALUE`,
///   `--define=PGPASSWORD=x`): the value, as above.
///
/// Anything else is returned unchanged.
pub fn redact_argument(arg: &str) -> String {
    if let Some((option, _)) = arg.split_once('=')
        && option.starts_with("--")
        && is_secret_name(option)
    {
        return format!("{option}={REDACTED}");
    }
    let value_at = if arg.starts_with("--") {
        arg.find('=').map(|eq| eq + 1)
    } else if arg.starts_with('-') {
        arg.char_indices().nth(2).map(|(i, _)| i)
    } else {
        Some(0)
    };
    match value_at {
        Some(at) => format!("{}{}", &arg[..at], redact_value(&arg[at..])),
        None => arg.to_string(),
    }
}

/// A value with its secrets replaced, when it is a connection string or a
/// secret's assignment.
fn redact_value(value: &str) -> String {
    if !is_connection_string(value) {
        return value.to_string();
    }
    if let Some(eq) = value.find('=') {
        let name = value[..eq].trim_end();
        let word = name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
        let assignment = index_of(name).is_none() || parse_conninfo(value).is_err();
        if word && assignment && is_secret_name(name) {
            // `PGPASSWORD=a b`, or no connection string libpq accepts: all of
            // it is the value.
            return format!("{}{REDACTED}", &value[..=eq]);
        }
    }
    let mut set = OptionSet::new();
    let _ = parse_into(value, &mut set, Strictness::SkipUnknown);
    replace_ranges(value, set.secret_sources())
}

/// `text` with each of `ranges` replaced by [`REDACTED`] (overlaps merged).
fn replace_ranges(text: &str, ranges: &[Range<usize>]) -> String {
    let mut sorted: Vec<Range<usize>> = ranges.iter().filter(|r| !r.is_empty()).cloned().collect();
    sorted.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for r in sorted {
        if r.end <= done {
            continue;
        }
        let start = r.start.max(done);
        out.push_str(&text[done..start]);
        out.push_str(REDACTED);
        done = r.end.min(text.len());
    }
    out.push_str(&text[done..]);
    out
}

#[cfg(test)]
mod tests {
    use super::{redact_argument as r, redact_argv};

    #[test]
    fn keyword_value_quoting_forms() {
        assert_eq!(r("host=h password=x user=u"), "host=h password=*** user=u");
        assert_eq!(r("password = x user=u"), "password = *** user=u");
        assert_eq!(r("password='a b' user=u"), "password=*** user=u");
        assert_eq!(r(r"password='it\'s' user=u"), "password=*** user=u");
        assert_eq!(r(r"password=a\ b\ c user=u"), "password=*** user=u");
        assert_eq!(r(r"user='x' password=S3\'c\\ret"), "user='x' password=***");
        assert_eq!(r("password= user=u"), "password= ***");
        assert_eq!(r("password=''"), "password=***");
    }

    #[test]
    fn several_keywords_and_repeats() {
        assert_eq!(
            r("password=a sslpassword='b c' dbname=d password=e"),
            "password=*** sslpassword=*** dbname=d password=***"
        );
        assert_eq!(r("sslpassword=k host=h"), "sslpassword=*** host=h");
    }

    #[test]
    fn strings_libpq_would_refuse_keep_no_secret() {
        assert_eq!(r("foo=1 password=x"), "foo=1 password=***");
        assert_eq!(r("host=h junk password=x"), "host=h junk password=***");
        assert_eq!(r("a b password=x c"), "a b password=*** c");
        assert_eq!(r("password=a b"), "password=***");
        assert_eq!(r("sslpassword=a 'b"), "sslpassword=***");
        assert_eq!(r("host=h password='unterminated"), "host=h password=***");
        assert_eq!(r("PGPASSWORD=x"), "PGPASSWORD=***");
        assert_eq!(r("PGPASSWORD=a b"), "PGPASSWORD=***");
        assert_eq!(r("MY_SECRET=s"), "MY_SECRET=***");
    }

    #[test]
    fn uri_forms() {
        assert_eq!(r("postgresql://u:pw@h/db"), "postgresql://u:***@h/db");
        assert_eq!(
            r("postgres://u:p%40ss%20w@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(
            r("postgresql://u:pw@h1:5432,h2:5433,[::1]:5434/db?sslmode=disable"),
            "postgresql://u:***@h1:5432,h2:5433,[::1]:5434/db?sslmode=disable"
        );
        assert_eq!(
            r("postgresql://h/db?user=u&password=pw&sslpassword=k&application_name=a"),
            "postgresql://h/db?user=u&password=***&sslpassword=***&application_name=a"
        );
        assert_eq!(
            r("postgresql://h/db?pass%77ord=pw"),
            "postgresql://h/db?pass%77ord=***"
        );
        assert_eq!(
            r("postgresql://u:pw@h/db?password=q"),
            "postgresql://u:***@h/db?password=***"
        );
        assert_eq!(r("postgresql://u:p%zz@h/db"), "postgresql://u:***@h/db");
        assert_eq!(r("postgresql://u@h/db"), "postgresql://u@h/db");
        assert_eq!(r("postgresql://u:@h/db"), "postgresql://u:@h/db");
        assert_eq!(
            r("postgresql://h/db?nope=1&password=pw"),
            "postgresql://h/db?nope=1&password=***"
        );
    }

    #[test]
    fn options_with_attached_values() {
        assert_eq!(
            r("--dbname=host=h password=x"),
            "--dbname=host=h password=***"
        );
        assert_eq!(r("-dpostgresql://u:pw@h/d"), "-dpostgresql://u:***@h/d");
        assert_eq!(r("--define=PGPASSWORD=x"), "--define=PGPASSWORD=***");
        assert_eq!(r("-DPGPASSWORD=x"), "-DPGPASSWORD=***");
        assert_eq!(r("--password=a b"), "--password=***");
        assert_eq!(
            redact_argv(&["pgrush", "-d", "password=x", "-c", "2"]),
            ["pgrush", "-d", "password=***", "-c", "2"]
        );
    }

    #[test]
    fn other_words_are_unchanged() {
        for w in [
            "pgrush",
            "-c",
            "2",
            "--json=c.json",
            "--time=60",
            "-Dscale=10",
            "--vary=clients=1,2",
            "a b=c",
            "mydb",
            "host=h user=u dbname=d",
            "postgresql://u@h/d?sslmode=require",
            "-f",
            "x.sql@3",
            "--",
            "-",
            "",
            "passfile=/p",
            "-é",
        ] {
            assert_eq!(r(w), w);
        }
    }
}
