//! libpq's precedence: explicit parameters, an expanded dbname conninfo, the
//! service file, environment variables, compiled-in defaults; then the
//! derived values and checks of `pqConnectOptions2`.

use std::path::{Path, PathBuf};

use super::base64::base64_decode;
use super::env::{Environment, ProcessEnvironment};
use super::error::ConninfoError;
use super::keywords::{ENVIRONMENT_SETTINGS, KEYWORDS, OptionSet, index_of};
use super::locale::encoding_from_locale;
use super::params::{ConnParams, HostKind, HostTarget};
use super::parse::{is_connection_string, parse_to_set};
use super::require_auth::RequireAuth;
use super::service::apply_service;
use super::settings::{
    ChannelBinding, GssEncMode, LoadBalanceHosts, ProtocolVersion, SslCertMode, SslMode,
    SslNegotiation, TargetSessionAttrs, TlsVersion, tls_range_valid,
};

/// The default Unix socket directory of Debian's libpq (`DEFAULT_PGSOCKET_DIR`
/// in Debian's build), used when it exists.
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// The upstream default socket directory, used when [`DEFAULT_SOCKET_DIR`]
/// does not exist (libpq fixes one directory at build time; pgrush picks
/// Debian's when the machine has it, else upstream's, so it finds the local
/// server in both kinds of installation).
pub const FALLBACK_SOCKET_DIR: &str = "/tmp";

/// What the caller supplies, mirroring the keyword array pgbench passes to
/// `PQconnectdbParams` with `expand_dbname` (in this order: host, port,
/// user, password, dbname, fallback_application_name, then `extra`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectRequest {
    /// Database name, or a conninfo string / URI that is expanded in its
    /// place (its values override host, port, user and password). `None`
    /// applies pgbench's rule: `PGDATABASE`, else `PGUSER`, else the OS user
    /// (non-empty values only); that value is expanded the same way.
    pub dbname: Option<String>,
    /// `-h`.
    pub host: Option<String>,
    /// `-p`.
    pub port: Option<String>,
    /// `-U`.
    pub user: Option<String>,
    /// A password obtained by prompting.
    pub password: Option<String>,
    /// pgbench passes its program name here.
    pub fallback_application_name: Option<String>,
    /// Further keyword/value pairs, applied last (unknown keywords are an
    /// error: `invalid connection option "..."`).
    pub extra: Vec<(String, String)>,
}

/// Resolves connection parameters against the real process environment.
pub fn resolve(request: &ConnectRequest) -> Result<ConnParams, ConninfoError> {
    resolve_with(request, &ProcessEnvironment)
}

/// pgbench's own default database name.
fn pgbench_default_dbname(env: &dyn Environment) -> Option<String> {
    ["PGDATABASE", "PGUSER"]
        .iter()
        .find_map(|v| env.var(v).filter(|s| !s.is_empty()))
        .or_else(|| env.os_user_name().ok())
}

/// Resolves connection parameters against `env`.
pub fn resolve_with(
    request: &ConnectRequest,
    env: &dyn Environment,
) -> Result<ConnParams, ConninfoError> {
    let dbname = match &request.dbname {
        Some(d) => Some(d.clone()),
        None => pgbench_default_dbname(env),
    };
    let mut entries: Vec<(&str, Option<&str>)> = vec![
        ("host", request.host.as_deref()),
        ("port", request.port.as_deref()),
        ("user", request.user.as_deref()),
        ("password", request.password.as_deref()),
        ("dbname", dbname.as_deref()),
        (
            "fallback_application_name",
            request.fallback_application_name.as_deref(),
        ),
    ];
    entries.extend(
        request
            .extra
            .iter()
            .map(|(k, v)| (k.as_str(), Some(v.as_str()))),
    );
    let mut options = array_parse(&entries)?;
    add_defaults(&mut options, env)?;
    finish(options, env)
}

/// `conninfo_array_parse` with `expand_dbname`.
fn array_parse(entries: &[(&str, Option<&str>)]) -> Result<OptionSet, ConninfoError> {
    let mut expanded = match entries.iter().find(|(k, v)| *k == "dbname" && v.is_some()) {
        Some((_, Some(v))) if is_connection_string(v) => Some(parse_to_set(v)?),
        _ => None,
    };
    let mut options = OptionSet::new();
    for (keyword, value) in entries {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            continue;
        };
        let index =
            index_of(keyword).ok_or_else(|| ConninfoError::InvalidOption(keyword.to_string()))?;
        match expanded.take() {
            Some(parsed) if *keyword == "dbname" => {
                for i in 0..KEYWORDS.len() {
                    if let Some(v) = parsed.get_index(i) {
                        options.set_index(i, v.to_string());
                    }
                }
            }
            other => {
                expanded = other;
                options.set_index(index, value.to_string());
            }
        }
    }
    Ok(options)
}

