//! Server certificates made by the `openssl` command line (PostgreSQL's documentation
//! recipes and the usual tutorials), generated at run time into temp dirs: pgrush and
//! pgbench 15 (libpq linked with OpenSSL) connect to the same throwaway clusters with
//! the same connection strings, and their exit codes and whole stderr must match.
//! Every case that connects has a refused case next to it (wrong CA, wrong host name,
//! expired, not a CA...).
//!
//! libpq 15 and 18 word every message checked here alike (`SSL error: certificate
//! verify failed`, `server certificate for "..." does not match host name "..."`).

use std::path::{Path, PathBuf};
use std::process::Command;

use pgrush_cluster::{Cluster, ServerTls};
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};
use tempfile::TempDir;

const VERIFY_FAILED: &str = "SSL error: certificate verify failed";

/// A key type, as `openssl req -newkey` arguments.
#[derive(Debug, Clone, Copy)]
enum Key {
    Rsa,
    P256,
    P384,
    Ed25519,
}

impl Key {
    fn newkey(self) -> &'static [&'static str] {
        match self {
            Key::Rsa => &["-newkey", "rsa:2048"],
            Key::P256 => &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
            Key::P384 => &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384"],
            Key::Ed25519 => &["-newkey", "ed25519"],
        }
    }
}

/// A directory of certificates made with `/usr/bin/openssl`.
struct Pki {
    dir: TempDir,
}

