//! Authentication methods and TLS.

use std::path::Path;
use std::process::Output;

use pgrush_cluster::{Auth, Cluster, ServerTls};
use pgrush_testkit::tls::{CertNames, TestCa, TlsCluster};

/// Runs `SELECT <expr>` through psql with a conninfo string and an optional password.
fn psql_conn(cluster: &Cluster, conninfo: &str, password: Option<&str>, expr: &str) -> Output {
    let mut cmd = cluster.install().command("psql");
    for (name, _) in std::env::vars() {
        if name.starts_with("PG") {
            cmd.env_remove(name);
        }
    }
    match password {
        Some(pw) => cmd.env("PGPASSWORD", pw),
        None => cmd.env("PGPASSWORD", ""),
    };
    cmd.args([
        "-X",
        "-A",
        "-t",
        "-w",
        "-d",
        conninfo,
        "-c",
        &format!("SELECT {expr}"),
    ])
    .output()
    .expect("run psql")
}

fn ok_text(out: &Output) -> String {
    assert!(
        out.status.success(),
        "psql failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn check_password_method(auth: Auth, stored_prefix: &str) {
    let cluster = Cluster::builder()
        .auth(auth)
        .user("alice", "s3cret'x")
        .start()
        .expect("start");
    let tcp = format!(
        "host=127.0.0.1 port={} user=alice dbname=postgres",
        cluster.port()
    );
    assert_eq!(
        ok_text(&psql_conn(&cluster, &tcp, Some("s3cret'x"), "current_user")),
        "alice"
    );
    let wrong = psql_conn(&cluster, &tcp, Some("wrong"), "1");
    assert!(!wrong.status.success(), "{auth:?}: wrong password accepted");
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        stderr.contains("password authentication failed"),
        "{auth:?}: {stderr}"
    );
    // The socket for alice uses the method too; the harness's superuser keeps trust.
    let sock = format!(
        "host={} port={} user=alice dbname=postgres",
        cluster.socket_dir().display(),
        cluster.port()
    );
    assert!(
        !psql_conn(&cluster, &sock, None, "1").status.success(),
        "{auth:?}: socket without password"
    );
    let stored = cluster
        .psql("SELECT rolpassword FROM pg_authid WHERE rolname = 'alice'")
        .unwrap();
    assert!(
        stored.starts_with(stored_prefix),
        "{auth:?}: stored {stored}"
    );
    let method = cluster
        .psql("SELECT DISTINCT auth_method FROM pg_hba_file_rules WHERE type = 'host'")
        .unwrap();
    assert_eq!(method, auth.hba_method());
}

#[test]
fn password_auth() {
    check_password_method(Auth::Password, "SCRAM-SHA-256$");
}

#[test]
fn md5_auth() {
    check_password_method(Auth::Md5, "md5");
}

#[test]
fn scram_auth() {
    check_password_method(Auth::Scram, "SCRAM-SHA-256$");
}

#[test]
fn trust_auth_and_superuser_password() {
    let cluster = Cluster::builder()
        .user("postgres", "pw")
        .start()
        .expect("start");
    let tcp = format!(
        "host=127.0.0.1 port={} user=postgres dbname=postgres",
        cluster.port()
    );
    assert_eq!(ok_text(&psql_conn(&cluster, &tcp, None, "2")), "2");
    let stored = cluster
        .psql("SELECT rolpassword FROM pg_authid WHERE rolname = 'postgres'")
        .unwrap();
    assert!(stored.starts_with("SCRAM-SHA-256$"), "{stored}");
}

fn tls_conninfo(cluster: &Cluster, host: &str, ca: &Path) -> String {
    format!(
        "host={host} port={} user=postgres dbname=postgres sslmode=verify-full sslrootcert={}",
        cluster.port(),
        ca.display()
    )
}

