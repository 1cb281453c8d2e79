//! TLS: every sslmode, certificate and host-name verification (SAN and CN-only
//! certificates), missing and wrong root certificates, client certificates,
//! SCRAM-SHA-256-PLUS channel binding, and the allow/prefer fallbacks. Failure
//! messages are compared with libpq 15's where libpq 15 and 18 agree.

mod common;

use std::sync::OnceLock;

use common::{assert_same_error_as_libpq, connect, must_connect};
use pgrush_cluster::{Auth, Cluster};
use pgrush_testkit::tls::{CertNames, TlsCluster};
use pgrush_wire::Connection;

fn tls_cluster() -> &'static TlsCluster {
    static C: OnceLock<TlsCluster> = OnceLock::new();
    C.get_or_init(|| {
        let builder = Cluster::builder()
            .auth(Auth::Scram)
            .listen_ipv6(true)
            .user("alice", "s3cret")
            .user("certuser", "unused")
            .user("tlsonly", "s3cret")
            .user("plainonly", "s3cret")
            .hba([
                "hostssl all certuser 127.0.0.1/32 cert",
                "host all certuser 127.0.0.1/32 reject",
                "hostnossl all tlsonly 127.0.0.1/32 reject",
                "hostssl all plainonly 127.0.0.1/32 reject",
            ]);
        TlsCluster::start(builder, CertNames::Alternative).expect("start TLS cluster")
    })
}

fn cn_only_cluster() -> &'static TlsCluster {
    static C: OnceLock<TlsCluster> = OnceLock::new();
    C.get_or_init(|| {
        TlsCluster::start(Cluster::builder(), CertNames::CommonNameOnly)
            .expect("start CN-only TLS cluster")
    })
}

fn ca(c: &Cluster) -> String {
    c.ca_cert().expect("cluster has a CA").display().to_string()
}

fn base(c: &Cluster, host: &str, user: &str) -> String {
    format!(
        "host={host} port={} user={user} dbname=postgres password=s3cret",
        c.port()
    )
}

fn server_sees_ssl(conn: &mut Connection) -> bool {
    let r = conn
        .simple_query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .expect("pg_stat_ssl");
    r[0].get(0, 0) == Some("t")
}

#[test]
fn sslmodes_choose_tls_or_plain() {
    let c = tls_cluster();
    let b = base(c, "127.0.0.1", "alice");
    for (mode, tls) in [
        ("disable", false),
        ("allow", false),
        ("prefer", true),
        ("require", true),
    ] {
        let mut conn = must_connect(&format!("{b} sslmode={mode}"));
        assert_eq!(conn.is_tls(), tls, "sslmode={mode}");
        assert_eq!(server_sees_ssl(&mut conn), tls, "sslmode={mode}");
    }
    // `require` with a nonexistent root file does not verify anything.
    let mut conn = must_connect(&format!(
        "{b} sslmode=require sslrootcert=/nonexistent/root.crt"
    ));
    assert!(server_sees_ssl(&mut conn));
}

#[test]
fn verify_ca_and_verify_full() {
    let c = tls_cluster();
    let ca = ca(c);
    for host in ["127.0.0.1", "localhost", "::1"] {
        for mode in ["verify-ca", "verify-full"] {
            let mut conn = must_connect(&format!(
                "{} sslmode={mode} sslrootcert={ca}",
                base(c, host, "alice")
            ));
            assert!(server_sees_ssl(&mut conn), "{host} {mode}");
        }
    }
    // `require` verifies the chain when the root file exists: with the wrong CA it fails.
    let other_ca = self::ca(cn_only_cluster());
    for mode in ["require", "verify-ca", "verify-full"] {
        let e = assert_same_error_as_libpq(&format!(
            "{} sslmode={mode} sslrootcert={other_ca}",
            base(c, "127.0.0.1", "alice")
        ));
        assert!(e.ends_with("SSL error: certificate verify failed"), "{e}");
    }
}

#[test]
fn host_name_mismatch() {
    let c = tls_cluster();
    let ca = ca(c);
    // A name the certificate does not list (the address is given by hostaddr).
    let e = assert_same_error_as_libpq(&format!(
        "host=db.example hostaddr=127.0.0.1 port={} user=alice dbname=postgres password=s3cret sslmode=verify-full sslrootcert={ca}",
        c.port()
    ));
    assert!(
        e.ends_with(
            "server certificate for \"localhost\" (and 2 other names) does not match host name \"db.example\""
        ),
        "{e}"
    );
    // verify-ca does not check the name.
    must_connect(&format!(
        "host=db.example hostaddr=127.0.0.1 port={} user=alice dbname=postgres password=s3cret sslmode=verify-ca sslrootcert={ca}",
        c.port()
    ));
}

