//! A private Kerberos realm for tests: an MIT KDC (`krb5kdc`, Debian's
//! `krb5-kdc`) started in a temp dir on a port from the OS, with the service
//! principal `postgres/localhost` in a keytab the server's account can read.
//!
//! Nothing touches the machine's own Kerberos set-up: clients get
//! [`Kdc::apply`]'s `KRB5_CONFIG` and `KRB5CCNAME` (a ticket cache in the temp
//! dir), the KDC its own `KRB5_KDC_PROFILE`. The KDC is killed when the
//! [`Kdc`] is dropped.
//!
//! ```no_run
//! let kdc = pgrush_testkit::krb::Kdc::start();
//! kdc.add_user("alice", "secret");
//! kdc.kinit("alice", "secret");
//! // a server with `krb_server_keyfile = kdc.keytab()` and a `gss` hba line
//! ```

use std::io::Write;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The realm of every test KDC.
pub const REALM: &str = "PGRUSH.TEST";

/// A running KDC with its realm's files.
#[derive(Debug)]
pub struct Kdc {
    dir: TempDir,
    port: u16,
    child: Child,
}

/// A port free for both TCP and UDP on 127.0.0.1 (bound, then released).
fn free_port() -> u16 {
    for _ in 0..50 {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("bind a TCP port");
        let port = tcp.local_addr().expect("local address").port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no port free for both TCP and UDP");
}

/// Runs a Kerberos admin program; panics with its output on failure.
fn run_checked(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Kdc {
    /// Creates the realm (database, service principal `postgres/localhost`,
    /// keytab) and starts the KDC; waits until it accepts TCP connections.
    /// Panics with the reason when a program is missing or fails.
    pub fn start() -> Kdc {
        let dir = tempfile::Builder::new()
            .prefix("pgrush-krb-")
            .tempdir()
            .expect("tempdir");
        // The server's account must reach the keytab.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod realm dir");
        let port = free_port();
        let d = dir.path().display().to_string();
        std::fs::write(
            dir.path().join("krb5.conf"),
            format!(
                "[libdefaults]\n default_realm = {REALM}\n dns_lookup_kdc = false\n \
                 dns_lookup_realm = false\n rdns = false\n dns_canonicalize_hostname = false\n \
                 forwardable = true\n\n[realms]\n {REALM} = {{\n  kdc = 127.0.0.1:{port}\n }}\n\n\
                 [domain_realm]\n localhost = {REALM}\n"
            ),
        )
        .expect("write krb5.conf");
        std::fs::write(
            dir.path().join("kdc.conf"),
            format!(
                "[kdcdefaults]\n kdc_ports = {port}\n kdc_tcp_ports = {port}\n\n[realms]\n \
                 {REALM} = {{\n  database_name = {d}/principal\n  key_stash_file = {d}/stash\n  \
                 acl_file = {d}/kadm5.acl\n  kdc_ports = {port}\n  kdc_tcp_ports = {port}\n }}\n\n\
                 [logging]\n kdc = FILE:{d}/kdc.log\n"
            ),
        )
        .expect("write kdc.conf");
        std::fs::write(dir.path().join("kadm5.acl"), "").expect("write acl");
        let realm = Realm(dir.path().to_path_buf());
        run_checked(
            realm.admin("/usr/sbin/kdb5_util").args([
                "create",
                "-s",
                "-r",
                REALM,
                "-P",
                "master-password",
            ]),
            "kdb5_util create",
        );
        realm.kadmin("addprinc -randkey postgres/localhost");
        let keytab = dir.path().join("pg.keytab");
        realm.kadmin(&format!("ktadd -k {} postgres/localhost", keytab.display()));
        std::fs::set_permissions(&keytab, std::fs::Permissions::from_mode(0o644))
            .expect("chmod keytab");
        let child = realm
            .admin("/usr/sbin/krb5kdc")
            .arg("-n")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start krb5kdc (Debian package krb5-kdc)");
        let mut kdc = Kdc { dir, port, child };
        kdc.wait_ready();
        kdc
    }

    fn wait_ready(&mut self) {
        let until = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("krb5kdc exited ({status}): {}", self.log());
            }
            assert!(Instant::now() < until, "krb5kdc not ready: {}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The KDC's log (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("kdc.log")).unwrap_or_default()
    }

    fn realm(&self) -> Realm {
        Realm(self.dir.path().to_path_buf())
    }

    /// Runs one `kadmin.local` query.
    pub fn kadmin(&self, query: &str) {
        self.realm().kadmin(query);
    }

    /// Adds the user principal `name@REALM` with `password`.
    pub fn add_user(&self, name: &str, password: &str) {
        self.kadmin(&format!("addprinc -pw {password} {name}"));
    }

    /// Gets a ticket for `name` into [`Kdc::ccache`].
    pub fn kinit(&self, name: &str, password: &str) {
        let mut cmd = self.realm().admin("/usr/bin/kinit");
        cmd.arg(name).stdin(Stdio::piped()).stdout(Stdio::null());
        let mut child = cmd.spawn().expect("run kinit (Debian package krb5-user)");
        child
            .stdin
            .take()
            .expect("kinit stdin")
            .write_all(format!("{password}\n").as_bytes())
            .expect("write password");
        let status = child.wait().expect("wait for kinit");
        assert!(status.success(), "kinit {name} failed: {}", self.log());
    }

    /// The keytab with `postgres/localhost`, readable by everyone (for the
    /// server's `krb_server_keyfile`).
    pub fn keytab(&self) -> PathBuf {
        self.dir.path().join("pg.keytab")
    }

    /// The ticket cache clients use (`KRB5CCNAME`).
    pub fn ccache(&self) -> PathBuf {
        self.dir.path().join("ccache")
    }

    /// The client configuration (`KRB5_CONFIG`).
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("krb5.conf")
    }

    /// The realm's directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Points `cmd` at this realm: `KRB5_CONFIG` and `KRB5CCNAME`.
    pub fn apply(&self, cmd: &mut Command) {
        self.realm().apply(cmd);
    }
}

/// The realm's directory, for the programs run before and besides the KDC.
struct Realm(PathBuf);

impl Realm {
    fn apply(&self, cmd: &mut Command) {
        cmd.env("KRB5_CONFIG", self.0.join("krb5.conf")).env(
            "KRB5CCNAME",
            format!("FILE:{}", self.0.join("ccache").display()),
        );
    }

    /// A Kerberos admin program with the realm's client and KDC configuration.
    fn admin(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        self.apply(&mut cmd);
        cmd.env("KRB5_KDC_PROFILE", self.0.join("kdc.conf"));
        cmd
    }

    fn kadmin(&self, query: &str) {
        run_checked(
            self.admin("/usr/sbin/kadmin.local").args(["-q", query]),
            &format!("kadmin.local -q {query:?}"),
        );
    }
}

impl Drop for Kdc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
