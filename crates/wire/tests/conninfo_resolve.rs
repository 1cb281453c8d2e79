//! `resolve_with` and `lookup_password_with` with a fake environment (variables,
//! home directory, OS user) and real temporary files.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pgrush_wire::conninfo::{
    ConnParams, ConnectRequest, ConninfoError, Environment, HostKind, SslMode, SslRootCert,
    TargetSessionAttrs, lookup_password_with, resolve_with,
};

#[derive(Default)]
struct FakeEnv {
    vars: HashMap<String, String>,
    home: Option<PathBuf>,
    user: Option<String>,
    debian_socket_dir: bool,
}

impl FakeEnv {
    fn new(home: &Path) -> Self {
        FakeEnv {
            home: Some(home.to_path_buf()),
            user: Some("osuser".into()),
            ..Default::default()
        }
    }

    fn var(mut self, k: &str, v: &str) -> Self {
        self.vars.insert(k.into(), v.into());
        self
    }
}

impl Environment for FakeEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
    fn passwd_home(&self) -> Option<PathBuf> {
        self.home.clone()
    }
    fn os_user_name(&self) -> Result<String, String> {
        self.user
            .clone()
            .ok_or_else(|| "local user with ID 4242 does not exist".to_string())
    }
    fn is_dir(&self, path: &Path) -> bool {
        if path == Path::new("/var/run/postgresql") {
            self.debian_socket_dir
        } else {
            std::fs::metadata(path).is_ok_and(|m| m.is_dir())
        }
    }
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

fn dbreq(dbname: &str) -> ConnectRequest {
    ConnectRequest {
        dbname: Some(dbname.into()),
        ..Default::default()
    }
}

fn ok(r: Result<ConnParams, ConninfoError>) -> ConnParams {
    r.unwrap_or_else(|e| panic!("resolve failed: {e}"))
}

fn err(r: Result<ConnParams, ConninfoError>) -> String {
    match r {
        Ok(p) => panic!("expected an error, got {p:?}"),
        Err(e) => e.to_string(),
    }
}

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

#[test]
fn defaults_follow_libpq_and_pgbench() {
    let d = tmp();
    let env = FakeEnv::new(d.path());
    let p = ok(resolve_with(&ConnectRequest::default(), &env));
    assert_eq!(p.user(), "osuser");
    assert_eq!(p.dbname(), "osuser");
    assert_eq!(p.hosts().len(), 1);
    assert_eq!(p.hosts()[0].kind, HostKind::UnixSocket);
    assert_eq!(p.hosts()[0].host.as_deref(), Some("/tmp"));
    assert_eq!(p.hosts()[0].port_number(), Ok(5432));
    assert_eq!(
        p.hosts()[0].socket_path(),
        Ok(Some("/tmp/.s.PGSQL.5432".to_string()))
    );
    assert_eq!(p.sslmode(), SslMode::Prefer);
    assert_eq!(p.target_session_attrs(), TargetSessionAttrs::Any);
    assert_eq!(p.connect_timeout(), Ok(None));
    assert_eq!(p.keepalives(), Ok(true));
    assert!(p.sslsni());
    let home = d.path().display();
    assert_eq!(
        p.passfile().map(|f| f.display().to_string()),
        Some(format!("{home}/.pgpass"))
    );

    let mut debian = FakeEnv::new(d.path());
    debian.debian_socket_dir = true;
    let p = ok(resolve_with(&ConnectRequest::default(), &debian));
    assert_eq!(p.hosts()[0].host.as_deref(), Some("/var/run/postgresql"));
    assert_eq!(p.default_socket_dir(), "/var/run/postgresql");
}

#[test]
fn pgbench_database_name_rule() {
    let d = tmp();
    // -U does not become the database name: pgbench uses PGDATABASE, PGUSER, the OS user.
    let req = ConnectRequest {
        user: Some("alice".into()),
        ..Default::default()
    };
    let p = ok(resolve_with(&req, &FakeEnv::new(d.path())));
    assert_eq!((p.user(), p.dbname()), ("alice", "osuser"));
    let p = ok(resolve_with(
        &req,
        &FakeEnv::new(d.path()).var("PGUSER", "bob"),
    ));
    assert_eq!((p.user(), p.dbname()), ("alice", "bob"));
    let env = FakeEnv::new(d.path())
        .var("PGUSER", "bob")
        .var("PGDATABASE", "");
    let p = ok(resolve_with(&req, &env));
    assert_eq!(p.dbname(), "bob");
    // An explicit dbname conninfo without dbname falls back to libpq's rule (the user).
    let p = ok(resolve_with(
        &dbreq("port=6000"),
        &FakeEnv::new(d.path()).var("PGUSER", "bob"),
    ));
    assert_eq!((p.user(), p.dbname()), ("bob", "bob"));
    assert_eq!(p.hosts()[0].port_number(), Ok(6000));
}