impl Pki {
    fn new() -> Pki {
        Pki {
            dir: tempfile::Builder::new()
                .prefix("pgrush-openssl-")
                .tempdir()
                .expect("tempdir"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `openssl ARGS` in the directory; panics with its stderr on failure.
    fn openssl(&self, args: &[&str]) {
        let out = Command::new("/usr/bin/openssl")
            .args(args)
            .current_dir(self.dir.path())
            .env("OPENSSL_CONF", "/usr/lib/ssl/openssl.cnf")
            .output()
            .expect("run /usr/bin/openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).expect("write file");
    }

    /// `name.crt` + `name.key`: `openssl req -new -x509 -days 365 -nodes` (the docs'
    /// recipe: `CA:TRUE`, its own issuer), with `-addext` arguments.
    fn self_signed(&self, name: &str, key: Key, subj: &str, addext: &[&str]) {
        let (crt, keyf) = (format!("{name}.crt"), format!("{name}.key"));
        let mut args = vec!["req", "-new", "-x509", "-days", "365", "-nodes"];
        args.extend_from_slice(key.newkey());
        args.extend_from_slice(&["-out", &crt, "-keyout", &keyf, "-subj", subj]);
        for e in addext {
            args.extend_from_slice(&["-addext", e]);
        }
        self.openssl(&args);
    }

    /// `name.csr` + `name.key`.
    fn request(&self, name: &str, key: Key, subj: &str) {
        let (csr, keyf) = (format!("{name}.csr"), format!("{name}.key"));
        let mut args = vec!["req", "-new", "-nodes"];
        args.extend_from_slice(key.newkey());
        args.extend_from_slice(&["-out", &csr, "-keyout", &keyf, "-subj", subj]);
        self.openssl(&args);
    }

    /// `name.crt` from `name.csr`, signed by `ca` with `openssl x509 -req`; with
    /// `extensions` (lines of an extension file) or none (a version 1 certificate).
    fn sign(&self, name: &str, ca: &str, extensions: Option<&str>) {
        let (csr, crt) = (format!("{name}.csr"), format!("{name}.crt"));
        let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
        let ext = format!("{name}.ext");
        let mut args = vec![
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_crt,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-days",
            "365",
            "-out",
            &crt,
        ];
        if let Some(lines) = extensions {
            self.write(&ext, lines);
            args.extend_from_slice(&["-extfile", &ext]);
        }
        self.openssl(&args);
    }

    /// `name.crt` from `name.csr` signed by `ca` (or by itself when `ca` is `None`)
    /// with explicit dates (`YYYYMMDDHHMMSSZ`), through `openssl ca`.
    fn sign_dated(&self, name: &str, ca: Option<&str>, start: &str, end: &str) {
        let db = format!("{name}.db");
        self.write(&db, "");
        self.write(&format!("{name}.srl"), "1000\n");
        self.write(
            &format!("{name}.cnf"),
            &format!(
                "[ca]\ndefault_ca = d\n[d]\ndatabase = {db}\nnew_certs_dir = .\nserial = {name}.srl\n\
                 default_md = sha256\npolicy = p\nunique_subject = no\n\
                 x509_extensions = e\n[p]\ncommonName = supplied\n\
                 [e]\nbasicConstraints = CA:TRUE\nsubjectKeyIdentifier = hash\n"
            ),
        );
        let (cnf, csr, crt) = (
            format!("{name}.cnf"),
            format!("{name}.csr"),
            format!("{name}.crt"),
        );
        let mut args = vec![
            "ca",
            "-batch",
            "-notext",
            "-config",
            &cnf,
            "-in",
            &csr,
            "-out",
            &crt,
            "-startdate",
            start,
            "-enddate",
            end,
        ];
        let (ca_crt, ca_key, self_key) = match ca {
            Some(ca) => (format!("{ca}.crt"), format!("{ca}.key"), String::new()),
            None => (String::new(), String::new(), format!("{name}.key")),
        };
        if ca.is_some() {
            args.extend_from_slice(&["-cert", &ca_crt, "-keyfile", &ca_key]);
        } else {
            args.extend_from_slice(&["-selfsign", "-keyfile", &self_key]);
        }
        self.openssl(&args);
    }

    /// Concatenates files into `name`.
    fn concat(&self, name: &str, parts: &[&str]) {
        let text: String = parts
            .iter()
            .map(|p| std::fs::read_to_string(self.path(p)).expect("read part"))
            .collect();
        self.write(name, &text);
    }

    /// Starts a cluster serving `cert` (a chain) and `key`.
    fn cluster(&self, cert: &str, key: &str) -> Cluster {
        Cluster::builder()
            .tls(ServerTls::from_files(self.path(cert), self.path(key)))
            .start()
            .expect("start TLS cluster")
    }
}

/// Runs `program -n -t 1 -f one.sql CONNINFO` with `HOME` = `dir`.
fn run(mut cmd: Command, dir: &Path, conninfo: &str) -> Output {
    pgrush_testkit::clear_pg_env(&mut cmd);
    cmd.env("PGPASSFILE", "/nonexistent/pgpass")
        .env("PGSYSCONFDIR", "/nonexistent")
        .env("HOME", dir)
        .current_dir(dir)
        .args(["-n", "-t", "1", "-f", "one.sql", conninfo]);
    testkit::run(&mut cmd)
}

/// Runs both programs (with `~/.postgresql/root.crt` = `home_root` when given) and
/// asserts the same exit code and stderr; returns pgrush's output.
fn same_as_pgbench15(conninfo: &str, home_root: Option<&Path>) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("one.sql"), "SELECT 1;\n").expect("write script");
    if let Some(root) = home_root {
        let dot = home.path().join(".postgresql");
        std::fs::create_dir(&dot).expect("mkdir ~/.postgresql");
        std::fs::copy(root, dot.join("root.crt")).expect("copy root.crt");
    }
    let theirs = run(
        oracle::require(Which::Pgbench15).command(),
        home.path(),
        conninfo,
    );
    let ours = run(
        Command::new(env!("CARGO_BIN_EXE_pgrush")),
        home.path(),
        conninfo,
    );
    assert_eq!(
        ours.code, theirs.code,
        "exit code for {conninfo}\npgrush stderr:\n{}\npgbench stderr:\n{}",
        ours.stderr, theirs.stderr
    );
    assert_eq!(
        ours.stderr,
        theirs.stderr.replace("pgbench", "pgrush"),
        "stderr for {conninfo}"
    );
    ours
}

/// Both connect.
fn accepts(conninfo: &str, home_root: Option<&Path>) {
    let out = same_as_pgbench15(conninfo, home_root);
    assert_eq!(out.code, 0, "{conninfo}: {}", out.stderr);
}

/// Both refuse, with `needle` in the (identical) message.
fn refuses(conninfo: &str, home_root: Option<&Path>, needle: &str) {
    let out = same_as_pgbench15(conninfo, home_root);
    assert_eq!(out.code, 1, "{conninfo}");
    assert!(out.stderr.contains(needle), "{conninfo}: {}", out.stderr);
}

/// A connection string to `c` on 127.0.0.1 naming `host` for the certificate check.
fn conn(c: &Cluster, host: &str, rest: &str) -> String {
    format!(
        "host={host} hostaddr=127.0.0.1 port={} user=postgres dbname=postgres {rest}",
        c.port()
    )
}

#[test]
fn docs_self_signed_ca_true_is_its_own_root() {
    let pki = Pki::new();
    pki.self_signed("server", Key::Rsa, "/CN=localhost", &[]);
    // Same name, another key: must not be taken for the server's root.
    pki.self_signed("other", Key::Rsa, "/CN=localhost", &[]);
    let c = pki.cluster("server.crt", "server.key");
    let root = pki.path("server.crt");
    let root = root.display();
    let other = pki.path("other.crt");
    let other = other.display();

    accepts(&conn(&c, "localhost", "sslmode=require"), None);
    // libpq verifies the chain in `require` once ~/.postgresql/root.crt exists.
    accepts(
        &conn(&c, "localhost", "sslmode=require"),
        Some(&pki.path("server.crt")),
    );
    refuses(
        &conn(&c, "localhost", "sslmode=require"),
        Some(&pki.path("other.crt")),
        VERIFY_FAILED,
    );
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={root}"),
        ),
        None,
    );
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
    );
    accepts(
        &conn(&c, "localhost", "sslmode=verify-full"),
        Some(&pki.path("server.crt")),
    );
    refuses(
        &conn(
            &c,
            "127.0.0.1",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
        "server certificate for \"localhost\" does not match host name \"127.0.0.1\"",
    );
    refuses(
        &conn(
            &c,
            "db.example",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
        "does not match host name \"db.example\"",
    );
    for mode in ["verify-ca", "verify-full"] {
        refuses(
            &conn(
                &c,
                "localhost",
                &format!("sslmode={mode} sslrootcert={other}"),
            ),
            None,
            VERIFY_FAILED,
        );
    }
}

#[test]
fn self_signed_with_subject_alt_names() {
    let pki = Pki::new();
    pki.self_signed(
        "server",
        Key::Rsa,
        "/CN=pg.example",
        &["subjectAltName=DNS:localhost,IP:127.0.0.1"],
    );
    pki.self_signed(
        "other",
        Key::Rsa,
        "/CN=pg.example",
        &["subjectAltName=DNS:localhost,IP:127.0.0.1"],
    );
    let c = pki.cluster("server.crt", "server.key");
    let root = pki.path("server.crt").display().to_string();
    let other = pki.path("other.crt").display().to_string();
    accepts(&conn(&c, "localhost", "sslmode=require"), None);
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={root}"),
        ),
        None,
    );
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
    );
    accepts(
        &conn(
            &c,
            "127.0.0.1",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
    );
    // With DNS names in the SAN the CN is not looked at.
    refuses(
        &conn(
            &c,
            "pg.example",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
        "server certificate for \"localhost\" (and 1 other name) does not match host name \"pg.example\"",
    );
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={other}"),
        ),
        None,
        VERIFY_FAILED,
    );
}

