//! pgrush's PostgreSQL client (no libpq): connection parameters resolved as libpq does
//! ([`conninfo`]), TCP/Unix sockets, TLS with rustls, trust/password/md5/SCRAM
//! authentication, libpq's error texts, blocking helpers for setup work and a
//! non-blocking, allocation-free message path for the benchmark engine.
//!
//! Non-blocking use (the engine): queue messages (`queue_parse`, `queue_bind`,
//! `queue_execute`, `queue_sync`...), `flush()` until it returns `true`, then
//! `read_some()` when the socket is readable and `next_message()` until it
//! returns `None`. Several queued Parse/Bind/Execute before one Sync form a
//! pipeline; results come back in order, and after an error the server skips to
//! the Sync (ReadyForQuery).

#![deny(missing_docs)]

mod auth;
pub mod backend;
mod cancel;
pub mod config;
mod conn;
mod connect;
pub mod conninfo;
mod error;
mod params;
mod position;
mod query;
mod tls;
mod transport;

pub use backend::{BackendMessage, DataRow, FieldDescription, RowDescription, TransactionStatus};
pub use cancel::CancelToken;
pub use config::{ConnectConfig, Endpoint, EndpointKind};
pub use conn::{Connection, NoticeHandler, ReadOutcome};
pub use error::{ConnectError, DbError, Error, ErrorFields, strerror};
pub use query::{CopyIn, QueryResult};
