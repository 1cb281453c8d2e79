//! End-to-end connection behaviour: `pgrush` and pgbench 15 (libpq with TLS) run the
//! same command line against the same sandbox clusters; their exit codes and their
//! whole stderr (program name normalised) must match, for successes (auth methods,
//! sslmodes, pgpass, services, a dead first host) and for every kind of failure.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use pgrush_cluster::{Auth, Cluster};
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::tls::{CertNames, TlsCluster};
use pgrush_testkit::{self as testkit, Output};

const PASSWORD: &str = "s3cret";

/// SCRAM authentication, TLS on, a SAN certificate for localhost/127.0.0.1/::1.
fn scram_tls() -> &'static TlsCluster {
    static C: OnceLock<TlsCluster> = OnceLock::new();
    C.get_or_init(|| {
        let builder = Cluster::builder().auth(Auth::Scram).user("alice", PASSWORD);
        TlsCluster::start(builder, CertNames::Alternative).expect("start SCRAM/TLS cluster")
    })
}

/// md5 authentication, no TLS.
fn md5_plain() -> &'static Cluster {
    static C: OnceLock<Cluster> = OnceLock::new();
    C.get_or_init(|| {
        Cluster::builder()
            .auth(Auth::Md5)
            .user("bob", PASSWORD)
            .start()
            .expect("start md5 cluster")
    })
}

/// Trust authentication, TLS with a certificate naming `localhost` in its CN only.
fn cn_only() -> &'static TlsCluster {
    static C: OnceLock<TlsCluster> = OnceLock::new();
    C.get_or_init(|| {
        TlsCluster::start(Cluster::builder(), CertNames::CommonNameOnly)
            .expect("start CN-only TLS cluster")
    })
}

/// Runs `program -n -t 1 -f one.sql CONNINFO` with a controlled environment.
fn run(mut cmd: Command, dir: &Path, conninfo: &str, env: &[(&str, String)]) -> Output {
    pgrush_testkit::clear_pg_env(&mut cmd);
    cmd.env("PGPASSFILE", "/nonexistent/pgpass")
        .env("PGSYSCONFDIR", "/nonexistent")
        .env("HOME", dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.current_dir(dir)
        .args(["-n", "-t", "1", "-f", "one.sql", conninfo]);
    testkit::run(&mut cmd)
}

/// Runs both programs and asserts the same exit code and stderr; returns pgrush's output.
fn same_as_pgbench15(conninfo: &str, env: &[(&str, String)]) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("one.sql"), "SELECT 1;\n").expect("write script");
    let theirs = run(
        oracle::require(Which::Pgbench15).command(),
        dir.path(),
        conninfo,
        env,
    );
    let ours = run(
        Command::new(env!("CARGO_BIN_EXE_pgrush")),
        dir.path(),
        conninfo,
        env,
    );
    // libpq 18 (which pgrush follows) also suggests `sslrootcert=system`; libpq 15's
    // sentence is otherwise the same.
    let theirs_stderr = theirs.stderr.replace("pgbench", "pgrush").replace(
        "Either provide the file or change sslmode",
        "Either provide the file, use the system's trusted roots with sslrootcert=system, or change sslmode",
    );
    assert_eq!(
        ours.code, theirs.code,
        "exit code for {conninfo}\npgrush stderr:\n{}\npgbench stderr:\n{}",
        ours.stderr, theirs.stderr
    );
    assert_eq!(ours.stderr, theirs_stderr, "stderr for {conninfo}");
    ours
}

fn expect_success(conninfo: &str, env: &[(&str, String)]) {
    let out = same_as_pgbench15(conninfo, env);
    assert_eq!(out.code, 0, "{conninfo}: {}", out.stderr);
    assert!(
        out.stdout
            .contains("number of transactions actually processed: 1/1"),
        "{conninfo}: {}",
        out.stdout
    );
}

fn expect_failure(conninfo: &str, env: &[(&str, String)], needle: &str) {
    let out = same_as_pgbench15(conninfo, env);
    assert_eq!(out.code, 1, "{conninfo}");
    assert!(out.stderr.contains(needle), "{conninfo}: {}", out.stderr);
    assert!(
        out.stderr
            .ends_with("pgrush: error: could not create connection for setup\n"),
        "{conninfo}: {}",
        out.stderr
    );
}