#[test]
fn version1_leaf_signed_by_a_ca() {
    // A wrong root with the right name: the version 1 leaf has no authority key
    // identifier, so OpenSSL tries the wrong root's key, and libpq reports the first
    // error OpenSSL queued: the RSA padding check, or the EVP layer for other keys.
    // RSA: "invalid padding", or "data too large for modulus" when the signature
    // happens to exceed the wrong key's modulus.
    version1_leaf(Key::Rsa, "SSL error: ");
    version1_leaf(Key::P256, "SSL error: EVP lib");
    version1_leaf(Key::Ed25519, "SSL error: EVP lib");
}

/// The docs' "root CA + server certificate" recipe with `key`: the server certificate
/// is made by `x509 -req` without `-extfile`, so it is version 1.
fn version1_leaf(key: Key, wrong_root_error: &str) {
    let pki = Pki::new();
    pki.self_signed("root", key, "/CN=root.yourdomain.com", &[]);
    pki.self_signed("wrong", key, "/CN=root.yourdomain.com", &[]);
    pki.request("server", key, "/CN=localhost");
    pki.sign("server", "root", None);
    let c = pki.cluster("server.crt", "server.key");
    let root = pki.path("root.crt").display().to_string();
    let wrong = pki.path("wrong.crt").display().to_string();
    let leaf = pki.path("server.crt").display().to_string();
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
    );
    accepts(
        &conn(&c, "localhost", "sslmode=require"),
        Some(&pki.path("root.crt")),
    );
    refuses(
        &conn(
            &c,
            "127.0.0.1",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
        "does not match host name \"127.0.0.1\"",
    );
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={wrong}"),
        ),
        None,
        wrong_root_error,
    );
    // The leaf alone is not self-signed: it cannot be its own root.
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={leaf}"),
        ),
        None,
        VERIFY_FAILED,
    );
}

