//! pgrush's PostgreSQL client, without libpq.
//!
//! - [`conninfo`]: connection parameters resolved exactly as libpq does (conninfo
//!   strings and URIs, environment, service file, password file).
//! - [`Connection::connect`] (blocking) takes the resolved [`conninfo::ConnParams`]:
//!   host lists tried in order, TCP (IPv4/IPv6, `hostaddr`) and Unix sockets
//!   (including `@abstract` ones), `connect_timeout` per address, TLS with rustls and
//!   libpq's `sslmode` semantics (chain verified whenever a root file exists; host
//!   names checked against SANs with CN fallback), `sslnegotiation=direct`,
//!   `sslkeylogfile`, TLS version bounds, client certificates (encrypted keys with
//!   `sslpassword`), `sslcertmode`, CRLs (`sslcrl`, `sslcrldir`), trust /
//!   cleartext / md5 / SCRAM-SHA-256 / SCRAM-SHA-256-PLUS authentication,
//!   `channel_binding`, `require_auth`, `target_session_attrs`, protocol 3.0 or 3.2,
//!   and GSSAPI (Kerberos): `gssencmode` encryption of the whole connection and
//!   GSSAPI authentication, with the system's `libgssapi_krb5.so.2` loaded at run
//!   time only when a connection needs it ([`GSSAPI_LIBRARY_VARIABLE`] names another).
//!   A failure's `Display` is libpq's `PQerrorMessage` text without the final newline.
//!   [`Connection::connect_config`] does the same from an explicit [`ConnectConfig`].
//! - Blocking helpers for setup work: [`Connection::simple_query`],
//!   [`Connection::exec_params`], [`Connection::copy_in`] ([`CopyIn`]),
//!   [`Connection::close`]. Errors ([`Error`]) render as libpq does with
//!   [`Error::libpq_message`] (`ERROR:  ...`, `DETAIL:`, `HINT:`, `LINE n:` + caret).
//! - Non-blocking path for the engine, allocation-free once the buffers are warm:
//!   queue messages ([`Connection::queue_parse`], [`Connection::queue_bind`],
//!   [`Connection::queue_describe_portal`], [`Connection::queue_execute`],
//!   [`Connection::queue_sync`], [`Connection::queue_query`]...), call
//!   [`Connection::flush`] until it returns `true` (wait for POLLOUT in between),
//!   then [`Connection::read_some`] when the socket ([`std::os::fd::AsRawFd`]) is
//!   readable and [`Connection::next_message`] until it returns `None`. Messages
//!   ([`BackendMessage`]) borrow the input buffer (DataRow fields are
//!   `Option<&[u8]>`). Notices go to the notice handler (default: stderr, like
//!   libpq), parameter reports update [`Connection::parameter`]. Several queued
//!   Parse/Bind/Execute before one Sync form a pipeline: results come back in order,
//!   and after an error the server skips to the Sync's ReadyForQuery.
//! - [`CancelToken::cancel`] sends a CancelRequest on a new socket.

#![deny(missing_docs)]

mod auth;
mod backend;
mod cancel;
mod config;
mod conn;
mod connect;
pub mod conninfo;
mod encoding;
mod error;
mod frontend;
mod gss;
pub mod lossless;
mod params;
mod position;
mod query;
#[cfg(target_os = "linux")]
pub mod socket_io;
mod spare;
mod tls;
mod transport;

pub use backend::{
    BackendMessage, DataRow, FieldDescription, PlainStop, PlainTally, RowDescription,
    TransactionStatus, decode as decode_backend_message, scan_plain,
};
pub use cancel::CancelToken;
pub use config::{ConnectConfig, Endpoint, EndpointKind, GssEncMode, GssSettings};
pub use conn::{Connection, NoticeHandler, ReadOutcome};
pub use encoding::{ClientEncoding, MultibyteEncoding};
pub use error::{ConnectError, DbError, Error, ErrorFields, strerror};
pub use frontend::{BindHead, EncodeRefusal};
pub use gss::{
    DEFAULT_LIBRARY as DEFAULT_GSSAPI_LIBRARY, LIBRARY_VARIABLE as GSSAPI_LIBRARY_VARIABLE,
};
pub use query::{CopyIn, QueryResult};
pub use spare::ParamBuf;