#[test]
fn user_lookup_failure_is_libpqs_error() {
    let d = tmp();
    let mut env = FakeEnv::new(d.path());
    env.user = None;
    assert_eq!(
        err(resolve_with(&dbreq("db"), &env)),
        "local user with ID 4242 does not exist"
    );
    let req = ConnectRequest {
        user: Some("u".into()),
        ..Default::default()
    };
    // With a user but no database and no OS user, the database is the user.
    assert_eq!(ok(resolve_with(&req, &env)).dbname(), "u");
}

#[test]
fn host_lists_pair_hosts_addresses_and_ports() {
    let d = tmp();
    let env = FakeEnv::new(d.path());
    let p = ok(resolve_with(
        &dbreq("host=db1,/sock,,@abs hostaddr=10.0.0.1,,, port=1,2,,4 dbname=x"),
        &env,
    ));
    let h = p.hosts();
    assert_eq!(h.len(), 4);
    assert_eq!(
        (h[0].kind, h[0].host.as_deref(), h[0].hostaddr.as_deref()),
        (HostKind::Address, Some("db1"), Some("10.0.0.1"))
    );
    assert_eq!(h[0].display_host(), "db1");
    assert_eq!(h[1].kind, HostKind::UnixSocket);
    assert_eq!(h[1].socket_path(), Ok(Some("/sock/.s.PGSQL.2".to_string())));
    assert_eq!(
        (h[2].kind, h[2].host.as_deref()),
        (HostKind::UnixSocket, Some("/tmp"))
    );
    assert_eq!(h[2].port_number(), Ok(5432));
    assert_eq!(h[3].socket_path(), Ok(Some("@abs/.s.PGSQL.4".to_string())));

    let p = ok(resolve_with(&dbreq("hostaddr=::1 port=5"), &env));
    assert_eq!(p.hosts()[0].display_host(), "::1");
    assert_eq!(p.hosts()[0].kind, HostKind::Address);

    let p = ok(resolve_with(&dbreq("host=a,b port=70000"), &env));
    assert_eq!(
        p.hosts()[1].port_number().map_err(|e| e.to_string()),
        Err("invalid port number: \"70000\"".to_string())
    );
    let p = ok(resolve_with(&dbreq("host=a port=x1"), &env));
    assert_eq!(
        p.hosts()[0].port_number().map_err(|e| e.to_string()),
        Err("invalid integer value \"x1\" for connection option \"port\"".to_string())
    );
    assert_eq!(
        err(resolve_with(&dbreq("host=a,b,c port=1,2"), &env)),
        "could not match 2 port numbers to 3 hosts"
    );
}

