//! The resolved settings one connection attempt needs, independent of how they were
//! obtained (`conninfo::ConnParams` converts into this; tests may build it directly).

use std::path::PathBuf;
use std::time::Duration;

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointKind {
    /// TCP: resolve `host` (or use `hostaddr` when set, numeric).
    Tcp,
    /// Unix-domain socket in the directory `host` (`@name` = abstract namespace).
    Unix,
}

/// One entry of the host list, as libpq pairs host/hostaddr/port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The `host` value (name, IP, or socket directory); may be empty when only hostaddr is given.
    pub host: String,
    /// The `hostaddr` value, if any.
    pub hostaddr: Option<String>,
    /// Port as given (libpq keeps it as text).
    pub port: String,
    /// TCP or Unix socket.
    pub kind: EndpointKind,
    /// Password found in the password file for this host, with the file's path.
    pub pgpass: Option<(String, String)>,
}

impl Endpoint {
    /// Port number (5432 when empty or invalid).
    pub fn port_number(&self) -> u16 {
        self.valid_port().unwrap_or(5432)
    }

    /// The port when it is empty (5432) or in 1..=65535.
    pub fn valid_port(&self) -> Option<u16> {
        let p = self.port.trim();
        if p.is_empty() {
            return Some(5432);
        }
        p.parse::<u16>().ok().filter(|n| *n > 0)
    }

    /// Path of the Unix socket (`<dir>/.s.PGSQL.<port>`).
    pub fn socket_path(&self) -> String {
        format!("{}/.s.PGSQL.{}", self.host, self.port_number())
    }
}

/// `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Never use TLS.
    Disable,
    /// Try plain first, TLS if the server insists.
    Allow,
    /// Try TLS first, plain if the server does not support it.
    #[default]
    Prefer,
    /// TLS required (chain verified only when a root certificate file exists).
    Require,
    /// TLS with chain verification.
    VerifyCa,
    /// TLS with chain and host name verification.
    VerifyFull,
}

/// `channel_binding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChannelBindingMode {
    /// Never use channel binding.
    Disable,
    /// Use it when possible.
    #[default]
    Prefer,
    /// Fail unless channel binding is used.
    Require,
}

/// `target_session_attrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TargetSessionAttrs {
    /// Any server.
    #[default]
    Any,
    /// Server accepting read-write transactions by default.
    ReadWrite,
    /// Read-only session.
    ReadOnly,
    /// Not in hot standby.
    Primary,
    /// In hot standby.
    Standby,
    /// Standby if any, else any.
    PreferStandby,
}

/// TLS settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsSettings {
    /// `sslmode`.
    pub mode: SslMode,
    /// `sslrootcert` (path, or `system`); `None` = no file.
    pub rootcert: Option<String>,
    /// `sslcert` client certificate path.
    pub cert: Option<PathBuf>,
    /// `sslkey` client key path.
    pub key: Option<PathBuf>,
    /// `sslsni` (send the host name in the TLS handshake).
    pub sni: bool,
    /// `sslcertmode=disable`: never send a client certificate.
    pub no_client_cert: bool,
    /// `ssl_max_protocol_version` below TLSv1.3: only TLS 1.2.
    pub max_tls12: bool,
    /// `ssl_min_protocol_version=TLSv1.3`: only TLS 1.3.
    pub min_tls13: bool,
    /// `sslnegotiation=direct`: start TLS without an SSLRequest (ALPN `postgresql`).
    pub direct: bool,
    /// `sslkeylogfile`: append the session secrets in NSS key log format.
    pub keylog_file: Option<PathBuf>,
    /// `sslcrl` (or `~/.postgresql/root.crl`): a PEM file of CRLs.
    pub crl: Option<PathBuf>,
    /// `sslcrldir`: an OpenSSL hashed directory of CRLs.
    pub crldir: Option<PathBuf>,
    /// `sslpassword`: the passphrase of an encrypted client key (`None`: prompt).
    pub password: Option<String>,
    /// `sslcertmode=require`: the server must ask for and get a client certificate.
    pub cert_required: bool,
    /// `ssl_min_protocol_version` and `ssl_max_protocol_version` as libpq prints them
    /// in its hint after a protocol version failure: as written (even empty), else
    /// `TLSv1` and `TLSv1.3`.
    pub protocol_range: (String, String),
}

/// `gssencmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GssEncMode {
    /// Never ask for GSSAPI encryption.
    Disable,
    /// Ask for it on TCP when a Kerberos credential cache exists; go on
    /// without it when the server or the exchange says no (the default).
    #[default]
    Prefer,
    /// Insist on it.
    Require,
}