#[test]
fn version1_intermediate_is_not_a_ca() {
    let pki = Pki::new();
    pki.self_signed("root", Key::Rsa, "/CN=root", &[]);
    pki.request("inter", Key::Rsa, "/CN=inter");
    pki.sign("inter", "root", None);
    pki.request("server", Key::Rsa, "/CN=localhost");
    pki.sign("server", "inter", None);
    pki.concat("chain.crt", &["server.crt", "inter.crt"]);
    let c = pki.cluster("chain.crt", "server.key");
    let root = pki.path("root.crt").display().to_string();
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={root}"),
        ),
        None,
        VERIFY_FAILED,
    );
}

/// A root (`req -x509`), an intermediate CA and a leaf for localhost signed by it.
fn intermediate_pki(inter_ext: &str) -> Pki {
    let pki = Pki::new();
    pki.self_signed("root", Key::Rsa, "/CN=Example Root", &[]);
    pki.request("inter", Key::Rsa, "/CN=Example Intermediate");
    pki.sign("inter", "root", Some(inter_ext));
    pki.request("server", Key::Rsa, "/CN=localhost");
    pki.sign(
        "server",
        "inter",
        Some("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost\n"),
    );
    pki.concat("chain.crt", &["server.crt", "inter.crt"]);
    pki.concat("root+inter.crt", &["root.crt", "inter.crt"]);
    pki
}

const INTER_EXT: &str = "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid:always\n";

#[test]
fn intermediate_sent_by_the_server() {
    let pki = intermediate_pki(INTER_EXT);
    let c = pki.cluster("chain.crt", "server.key");
    let p = |n: &str| pki.path(n).display().to_string();
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={}", p("root.crt")),
        ),
        None,
    );
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={}", p("root+inter.crt")),
        ),
        None,
    );
    // No partial chains: the intermediate alone is not a trust anchor.
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={}", p("inter.crt")),
        ),
        None,
        VERIFY_FAILED,
    );
    refuses(
        &conn(
            &c,
            "127.0.0.1",
            &format!("sslmode=verify-full sslrootcert={}", p("root.crt")),
        ),
        None,
        "does not match host name \"127.0.0.1\"",
    );
}

