//! The table of connection keywords libpq 18 accepts, in libpq's order.

/// One connection keyword: its name, the environment variable that supplies
/// a fallback value, and the compiled-in default (as in libpq 18 built with
/// TLS and GSSAPI support: `gssencmode` defaults to `prefer`, which pgrush
/// tries only when a Kerberos credential cache exists, as libpq does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keyword {
    /// The keyword as written in a conninfo string.
    pub name: &'static str,
    /// Environment variable consulted when the keyword is not given.
    pub envvar: Option<&'static str>,
    /// Compiled-in default used when neither the keyword nor the variable is set.
    pub default: Option<&'static str>,
}

const fn kw(
    name: &'static str,
    envvar: Option<&'static str>,
    default: Option<&'static str>,
) -> Keyword {
    Keyword {
        name,
        envvar,
        default,
    }
}

/// All keywords in libpq 18's order (the order `PQconninfoParse` reports them in).
pub const KEYWORDS: &[Keyword] = &[
    kw("service", Some("PGSERVICE"), None),
    kw("user", Some("PGUSER"), None),
    kw("password", Some("PGPASSWORD"), None),
    kw("passfile", Some("PGPASSFILE"), None),
    kw("channel_binding", Some("PGCHANNELBINDING"), Some("prefer")),
    kw("connect_timeout", Some("PGCONNECT_TIMEOUT"), None),
    kw("dbname", Some("PGDATABASE"), None),
    kw("host", Some("PGHOST"), None),
    kw("hostaddr", Some("PGHOSTADDR"), None),
    kw("port", Some("PGPORT"), Some("5432")),
    kw("client_encoding", Some("PGCLIENTENCODING"), None),
    kw("options", Some("PGOPTIONS"), Some("")),
    kw("application_name", Some("PGAPPNAME"), None),
    kw("fallback_application_name", None, None),
    kw("keepalives", None, None),
    kw("keepalives_idle", None, None),
    kw("keepalives_interval", None, None),
    kw("keepalives_count", None, None),
    kw("tcp_user_timeout", None, None),
    kw("sslmode", Some("PGSSLMODE"), Some("prefer")),
    kw("sslnegotiation", Some("PGSSLNEGOTIATION"), Some("postgres")),
    kw("sslcompression", Some("PGSSLCOMPRESSION"), Some("0")),
    kw("sslcert", Some("PGSSLCERT"), None),
    kw("sslkey", Some("PGSSLKEY"), None),
    kw("sslcertmode", Some("PGSSLCERTMODE"), None),
    kw("sslpassword", None, None),
    kw("sslrootcert", Some("PGSSLROOTCERT"), None),
    kw("sslcrl", Some("PGSSLCRL"), None),
    kw("sslcrldir", Some("PGSSLCRLDIR"), None),
    kw("sslsni", Some("PGSSLSNI"), Some("1")),
    kw("requirepeer", Some("PGREQUIREPEER"), None),
    kw("require_auth", Some("PGREQUIREAUTH"), None),
    kw("min_protocol_version", Some("PGMINPROTOCOLVERSION"), None),
    kw("max_protocol_version", Some("PGMAXPROTOCOLVERSION"), None),
    kw(
        "ssl_min_protocol_version",
        Some("PGSSLMINPROTOCOLVERSION"),
        Some("TLSv1.2"),
    ),
    kw(
        "ssl_max_protocol_version",
        Some("PGSSLMAXPROTOCOLVERSION"),
        None,
    ),
    kw("gssencmode", Some("PGGSSENCMODE"), Some("prefer")),
    kw("krbsrvname", Some("PGKRBSRVNAME"), Some("postgres")),
    kw("gsslib", Some("PGGSSLIB"), None),
    kw("gssdelegation", Some("PGGSSDELEGATION"), Some("0")),
    kw("replication", None, None),
    kw(
        "target_session_attrs",
        Some("PGTARGETSESSIONATTRS"),
        Some("any"),
    ),
    kw(
        "load_balance_hosts",
        Some("PGLOADBALANCEHOSTS"),
        Some("disable"),
    ),
    kw("scram_client_key", None, None),
    kw("scram_server_key", None, None),
    kw("oauth_issuer", None, None),
    kw("oauth_client_id", None, None),
    kw("oauth_client_secret", None, None),
    kw("oauth_scope", None, None),
    kw("sslkeylogfile", None, None),
];

