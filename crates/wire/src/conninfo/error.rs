//! Errors raised while parsing and resolving connection parameters.

use thiserror::Error;

/// A connection-parameter error; `Display` is libpq's exact message (without
/// the trailing newline libpq appends).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConninfoError {
    /// A keyword libpq does not know.
    #[error("invalid connection option \"{0}\"")]
    InvalidOption(String),
    /// A keyword not followed by `=` in a keyword/value string.
    #[error("missing \"=\" after \"{0}\" in connection info string")]
    MissingEquals(String),
    /// A single-quoted value without its closing quote.
    #[error("unterminated quoted string in connection info string")]
    UnterminatedQuote,
    /// The URI parser was handed a string without a URI prefix.
    #[error("invalid URI propagated to internal parser routine: \"{0}\"")]
    InvalidUriPrefix(String),
    /// `[` without a matching `]` in a URI.
    #[error(
        "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"{0}\""
    )]
    UnterminatedIpv6(String),
    /// `[]` in a URI.
    #[error("IPv6 host address may not be empty in URI: \"{0}\"")]
    EmptyIpv6(String),
    /// A character after `]` that is not `:`, `/`, `?` or `,`.
    #[error(
        "unexpected character \"{ch}\" at position {position} in URI (expected \":\" or \"/\"): \"{uri}\""
    )]
    UnexpectedUriCharacter {
        /// The offending character.
        ch: char,
        /// Its 1-based byte position in the URI.
        position: usize,
        /// The whole URI.
        uri: String,
    },
    /// `%` not followed by two hexadecimal digits.
    #[error("invalid percent-encoded token: \"{0}\"")]
    InvalidPercentToken(String),
    /// `%00` in a URI component.
    #[error("forbidden value %00 in percent-encoded value: \"{0}\"")]
    ForbiddenNul(String),
    /// An unencoded space inside a URI component.
    #[error("unexpected spaces found in \"{0}\", use percent-encoded spaces (%20) instead")]
    UnexpectedSpaces(String),
    /// Two `=` in one URI query parameter.
    #[error("extra key/value separator \"=\" in URI query parameter: \"{0}\"")]
    ExtraQuerySeparator(String),
    /// A URI query parameter without `=`.
    #[error("missing key/value separator \"=\" in URI query parameter: \"{0}\"")]
    MissingQuerySeparator(String),
    /// An unknown keyword in a URI query.
    #[error("invalid URI query parameter: \"{0}\"")]
    InvalidQueryParameter(String),
    /// The service file named by PGSERVICEFILE cannot be opened.
    #[error("service file \"{0}\" not found")]
    ServiceFileNotFound(String),
    /// A service file line of 1023 bytes or more.
    #[error("line {line} too long in service file \"{file}\"")]
    ServiceLineTooLong {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
    },
    /// A service file line without `=` or with an unknown keyword.
    #[error("syntax error in service file \"{file}\", line {line}")]
    ServiceSyntax {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
    },
    /// `service=` inside a service definition.
    #[error("nested service specifications not supported in service file \"{file}\", line {line}")]
    ServiceNested {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
    },
    /// No definition of the requested service in any service file.
    #[error("definition of service \"{0}\" not found")]
    ServiceNotFound(String),
    /// `host` and `hostaddr` lists of different lengths.
    #[error("could not match {hosts} host names to {hostaddrs} hostaddr values")]
    HostCountMismatch {
        /// Number of host names.
        hosts: usize,
        /// Number of hostaddr values.
        hostaddrs: usize,
    },
    /// A `port` list that is neither one port nor one per host.
    #[error("could not match {ports} port numbers to {hosts} hosts")]
    PortCountMismatch {
        /// Number of ports.
        ports: usize,
        /// Number of hosts.
        hosts: usize,
    },
    /// The local user name could not be determined (libpq's message).
    #[error("{0}")]
    UserLookup(String),
    /// A value outside an option's allowed set, e.g. `invalid sslmode value: "x"`.
    #[error("invalid {option} value: \"{value}\"")]
    InvalidValue {
        /// The option.
        option: &'static str,
        /// The rejected value.
        value: String,
    },
    /// An invalid TLS protocol version (libpq quotes the option name here).
    #[error("invalid \"{option}\" value: \"{value}\"")]
    InvalidProtocolVersion {
        /// `ssl_min_protocol_version` or `ssl_max_protocol_version`.
        option: &'static str,
        /// The rejected value.
        value: String,
    },
    /// ssl_min_protocol_version above ssl_max_protocol_version.
    #[error("invalid SSL protocol version range")]
    InvalidSslRange,
    /// `sslnegotiation=direct` with an sslmode below require.
    #[error(
        "weak sslmode \"{0}\" may not be used with sslnegotiation=direct (use \"require\", \"verify-ca\", or \"verify-full\")"
    )]
    WeakSslModeDirect(String),
    /// `sslrootcert=system` with an sslmode other than verify-full.
    #[error("weak sslmode \"{0}\" may not be used with sslrootcert=system (use \"verify-full\")")]
    WeakSslModeSystem(String),
    /// `gssencmode=require` when the GSSAPI library cannot be loaded (libpq
    /// built without GSSAPI says `... when GSSAPI support is not compiled in`;
    /// the loader's reason follows here).
    #[error("gssencmode value \"{0}\" invalid when GSSAPI support is not available: {1}")]
    GssNotAvailable(String, String),
    /// `require_auth` mixing `!method` after plain methods.
    #[error("negative require_auth method \"{0}\" cannot be mixed with non-negative methods")]
    RequireAuthNegativeMixed(String),
    /// `require_auth` mixing plain methods after `!method`.
    #[error("require_auth method \"{0}\" cannot be mixed with negative methods")]
    RequireAuthPositiveMixed(String),
    /// The same `require_auth` method twice.
    #[error("require_auth method \"{0}\" is specified more than once")]
    RequireAuthDuplicate(String),
    /// A malformed `scram_client_key` / `scram_server_key` (`client` or `server`).
    #[error("invalid SCRAM {0} key")]
    InvalidScramKey(&'static str),
    /// A SCRAM key that does not decode to 32 bytes.
    #[error("invalid SCRAM {which} key length: {len}")]
    ScramKeyLength {
        /// `client` or `server`.
        which: &'static str,
        /// The decoded length.
        len: usize,
    },
    /// min_protocol_version above max_protocol_version.
    #[error("\"min_protocol_version\" is greater than \"max_protocol_version\"")]
    ProtocolVersionRange,
    /// A value that should be an integer (connect_timeout, keepalives, port, ...).
    #[error("invalid integer value \"{value}\" for connection option \"{option}\"")]
    InvalidInteger {
        /// The option.
        option: &'static str,
        /// The rejected value.
        value: String,
    },
    /// A port outside 1..=65535.
    #[error("invalid port number: \"{0}\"")]
    InvalidPort(String),
}