#[test]
fn unreachable_servers() {
    let port = pgrush_testkit::closed_port();
    expect_failure(
        &format!("host=127.0.0.1 port={port} user=x dbname=x"),
        &[],
        "Connection refused",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    expect_failure(
        &format!("host={} port={port} user=x dbname=x", dir.path().display()),
        &[],
        "No such file or directory",
    );
    expect_failure(
        &format!("postgresql://x@127.0.0.1:{port},127.0.0.1:{port}/x"),
        &[],
        "Connection refused",
    );
}

#[test]
fn authentication_methods() {
    let c = scram_tls();
    let tcp = |user: &str, extra: &str| {
        format!(
            "host=127.0.0.1 port={} user={user} dbname=postgres sslmode=disable {extra}",
            c.port()
        )
    };
    expect_success(&tcp("alice", &format!("password={PASSWORD}")), &[]);
    expect_failure(
        &tcp("alice", "password=wrong"),
        &[],
        "password authentication failed for user \"alice\"",
    );
    expect_success(&tcp("alice", ""), &[("PGPASSWORD", PASSWORD.to_string())]);
    expect_failure(
        &format!(
            "{} dbname=nosuchdb",
            tcp("alice", &format!("password={PASSWORD}"))
        ),
        &[],
        "database \"nosuchdb\" does not exist",
    );

    let m = md5_plain();
    let md5 = format!("host=127.0.0.1 port={} user=bob dbname=postgres", m.port());
    expect_success(&format!("{md5} password={PASSWORD}"), &[]);
    expect_failure(
        &format!("{md5} password=nope"),
        &[],
        "password authentication failed for user \"bob\"",
    );
}

#[test]
fn sslmodes() {
    let c = scram_tls();
    let ca = c.ca_cert().expect("CA").display().to_string();
    let base = |host: &str| {
        format!(
            "host={host} port={} user=alice dbname=postgres password={PASSWORD}",
            c.port()
        )
    };
    for mode in ["disable", "allow", "prefer", "require"] {
        expect_success(&format!("{} sslmode={mode}", base("127.0.0.1")), &[]);
    }
    expect_success(
        &format!("{} sslmode=verify-ca sslrootcert={ca}", base("127.0.0.1")),
        &[],
    );
    expect_success(
        &format!("{} sslmode=verify-full sslrootcert={ca}", base("localhost")),
        &[],
    );
    expect_failure(
        &format!(
            "{} sslmode=verify-full sslrootcert=/nonexistent/root.crt",
            base("localhost")
        ),
        &[],
        "root certificate file \"/nonexistent/root.crt\" does not exist",
    );
    // SCRAM-SHA-256-PLUS: channel binding required over TLS.
    expect_success(
        &format!(
            "{} sslmode=require channel_binding=require",
            base("127.0.0.1")
        ),
        &[],
    );

    // A certificate naming only `localhost` in its CN: verify-full by IP fails.
    let cn = cn_only();
    let ca = cn.ca_cert().expect("CA").display().to_string();
    let cn_base = |host: &str| {
        format!(
            "host={host} port={} dbname=postgres user=postgres",
            cn.port()
        )
    };
    expect_success(
        &format!(
            "{} sslmode=verify-full sslrootcert={ca}",
            cn_base("localhost")
        ),
        &[],
    );
    expect_failure(
        &format!(
            "{} sslmode=verify-full sslrootcert={ca}",
            cn_base("127.0.0.1")
        ),
        &[],
        "does not match host name \"127.0.0.1\"",
    );

    // A server without TLS.
    let m = md5_plain();
    expect_failure(
        &format!(
            "host=127.0.0.1 port={} user=bob password={PASSWORD} dbname=postgres sslmode=require",
            m.port()
        ),
        &[],
        "server does not support SSL, but SSL was required",
    );
}

#[test]
fn pgpass_services_and_host_lists() {
    let c = scram_tls();
    let dir = tempfile::tempdir().expect("tempdir");
    let passfile = dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!("127.0.0.1:{}:*:alice:{PASSWORD}\n", c.port()),
    )
    .expect("write pgpass");
    std::fs::set_permissions(
        &passfile,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("chmod");
    let pass_env = [("PGPASSFILE", passfile.display().to_string())];
    expect_success(
        &format!(
            "host=127.0.0.1 port={} user=alice dbname=postgres sslmode=disable",
            c.port()
        ),
        &pass_env,
    );

    let services = dir.path().join("services.conf");
    std::fs::write(
        &services,
        format!(
            "[bench]\nhost=127.0.0.1\nport={}\nuser=alice\ndbname=postgres\npassword={PASSWORD}\n",
            c.port()
        ),
    )
    .expect("write service file");
    let svc_env = [("PGSERVICEFILE", services.display().to_string())];
    expect_success("service=bench", &svc_env);
    expect_failure(
        "service=nosuch",
        &svc_env,
        "definition of service \"nosuch\" not found",
    );

    // The first host is dead: the second one is used.
    let port = pgrush_testkit::closed_port();
    expect_success(
        &format!(
            "host=127.0.0.1,127.0.0.1 port={port},{} user=alice password={PASSWORD} dbname=postgres",
            c.port()
        ),
        &[],
    );
}

#[test]
fn malformed_connection_strings() {
    expect_failure(
        "host=x nosuchkeyword=1",
        &[],
        "invalid connection option \"nosuchkeyword\"",
    );
    expect_failure("host='unterminated", &[], "unterminated quoted string");
    expect_failure(
        "postgresql://[::1/db",
        &[],
        "end of string reached when looking for matching \"]\"",
    );
    expect_failure(
        "host=127.0.0.1 sslmode=bogus",
        &[],
        "invalid sslmode value: \"bogus\"",
    );
}