/// Environment variables that libpq turns into extra startup-packet settings
/// (variable, server setting), in libpq's order.
pub const ENVIRONMENT_SETTINGS: &[(&str, &str)] = &[
    ("PGDATESTYLE", "datestyle"),
    ("PGTZ", "timezone"),
    ("PGGEQO", "geqo"),
];

/// Index of `name` in [`KEYWORDS`], if it is a known keyword.
pub fn index_of(name: &str) -> Option<usize> {
    KEYWORDS.iter().position(|k| k.name == name)
}

/// Whether a value named `name` is a secret that must never be shown:
/// libpq's `password` and `sslpassword`, and any other name that contains
/// `password`, `passwd` or `secret` in any case (an environment variable
/// such as `PGPASSWORD`, a script variable).
pub fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["password", "passwd", "secret"]
        .iter()
        .any(|s| name.contains(s))
}

/// A set of keyword values indexed like [`KEYWORDS`] (`None` = not set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSet {
    values: Vec<Option<String>>,
    /// Where in the parsed text the values of secret keywords were (see
    /// [`is_secret_name`]), as written (quotes, escapes, `%xx` included).
    secret_sources: Vec<std::ops::Range<usize>>,
}

impl Default for OptionSet {
    fn default() -> Self {
        Self::new()
    }
}

impl OptionSet {
    /// An empty set: no keyword has a value.
    pub fn new() -> Self {
        OptionSet {
            values: vec![None; KEYWORDS.len()],
            secret_sources: Vec::new(),
        }
    }

    /// The value of a keyword (`None` when unset or unknown).
    pub fn get(&self, name: &str) -> Option<&str> {
        index_of(name).and_then(|i| self.values[i].as_deref())
    }

    /// The value of the keyword at `index` in [`KEYWORDS`].
    pub fn get_index(&self, index: usize) -> Option<&str> {
        self.values.get(index).and_then(|v| v.as_deref())
    }

    /// Sets a keyword by index, replacing any previous value.
    pub fn set_index(&mut self, index: usize, value: String) {
        if let Some(slot) = self.values.get_mut(index) {
            *slot = Some(value);
        }
    }

    /// Sets a known keyword, replacing any previous value; returns false for
    /// an unknown keyword.
    pub fn set(&mut self, name: &str, value: String) -> bool {
        match index_of(name) {
            Some(i) => {
                self.values[i] = Some(value);
                true
            }
            None => false,
        }
    }

    /// Notes that the text at `source` held the value of a secret keyword.
    pub(crate) fn note_secret(&mut self, source: std::ops::Range<usize>) {
        self.secret_sources.push(source);
    }

    /// Where the parsed text held secret values, in the order they were read.
    pub(crate) fn secret_sources(&self) -> &[std::ops::Range<usize>] {
        &self.secret_sources
    }

    /// The keyword/value pairs that are set, in [`KEYWORDS`] order.
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        KEYWORDS
            .iter()
            .zip(&self.values)
            .filter_map(|(k, v)| v.as_ref().map(|v| (k.name.to_string(), v.clone())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_libpq_18_keywords_in_order() {
        assert_eq!(KEYWORDS.len(), 50);
        assert_eq!(KEYWORDS[0].name, "service");
        assert_eq!(KEYWORDS[49].name, "sslkeylogfile");
        assert_eq!(index_of("host"), Some(7));
        assert_eq!(index_of("requiressl"), None);
    }

    #[test]
    fn option_set_reports_in_table_order() {
        let mut s = OptionSet::new();
        assert!(s.set("port", "1".into()));
        assert!(s.set("host", "h".into()));
        assert!(!s.set("nope", "x".into()));
        assert_eq!(
            s.to_pairs(),
            vec![("host".into(), "h".into()), ("port".into(), "1".into())]
        );
        assert_eq!(s.get("port"), Some("1"));
        assert_eq!(s.get("user"), None);
    }
}