/// GSSAPI settings (`gssencmode`, `krbsrvname`, `gssdelegation`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GssSettings {
    /// `gssencmode`.
    pub enc_mode: GssEncMode,
    /// `krbsrvname`: the service part of the server's principal (`postgres`).
    pub service_name: String,
    /// `gssdelegation=1`: delegate the client's credentials to the server.
    pub delegation: bool,
}

impl Default for GssSettings {
    fn default() -> Self {
        GssSettings {
            enc_mode: GssEncMode::Prefer,
            service_name: "postgres".to_string(),
            delegation: false,
        }
    }
}

/// TCP socket options (`keepalives*`, `tcp_user_timeout`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpSettings {
    /// `keepalives=0`.
    pub keepalives_off: bool,
    /// `keepalives_idle` (seconds).
    pub keepalives_idle: Option<i32>,
    /// `keepalives_interval` (seconds).
    pub keepalives_interval: Option<i32>,
    /// `keepalives_count`.
    pub keepalives_count: Option<i32>,
    /// `tcp_user_timeout` (milliseconds).
    pub user_timeout: Option<i32>,
}

/// Everything `Connection::connect_config` needs.
#[derive(Debug, Clone, Default)]
pub struct ConnectConfig {
    /// Hosts tried in order.
    pub endpoints: Vec<Endpoint>,
    /// Role name.
    pub user: String,
    /// Database name.
    pub dbname: String,
    /// Explicit password (takes precedence over the password file).
    pub password: Option<String>,
    /// `application_name`.
    pub application_name: Option<String>,
    /// `fallback_application_name`.
    pub fallback_application_name: Option<String>,
    /// `options` (command-line options for the backend).
    pub options: Option<String>,
    /// `client_encoding` (already mapped from `auto`).
    pub client_encoding: Option<String>,
    /// libpq's message for an unparsable `connect_timeout`: reported (after the
    /// `connection to server ...` prefix) once the first attempt has a socket.
    pub invalid_connect_timeout: Option<String>,
    /// `connect_timeout`, per host (None = wait forever).
    pub connect_timeout: Option<Duration>,
    /// TLS settings.
    pub tls: TlsSettings,
    /// GSSAPI settings.
    pub gss: GssSettings,
    /// `channel_binding`.
    pub channel_binding: ChannelBindingMode,
    /// `target_session_attrs`.
    pub target_session_attrs: TargetSessionAttrs,
    /// Protocol minor version to request (`max_protocol_version`: 0 for 3.0, 2 for 3.2).
    pub protocol_minor: u16,
    /// Lowest acceptable protocol minor version (`min_protocol_version`).
    pub min_protocol_minor: u16,
    /// TCP socket options.
    pub tcp: TcpSettings,
    /// `requirepeer`: OS user the server must run as (Unix sockets).
    pub requirepeer: Option<String>,
    /// `load_balance_hosts=random`: shuffle hosts and their addresses.
    pub load_balance: bool,
    /// `require_auth`: the setting as written and its parsed rules.
    pub require_auth: Option<(String, crate::conninfo::RequireAuth)>,
    /// Startup-packet parameters in order; when empty they are built from `user`,
    /// `dbname`, `options`, the application name and `client_encoding`.
    pub startup: Vec<(String, String)>,
}

impl ConnectConfig {
    /// A configuration for one endpoint with defaults elsewhere (handy for tests and tools).
    pub fn single(endpoint: Endpoint, user: &str, dbname: &str) -> Self {
        ConnectConfig {
            endpoints: vec![endpoint],
            user: user.to_string(),
            dbname: dbname.to_string(),
            ..Default::default()
        }
    }
}

/// libpq's rule for connect_timeout values: non-positive = none, 1 is raised to 2.
pub fn connect_timeout_from_secs(secs: i64) -> Option<Duration> {
    match secs {
        s if s <= 0 => None,
        1 => Some(Duration::from_secs(2)),
        s => Some(Duration::from_secs(s as u64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_rules() {
        assert_eq!(connect_timeout_from_secs(0), None);
        assert_eq!(connect_timeout_from_secs(-3), None);
        assert_eq!(connect_timeout_from_secs(1), Some(Duration::from_secs(2)));
        assert_eq!(connect_timeout_from_secs(7), Some(Duration::from_secs(7)));
    }

    #[test]
    fn socket_path() {
        let e = Endpoint {
            host: "/tmp".into(),
            hostaddr: None,
            port: "5999".into(),
            kind: EndpointKind::Unix,
            pgpass: None,
        };
        assert_eq!(e.socket_path(), "/tmp/.s.PGSQL.5999");
    }
}