#[test]
fn common_name_fallback() {
    let c = cn_only_cluster();
    let ca = ca(c);
    let user = c.superuser().to_string();
    let ok = format!(
        "host=localhost port={} user={user} dbname=postgres sslmode=verify-full sslrootcert={ca}",
        c.port()
    );
    let mut conn = must_connect(&ok);
    assert!(server_sees_ssl(&mut conn));
    let e = assert_same_error_as_libpq(&format!(
        "host=127.0.0.1 port={} user={user} dbname=postgres sslmode=verify-full sslrootcert={ca}",
        c.port()
    ));
    assert!(
        e.ends_with("server certificate for \"localhost\" does not match host name \"127.0.0.1\""),
        "{e}"
    );
}

#[test]
fn missing_root_certificate_file() {
    let c = tls_cluster();
    let e = connect(&format!(
        "{} sslmode=verify-ca sslrootcert=/nonexistent/root.crt",
        base(c, "127.0.0.1", "alice")
    ))
    .err()
    .unwrap_or_default();
    assert_eq!(
        e,
        format!(
            "connection to server at \"127.0.0.1\", port {} failed: root certificate file \"/nonexistent/root.crt\" does not exist\nEither provide the file, use the system's trusted roots with sslrootcert=system, or change sslmode to disable server certificate verification.",
            c.port()
        )
    );
}

#[test]
fn server_without_tls() {
    let c = pgrush_testkit::shared();
    let b = format!(
        "host=127.0.0.1 port={} user={} dbname=postgres",
        c.port(),
        c.superuser()
    );
    let e = assert_same_error_as_libpq(&format!("{b} sslmode=require"));
    assert!(
        e.ends_with("server does not support SSL, but SSL was required"),
        "{e}"
    );
    // prefer falls back to a plain connection.
    let conn = must_connect(&format!("{b} sslmode=prefer"));
    assert!(!conn.is_tls());
}

#[test]
fn client_certificates() {
    let c = tls_cluster();
    let (cert, key) = c.client_cert("certuser").expect("client cert");
    let b = format!(
        "host=localhost port={} user=certuser dbname=postgres sslrootcert={} sslmode=verify-full",
        c.port(),
        ca(c)
    );
    let mut conn = must_connect(&format!(
        "{b} sslcert={} sslkey={}",
        cert.display(),
        key.display()
    ));
    assert_eq!(
        conn.simple_query("SELECT current_user").expect("query")[0].get(0, 0),
        Some("certuser")
    );
    // Without a certificate the server refuses (same text as libpq).
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("none.crt");
    assert_same_error_as_libpq(&format!("{b} sslcert={}", missing.display()));
}

#[test]
fn scram_channel_binding() {
    let c = tls_cluster();
    let b = base(c, "127.0.0.1", "alice");
    // SCRAM-SHA-256-PLUS over TLS.
    let mut conn = must_connect(&format!("{b} sslmode=require channel_binding=require"));
    assert!(server_sees_ssl(&mut conn));
    must_connect(&format!("{b} sslmode=require channel_binding=disable"));
    // Channel binding cannot be used without TLS.
    assert_same_error_as_libpq(&format!("{b} sslmode=disable channel_binding=require"));
    // Nor with a method other than SCRAM.
    let t = pgrush_testkit::shared();
    assert_same_error_as_libpq(&format!(
        "host=127.0.0.1 port={} user={} dbname=postgres sslmode=disable channel_binding=require",
        t.port(),
        t.superuser()
    ));
}

#[test]
fn allow_and_prefer_fallbacks() {
    let c = tls_cluster();
    // allow: plain is rejected by pg_hba, the retry with TLS succeeds.
    let mut conn = must_connect(&format!(
        "{} sslmode=allow",
        base(c, "127.0.0.1", "tlsonly")
    ));
    assert!(server_sees_ssl(&mut conn));
    // prefer: TLS is rejected, the plain retry succeeds.
    let mut conn = must_connect(&format!(
        "{} sslmode=prefer",
        base(c, "127.0.0.1", "plainonly")
    ));
    assert!(!server_sees_ssl(&mut conn));
    // A wrong password is reported for both attempts, as libpq does.
    let e = assert_same_error_as_libpq(&format!(
        "host=127.0.0.1 port={} user=alice dbname=postgres password=wrong sslmode=prefer",
        c.port()
    ));
    assert_eq!(
        e.matches("password authentication failed").count(),
        2,
        "{e}"
    );
}