/// `conninfo_add_defaults`: service file, environment, compiled defaults,
/// the OS user name.
fn add_defaults(options: &mut OptionSet, env: &dyn Environment) -> Result<(), ConninfoError> {
    apply_service(options, env)?;
    let mut sslmode_defaulted = false;
    for (i, kw) in KEYWORDS.iter().enumerate() {
        if options.get_index(i).is_some() {
            continue;
        }
        if let Some(v) = kw.envvar.and_then(|e| env.var(e)) {
            options.set_index(i, v);
            continue;
        }
        if kw.name == "sslmode" {
            if env.var("PGREQUIRESSL").is_some_and(|v| v.starts_with('1')) {
                options.set_index(i, "require".to_string());
                continue;
            }
            sslmode_defaulted = true;
        }
        if let Some(d) = kw.default {
            options.set_index(i, d.to_string());
            continue;
        }
        let os_user = (kw.name == "user")
            .then(|| env.os_user_name().ok())
            .flatten();
        if let Some(name) = os_user {
            options.set_index(i, name);
        }
    }
    if sslmode_defaulted && options.get("sslrootcert") == Some("system") {
        options.set("sslmode", "verify-full".to_string());
    }
    Ok(())
}

/// libpq's `is_unixsock_path`.
fn is_unix_socket_path(s: &str) -> bool {
    s.starts_with('/') || s.starts_with('@')
}

fn default_socket_dir(env: &dyn Environment) -> &'static str {
    if env.is_dir(Path::new(DEFAULT_SOCKET_DIR)) {
        DEFAULT_SOCKET_DIR
    } else {
        FALLBACK_SOCKET_DIR
    }
}

fn count_items(s: &str) -> usize {
    s.split(',').count()
}

/// Pairs the host, hostaddr and port lists.
fn build_hosts(options: &OptionSet, socket_dir: &str) -> Result<Vec<HostTarget>, ConninfoError> {
    let host = options.get("host").filter(|v| !v.is_empty());
    let hostaddr = options.get("hostaddr").filter(|v| !v.is_empty());
    let port = options.get("port").filter(|v| !v.is_empty());

    let count = match (hostaddr, host) {
        (Some(a), _) => count_items(a),
        (None, Some(h)) => count_items(h),
        (None, None) => 1,
    };
    let addrs: Vec<Option<String>> = match hostaddr {
        Some(a) => a.split(',').map(|s| Some(s.to_string())).collect(),
        None => vec![None; count],
    };
    let names: Vec<Option<String>> = match host {
        Some(h) => {
            let n = count_items(h);
            if n != count {
                return Err(ConninfoError::HostCountMismatch {
                    hosts: n,
                    hostaddrs: count,
                });
            }
            h.split(',').map(|s| Some(s.to_string())).collect()
        }
        None => vec![None; count],
    };
    let ports: Vec<String> = match port {
        None => vec![String::new(); count],
        Some(p) => {
            let list: Vec<&str> = p.split(',').collect();
            if list.len() == 1 {
                vec![list[0].to_string(); count]
            } else if list.len() == count {
                list.iter().map(|s| s.to_string()).collect()
            } else {
                return Err(ConninfoError::PortCountMismatch {
                    ports: list.len(),
                    hosts: count,
                });
            }
        }
    };

    Ok(addrs
        .into_iter()
        .zip(names)
        .zip(ports)
        .map(|((hostaddr, host), port)| {
            let (host, kind) = if hostaddr.as_deref().is_some_and(|a| !a.is_empty()) {
                (host, HostKind::Address)
            } else if let Some(h) = host.filter(|h| !h.is_empty()) {
                let kind = if is_unix_socket_path(&h) {
                    HostKind::UnixSocket
                } else {
                    HostKind::Name
                };
                (Some(h), kind)
            } else {
                (Some(socket_dir.to_string()), HostKind::UnixSocket)
            };
            HostTarget {
                host,
                hostaddr,
                port,
                kind,
            }
        })
        .collect())
}