#[test]
fn intermediate_only_in_root_file() {
    let pki = intermediate_pki(INTER_EXT);
    let c = pki.cluster("server.crt", "server.key");
    let p = |n: &str| pki.path(n).display().to_string();
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={}", p("root+inter.crt")),
        ),
        None,
    );
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={}", p("root.crt")),
        ),
        None,
        VERIFY_FAILED,
    );
}

#[test]
fn intermediate_that_is_not_a_ca() {
    let pki = intermediate_pki("basicConstraints=CA:FALSE\n");
    let c = pki.cluster("chain.crt", "server.key");
    let root = pki.path("root.crt").display().to_string();
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={root}"),
        ),
        None,
        VERIFY_FAILED,
    );
}

/// A CA and a leaf of `key`'s type; accepted with its CA, refused with another.
fn key_type(key: Key) {
    let pki = Pki::new();
    pki.self_signed("root", key, "/CN=Key Test CA", &[]);
    pki.self_signed("wrong", key, "/CN=Key Test CA", &[]);
    pki.request("server", key, "/CN=localhost");
    pki.sign(
        "server",
        "root",
        Some("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
    );
    let c = pki.cluster("server.crt", "server.key");
    let root = pki.path("root.crt").display().to_string();
    let wrong = pki.path("wrong.crt").display().to_string();
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
    );
    accepts(
        &conn(
            &c,
            "127.0.0.1",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
    );
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={wrong}"),
        ),
        None,
        VERIFY_FAILED,
    );
    // Its own self-signed root, for the same key type.
    let pki2 = Pki::new();
    pki2.self_signed("server", key, "/CN=localhost", &[]);
    let c2 = pki2.cluster("server.crt", "server.key");
    accepts(
        &conn(
            &c2,
            "localhost",
            &format!(
                "sslmode=verify-full sslrootcert={}",
                pki2.path("server.crt").display()
            ),
        ),
        None,
    );
}

#[test]
fn rsa_keys() {
    key_type(Key::Rsa);
}

#[test]
fn ecdsa_p256_keys() {
    key_type(Key::P256);
}

#[test]
fn ecdsa_p384_keys() {
    key_type(Key::P384);
}

#[test]
fn ed25519_keys() {
    key_type(Key::Ed25519);
}

#[test]
fn expired_and_not_yet_valid() {
    let pki = Pki::new();
    pki.self_signed("root", Key::Rsa, "/CN=Dates CA", &[]);
    pki.request("expired", Key::Rsa, "/CN=localhost");
    pki.sign_dated(
        "expired",
        Some("root"),
        "20200101000000Z",
        "20210101000000Z",
    );
    pki.request("future", Key::Rsa, "/CN=localhost");
    pki.sign_dated("future", Some("root"), "20990101000000Z", "21000101000000Z");
    pki.request("current", Key::Rsa, "/CN=localhost");
    pki.sign_dated(
        "current",
        Some("root"),
        "20200101000000Z",
        "20990101000000Z",
    );
    // A self-signed root that expired, and a leaf it signed that is still valid.
    pki.request("oldroot", Key::Rsa, "/CN=Old CA");
    pki.sign_dated("oldroot", None, "20200101000000Z", "20210101000000Z");
    pki.request("underold", Key::Rsa, "/CN=localhost");
    pki.sign_dated(
        "underold",
        Some("oldroot"),
        "20200101000000Z",
        "20990101000000Z",
    );
    let root = pki.path("root.crt").display().to_string();
    let oldroot = pki.path("oldroot.crt").display().to_string();

    for name in ["expired", "future"] {
        let c = pki.cluster(&format!("{name}.crt"), &format!("{name}.key"));
        refuses(
            &conn(
                &c,
                "localhost",
                &format!("sslmode=verify-ca sslrootcert={root}"),
            ),
            None,
            VERIFY_FAILED,
        );
        // `require` without a root file checks nothing.
        accepts(&conn(&c, "localhost", "sslmode=require"), None);
    }
    let c = pki.cluster("current.crt", "current.key");
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
    );
    let c = pki.cluster("underold.crt", "underold.key");
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={oldroot}"),
        ),
        None,
        VERIFY_FAILED,
    );
    // An expired self-signed server certificate used as its own root.
    let c = pki.cluster("oldroot.crt", "oldroot.key");
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={oldroot}"),
        ),
        None,
        VERIFY_FAILED,
    );
}

