//! Connection parameters exactly as libpq 18 resolves them.
//!
//! - [`parse_conninfo`] is `PQconninfoParse`: keyword/value strings and
//!   `postgresql://` URIs, with libpq's accepted syntax and error texts.
//! - [`resolve`] / [`resolve_with`] apply libpq's precedence to a
//!   [`ConnectRequest`] (the parameters pgbench passes to
//!   `PQconnectdbParams` with `expand_dbname`): explicit values and an
//!   expanded dbname conninfo, then the service file, the environment
//!   variables and the compiled-in defaults, then the checks and derived
//!   values of libpq's `pqConnectOptions2` (host list, sslmode, ...).
//!   A [`ConnectRequest`] without `dbname` gets pgbench's own default first
//!   (non-empty `PGDATABASE`, else `PGUSER`, else the OS user), which pgbench
//!   passes explicitly and which therefore beats a service file's `dbname`.
//! - [`ConnParams`] carries the result: [`ConnParams::hosts`] (one
//!   [`HostTarget`] per host/hostaddr/port triple; [`ConnParams::hosts_in_connect_order`]
//!   applies `load_balance_hosts=random`), typed getters for everything the
//!   connection needs, and [`ConnParams::startup_parameters`].
//! - [`redact_argv`] / [`redact_argument`] hide the passwords of connection
//!   strings and URIs (found by this parser) and of `NAME=value` secrets in
//!   a command line, before anything shows or stores it.
//! - [`lookup_password`] reads the password file for one host entry and
//!   returns libpq's warning text for the caller to print.
//! - [`names_server`] says whether `PGHOST`, `PGPORT` or `PGDATABASE` names a server
//!   (pgrush's choice between connecting and starting a throwaway cluster).
//! - Errors ([`ConninfoError`]) display libpq's exact messages; checks libpq
//!   makes only when connecting (port number, `connect_timeout`, keepalives)
//!   are done by the corresponding getters.
//!
//! All reads of the environment and of files go through [`Environment`], so
//! tests can control them; [`ProcessEnvironment`] is the real one.
//!
//! Defaults that libpq fixes at build time are chosen as Debian's libpq
//! does: the socket directory [`DEFAULT_SOCKET_DIR`] (falling back to
//! [`FALLBACK_SOCKET_DIR`] when it does not exist) and the service-file
//! directory [`SYSCONFDIR`]. pgrush behaves as a libpq built with TLS and
//! GSSAPI: `sslmode` and `gssencmode` default to `prefer`; `gssencmode=require`
//! is refused only when the GSSAPI library cannot be loaded.

mod base64;
mod env;
mod error;
mod keywords;
mod locale;
mod params;
mod parse;
mod pgpass;
mod redact;
mod require_auth;
mod resolve;
mod service;
mod settings;
mod store;
mod uri;

pub use env::{Environment, FileContents, ProcessEnvironment, SERVER_VARIABLES, names_server};
pub use error::ConninfoError;
pub use keywords::{ENVIRONMENT_SETTINGS, KEYWORDS, Keyword, is_secret_name};
pub use params::{ConnParams, DEFAULT_PORT, HostKind, HostTarget, SslRootCert};
pub use parse::{is_connection_string, parse_conninfo};
pub use pgpass::{PasswordLookup, lookup_password, lookup_password_with};
pub use redact::{REDACTED, redact_argument, redact_argv};
pub use require_auth::{RequireAuth, SaslMechanism};
pub use resolve::{ConnectRequest, DEFAULT_SOCKET_DIR, FALLBACK_SOCKET_DIR, resolve, resolve_with};
pub use service::SYSCONFDIR;
pub use settings::{
    ChannelBinding, GssEncMode, LoadBalanceHosts, ProtocolVersion, SslCertMode, SslMode,
    SslNegotiation, TargetSessionAttrs, TlsVersion, parse_int_param,
};