/// `pqConnectOptions2`, minus the password file (read at connect time by
/// [`super::pgpass::lookup_password`]).
fn finish(mut options: OptionSet, env: &dyn Environment) -> Result<ConnParams, ConninfoError> {
    let socket_dir = default_socket_dir(env);
    let hosts = build_hosts(&options, socket_dir)?;
    let (user, dbname) = user_and_dbname(&mut options, env)?;
    let home = env.home_dir();
    let passfile = passfile(&options, home.as_deref());

    let require_auth = RequireAuth::parse(options.get("require_auth").unwrap_or(""))?;
    let channel_binding = setting_or(
        &options,
        "channel_binding",
        ChannelBinding::parse,
        ChannelBinding::Prefer,
    )?;
    let tls = TlsSettings::from_options(&options)?;
    let gssencmode = setting_or(
        &options,
        "gssencmode",
        GssEncMode::parse,
        GssEncMode::Prefer,
    )?;
    if gssencmode == GssEncMode::Require
        && let Err(reason) = crate::gss::library()
    {
        return Err(ConninfoError::GssNotAvailable(
            "require".to_string(),
            reason.to_string(),
        ));
    }
    let target_session_attrs = setting_or(
        &options,
        "target_session_attrs",
        TargetSessionAttrs::parse,
        TargetSessionAttrs::Any,
    )?;
    let scram_client_key = scram_key(&options, "scram_client_key", "client")?;
    let scram_server_key = scram_key(&options, "scram_server_key", "server")?;
    let load_balance_hosts = setting_or(
        &options,
        "load_balance_hosts",
        LoadBalanceHosts::parse,
        LoadBalanceHosts::Disable,
    )?;
    let (min_protocol_version, max_protocol_version) = protocol_range(&options)?;
    let client_encoding = client_encoding(&options, env);
    let environment_settings = environment_settings(env);

    Ok(ConnParams {
        options,
        hosts,
        user,
        dbname,
        passfile,
        home,
        default_socket_dir: socket_dir.to_string(),
        sslmode: tls.sslmode,
        sslnegotiation: tls.sslnegotiation,
        sslcertmode: tls.sslcertmode,
        gssencmode,
        channel_binding,
        target_session_attrs,
        load_balance_hosts,
        min_protocol_version,
        max_protocol_version,
        ssl_min_protocol_version: tls.ssl_min_protocol_version,
        ssl_max_protocol_version: tls.ssl_max_protocol_version,
        require_auth,
        client_encoding,
        scram_client_key,
        scram_server_key,
        environment_settings,
    })
}

/// The user (the OS user when unset or empty) and the database (the user
/// when unset or empty), both written back into `options`.
fn user_and_dbname(
    options: &mut OptionSet,
    env: &dyn Environment,
) -> Result<(String, String), ConninfoError> {
    let user = match options.get("user").filter(|u| !u.is_empty()) {
        Some(u) => u.to_string(),
        None => env.os_user_name().map_err(ConninfoError::UserLookup)?,
    };
    options.set("user", user.clone());
    let dbname = match options.get("dbname").filter(|d| !d.is_empty()) {
        Some(d) => d.to_string(),
        None => user.clone(),
    };
    options.set("dbname", dbname.clone());
    Ok((user, dbname))
}

/// The password file: `passfile` when set and not empty, else `~/.pgpass`.
fn passfile(options: &OptionSet, home: Option<&Path>) -> Option<PathBuf> {
    match options.get("passfile").filter(|p| !p.is_empty()) {
        Some(p) => Some(crate::lossless::to_path(p)),
        None => home.map(|h| {
            let mut file = h.as_os_str().to_owned();
            file.push("/.pgpass");
            PathBuf::from(file)
        }),
    }
}

/// The option `name` parsed by `parse`, or `default` when it is unset.
fn setting_or<T>(
    options: &OptionSet,
    name: &str,
    parse: fn(&str) -> Result<T, ConninfoError>,
    default: T,
) -> Result<T, ConninfoError> {
    match options.get(name) {
        Some(v) => parse(v),
        None => Ok(default),
    }
}

/// The TLS options, checked against each other as `pqConnectOptions2` does.
struct TlsSettings {
    /// `sslmode` (default `prefer`).
    sslmode: SslMode,
    /// `sslnegotiation` (default `postgres`; `direct` needs a mode that requires TLS).
    sslnegotiation: SslNegotiation,
    /// `sslcertmode` (default `allow`).
    sslcertmode: SslCertMode,
    /// `ssl_min_protocol_version` (None: no bound).
    ssl_min_protocol_version: Option<TlsVersion>,
    /// `ssl_max_protocol_version` (None: no bound).
    ssl_max_protocol_version: Option<TlsVersion>,
}

