//! Shared harness of the GSSAPI tests: a private Kerberos realm, a PostgreSQL 15
//! server with its keytab, and helpers that run pgbench 15 and pgrush with the
//! same connection string, ticket cache and script, and compare them.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use pgrush_cluster::{Cluster, PgInstall};
use pgrush_testkit::krb::Kdc;
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};

pub const USER: &str = "krbuser";
pub const PASSWORD: &str = "krb-secret";
/// A role whose GSSAPI-encrypted connections the server rejects (others are
/// trusted by the cluster's generated lines).
pub const REJECTED: &str = "plainuser";

/// Succeeds only over GSSAPI encryption; reads a large result and sends a
/// large statement so that both directions span many GSSAPI packets.
pub fn encrypted_script() -> String {
    format!(
        "SELECT 1 / (CASE WHEN encrypted AND gss_authenticated THEN 1 ELSE 0 END) \
         FROM pg_stat_gssapi WHERE pid = pg_backend_pid();\n\
         SELECT repeat('x', 300000);\n\
         SELECT length('{}');\n",
        "y".repeat(100_000)
    )
}

/// Succeeds only with GSSAPI authentication and no GSSAPI encryption.
pub const AUTH_ONLY_SCRIPT: &str = "SELECT 1 / (CASE WHEN gss_authenticated AND NOT encrypted \
     THEN 1 ELSE 0 END) FROM pg_stat_gssapi WHERE pid = pg_backend_pid();\n";

/// What one program run needs besides the connection string.
pub struct Setup<'a> {
    pub kdc: &'a Kdc,
    /// `KRB5CCNAME` instead of the realm's ticket cache.
    pub ccache: Option<&'a str>,
    /// Extra environment (e.g. `PGRUSH_GSSAPI_LIBRARY`).
    pub env: &'a [(&'a str, &'a str)],
    pub script: &'a str,
}

pub fn run(mut cmd: Command, dir: &Path, setup: &Setup<'_>, args: &[&str]) -> Output {
    testkit::clear_pg_env(&mut cmd);
    setup.kdc.apply(&mut cmd);
    if let Some(cc) = setup.ccache {
        cmd.env("KRB5CCNAME", cc);
    }
    for (k, v) in setup.env {
        cmd.env(k, v);
    }
    cmd.env("PGPASSFILE", "/nonexistent/pgpass")
        .env("PGSYSCONFDIR", "/nonexistent")
        .env("HOME", dir)
        .current_dir(dir)
        .args(args);
    testkit::run(&mut cmd)
}

pub fn pgrush() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pgrush"))
}

/// Runs pgbench 15 and pgrush with `-n -t 1 -f script.sql CONNINFO`; asserts
/// the same exit code and stderr; returns pgrush's output.
pub fn same_as_pgbench15(setup: &Setup<'_>, conninfo: &str) -> Output {
    same_as_pgbench15_reworded(setup, conninfo, None)
}

/// [`same_as_pgbench15`] with one of pgbench 15's stderr lines replaced by
/// libpq 18's wording (`(line 15 wrote, line 18 writes)`).
pub fn same_as_pgbench15_reworded(
    setup: &Setup<'_>,
    conninfo: &str,
    reworded: Option<(&str, &str)>,
) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("script.sql"), setup.script).expect("write script");
    let args = ["-n", "-t", "1", "-f", "script.sql", conninfo];
    let theirs = run(
        oracle::require(Which::Pgbench15).command(),
        home.path(),
        setup,
        &args,
    );
    let ours = run(pgrush(), home.path(), setup, &args);
    assert_eq!(
        ours.code, theirs.code,
        "exit code for {conninfo}\npgrush stderr:\n{}\npgbench stderr:\n{}",
        ours.stderr, theirs.stderr
    );
    let mut expected = theirs.stderr.replace("pgbench", "pgrush");
    if let Some((in15, in18)) = reworded {
        assert!(expected.contains(in15), "{conninfo}: {expected}");
        expected = expected.replace(in15, in18);
    }
    assert_eq!(ours.stderr, expected, "stderr for {conninfo}");
    ours
}

/// Runs pgrush alone like [`same_as_pgbench15`].
pub fn pgrush_alone(setup: &Setup<'_>, conninfo: &str) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("script.sql"), setup.script).expect("write script");
    let args = ["-n", "-t", "1", "-f", "script.sql", conninfo];
    run(pgrush(), home.path(), setup, &args)
}

pub fn accepts(setup: &Setup<'_>, conninfo: &str) {
    let out = same_as_pgbench15(setup, conninfo);
    assert_eq!(out.code, 0, "{conninfo}: {}", out.stderr);
}

pub fn refuses(setup: &Setup<'_>, conninfo: &str, needle: &str) {
    let out = same_as_pgbench15(setup, conninfo);
    assert_ne!(out.code, 0, "{conninfo}");
    assert!(out.stderr.contains(needle), "{conninfo}: {}", out.stderr);
}

/// A PostgreSQL 15 server with the realm's keytab: `hostgssenc` and
/// `hostnogssenc` lines with `gss` for [`USER`].
pub fn kerberos_cluster(kdc: &Kdc) -> Cluster {
    Cluster::builder()
        .install(PgInstall::for_major(15).expect("PostgreSQL 15 (scripts/install-deps)"))
        .setting("krb_server_keyfile", kdc.keytab().display().to_string())
        .user(USER, PASSWORD)
        .user(REJECTED, PASSWORD)
        .hba([
            format!("hostgssenc all {USER} 127.0.0.1/32 gss include_realm=0"),
            format!("hostnogssenc all {USER} 127.0.0.1/32 gss include_realm=0"),
            format!("hostgssenc all {REJECTED} 127.0.0.1/32 reject"),
        ])
        .start()
        .expect("start the Kerberos cluster")
}

pub fn conn(c: &Cluster, rest: &str) -> String {
    format!(
        "host=localhost hostaddr=127.0.0.1 port={} user={USER} dbname=postgres {rest}",
        c.port()
    )
}
