//! Helpers for pgrush's tests, never linked into the `pgrush` binary: always a
//! `[dev-dependencies]` entry.
//!
//! # Brief overview
//!
//! - [`shared`] is one throwaway [`pgrush_cluster::Cluster`] per test process, stopped at
//!   process exit: share it between the tests of one test binary (one database per test).
//! - [`oracle`] finds the reference programs pgrush is compared with (pgbench 18/15,
//!   pg_test_timing 18); [`oracle::require`] panics when one is missing (tests must not
//!   skip).
//! - [`tls`] generates certificates with `rcgen`: a [`tls::TestCa`] per cluster, server
//!   certificates handed to the cluster as [`pgrush_cluster::ServerTls`], client
//!   certificates, and [`tls::TlsCluster`] bundling a cluster with its CA.
//! - [`krb`] starts a private Kerberos realm (MIT KDC) with a keytab for the server.
//! - The launchers of sharded runs: [`slurm`] starts a private single-node Slurm (with
//!   its own munge) for `srun`/`sbatch`; [`mpi`] builds `mpirun` command lines that run
//!   on this machine (as root too); [`netns`] makes network namespaces joined by veth
//!   pairs, standing for separate client hosts with their own host names.
//! - [`patroni`] starts a private high-availability cluster: one etcd and two
//!   PostgreSQL 15 members managed by Patroni, with synchronous replication.
//! - [`run`] runs a command and captures its [`Output`]; [`mask_numbers`] and
//!   [`mask_numbers_bytes`] hide timing-dependent numbers; [`clear_pg_env`] (from
//!   `pgrush-cluster`) removes the caller's `PG*` variables from a command, and
//!   [`clear_launcher_env`] the variables that would make pgrush a shard.
//!
//! Clusters themselves (starting, stopping, settings) are `pgrush-cluster`'s job; this
//! crate adds only what tests need, and its helpers panic with the reason instead of
//! returning errors.
//!
//! ```no_run
//! let cluster = pgrush_testkit::shared();
//! assert_eq!(cluster.psql("SELECT 1 + 1").unwrap(), "2");
//! ```

#![deny(missing_docs)]

pub mod chromium;
mod command;
mod daemon;
pub mod krb;
pub mod mpi;
pub mod netns;
pub mod oracle;
pub mod patroni;
pub mod slurm;
pub mod tls;

use std::sync::OnceLock;

use pgrush_cluster::Cluster;

pub use command::{Output, finish, mask_numbers, mask_numbers_bytes, run, run_peak_rss, spawn};
pub use pgrush_cluster::clear_pg_env;

static SHARED: OnceLock<Cluster> = OnceLock::new();

/// The repository's root (the workspace's directory): where `scripts/`, `pgo/`,
/// `deploy/` and `bench/` are.
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released): connections
/// to it are refused, as to a server that is not running.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// One trust-auth throwaway cluster shared by the whole process, started on first use
/// and removed by an `atexit` hook. Panics (with the reason) if it cannot be started.
#[track_caller]
pub fn shared() -> &'static Cluster {
    SHARED.get_or_init(|| {
        let cluster = Cluster::start()
            .unwrap_or_else(|e| panic!("cannot start the shared sandbox cluster: {e}"));
        // SAFETY: registering a plain extern "C" function with no captured state.
        unsafe {
            libc::atexit(discard_shared);
        }
        cluster
    })
}

extern "C" fn discard_shared() {
    if let Some(cluster) = SHARED.get() {
        cluster.discard();
    }
}

/// Removes from `cmd` every variable this process inherited that names a shard to pgrush
/// (a launcher's: `SLURM_*`, `OMPI_*`, `PMI_*`, `PMIX_*`, `JOB_COMPLETION_INDEX`, and
/// `PGRUSH_SHARDS`), so a test run under a launcher does not become a shard by accident;
/// what the caller sets afterwards counts.
pub fn clear_launcher_env(cmd: &mut std::process::Command) {
    for (name, _) in std::env::vars_os() {
        let bytes = name.as_encoded_bytes();
        let launcher = ["SLURM_", "OMPI_", "PMI_", "PMIX_"]
            .iter()
            .any(|prefix| bytes.starts_with(prefix.as_bytes()));
        if launcher || bytes == b"JOB_COMPLETION_INDEX" || bytes == b"PGRUSH_SHARDS" {
            cmd.env_remove(name);
        }
    }
}

/// `unshare --mount --propagation private sh -c SCRIPT sh`: `script` runs as root in a
/// private mount namespace (what it mounts, a small tmpfs say, nobody else sees); the
/// caller adds the script's arguments (`$1`…).
pub fn in_private_mount_namespace(script: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new("unshare");
    cmd.args([
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
    ]);
    cmd
}
