//! Converting resolved [`ConnParams`] into a [`ConnectConfig`] and connecting with them.

use crate::config::{
    self, ChannelBindingMode, ConnectConfig, Endpoint, EndpointKind, GssEncMode, GssSettings,
    SslMode, TargetSessionAttrs, TcpSettings, TlsSettings,
};
use crate::conn::Connection;
use crate::conninfo::{self, ConnParams, HostKind, SslRootCert};
use crate::error::ConnectError;

fn err(e: conninfo::ConninfoError) -> ConnectError {
    ConnectError::new(e.to_string(), None)
}

fn ssl_mode(m: conninfo::SslMode) -> SslMode {
    match m {
        conninfo::SslMode::Disable => SslMode::Disable,
        conninfo::SslMode::Allow => SslMode::Allow,
        conninfo::SslMode::Prefer => SslMode::Prefer,
        conninfo::SslMode::Require => SslMode::Require,
        conninfo::SslMode::VerifyCa => SslMode::VerifyCa,
        conninfo::SslMode::VerifyFull => SslMode::VerifyFull,
    }
}

fn gss_settings(params: &ConnParams) -> GssSettings {
    GssSettings {
        enc_mode: match params.gssencmode() {
            conninfo::GssEncMode::Disable => GssEncMode::Disable,
            conninfo::GssEncMode::Prefer => GssEncMode::Prefer,
            conninfo::GssEncMode::Require => GssEncMode::Require,
        },
        service_name: params.get("krbsrvname").unwrap_or("postgres").to_string(),
        // libpq looks at the first character only.
        delegation: params
            .get("gssdelegation")
            .is_some_and(|d| d.starts_with('1')),
    }
}

fn channel_binding(c: conninfo::ChannelBinding) -> ChannelBindingMode {
    match c {
        conninfo::ChannelBinding::Disable => ChannelBindingMode::Disable,
        conninfo::ChannelBinding::Prefer => ChannelBindingMode::Prefer,
        conninfo::ChannelBinding::Require => ChannelBindingMode::Require,
    }
}

fn target(t: conninfo::TargetSessionAttrs) -> TargetSessionAttrs {
    match t {
        conninfo::TargetSessionAttrs::Any => TargetSessionAttrs::Any,
        conninfo::TargetSessionAttrs::ReadWrite => TargetSessionAttrs::ReadWrite,
        conninfo::TargetSessionAttrs::ReadOnly => TargetSessionAttrs::ReadOnly,
        conninfo::TargetSessionAttrs::Primary => TargetSessionAttrs::Primary,
        conninfo::TargetSessionAttrs::Standby => TargetSessionAttrs::Standby,
        conninfo::TargetSessionAttrs::PreferStandby => TargetSessionAttrs::PreferStandby,
    }
}

impl ConnectConfig {
    /// Builds the configuration from resolved parameters. Looks up the password file
    /// for each host (printing libpq's permission warning on stderr, as libpq does).
    pub fn from_params(params: &ConnParams) -> Result<ConnectConfig, ConnectError> {
        let mut endpoints = Vec::with_capacity(params.hosts().len());
        for h in params.hosts() {
            // A non-integer port fails the whole connection; an out-of-range one only
            // this host (reported when it is tried), as libpq does.
            match h.port_number() {
                Ok(_) | Err(conninfo::ConninfoError::InvalidPort(_)) => {}
                Err(e) => return Err(err(e)),
            }
            let lookup = conninfo::lookup_password(params, h);
            if let Some(w) = &lookup.warning {
                eprintln!("{w}");
            }
            let pgpass = match (lookup.password, params.passfile()) {
                (Some(p), Some(file)) => Some((p, file.display().to_string())),
                _ => None,
            };
            endpoints.push(Endpoint {
                host: h.host.clone().unwrap_or_default(),
                hostaddr: h.hostaddr.clone(),
                port: h.port.clone(),
                kind: if h.kind == HostKind::UnixSocket {
                    EndpointKind::Unix
                } else {
                    EndpointKind::Tcp
                },
                pgpass,
            });
        }
        // libpq parses connect_timeout only once the first attempt is under way.
        let (timeout, invalid_timeout) = match params.connect_timeout() {
            Ok(t) => (t.map(|d| d.as_secs() as i64).unwrap_or(0), None),
            Err(e) => (0, Some(e.to_string())),
        };
        Ok(ConnectConfig {
            endpoints,
            user: params.user().to_string(),
            dbname: params.dbname().to_string(),
            password: params.password().map(str::to_string),
            application_name: params.application_name().map(str::to_string),
            fallback_application_name: params.fallback_application_name().map(str::to_string),
            options: params.options().map(str::to_string),
            client_encoding: params.client_encoding().map(str::to_string),
            connect_timeout: config::connect_timeout_from_secs(timeout),
            invalid_connect_timeout: invalid_timeout,
            tls: TlsSettings {
                mode: ssl_mode(params.sslmode()),
                rootcert: params.sslrootcert().map(|r| match r {
                    SslRootCert::System => "system".to_string(),
                    SslRootCert::File(p) => p.display().to_string(),
                }),
                cert: params.sslcert(),
                key: params.sslkey(),
                sni: params.sslsni(),
                no_client_cert: params.sslcertmode() == conninfo::SslCertMode::Disable,
                max_tls12: params
                    .ssl_max_protocol_version()
                    .is_some_and(|v| v < conninfo::TlsVersion::Tls1_3),
                min_tls13: params.ssl_min_protocol_version() == Some(conninfo::TlsVersion::Tls1_3),
                direct: params.sslnegotiation() == conninfo::SslNegotiation::Direct,
                keylog_file: params.sslkeylogfile().map(std::path::PathBuf::from),
                crl: params.sslcrl(),
                crldir: params.sslcrldir(),
                password: params.sslpassword().map(str::to_string),
                cert_required: params.sslcertmode() == conninfo::SslCertMode::Require,
                protocol_range: (
                    params
                        .get("ssl_min_protocol_version")
                        .unwrap_or("TLSv1")
                        .to_string(),
                    params
                        .get("ssl_max_protocol_version")
                        .unwrap_or("TLSv1.3")
                        .to_string(),
                ),
            },
            gss: gss_settings(params),
            tcp: TcpSettings {
                keepalives_off: !params.keepalives().map_err(err)?,
                keepalives_idle: params.keepalives_idle().map_err(err)?,
                keepalives_interval: params.keepalives_interval().map_err(err)?,
                keepalives_count: params.keepalives_count().map_err(err)?,
                user_timeout: params.tcp_user_timeout().map_err(err)?,
            },
            requirepeer: params.requirepeer().map(str::to_string),
            protocol_minor: (params.max_protocol_version().code() & 0xffff) as u16,
            min_protocol_minor: (params.min_protocol_version().code() & 0xffff) as u16,
            load_balance: params.load_balance_hosts() == conninfo::LoadBalanceHosts::Random,
            channel_binding: channel_binding(params.channel_binding()),
            target_session_attrs: target(params.target_session_attrs()),
            require_auth: params
                .get("require_auth")
                .filter(|v| !v.is_empty())
                .map(|v| (v.to_string(), params.require_auth().clone())),
            startup: params.startup_parameters(),
        })
    }
}

impl Connection {
    /// Connects as libpq's `PQconnectdbParams` would with these parameters. The error's
    /// `Display` is libpq's `PQerrorMessage` without the final newline.
    pub fn connect(params: &ConnParams) -> Result<Connection, ConnectError> {
        let cfg = ConnectConfig::from_params(params)?;
        Connection::connect_config(&cfg)
    }
}