impl TlsSettings {
    /// Parses and checks the TLS options, in libpq's order of checks.
    fn from_options(options: &OptionSet) -> Result<Self, ConninfoError> {
        let sslmode = setting_or(options, "sslmode", SslMode::parse, SslMode::Prefer)?;
        let sslnegotiation = match options.get("sslnegotiation") {
            Some(v) => {
                let n = SslNegotiation::parse(v)?;
                if n == SslNegotiation::Direct && !sslmode.requires_tls() {
                    return Err(ConninfoError::WeakSslModeDirect(
                        sslmode.as_str().to_string(),
                    ));
                }
                n
            }
            None => SslNegotiation::Postgres,
        };
        if options.get("sslrootcert") == Some("system") && sslmode != SslMode::VerifyFull {
            return Err(ConninfoError::WeakSslModeSystem(
                sslmode.as_str().to_string(),
            ));
        }
        let ssl_min = options.get("ssl_min_protocol_version").unwrap_or("");
        let ssl_max = options.get("ssl_max_protocol_version").unwrap_or("");
        let ssl_min_protocol_version = TlsVersion::parse(ssl_min, "ssl_min_protocol_version")?;
        let ssl_max_protocol_version = TlsVersion::parse(ssl_max, "ssl_max_protocol_version")?;
        if !tls_range_valid(ssl_min, ssl_max) {
            return Err(ConninfoError::InvalidSslRange);
        }
        let sslcertmode = setting_or(
            options,
            "sslcertmode",
            SslCertMode::parse,
            SslCertMode::Allow,
        )?;
        Ok(TlsSettings {
            sslmode,
            sslnegotiation,
            sslcertmode,
            ssl_min_protocol_version,
            ssl_max_protocol_version,
        })
    }
}

/// The SCRAM key in option `name` (`which`: `client` or `server`), decoded.
fn scram_key(
    options: &OptionSet,
    name: &str,
    which: &'static str,
) -> Result<Option<Vec<u8>>, ConninfoError> {
    options
        .get(name)
        .map(|k| decode_scram_key(k, which))
        .transpose()
}

/// `min_protocol_version` (default 3.0) and `max_protocol_version` (default
/// 3.2 when the minimum is higher than 3.0, else 3.0), in order.
fn protocol_range(
    options: &OptionSet,
) -> Result<(ProtocolVersion, ProtocolVersion), ConninfoError> {
    let min = match options.get("min_protocol_version") {
        Some(v) => ProtocolVersion::parse(v, "min_protocol_version")?,
        None => ProtocolVersion::V3_0,
    };
    let max = match options.get("max_protocol_version") {
        Some(v) => ProtocolVersion::parse(v, "max_protocol_version")?,
        None if min > ProtocolVersion::V3_0 => ProtocolVersion::V3_2,
        None => ProtocolVersion::V3_0,
    };
    if min > max {
        return Err(ConninfoError::ProtocolVersionRange);
    }
    Ok((min, max))
}

/// `client_encoding`, with `auto` replaced by the locale's encoding.
fn client_encoding(options: &OptionSet, env: &dyn Environment) -> Option<String> {
    options.get("client_encoding").map(|e| {
        if e == "auto" {
            encoding_from_locale(env).to_string()
        } else {
            e.to_string()
        }
    })
}

/// The settings the environment asks for (`PGDATESTYLE`, ...; see
/// [`ENVIRONMENT_SETTINGS`]), except those set to `default`.
fn environment_settings(env: &dyn Environment) -> Vec<(String, String)> {
    ENVIRONMENT_SETTINGS
        .iter()
        .filter_map(|(var, setting)| {
            env.var(var)
                .filter(|v| !v.eq_ignore_ascii_case("default"))
                .map(|v| (setting.to_string(), v))
        })
        .collect()
}

/// SCRAM keys are 32 bytes, base64-encoded.
fn decode_scram_key(text: &str, which: &'static str) -> Result<Vec<u8>, ConninfoError> {
    let bytes = base64_decode(text).ok_or(ConninfoError::InvalidScramKey(which))?;
    if bytes.len() != 32 {
        return Err(ConninfoError::ScramKeyLength {
            which,
            len: bytes.len(),
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_parse_expands_first_dbname_only() {
        let e = array_parse(&[
            ("host", Some("h")),
            ("dbname", Some("host=x port=1")),
            ("port", Some("2")),
            ("dbname", Some("a=b")),
        ]);
        let e = e.map(|s| s.to_pairs());
        assert_eq!(
            e,
            Ok(vec![
                ("dbname".to_string(), "a=b".to_string()),
                ("host".to_string(), "x".to_string()),
                ("port".to_string(), "2".to_string()),
            ])
        );
        assert_eq!(
            array_parse(&[("bogus", Some("1"))]).map_err(|e| e.to_string()),
            Err("invalid connection option \"bogus\"".to_string())
        );
        // Empty and missing values are skipped, unknown or not.
        assert_eq!(
            array_parse(&[("bogus", Some(""))]).map(|s| s.to_pairs()),
            Ok(vec![])
        );
    }
}