#[test]
fn ip_address_and_wildcard_names() {
    let pki = Pki::new();
    pki.self_signed("root", Key::P256, "/CN=Names CA", &[]);
    pki.request("ip", Key::P256, "/CN=localhost");
    pki.sign("ip", "root", Some("subjectAltName=IP:127.0.0.1\n"));
    pki.request("wild", Key::P256, "/CN=localhost");
    pki.sign("wild", "root", Some("subjectAltName=DNS:*.pg.test\n"));
    let root = pki.path("root.crt").display().to_string();
    let full = format!("sslmode=verify-full sslrootcert={root}");

    let c = pki.cluster("ip.crt", "ip.key");
    accepts(&conn(&c, "127.0.0.1", &full), None);
    // An IP-only SAN: libpq falls back to the CN for a DNS host name.
    accepts(&conn(&c, "localhost", &full), None);
    refuses(
        &conn(&c, "db.pg.test", &full),
        None,
        "does not match host name \"db.pg.test\"",
    );

    // An address in the CN alone (no SAN): compared as text.
    pki.request("cnip", Key::P256, "/CN=127.0.0.1");
    pki.sign("cnip", "root", None);
    let c = pki.cluster("cnip.crt", "cnip.key");
    accepts(&conn(&c, "127.0.0.1", &full), None);
    refuses(
        &conn(&c, "localhost", &full),
        None,
        "server certificate for \"127.0.0.1\" does not match host name \"localhost\"",
    );

    let c = pki.cluster("wild.crt", "wild.key");
    accepts(&conn(&c, "db.pg.test", &full), None);
    refuses(
        &conn(&c, "a.b.pg.test", &full),
        None,
        "server certificate for \"*.pg.test\" does not match host name \"a.b.pg.test\"",
    );
    refuses(
        &conn(&c, "pg.test", &full),
        None,
        "does not match host name \"pg.test\"",
    );
    refuses(
        &conn(&c, "localhost", &full),
        None,
        "does not match host name \"localhost\"",
    );
}

#[test]
fn leaf_for_clients_only_is_refused() {
    let pki = Pki::new();
    pki.self_signed("root", Key::Rsa, "/CN=Purpose CA", &[]);
    pki.request("server", Key::Rsa, "/CN=localhost");
    pki.sign("server", "root", Some("extendedKeyUsage=clientAuth\n"));
    pki.request("ok", Key::Rsa, "/CN=localhost");
    pki.sign(
        "ok",
        "root",
        Some("extendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature\n"),
    );
    let root = pki.path("root.crt").display().to_string();
    let c = pki.cluster("server.crt", "server.key");
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={root}"),
        ),
        None,
        VERIFY_FAILED,
    );
    let c = pki.cluster("ok.crt", "ok.key");
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        None,
    );
}

