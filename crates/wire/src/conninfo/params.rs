//! The resolved connection parameters handed to the connection code.

use std::path::PathBuf;
use std::time::Duration;

use super::error::ConninfoError;
use super::keywords::OptionSet;
use super::require_auth::RequireAuth;
use super::settings::{
    ChannelBinding, GssEncMode, LoadBalanceHosts, ProtocolVersion, SslCertMode, SslMode,
    SslNegotiation, TargetSessionAttrs, TlsVersion, parse_int_param,
};

/// The default port.
pub const DEFAULT_PORT: u16 = 5432;

/// How a host entry is reached (libpq's `CHT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKind {
    /// A host name to resolve (TCP).
    Name,
    /// A numeric `hostaddr` (TCP, no name resolution).
    Address,
    /// A Unix-domain socket directory (`/...`) or abstract name (`@...`).
    UnixSocket,
}

/// One entry of the host list: the `host`, `hostaddr` and `port` items at
/// the same position, as libpq pairs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTarget {
    /// The `host` item (host name or socket directory). For an entry that
    /// named neither host nor hostaddr it is the default socket directory.
    pub host: Option<String>,
    /// The `hostaddr` item, when one was given for this entry.
    pub hostaddr: Option<String>,
    /// The `port` item as written (may be empty, meaning 5432).
    pub port: String,
    /// How to connect.
    pub kind: HostKind,
}

impl HostTarget {
    /// Whether this entry is a Unix-domain socket.
    pub fn is_unix_socket(&self) -> bool {
        self.kind == HostKind::UnixSocket
    }

    /// The port number as libpq computes it when connecting: empty means
    /// 5432; otherwise an integer (`invalid integer value ...`) in 1..=65535
    /// (`invalid port number: "..."`).
    pub fn port_number(&self) -> Result<u16, ConninfoError> {
        if self.port.is_empty() {
            return Ok(DEFAULT_PORT);
        }
        let n = parse_int_param(&self.port, "port")?;
        u16::try_from(n)
            .ok()
            .filter(|p| *p >= 1)
            .ok_or_else(|| ConninfoError::InvalidPort(self.port.clone()))
    }

    /// The name libpq reports for this entry (`PQhost`): the host if
    /// non-empty, else the hostaddr.
    pub fn display_host(&self) -> &str {
        match (&self.host, &self.hostaddr) {
            (Some(h), _) if !h.is_empty() => h,
            (_, Some(a)) => a,
            (Some(h), None) => h,
            (None, None) => "",
        }
    }

    /// For a Unix socket entry, the socket path `<dir>/.s.PGSQL.<port>`
    /// (starting with `@` for the abstract namespace); `None` for TCP.
    pub fn socket_path(&self) -> Result<Option<String>, ConninfoError> {
        if self.kind != HostKind::UnixSocket {
            return Ok(None);
        }
        let port = self.port_number()?;
        let dir = self.host.as_deref().unwrap_or("");
        Ok(Some(format!("{dir}/.s.PGSQL.{port}")))
    }
}

/// Connection parameters after applying libpq's precedence and validation
/// (`conninfo_array_parse` + `conninfo_add_defaults` + `pqConnectOptions2`).
#[derive(Clone, PartialEq, Eq)]
pub struct ConnParams {
    pub(crate) options: OptionSet,
    pub(crate) hosts: Vec<HostTarget>,
    pub(crate) user: String,
    pub(crate) dbname: String,
    pub(crate) passfile: Option<PathBuf>,
    pub(crate) home: Option<PathBuf>,
    pub(crate) default_socket_dir: String,
    pub(crate) sslmode: SslMode,
    pub(crate) sslnegotiation: SslNegotiation,
    pub(crate) sslcertmode: SslCertMode,
    pub(crate) gssencmode: GssEncMode,
    pub(crate) channel_binding: ChannelBinding,
    pub(crate) target_session_attrs: TargetSessionAttrs,
    pub(crate) load_balance_hosts: LoadBalanceHosts,
    pub(crate) min_protocol_version: ProtocolVersion,
    pub(crate) max_protocol_version: ProtocolVersion,
    pub(crate) ssl_min_protocol_version: Option<TlsVersion>,
    pub(crate) ssl_max_protocol_version: Option<TlsVersion>,
    pub(crate) require_auth: RequireAuth,
    pub(crate) client_encoding: Option<String>,
    pub(crate) scram_client_key: Option<Vec<u8>>,
    pub(crate) scram_server_key: Option<Vec<u8>>,
    pub(crate) environment_settings: Vec<(String, String)>,
}

