//! End to end on a real server: the same environment (password file, service
//! file, variables) is given to pgbench 18 and to `resolve_with` +
//! `Connection::connect`; both must agree on whether a SCRAM-protected
//! connection succeeds, i.e. on which password, host and port libpq picks.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pgrush_cluster::{Auth, Cluster};
use pgrush_testkit::oracle::{Which, require};
use pgrush_wire::Connection;
use pgrush_wire::conninfo::{ConnectRequest, Environment, resolve_with};

const USER: &str = "pwuser";
const PASSWORD: &str = "s3cret:\\pw";

fn cluster() -> &'static Cluster {
    static C: OnceLock<Cluster> = OnceLock::new();
    C.get_or_init(|| {
        Cluster::builder()
            .auth(Auth::Scram)
            .user(USER, PASSWORD)
            .start()
            .unwrap_or_else(|e| panic!("cannot start the sandbox cluster: {e}"))
    })
}

/// The variables of one scenario, seen by both pgbench and `resolve_with`.
struct Scenario {
    vars: HashMap<String, String>,
    home: PathBuf,
}

impl Environment for Scenario {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
    fn passwd_home(&self) -> Option<PathBuf> {
        Some(self.home.clone())
    }
    fn os_user_name(&self) -> Result<String, String> {
        Ok("root".into())
    }
}

impl Scenario {
    fn new(dir: &Path) -> Scenario {
        let home = dir.join("home");
        let sys = dir.join("sys");
        std::fs::create_dir_all(&home).unwrap_or_default();
        std::fs::create_dir_all(&sys).unwrap_or_default();
        let mut vars = HashMap::new();
        vars.insert("HOME".to_string(), home.display().to_string());
        vars.insert("PGSYSCONFDIR".to_string(), sys.display().to_string());
        Scenario { vars, home }
    }

    fn set(mut self, k: &str, v: &str) -> Scenario {
        self.vars.insert(k.into(), v.into());
        self
    }

    /// pgbench 18's verdict: Ok, or its stderr.
    fn pgbench(&self, dbname: Option<&str>, dir: &Path) -> Result<(), String> {
        let script = dir.join("one.sql");
        std::fs::write(&script, "SELECT 1;\n").unwrap_or_default();
        let mut cmd = require(Which::Pgbench18).command();
        for (k, _) in std::env::vars() {
            if k.starts_with("PG") {
                cmd.env_remove(k);
            }
        }
        cmd.envs(&self.vars)
            .args(["-n", "-t", "1", "-f"])
            .arg(&script);
        if let Some(d) = dbname {
            cmd.arg(d);
        }
        let out = pgrush_testkit::run(&mut cmd);
        if out.code == 0 {
            Ok(())
        } else {
            Err(out.stderr)
        }
    }

    /// pgrush's verdict.
    fn pgrush(&self, dbname: Option<&str>) -> Result<(), String> {
        let req = ConnectRequest {
            dbname: dbname.map(Into::into),
            fallback_application_name: Some("pgrush".into()),
            ..Default::default()
        };
        let params = resolve_with(&req, self).map_err(|e| e.to_string())?;
        Connection::connect(&params)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Password-file escaping of a field.
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace(':', "\\:")
}

fn agree(name: &str, s: &Scenario, dbname: Option<&str>, dir: &Path, expect_ok: bool) {
    let theirs = s.pgbench(dbname, dir);
    let ours = s.pgrush(dbname);
    if std::env::var("CONNINFO_DEBUG").is_ok() {
        eprintln!("{name}:\n  pgbench: {theirs:?}\n  pgrush:  {ours:?}");
    }
    assert_eq!(
        theirs.is_ok(),
        expect_ok,
        "{name}: pgbench 18 gave {theirs:?}"
    );
    assert_eq!(
        ours.is_ok(),
        expect_ok,
        "{name}: pgrush gave {ours:?} (pgbench 18: {theirs:?})"
    );
    // Failing the same way: pgbench prints libpq's message after its prefix.
    if let (Err(t), Err(o)) = (&theirs, &ours) {
        assert!(
            t.contains(&format!("pgbench: error: {o}\n")),
            "{name}: messages differ\n  pgbench 18: {t:?}\n  pgrush:     {o:?}"
        );
    }
}

#[test]
fn password_file_service_file_and_uri_agree_with_pgbench() {
    let c = cluster();
    let sock = c.socket_dir().display().to_string();
    let port = c.port().to_string();
    let good = format!("{}:{port}:postgres:{USER}:{}\n", esc(&sock), esc(PASSWORD));
    let wrong = format!("*:*:*:{USER}:nope\n");

    // ~/.pgpass matched on the socket directory; PGHOST/PGPORT/PGUSER/PGDATABASE.
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = Scenario::new(d.path())
        .set("PGHOST", &sock)
        .set("PGPORT", &port)
        .set("PGUSER", USER)
        .set("PGDATABASE", "postgres");
    write(&d.path().join("home/.pgpass"), &good, 0o600);
    agree("home pgpass", &s, None, d.path(), true);

    // The same file readable by others is ignored: no password.
    write(&d.path().join("home/.pgpass"), &good, 0o644);
    agree("insecure pgpass", &s, None, d.path(), false);

    // A wrong password first in the file wins over a later right one.
    write(
        &d.path().join("home/.pgpass"),
        &format!("{wrong}{good}"),
        0o600,
    );
    agree("first match", &s, None, d.path(), false);

    // TCP: host 127.0.0.1 in the file, file named by passfile= in the dbname conninfo.
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let pw = d.path().join("pw");
    write(
        &pw,
        &format!("127.0.0.1:{port}:postgres:{USER}:{}\n", esc(PASSWORD)),
        0o600,
    );
    let s = Scenario::new(d.path());
    let conninfo = format!(
        "host=127.0.0.1 port={port} user={USER} dbname=postgres passfile={}",
        pw.display()
    );
    agree("tcp passfile", &s, Some(&conninfo), d.path(), true);

    // A service file supplies host, port, user and dbname; PGPASSFILE the password.
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let svc = d.path().join("svc.conf");
    write(
        &svc,
        &format!("[bench]\nhost={sock}\nport={port}\nuser={USER}\ndbname=postgres\n"),
        0o644,
    );
    let pw = d.path().join("pw");
    write(&pw, &format!("*:*:*:*:{}\n", esc(PASSWORD)), 0o600);
    let s = Scenario::new(d.path())
        .set("PGSERVICEFILE", &svc.display().to_string())
        .set("PGPASSFILE", &pw.display().to_string());
    agree("service", &s, Some("service=bench"), d.path(), true);
    // With PGSERVICE and no database name, pgbench itself passes dbname=<OS user>
    // ("root" here), which beats the service's dbname: no such database.
    let s = s.set("PGSERVICE", "bench");
    agree("PGSERVICE", &s, None, d.path(), false);
    agree(
        "PGSERVICE with dbname",
        &s,
        Some("postgres"),
        d.path(),
        true,
    );
    // An explicit port beats the service: nothing listens there.
    agree(
        "service port overridden",
        &s,
        Some("port=1"),
        d.path(),
        false,
    );

    // A URI with a percent-encoded password; no password file needed.
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let s = Scenario::new(d.path());
    let uri =
        format!("postgresql://{USER}:s3cret%3A%5Cpw@127.0.0.1:{port}/postgres?connect_timeout=5");
    agree("uri", &s, Some(&uri), d.path(), true);
    let uri = format!("postgresql://{USER}:wrong@127.0.0.1:{port}/postgres");
    agree("uri wrong password", &s, Some(&uri), d.path(), false);
}