/// Self-signed server certificates used as their own root: not a CA, without
/// keyCertSign (both accepted), a key usage for certificate signing only (refused).
#[test]
fn self_signed_variants() {
    let pki = Pki::new();
    pki.self_signed(
        "noca",
        Key::Rsa,
        "/CN=localhost",
        &["basicConstraints=critical,CA:FALSE"],
    );
    pki.self_signed(
        "certsign",
        Key::P256,
        "/CN=localhost",
        &["keyUsage=keyCertSign"],
    );
    // Without keyCertSign: still its own root (OpenSSL 3 ignores the key usage there).
    pki.self_signed(
        "nosign",
        Key::Rsa,
        "/CN=localhost",
        &["keyUsage=digitalSignature,keyEncipherment"],
    );
    for (name, ok) in [("noca", true), ("certsign", false), ("nosign", true)] {
        let c = pki.cluster(&format!("{name}.crt"), &format!("{name}.key"));
        let full = format!(
            "sslmode=verify-full sslrootcert={}",
            pki.path(&format!("{name}.crt")).display()
        );
        if ok {
            accepts(&conn(&c, "localhost", &full), None);
            refuses(
                &conn(&c, "127.0.0.1", &full),
                None,
                "does not match host name \"127.0.0.1\"",
            );
        } else {
            refuses(&conn(&c, "localhost", &full), None, VERIFY_FAILED);
        }
    }
}

/// The server sends its whole chain, root included.
#[test]
fn server_sends_its_root_too() {
    let pki = intermediate_pki(INTER_EXT);
    pki.self_signed("other", Key::Rsa, "/CN=Example Root", &[]);
    pki.concat("full.crt", &["server.crt", "inter.crt", "root.crt"]);
    let c = pki.cluster("full.crt", "server.key");
    let p = |n: &str| pki.path(n).display().to_string();
    accepts(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={}", p("root.crt")),
        ),
        None,
    );
    // A same-named root in the store does not stand in for the one sent.
    refuses(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslrootcert={}", p("other.crt")),
        ),
        None,
        VERIFY_FAILED,
    );
}

/// `pathlen:0` on the intermediate forbids another CA below it; an unknown critical
/// extension on the leaf is refused.
#[test]
fn path_length_and_unknown_critical_extension() {
    let pki = intermediate_pki(INTER_EXT);
    pki.request("sub", Key::Rsa, "/CN=Sub CA");
    pki.sign(
        "sub",
        "inter",
        Some("basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign\n"),
    );
    pki.request("deep", Key::Rsa, "/CN=localhost");
    pki.sign("deep", "sub", Some("subjectAltName=DNS:localhost\n"));
    pki.concat("deep-chain.crt", &["deep.crt", "sub.crt", "inter.crt"]);
    pki.request("crit", Key::Rsa, "/CN=localhost");
    pki.sign(
        "crit",
        "root",
        Some("subjectAltName=DNS:localhost\n1.2.3.4.5.6.7=critical,ASN1:UTF8String:x\n"),
    );
    pki.request("noncrit", Key::Rsa, "/CN=localhost");
    pki.sign(
        "noncrit",
        "root",
        Some("subjectAltName=DNS:localhost\n1.2.3.4.5.6.7=ASN1:UTF8String:x\n"),
    );
    let full = format!(
        "sslmode=verify-full sslrootcert={}",
        pki.path("root.crt").display()
    );
    let c = pki.cluster("deep-chain.crt", "deep.key");
    refuses(&conn(&c, "localhost", &full), None, VERIFY_FAILED);
    let c = pki.cluster("crit.crt", "crit.key");
    refuses(&conn(&c, "localhost", &full), None, VERIFY_FAILED);
    let c = pki.cluster("noncrit.crt", "noncrit.key");
    accepts(&conn(&c, "localhost", &full), None);
}

/// A root file without any certificate.
#[test]
fn root_file_without_certificates() {
    let pki = Pki::new();
    pki.self_signed("server", Key::Rsa, "/CN=localhost", &[]);
    pki.write("empty.crt", "");
    pki.write(
        "key-only.crt",
        &std::fs::read_to_string(pki.path("server.key")).expect("key"),
    );
    let c = pki.cluster("server.crt", "server.key");
    for name in ["empty.crt", "key-only.crt"] {
        refuses(
            &conn(
                &c,
                "localhost",
                &format!("sslmode=verify-ca sslrootcert={}", pki.path(name).display()),
            ),
            None,
            "no certificate or crl found",
        );
    }
}
