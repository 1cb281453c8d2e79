//! Password, md5 and SCRAM authentication against clusters configured for each,
//! with failure messages compared to libpq 15's.

mod common;

use std::sync::OnceLock;

use common::{
    assert_same_error_as_libpq, assert_same_error_as_libpq18, connect, must_connect,
    socket_conninfo, tcp_conninfo,
};
use pgrush_cluster::{Auth, Cluster};

fn cluster(auth: Auth) -> &'static Cluster {
    static PASSWORD: OnceLock<Cluster> = OnceLock::new();
    static MD5: OnceLock<Cluster> = OnceLock::new();
    static SCRAM: OnceLock<Cluster> = OnceLock::new();
    let cell = match auth {
        Auth::Password => &PASSWORD,
        Auth::Md5 => &MD5,
        _ => &SCRAM,
    };
    cell.get_or_init(|| {
        Cluster::builder()
            .auth(auth)
            .user("alice", "s3cret")
            .start()
            .expect("start cluster")
    })
}

fn check_method(auth: Auth) {
    let c = cluster(auth);
    for base in [
        tcp_conninfo(c, "alice", "postgres"),
        socket_conninfo(c, "alice", "postgres"),
    ] {
        let mut conn = must_connect(&format!("{base} password=s3cret sslmode=disable"));
        let r = conn.simple_query("SELECT current_user").expect("query");
        assert_eq!(r[0].get(0, 0), Some("alice"));
        // Wrong password and no password: libpq's exact texts.
        let wrong = assert_same_error_as_libpq(&format!("{base} password=nope sslmode=disable"));
        assert!(
            wrong.ends_with("FATAL:  password authentication failed for user \"alice\""),
            "{wrong}"
        );
        let none = assert_same_error_as_libpq(&format!("{base} sslmode=disable"));
        assert!(
            none.ends_with("fe_sendauth: no password supplied"),
            "{none}"
        );
    }
}

#[test]
fn cleartext_password() {
    check_method(Auth::Password);
}

#[test]
fn md5_password() {
    check_method(Auth::Md5);
}

#[test]
fn scram_sha_256() {
    check_method(Auth::Scram);
}

#[test]
fn password_from_pgpass_file() {
    use std::os::unix::fs::PermissionsExt;
    let c = cluster(Auth::Scram);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("pgpass");
    std::fs::write(&file, format!("*:{}:*:alice:s3cret\n", c.port())).expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let base = tcp_conninfo(c, "alice", "postgres");
    let req = pgrush_wire::conninfo::ConnectRequest {
        dbname: Some(format!(
            "{base} sslmode=disable passfile={}",
            file.display()
        )),
        ..Default::default()
    };
    let params = pgrush_wire::conninfo::resolve(&req).expect("resolve");
    let mut conn = pgrush_wire::Connection::connect(&params).expect("connect with pgpass");
    assert_eq!(
        conn.simple_query("SELECT 1").expect("query")[0].get(0, 0),
        Some("1")
    );
    // A wrong password from the file adds libpq's hint line.
    std::fs::write(&file, format!("*:{}:*:alice:wrong\n", c.port())).expect("write");
    let e = assert_same_error_as_libpq(&format!(
        "{base} sslmode=disable passfile={}",
        file.display()
    ));
    assert_eq!(
        e,
        format!(
            "connection to server at \"127.0.0.1\", port {} failed: FATAL:  password authentication failed for user \"alice\"\npassword retrieved from file \"{}\"",
            c.port(),
            file.display()
        )
    );
}

#[test]
fn unknown_database_and_role() {
    let c = cluster(Auth::Scram);
    let base = format!(
        "host={} port={} sslmode=disable password=s3cret",
        c.tcp_host(),
        c.port()
    );
    let e = assert_same_error_as_libpq(&format!("{base} user=alice dbname=nosuchdb"));
    assert!(
        e.ends_with("FATAL:  database \"nosuchdb\" does not exist"),
        "{e}"
    );
    assert_same_error_as_libpq(&format!("{base} user=nobody dbname=postgres"));
    assert!(connect(&format!("{base} user=alice dbname=postgres")).is_ok());
}