#[test]
fn tls_verify_full() {
    let cluster = TlsCluster::start(Cluster::builder().listen_ipv6(true), CertNames::Alternative)
        .expect("start");
    let ca = cluster.ca_cert().expect("CA");
    let ssl = "(SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid())";
    let mut hosts = vec!["localhost", "127.0.0.1"];
    // listen_ipv6: ::1 answers too, where the machine has IPv6 loopback at all.
    if std::net::TcpListener::bind("[::1]:0").is_ok() {
        hosts.push("::1");
    } else {
        eprintln!("no IPv6 loopback on this machine: ::1 not checked");
    }
    for host in hosts {
        assert_eq!(
            ok_text(&psql_conn(
                &cluster,
                &tls_conninfo(&cluster, host, ca),
                None,
                ssl
            )),
            "t",
            "{host}"
        );
    }
    // A different CA must not verify.
    let other = TlsCluster::start(Cluster::builder(), CertNames::Alternative).expect("start other");
    let bad = psql_conn(
        &cluster,
        &tls_conninfo(&cluster, "localhost", other.ca_cert().unwrap()),
        None,
        "1",
    );
    assert!(!bad.status.success());
    // Without TLS asked for, plain connections still work (host lines match both).
    let plain = format!(
        "host=127.0.0.1 port={} user=postgres dbname=postgres sslmode=disable",
        cluster.port()
    );
    assert_eq!(ok_text(&psql_conn(&cluster, &plain, None, ssl)), "f");
}

#[test]
fn tls_cn_only_certificate() {
    let cluster = TlsCluster::start(Cluster::builder(), CertNames::CommonNameOnly).expect("start");
    let ca = cluster.ca_cert().expect("CA");
    assert_eq!(
        ok_text(&psql_conn(
            &cluster,
            &tls_conninfo(&cluster, "localhost", ca),
            None,
            "1"
        )),
        "1"
    );
    let by_ip = psql_conn(
        &cluster,
        &tls_conninfo(&cluster, "127.0.0.1", ca),
        None,
        "1",
    );
    assert!(
        !by_ip.status.success(),
        "CN localhost must not match 127.0.0.1"
    );
}

#[test]
fn client_certificates_and_custom_hba() {
    let builder = Cluster::builder()
        .auth(Auth::Scram)
        .user("certuser", "unused")
        .hba([
            "hostssl all certuser 127.0.0.1/32 cert",
            "hostnossl all certuser 127.0.0.1/32 reject",
        ]);
    let cluster = TlsCluster::start(builder, CertNames::Alternative).expect("start");
    let ca = cluster.ca_cert().expect("CA");
    let (crt, key) = cluster.client_cert("certuser").expect("client cert");
    let base = format!(
        "host=127.0.0.1 port={} user=certuser dbname=postgres sslrootcert={}",
        cluster.port(),
        ca.display()
    );
    let with_cert = format!(
        "{base} sslmode=verify-full sslcert={} sslkey={}",
        crt.display(),
        key.display()
    );
    assert_eq!(
        ok_text(&psql_conn(&cluster, &with_cert, None, "current_user")),
        "certuser"
    );
    let no_cert = format!("{base} sslmode=verify-full sslcert=/nonexistent sslkey=/nonexistent");
    assert!(
        !psql_conn(&cluster, &no_cert, Some("unused"), "1")
            .status
            .success()
    );
    let plain = format!("{base} sslmode=disable");
    let out = psql_conn(&cluster, &plain, Some("unused"), "1");
    assert!(!out.status.success(), "hostnossl reject ignored");
    assert!(String::from_utf8_lossy(&out.stderr).contains("rejects connection"));
    assert!(cluster.client_cert("a/b").is_err());
    let plain_cluster = Cluster::start().expect("start");
    assert!(!plain_cluster.tls());
    assert!(plain_cluster.ca_cert().is_none());
}

/// TLS files given as paths: the cluster copies them (the key with mode 0600 for the
/// server's account), and without a CA there is no `ssl_ca_file`.
#[test]
fn tls_from_files_without_ca() {
    let ca = TestCa::new().expect("CA");
    let dir = tempfile::tempdir().expect("temp dir");
    let (cert_pem, key_pem) = ca.server_pem(CertNames::Alternative).expect("server cert");
    let crt = dir.path().join("server.crt");
    let key = dir.path().join("server.key");
    std::fs::write(&crt, cert_pem).expect("write crt");
    std::fs::write(&key, key_pem).expect("write key");
    let cluster = Cluster::builder()
        .tls(ServerTls::from_files(&crt, &key))
        .start()
        .expect("start with files");
    assert!(cluster.tls());
    assert!(cluster.ca_cert().is_none());
    assert_eq!(cluster.show("ssl_ca_file").unwrap(), "");
    assert_eq!(
        ok_text(&psql_conn(
            &cluster,
            &tls_conninfo(&cluster, "localhost", &ca.cert_path()),
            None,
            "(SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid())"
        )),
        "t"
    );
    let missing = Cluster::builder()
        .tls(ServerTls::from_files("/nonexistent/server.crt", &key))
        .start()
        .unwrap_err();
    assert!(
        missing.to_string().contains("/nonexistent/server.crt"),
        "{missing}"
    );
}