#[test]
fn typed_getters() {
    let d = tmp();
    let env = FakeEnv::new(d.path())
        .var("PGCONNECT_TIMEOUT", "7")
        .var("PGDATESTYLE", "ISO, MDY")
        .var("PGTZ", "default")
        .var("PGGEQO", "off")
        .var("LANG", "de_DE.utf8");
    let req = ConnectRequest {
        dbname: Some("postgresql://u@h/db?application_name=&options=-c%20x%3Dy&client_encoding=auto&keepalives=0&tcp_user_timeout=9".into()),
        fallback_application_name: Some("pgbench".into()),
        ..Default::default()
    };
    let p = ok(resolve_with(&req, &env));
    assert_eq!(p.connect_timeout(), Ok(Some(Duration::from_secs(7))));
    assert_eq!(p.keepalives(), Ok(false));
    assert_eq!(p.tcp_user_timeout(), Ok(Some(9)));
    assert_eq!(p.client_encoding(), Some("UTF8"));
    // An empty application_name suppresses the fallback, as in libpq.
    assert_eq!(p.effective_application_name(), None);
    assert_eq!(
        p.startup_parameters(),
        vec![
            ("user".to_string(), "u".to_string()),
            ("database".to_string(), "db".to_string()),
            ("options".to_string(), "-c x=y".to_string()),
            ("client_encoding".to_string(), "UTF8".to_string()),
            ("datestyle".to_string(), "ISO, MDY".to_string()),
            ("geqo".to_string(), "off".to_string()),
        ]
    );

    let home = d.path().display().to_string();
    assert_eq!(
        p.sslrootcert(),
        Some(SslRootCert::File(PathBuf::from(format!(
            "{home}/.postgresql/root.crt"
        ))))
    );
    assert_eq!(
        p.sslcert(),
        Some(PathBuf::from(format!("{home}/.postgresql/postgresql.crt")))
    );
    assert_eq!(
        p.sslkey(),
        Some(PathBuf::from(format!("{home}/.postgresql/postgresql.key")))
    );
    assert_eq!(
        p.sslcrl(),
        Some(PathBuf::from(format!("{home}/.postgresql/root.crl")))
    );

    let p = ok(resolve_with(
        &dbreq(
            "sslrootcert=system sslcrldir=/crl connect_timeout=-1 application_name=me fallback_application_name=fb",
        ),
        &FakeEnv::new(d.path()),
    ));
    assert_eq!(p.sslrootcert(), Some(SslRootCert::System));
    assert_eq!(p.sslmode(), SslMode::VerifyFull);
    assert_eq!(p.sslcrl(), None);
    assert_eq!(p.connect_timeout(), Ok(None));
    assert_eq!(p.effective_application_name(), Some("me"));

    let p = ok(resolve_with(
        &dbreq("connect_timeout=10s client_encoding=auto"),
        &FakeEnv::new(d.path()).var("LC_ALL", "C"),
    ));
    assert_eq!(
        p.connect_timeout().map_err(|e| e.to_string()),
        Err("invalid integer value \"10s\" for connection option \"connect_timeout\"".to_string())
    );
    assert_eq!(p.client_encoding(), Some("SQL_ASCII"));
}

#[test]
fn debug_output_hides_secrets() {
    let d = tmp();
    let p = ok(resolve_with(
        &dbreq("password=hunter2 sslpassword=k3y"),
        &FakeEnv::new(d.path()),
    ));
    let shown = format!("{p:?}");
    assert!(
        !shown.contains("hunter2") && !shown.contains("k3y"),
        "{shown}"
    );
    assert!(shown.contains("redacted"));
    assert_eq!(p.password(), Some("hunter2"));
}

const SERVICES: &str = "[a]\nport=1111\ndbname=adb\n[a]extra\nport=2222\n[b]\nhost=/b\n";

#[test]
fn service_files_in_precedence_order() {
    let d = tmp();
    let sys = d.path().join("sys");
    std::fs::create_dir_all(&sys).unwrap_or_default();
    write(
        &sys.join("pg_service.conf"),
        "[a]\nport=3333\n[c]\nport=4444\n",
        0o644,
    );
    write(&d.path().join(".pg_service.conf"), SERVICES, 0o644);
    let sysdir = sys.display().to_string();
    let env = || FakeEnv::new(d.path()).var("PGSYSCONFDIR", &sysdir);

    // The home file wins for [a]; the section stops at the next header.
    let p = ok(resolve_with(&dbreq("service=a"), &env()));
    assert_eq!(p.hosts()[0].port.as_str(), "1111");
    assert_eq!(p.dbname(), "adb");
    // Only in the system file.
    let p = ok(resolve_with(&dbreq("service=c"), &env()));
    assert_eq!(p.hosts()[0].port.as_str(), "4444");
    // PGSERVICE; explicit values beat the service; the service beats the environment.
    let p = ok(resolve_with(
        &ConnectRequest {
            port: Some("9".into()),
            dbname: Some("x".into()),
            ..Default::default()
        },
        &env().var("PGSERVICE", "a").var("PGHOST", "/envhost"),
    ));
    assert_eq!((p.hosts()[0].port.as_str(), p.dbname()), ("9", "x"));
    assert_eq!(p.hosts()[0].host.as_deref(), Some("/envhost"));
    let p = ok(resolve_with(
        &dbreq("service=b"),
        &env().var("PGHOST", "/envhost"),
    ));
    assert_eq!(p.hosts()[0].host.as_deref(), Some("/b"));

    assert_eq!(
        err(resolve_with(&dbreq("service=zzz"), &env())),
        "definition of service \"zzz\" not found"
    );
    // Without PGSYSCONFDIR, the compiled-in directory (absent here).
    assert_eq!(
        err(resolve_with(&dbreq("service=c"), &FakeEnv::new(d.path()))),
        "definition of service \"c\" not found"
    );
    let missing = d.path().join("none.conf").display().to_string();
    assert_eq!(
        err(resolve_with(
            &dbreq("service=a"),
            &env().var("PGSERVICEFILE", &missing)
        )),
        format!("service file \"{missing}\" not found")
    );
}

