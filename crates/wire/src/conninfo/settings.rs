//! Typed values of the enumerated connection options, with libpq's spellings.

use super::error::ConninfoError;

/// Declares an enum of option values with their libpq spellings.
macro_rules! option_enum {
    ($(#[$meta:meta])* $name:ident, $option:literal, { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// All values, in libpq's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// libpq's spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Parses libpq's spelling (case-sensitive, as libpq compares),
            /// failing with `invalid <option> value: "<value>"`.
            pub fn parse(value: &str) -> Result<Self, ConninfoError> {
                match value {
                    $($text => Ok($name::$variant),)+
                    _ => Err(ConninfoError::InvalidValue {
                        option: $option,
                        value: value.to_string(),
                    }),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

option_enum!(
    /// `sslmode`.
    SslMode, "sslmode", {
        /// Never TLS.
        Disable = "disable",
        /// Plain first, TLS if the server insists.
        Allow = "allow",
        /// TLS if the server supports it (the default).
        Prefer = "prefer",
        /// TLS required; the chain is verified only if a root file exists.
        Require = "require",
        /// TLS with a verified chain.
        VerifyCa = "verify-ca",
        /// TLS with a verified chain and host name.
        VerifyFull = "verify-full",
    }
);

impl SslMode {
    /// Whether the mode refuses a plain connection.
    pub fn requires_tls(self) -> bool {
        matches!(
            self,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
        )
    }
}

option_enum!(
    /// `sslnegotiation`.
    SslNegotiation, "sslnegotiation", {
        /// SSLRequest first (the default).
        Postgres = "postgres",
        /// TLS handshake immediately (ALPN `postgresql`).
        Direct = "direct",
    }
);

option_enum!(
    /// `sslcertmode`.
    SslCertMode, "sslcertmode", {
        /// Never send a client certificate.
        Disable = "disable",
        /// Send one if available and requested (the default).
        Allow = "allow",
        /// Fail unless the server asked for and got a certificate.
        Require = "require",
    }
);

option_enum!(
    /// `gssencmode`.
    GssEncMode, "gssencmode", {
        /// No GSSAPI encryption.
        Disable = "disable",
        /// Use it if possible (the default; tried only with a credential cache).
        Prefer = "prefer",
        /// Insist on it.
        Require = "require",
    }
);

option_enum!(
    /// `channel_binding`.
    ChannelBinding, "channel_binding", {
        /// Never use channel binding.
        Disable = "disable",
        /// Use it when the server offers SCRAM-SHA-256-PLUS over TLS (the default).
        Prefer = "prefer",
        /// Fail unless channel binding is used.
        Require = "require",
    }
);

option_enum!(
    /// `target_session_attrs`.
    TargetSessionAttrs, "target_session_attrs", {
        /// Any server (the default).
        Any = "any",
        /// A server accepting read-write transactions.
        ReadWrite = "read-write",
        /// A server in read-only mode.
        ReadOnly = "read-only",
        /// A server not in hot standby.
        Primary = "primary",
        /// A server in hot standby.
        Standby = "standby",
        /// A standby if there is one, else any.
        PreferStandby = "prefer-standby",
    }
);

option_enum!(
    /// `load_balance_hosts`.
    LoadBalanceHosts, "load_balance_hosts", {
        /// Try hosts in order (the default).
        Disable = "disable",
        /// Shuffle the host list first.
        Random = "random",
    }
);

/// Frontend/backend protocol versions (`min_protocol_version`,
/// `max_protocol_version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// 3.0.
    V3_0,
    /// 3.2 (`latest` in libpq 18).
    V3_2,
}

impl ProtocolVersion {
    /// The protocol number sent in the startup packet (major << 16 | minor).
    pub fn code(self) -> u32 {
        match self {
            ProtocolVersion::V3_0 => 3 << 16,
            ProtocolVersion::V3_2 => (3 << 16) | 2,
        }
    }

    /// Parses `3.0`, `3.2` or `latest` for `option`.
    pub fn parse(value: &str, option: &'static str) -> Result<Self, ConninfoError> {
        match value {
            "latest" | "3.2" => Ok(ProtocolVersion::V3_2),
            "3.0" => Ok(ProtocolVersion::V3_0),
            _ => Err(ConninfoError::InvalidValue {
                option,
                value: value.to_string(),
            }),
        }
    }
}

/// TLS protocol versions (`ssl_min_protocol_version`, `ssl_max_protocol_version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TlsVersion {
    /// TLSv1.
    Tls1_0,
    /// TLSv1.1.
    Tls1_1,
    /// TLSv1.2.
    Tls1_2,
    /// TLSv1.3.
    Tls1_3,
}

impl TlsVersion {
    /// Parses libpq's spellings case-insensitively; the empty string means
    /// "no bound" (`Ok(None)`).
    pub fn parse(value: &str, option: &'static str) -> Result<Option<Self>, ConninfoError> {
        let v = value.to_ascii_lowercase();
        match v.as_str() {
            "" => Ok(None),
            "tlsv1" => Ok(Some(TlsVersion::Tls1_0)),
            "tlsv1.1" => Ok(Some(TlsVersion::Tls1_1)),
            "tlsv1.2" => Ok(Some(TlsVersion::Tls1_2)),
            "tlsv1.3" => Ok(Some(TlsVersion::Tls1_3)),
            _ => Err(ConninfoError::InvalidProtocolVersion {
                option,
                value: value.to_string(),
            }),
        }
    }
}

/// libpq's `sslVerifyProtocolRange` on already validated strings.
pub(crate) fn tls_range_valid(min: &str, max: &str) -> bool {
    if min.is_empty() || max.is_empty() {
        return true;
    }
    if min.eq_ignore_ascii_case("TLSv1") {
        return true;
    }
    if max.eq_ignore_ascii_case("TLSv1") {
        return false;
    }
    min.to_ascii_lowercase() <= max.to_ascii_lowercase()
}

/// libpq's `pqParseIntParam`: PostgreSQL's `strtoint` (base 10: white space, a
/// sign, digits; the value must fit a C `int`), then only white space may
/// follow, and a value without digits is an error. These rules differ from
/// `atoi` (which ignores what follows) and from `option_parse_int` (which takes
/// an empty value as 0), so libpq's check is this thin wrapper over the shared
/// `strtoint`.
pub fn parse_int_param(value: &str, option: &'static str) -> Result<i32, ConninfoError> {
    let bytes = value.as_bytes();
    let r = pgrush_cconv::strtoint(bytes);
    if r.consumed == 0 || r.out_of_range || !r.rest_is_space(bytes) {
        return Err(ConninfoError::InvalidInteger {
            option,
            value: value.to_string(),
        });
    }
    Ok(r.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip_and_reject() {
        for m in SslMode::ALL {
            assert_eq!(SslMode::parse(m.as_str()), Ok(*m));
        }
        assert_eq!(
            SslMode::parse("Require").map_err(|e| e.to_string()),
            Err("invalid sslmode value: \"Require\"".to_string())
        );
        assert_eq!(
            TargetSessionAttrs::parse("prefer-standby"),
            Ok(TargetSessionAttrs::PreferStandby)
        );
        assert!(SslMode::VerifyCa.requires_tls());
        assert!(!SslMode::Prefer.requires_tls());
    }

    #[test]
    fn int_params_follow_strtol() {
        assert_eq!(parse_int_param(" 10 ", "connect_timeout"), Ok(10));
        assert_eq!(parse_int_param("-3", "connect_timeout"), Ok(-3));
        assert_eq!(parse_int_param("+3", "connect_timeout"), Ok(3));
        assert_eq!(
            parse_int_param("10s", "connect_timeout").map_err(|e| e.to_string()),
            Err("invalid integer value \"10s\" for connection option \"connect_timeout\"".into())
        );
        assert!(parse_int_param("", "port").is_err());
        assert!(parse_int_param("2147483648", "port").is_err());
        assert_eq!(parse_int_param("-2147483648", "port"), Ok(i32::MIN));
        assert!(parse_int_param("99999999999999999999999", "port").is_err());
    }

    #[test]
    fn tls_versions() {
        assert_eq!(
            TlsVersion::parse("tlsv1.3", "x"),
            Ok(Some(TlsVersion::Tls1_3))
        );
        assert_eq!(TlsVersion::parse("", "x"), Ok(None));
        assert!(TlsVersion::parse("TLSv1.4", "ssl_min_protocol_version").is_err());
        assert!(tls_range_valid("TLSv1.2", "TLSv1.3"));
        assert!(!tls_range_valid("TLSv1.3", "TLSv1.2"));
        assert!(!tls_range_valid("TLSv1.2", "TLSv1"));
        assert!(tls_range_valid("TLSv1", "TLSv1"));
    }
}