#[test]
fn require_auth_matches_libpq18() {
    let scram = tcp_conninfo(cluster(Auth::Scram), "alice", "postgres")
        + " password=s3cret sslmode=disable";
    let md5 =
        tcp_conninfo(cluster(Auth::Md5), "alice", "postgres") + " password=s3cret sslmode=disable";
    let t = pgrush_testkit::shared();
    let trust = tcp_conninfo(t, t.superuser(), "postgres") + " sslmode=disable";
    for ok in [
        format!("{scram} require_auth=scram-sha-256"),
        format!("{scram} require_auth=!password"),
        format!("{md5} require_auth=md5,password"),
        format!("{trust} require_auth=none"),
        format!("{trust} require_auth=!md5"),
    ] {
        must_connect(&ok);
    }
    for bad in [
        format!("{scram} require_auth=password"),
        format!("{scram} require_auth=!scram-sha-256"),
        format!("{md5} require_auth=scram-sha-256"),
        format!("{md5} require_auth=!md5"),
        format!("{trust} require_auth=password"),
        format!("{trust} require_auth=!none"),
    ] {
        let e = assert_same_error_as_libpq18(&bad);
        assert!(e.contains("authentication method requirement"), "{e}");
    }
}

#[test]
fn needs_password_flag() {
    let c = cluster(Auth::Scram);
    let base = tcp_conninfo(c, "alice", "postgres") + " sslmode=disable passfile=/nonexistent";
    let connect_params = |extra: &str| {
        let req = pgrush_wire::conninfo::ConnectRequest {
            dbname: Some(format!("{base} {extra}")),
            ..Default::default()
        };
        let params = pgrush_wire::conninfo::resolve(&req).expect("resolve");
        pgrush_wire::Connection::connect(&params).err()
    };
    assert!(connect_params("").is_some_and(|e| e.needs_password()));
    assert!(
        connect_params("password=wrong")
            .is_some_and(|e| !e.needs_password() && e.sqlstate() == Some("28P01"))
    );
    assert!(connect_params("password=s3cret").is_none());
}

/// Child-process part of `pgpass_permission_warning`: connects with the file.
fn pgpass_child(conninfo: &str) {
    let req = pgrush_wire::conninfo::ConnectRequest {
        dbname: Some(conninfo.to_string()),
        ..Default::default()
    };
    let params = pgrush_wire::conninfo::resolve(&req).expect("resolve");
    match pgrush_wire::Connection::connect(&params) {
        Ok(_) => eprintln!("CHILD-CONNECTED"),
        Err(e) => eprintln!("CHILD-FAILED: {e}"),
    }
}

#[test]
fn pgpass_permission_warning() {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(ci) = std::env::var("PGRUSH_WIRE_PGPASS_CHILD") {
        pgpass_child(&ci);
        return;
    }
    let c = cluster(Auth::Scram);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("pgpass");
    std::fs::write(&file, format!("*:{}:*:alice:s3cret\n", c.port())).expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let ci = format!(
        "{} sslmode=disable passfile={}",
        tcp_conninfo(c, "alice", "postgres"),
        file.display()
    );
    let exe = std::env::current_exe().expect("test binary");
    let out = pgrush_testkit::run(
        std::process::Command::new(exe)
            .args([
                "--exact",
                "pgpass_permission_warning",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("PGRUSH_WIRE_PGPASS_CHILD", &ci),
    );
    let warning = format!(
        "WARNING: password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
        file.display()
    );
    // The insecure file is ignored, so no password is available.
    assert!(out.stderr.contains("CHILD-FAILED: "), "{out:?}");
    assert!(
        out.stderr.contains("fe_sendauth: no password supplied"),
        "{out:?}"
    );
    assert!(out.stderr.lines().any(|l| l == warning), "{out:?}");
    // libpq prints the same line and ignores the file too.
    let dir2 = tempfile::tempdir().expect("tempdir");
    let script = dir2.path().join("one.sql");
    std::fs::write(&script, "SELECT 1;\n").expect("script");
    let mut cmd =
        pgrush_testkit::oracle::require(pgrush_testkit::oracle::Which::Pgbench15).command();
    cmd.args(["-n", "-t", "1", "-f"]).arg(&script).arg(&ci);
    let libpq = pgrush_testkit::run(&mut cmd);
    assert_eq!(libpq.code, 1, "{libpq:?}");
    assert!(libpq.stderr.lines().any(|l| l == warning), "{libpq:?}");
    assert!(
        libpq.stderr.contains("fe_sendauth: no password supplied"),
        "{libpq:?}"
    );
}
