//! Helpers shared by the floor's test binaries.

use pgrush_cluster::Cluster;
use pgrush_testkit::oracle::{self, Which};

/// Creates `db` and initializes it with `pgbench -i -q` (pgbench 18) and `args`.
pub fn pgbench_init(cluster: &Cluster, db: &str, args: &[&str]) {
    cluster.create_database(db).expect("create database");
    let mut cmd = oracle::require(Which::Pgbench18).command();
    pgrush_testkit::clear_pg_env(&mut cmd);
    let out = cmd
        .envs(cluster.env())
        .args(["-i", "-q"])
        .args(args)
        .arg(db)
        .output()
        .expect("pgbench -i");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