#[test]
fn service_file_errors_name_the_line() {
    let d = tmp();
    let file = d.path().join("svc.conf");
    let long = format!("[long]\nhost={}\n", "x".repeat(1020));
    write(&file, &long, 0o644);
    let f = file.display().to_string();
    let env = FakeEnv::new(d.path()).var("PGSERVICEFILE", &f);
    assert_eq!(
        err(resolve_with(&dbreq("service=long"), &env)),
        format!("line 2 too long in service file \"{f}\"")
    );
    // 1021 bytes plus the newline fit in the 1024-byte buffer.
    write(&file, &format!("[ok]\nhost={}\n", "x".repeat(1016)), 0o644);
    assert_eq!(
        ok(resolve_with(&dbreq("service=ok"), &env)).hosts()[0]
            .host
            .as_deref()
            .map(str::len),
        Some(1016)
    );
    write(&file, "# c\n[s]\n\n  port = 1\n", 0o644);
    assert_eq!(
        err(resolve_with(&dbreq("service=s"), &env)),
        format!("syntax error in service file \"{f}\", line 4")
    );
    write(&file, "[s]\nservice=t\n", 0o644);
    assert_eq!(
        err(resolve_with(&dbreq("service=s"), &env)),
        format!("nested service specifications not supported in service file \"{f}\", line 2")
    );
}

const PGPASS: &str = "#localhost:5432:db:u:commented\nlocalhost:5432:db:u:sock-pw\nremote:5432:db:u:tcp-pw\n*:6000:*:*:any-pw\n";

#[test]
fn pgpass_lookup() {
    let d = tmp();
    let pass = d.path().join(".pgpass");
    write(&pass, PGPASS, 0o600);
    let env = FakeEnv::new(d.path());
    let lookup = |conninfo: &str| {
        let p = ok(resolve_with(
            &ConnectRequest {
                dbname: Some(conninfo.into()),
                user: Some("u".into()),
                ..Default::default()
            },
            &env,
        ));
        let h = p.hosts()[0].clone();
        lookup_password_with(&p, &h, &env)
    };
    // The default socket directory counts as "localhost"; another directory does not.
    assert_eq!(lookup("dbname=db").password.as_deref(), Some("sock-pw"));
    assert_eq!(
        lookup("dbname=db host=/tmp").password.as_deref(),
        Some("sock-pw")
    );
    assert_eq!(lookup("dbname=db host=/elsewhere").password, None);
    assert_eq!(
        lookup("dbname=db host=remote").password.as_deref(),
        Some("tcp-pw")
    );
    assert_eq!(
        lookup("dbname=other host=remote port=6000")
            .password
            .as_deref(),
        Some("any-pw")
    );
    assert_eq!(
        lookup("dbname=db host=remote password=given").password,
        None
    );

    write(&pass, PGPASS, 0o644);
    let l = lookup("dbname=db");
    assert_eq!(l.password, None);
    assert_eq!(
        l.warning,
        Some(format!(
            "WARNING: password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
            pass.display()
        ))
    );
    std::fs::remove_file(&pass).unwrap_or_default();
    std::fs::create_dir(&pass).unwrap_or_default();
    let l = lookup("dbname=db");
    assert_eq!(
        l.warning,
        Some(format!(
            "WARNING: password file \"{}\" is not a plain file",
            pass.display()
        ))
    );
    std::fs::remove_dir(&pass).unwrap_or_default();
    assert_eq!(lookup("dbname=db"), Default::default());
}

#[test]
fn load_balancing_shuffles_only_when_asked() {
    let d = tmp();
    let env = FakeEnv::new(d.path());
    let names = |p: &ConnParams| -> Vec<String> {
        p.hosts_in_connect_order()
            .iter()
            .map(|h| h.display_host().to_string())
            .collect()
    };
    let list = "host=a,b,c,d,e,f,g,h";
    let p = ok(resolve_with(&dbreq(list), &env));
    let given: Vec<String> = "abcdefgh".chars().map(String::from).collect();
    assert_eq!(names(&p), given);
    let p = ok(resolve_with(
        &dbreq(&format!("{list} load_balance_hosts=random")),
        &env,
    ));
    let mut seen_other_order = false;
    for _ in 0..20 {
        let mut got = names(&p);
        seen_other_order |= got != given;
        got.sort();
        assert_eq!(got, given);
    }
    assert!(
        seen_other_order,
        "20 shuffles of 8 hosts all kept the order"
    );
}