#[test]
fn nonblocking_pipeline_over_tls() {
    let c = tls_cluster();
    let mut conn = must_connect(&format!(
        "{} sslmode=verify-full sslrootcert={}",
        base(c, "localhost", "alice"),
        ca(c)
    ));
    assert!(conn.is_tls());
    conn.set_nonblocking(true).expect("nonblocking");
    let n = 3000;
    let payload = "z".repeat(200);
    for i in 0..n {
        let v = i.to_string();
        conn.queue_parse("", "SELECT $1::int, repeat($2, 10)", 0)
            .expect("parse");
        conn.queue_bind("", "", [Some(v.as_bytes()), Some(payload.as_bytes())])
            .expect("bind");
        conn.queue_execute("", 0).expect("execute");
        if i == n / 2 {
            conn.queue_parse("", "SELECT 1/0", 0).expect("parse");
            conn.queue_bind("", "", std::iter::empty()).expect("bind");
            conn.queue_execute("", 0).expect("execute");
            conn.queue_sync();
        }
    }
    conn.queue_sync();
    let got = common::run(&mut conn, 2);
    let rows = got.iter().filter(|m| m.starts_with("D:")).count();
    assert_eq!(rows, n);
    assert_eq!(got.iter().filter(|m| m.starts_with("E:22012")).count(), 1);
    assert_eq!(got.iter().filter(|m| m.starts_with("Z:")).count(), 2);
    // A cancel over TLS-connected sessions uses a plain socket.
    let token = conn.cancel_token();
    let canceller = common::cancel_when_running(
        token,
        conn.backend_pid(),
        base(c, "127.0.0.1", "alice") + " sslmode=require",
    );
    let e = conn
        .simple_query("SELECT pg_sleep(10)")
        .expect_err("cancelled");
    assert!(canceller.join().unwrap_or(false));
    assert_eq!(e.code(), Some("57014"));
}

#[test]
fn protocol_versions_and_certificate_mode() {
    let c = tls_cluster();
    let b = format!("{} sslmode=require", base(c, "127.0.0.1", "alice"));
    for (extra, want) in [
        ("", "TLSv1.3"),
        ("ssl_max_protocol_version=TLSv1.2", "TLSv1.2"),
        ("ssl_min_protocol_version=TLSv1.3", "TLSv1.3"),
    ] {
        let mut conn = must_connect(&format!("{b} {extra}"));
        let r = conn
            .simple_query("SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .expect("query");
        assert_eq!(r[0].get(0, 0), Some(want), "{extra}");
    }
    // sslcertmode=disable never sends the client certificate.
    let (cert, key) = c.client_cert("certuser").expect("client cert");
    let e = connect(&format!(
        "host=127.0.0.1 port={} user=certuser dbname=postgres sslmode=require sslcert={} sslkey={} sslcertmode=disable",
        c.port(),
        cert.display(),
        key.display()
    ))
    .err()
    .unwrap_or_default();
    assert!(
        e.contains("connection requires a valid client certificate"),
        "{e}"
    );
}

#[test]
fn existing_root_file_is_used_by_prefer_too() {
    let c = tls_cluster();
    let other_ca = ca(cn_only_cluster());
    // The TLS attempt fails verification, the plain retry is refused by pg_hba:
    // libpq reports both.
    let e = assert_same_error_as_libpq(&format!(
        "{} sslmode=prefer sslrootcert={other_ca}",
        base(c, "127.0.0.1", "tlsonly")
    ));
    assert!(e.contains("SSL error: certificate verify failed\n"), "{e}");
    // With a working plain path the retry succeeds.
    let conn = must_connect(&format!(
        "{} sslmode=prefer sslrootcert={other_ca}",
        base(c, "127.0.0.1", "alice")
    ));
    assert!(!conn.is_tls());
}

#[test]
fn system_roots_imply_full_verification() {
    let c = tls_cluster();
    let e = connect(&format!(
        "{} sslrootcert=system",
        base(c, "localhost", "alice")
    ))
    .err()
    .unwrap_or_default();
    assert!(e.ends_with("SSL error: certificate verify failed"), "{e}");
}

#[test]
fn key_log_file() {
    let c = tls_cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("keys.log");
    let mut conn = must_connect(&format!(
        "{} sslmode=require sslkeylogfile={}",
        base(c, "127.0.0.1", "alice"),
        log.display()
    ));
    assert!(server_sees_ssl(&mut conn));
    let text = std::fs::read_to_string(&log).expect("key log written");
    assert!(
        text.lines()
            .any(|l| l.starts_with("CLIENT_TRAFFIC_SECRET_0 ") && l.split(' ').count() == 3),
        "{text}"
    );
}