impl std::fmt::Debug for ConnParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secret = [
            "password",
            "sslpassword",
            "oauth_client_secret",
            "scram_client_key",
        ];
        let shown: Vec<(String, String)> = self
            .options
            .to_pairs()
            .into_iter()
            .map(|(k, v)| {
                if secret.contains(&k.as_str()) {
                    (k, "<redacted>".to_string())
                } else {
                    (k, v)
                }
            })
            .collect();
        f.debug_struct("ConnParams")
            .field("hosts", &self.hosts)
            .field("user", &self.user)
            .field("dbname", &self.dbname)
            .field("options", &shown)
            .finish_non_exhaustive()
    }
}

/// A non-zero seed from the standard library's per-process random hasher keys.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() | 1
}

/// A root-certificate source (`sslrootcert`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SslRootCert {
    /// `sslrootcert=system`: the operating system's trust store.
    System,
    /// A PEM file (it may not exist; libpq checks when connecting).
    File(PathBuf),
}

impl ConnParams {
    /// The value of any keyword after defaults (`None` when unset).
    pub fn get(&self, keyword: &str) -> Option<&str> {
        self.options.get(keyword)
    }

    /// Every keyword that has a value, in libpq's order (like `PQconninfo`).
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        self.options.to_pairs()
    }

    fn nonempty(&self, keyword: &str) -> Option<&str> {
        self.options.get(keyword).filter(|v| !v.is_empty())
    }

    /// The hosts to try, in order. With `load_balance_hosts=random` the
    /// caller shuffles them (libpq does so right before connecting).
    pub fn hosts(&self) -> &[HostTarget] {
        &self.hosts
    }

    /// The hosts in the order to try them: as given, or shuffled when
    /// `load_balance_hosts=random` (libpq's inside-out Fisher-Yates shuffle,
    /// freshly seeded on every call).
    pub fn hosts_in_connect_order(&self) -> Vec<HostTarget> {
        let mut hosts = self.hosts.clone();
        if self.load_balance_hosts == LoadBalanceHosts::Random {
            let mut state = random_seed();
            for i in 1..hosts.len() {
                // xorshift64*; the bound is tiny, so the modulo bias is negligible.
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                let r = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
                let j = usize::try_from(r % (i as u64 + 1)).unwrap_or(0);
                hosts.swap(i, j);
            }
        }
        hosts
    }

    /// The user name (explicit, `PGUSER`, service, or the OS user).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The database name (defaults to the user name).
    pub fn dbname(&self) -> &str {
        &self.dbname
    }

    /// The password given explicitly, in the conninfo, service or
    /// `PGPASSWORD` (non-empty); `None` means "look in the password file".
    pub fn password(&self) -> Option<&str> {
        self.nonempty("password")
    }

    /// The password file: `passfile`/`PGPASSFILE`, else `~/.pgpass`.
    pub fn passfile(&self) -> Option<&std::path::Path> {
        self.passfile.as_deref()
    }

    /// The default Unix socket directory used for entries without a host.
    pub fn default_socket_dir(&self) -> &str {
        &self.default_socket_dir
    }

    /// `sslmode` (default `prefer`; `verify-full` when `sslrootcert=system`).
    pub fn sslmode(&self) -> SslMode {
        self.sslmode
    }

    /// `sslnegotiation`.
    pub fn sslnegotiation(&self) -> SslNegotiation {
        self.sslnegotiation
    }

    /// `sslcertmode` (default `allow`).
    pub fn sslcertmode(&self) -> SslCertMode {
        self.sslcertmode
    }

    /// `gssencmode` (default `prefer`; `require` is refused by resolve when the
    /// GSSAPI library cannot be loaded).
    pub fn gssencmode(&self) -> GssEncMode {
        self.gssencmode
    }

    /// `channel_binding` (default `prefer`).
    pub fn channel_binding(&self) -> ChannelBinding {
        self.channel_binding
    }

    /// `target_session_attrs` (default `any`).
    pub fn target_session_attrs(&self) -> TargetSessionAttrs {
        self.target_session_attrs
    }

    /// `load_balance_hosts` (default `disable`).
    pub fn load_balance_hosts(&self) -> LoadBalanceHosts {
        self.load_balance_hosts
    }

    /// `min_protocol_version` (default 3.0).
    pub fn min_protocol_version(&self) -> ProtocolVersion {
        self.min_protocol_version
    }

    /// `max_protocol_version` (default 3.0, or 3.2 when the minimum is 3.2).
    pub fn max_protocol_version(&self) -> ProtocolVersion {
        self.max_protocol_version
    }

    /// `ssl_min_protocol_version` (default TLSv1.2; `None` = no bound).
    pub fn ssl_min_protocol_version(&self) -> Option<TlsVersion> {
        self.ssl_min_protocol_version
    }

    /// `ssl_max_protocol_version` (`None` = no bound).
    pub fn ssl_max_protocol_version(&self) -> Option<TlsVersion> {
        self.ssl_max_protocol_version
    }

    /// The parsed `require_auth` rules.
    pub fn require_auth(&self) -> &RequireAuth {
        &self.require_auth
    }

    fn home_file(&self, name: &str) -> Option<PathBuf> {
        self.home
            .as_ref()
            .map(|h| PathBuf::from(format!("{}/.postgresql/{name}", h.display())))
    }

    /// The root certificates: `sslrootcert` (`system` or a file), else
    /// `~/.postgresql/root.crt` (which may not exist); `None` without a home.
    pub fn sslrootcert(&self) -> Option<SslRootCert> {
        match self.nonempty("sslrootcert") {
            Some("system") => Some(SslRootCert::System),
            Some(f) => Some(SslRootCert::File(PathBuf::from(f))),
            None => self.home_file("root.crt").map(SslRootCert::File),
        }
    }

    /// The client certificate: `sslcert`, else `~/.postgresql/postgresql.crt`.
    pub fn sslcert(&self) -> Option<PathBuf> {
        self.nonempty("sslcert")
            .map(PathBuf::from)
            .or_else(|| self.home_file("postgresql.crt"))
    }

    /// The client key: `sslkey`, else `~/.postgresql/postgresql.key`.
    pub fn sslkey(&self) -> Option<PathBuf> {
        self.nonempty("sslkey")
            .map(PathBuf::from)
            .or_else(|| self.home_file("postgresql.key"))
    }

    /// The CRL file: `sslcrl`; when neither `sslcrl` nor `sslcrldir` is set,
    /// `~/.postgresql/root.crl` (used only if it exists).
    pub fn sslcrl(&self) -> Option<PathBuf> {
        match (self.nonempty("sslcrl"), self.nonempty("sslcrldir")) {
            (Some(f), _) => Some(PathBuf::from(f)),
            (None, Some(_)) => None,
            (None, None) => self.home_file("root.crl"),
        }
    }

    /// `sslcrldir`.
    pub fn sslcrldir(&self) -> Option<PathBuf> {
        self.nonempty("sslcrldir").map(PathBuf::from)
    }

    /// `sslpassword` (the passphrase of an encrypted client key).
    pub fn sslpassword(&self) -> Option<&str> {
        self.nonempty("sslpassword")
    }

    /// `sslsni`: send the host name as SNI (libpq: value starting with `1`).
    pub fn sslsni(&self) -> bool {
        self.get("sslsni").is_some_and(|v| v.starts_with('1'))
    }

    /// `sslkeylogfile`.
    pub fn sslkeylogfile(&self) -> Option<&str> {
        self.nonempty("sslkeylogfile")
    }

    /// `requirepeer`: the OS user the Unix-socket server must run as.
    pub fn requirepeer(&self) -> Option<&str> {
        self.nonempty("requirepeer")
    }

    /// `connect_timeout` parsed as libpq does when connecting: `None` when
    /// unset or not positive, else the timeout in seconds.
    pub fn connect_timeout(&self) -> Result<Option<Duration>, ConninfoError> {
        match self.get("connect_timeout") {
            None => Ok(None),
            Some(v) => {
                let secs = parse_int_param(v, "connect_timeout")?;
                Ok(u64::try_from(secs)
                    .ok()
                    .filter(|s| *s > 0)
                    .map(Duration::from_secs))
            }
        }
    }

    /// `keepalives` (default on).
    pub fn keepalives(&self) -> Result<bool, ConninfoError> {
        match self.get("keepalives") {
            None => Ok(true),
            Some(v) => Ok(parse_int_param(v, "keepalives")? != 0),
        }
    }

    fn int_option(&self, keyword: &'static str) -> Result<Option<i32>, ConninfoError> {
        self.get(keyword)
            .map(|v| parse_int_param(v, keyword))
            .transpose()
    }

    /// `keepalives_idle` in seconds (`None` = system default).
    pub fn keepalives_idle(&self) -> Result<Option<i32>, ConninfoError> {
        self.int_option("keepalives_idle")
    }

    /// `keepalives_interval` in seconds.
    pub fn keepalives_interval(&self) -> Result<Option<i32>, ConninfoError> {
        self.int_option("keepalives_interval")
    }

    /// `keepalives_count`.
    pub fn keepalives_count(&self) -> Result<Option<i32>, ConninfoError> {
        self.int_option("keepalives_count")
    }

    /// `tcp_user_timeout` in milliseconds.
    pub fn tcp_user_timeout(&self) -> Result<Option<i32>, ConninfoError> {
        self.int_option("tcp_user_timeout")
    }

    /// `application_name` as set (may be empty, which suppresses the fallback).
    pub fn application_name(&self) -> Option<&str> {
        self.get("application_name")
    }

    /// `fallback_application_name`.
    pub fn fallback_application_name(&self) -> Option<&str> {
        self.get("fallback_application_name")
    }

    /// The application name sent at startup: `application_name` if set,
    /// else the fallback; `None` when the chosen one is empty.
    pub fn effective_application_name(&self) -> Option<&str> {
        self.application_name()
            .or(self.fallback_application_name())
            .filter(|v| !v.is_empty())
    }

    /// `options` (command-line options for the server), if non-empty.
    pub fn options(&self) -> Option<&str> {
        self.nonempty("options")
    }

    /// `client_encoding`, with `auto` already replaced by the locale's
    /// encoding; `None` when unset or empty.
    pub fn client_encoding(&self) -> Option<&str> {
        self.client_encoding.as_deref().filter(|v| !v.is_empty())
    }

    /// `replication` (`true`, `database`, ...), if non-empty.
    pub fn replication(&self) -> Option<&str> {
        self.nonempty("replication")
    }

    /// The decoded `scram_client_key` (32 bytes), if given.
    pub fn scram_client_key(&self) -> Option<&[u8]> {
        self.scram_client_key.as_deref()
    }

    /// The decoded `scram_server_key` (32 bytes), if given.
    pub fn scram_server_key(&self) -> Option<&[u8]> {
        self.scram_server_key.as_deref()
    }

    /// The startup-packet parameters in libpq's order: user, database,
    /// replication, options, application_name, client_encoding, then the
    /// settings from `PGDATESTYLE`, `PGTZ` and `PGGEQO` (unless `default`).
    pub fn startup_parameters(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut push = |k: &str, v: Option<&str>| {
            if let Some(v) = v.filter(|v| !v.is_empty()) {
                out.push((k.to_string(), v.to_string()));
            }
        };
        push("user", Some(self.user()));
        push("database", Some(self.dbname()));
        push("replication", self.replication());
        push("options", self.options());
        push("application_name", self.effective_application_name());
        push("client_encoding", self.client_encoding());
        for (k, v) in &self.environment_settings {
            push(k, Some(v));
        }
        out
    }
}
