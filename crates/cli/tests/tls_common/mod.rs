//! Shared by the `tls_*` tests: certificates made with the `openssl` command line in a
//! temp dir ([`Pki`]), clusters serving them, and runs of pgrush and pgbench 15 with
//! the same connection string whose exit codes and whole stderr must match.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pgrush_cluster::{Cluster, ClusterBuilder, ServerTls};
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};
use tempfile::TempDir;

pub const VERIFY_FAILED: &str = "SSL error: certificate verify failed";

/// A key type, as `openssl req -newkey` arguments.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    Rsa,
    P256,
    P384,
    Ed25519,
    /// An RSASSA-PSS key (`openssl req -newkey rsa-pss`).
    RsaPss,
    P521,
}

impl Key {
    pub fn newkey(self) -> &'static [&'static str] {
        match self {
            Key::Rsa => &["-newkey", "rsa:2048"],
            Key::P256 => &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
            Key::P384 => &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384"],
            Key::Ed25519 => &["-newkey", "ed25519"],
            Key::RsaPss => &["-newkey", "rsa-pss", "-pkeyopt", "rsa_keygen_bits:2048"],
            Key::P521 => &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-521"],
        }
    }
}

/// A directory of certificates made with `/usr/bin/openssl`.
pub struct Pki {
    dir: TempDir,
}

impl Pki {
    pub fn new() -> Pki {
        Pki {
            dir: tempfile::Builder::new()
                .prefix("pgrush-openssl-")
                .tempdir()
                .expect("tempdir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `openssl ARGS` in the directory; panics with its stderr on failure.
    pub fn openssl(&self, args: &[&str]) {
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

    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).expect("write file");
    }

    /// `name.crt` + `name.key`: `openssl req -new -x509 -days 365 -nodes` (the docs'
    /// recipe: `CA:TRUE`, its own issuer), with `-addext` arguments.
    pub fn self_signed(&self, name: &str, key: Key, subj: &str, addext: &[&str]) {
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
    pub fn request(&self, name: &str, key: Key, subj: &str) {
        let (csr, keyf) = (format!("{name}.csr"), format!("{name}.key"));
        let mut args = vec!["req", "-new", "-nodes"];
        args.extend_from_slice(key.newkey());
        args.extend_from_slice(&["-out", &csr, "-keyout", &keyf, "-subj", subj]);
        self.openssl(&args);
    }

    /// `name.crt` from `name.csr`, signed by `ca` with `openssl x509 -req`; with
    /// `extensions` (lines of an extension file) or none (a version 1 certificate).
    pub fn sign(&self, name: &str, ca: &str, extensions: Option<&str>) {
        self.sign_with(name, ca, extensions, &[]);
    }

    /// [`Pki::sign`] with more `openssl x509` arguments (`-sha1`, `-sigopt ...`).
    pub fn sign_with(&self, name: &str, ca: &str, extensions: Option<&str>, more: &[&str]) {
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
        args.extend_from_slice(more);
        self.openssl(&args);
    }

    /// `name.crt` from `name.csr` signed by `ca` (or by itself when `ca` is `None`)
    /// with explicit dates (`YYYYMMDDHHMMSSZ`), through `openssl ca`.
    pub fn sign_dated(&self, name: &str, ca: Option<&str>, start: &str, end: &str) {
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
    pub fn concat(&self, name: &str, parts: &[&str]) {
        let text: String = parts
            .iter()
            .map(|p| std::fs::read_to_string(self.path(p)).expect("read part"))
            .collect();
        self.write(name, &text);
    }

    /// Starts a cluster serving `cert` (a chain) and `key`.
    pub fn cluster(&self, cert: &str, key: &str) -> Cluster {
        self.cluster_with(Cluster::builder(), cert, key, None)
    }

    /// Starts `builder`'s cluster serving `cert` and `key`, asking clients for a
    /// certificate from `client_ca` when given (`ssl_ca_file`).
    pub fn cluster_with(
        &self,
        builder: ClusterBuilder,
        cert: &str,
        key: &str,
        client_ca: Option<&str>,
    ) -> Cluster {
        let mut tls = ServerTls::from_files(self.path(cert), self.path(key));
        if let Some(ca) = client_ca {
            tls = tls.ca_file(self.path(ca));
        }
        builder.tls(tls).start().expect("start TLS cluster")
    }

    /// `out`: a CRL from `ca` (`ca.crt`, `ca.key`) listing the certificates `revoked`
    /// (names of `.crt` files), made with `openssl ca -revoke` and `-gencrl`.
    pub fn crl(&self, ca: &str, revoked: &[&str], out: &str) {
        self.crl_dated(ca, revoked, out, &[]);
    }

    /// [`Pki::crl`] with `dates` (`-crl_lastupdate`, `-crl_nextupdate` arguments,
    /// `YYYYMMDDHHMMSSZ`).
    pub fn crl_dated(&self, ca: &str, revoked: &[&str], out: &str, dates: &[&str]) {
        let (db, cnf) = (format!("{out}.index"), format!("{out}.cnf"));
        self.write(&db, "");
        self.write(
            &cnf,
            &format!(
                "[ca]\ndefault_ca = d\n[d]\ndatabase = {db}\ndefault_md = sha256\n\
                 default_crl_days = 30\n"
            ),
        );
        let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
        for r in revoked {
            let crt = format!("{r}.crt");
            self.openssl(&[
                "ca", "-config", &cnf, "-cert", &ca_crt, "-keyfile", &ca_key, "-revoke", &crt,
            ]);
        }
        let mut args = vec![
            "ca", "-config", &cnf, "-cert", &ca_crt, "-keyfile", &ca_key, "-gencrl", "-out", out,
        ];
        args.extend_from_slice(dates);
        self.openssl(&args);
    }

    /// A hashed CRL directory `dir` holding `crls` as `<issuer hash>.r<n>` (what
    /// `openssl rehash` makes).
    pub fn crl_dir(&self, dir: &str, crls: &[&str]) -> PathBuf {
        let path = self.path(dir);
        std::fs::create_dir_all(&path).expect("mkdir CRL dir");
        for crl in crls {
            let out = Command::new("/usr/bin/openssl")
                .args(["crl", "-hash", "-noout", "-in"])
                .arg(self.path(crl))
                .stdin(Stdio::null())
                .output()
                .expect("openssl crl -hash");
            assert!(out.status.success(), "openssl crl -hash {crl}");
            let hash = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let n = (0..)
                .find(|n| !path.join(format!("{hash}.r{n}")).exists())
                .expect("a free name");
            std::fs::copy(self.path(crl), path.join(format!("{hash}.r{n}"))).expect("copy CRL");
        }
        path
    }
}

/// Runs `program -n -t 1 -f one.sql CONNINFO` with `HOME` = `dir`.
pub fn run(mut cmd: Command, dir: &Path, conninfo: &str) -> Output {
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
pub fn same_as_pgbench15(conninfo: &str, home_root: Option<&Path>) -> Output {
    let files: Vec<(&str, &Path)> = home_root.map(|r| ("root.crt", r)).into_iter().collect();
    compare(conninfo, &files)
}

/// A home directory with `one.sql` and `files` copied into `~/.postgresql/` under
/// their given names.
pub fn home_with(files: &[(&str, &Path)]) -> TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("one.sql"), "SELECT 1;\n").expect("write script");
    if !files.is_empty() {
        let dot = home.path().join(".postgresql");
        std::fs::create_dir(&dot).expect("mkdir ~/.postgresql");
        for (name, from) in files {
            std::fs::copy(from, dot.join(name)).expect("copy into ~/.postgresql");
        }
    }
    home
}

/// pgrush's run alone, in a home with `files` in `~/.postgresql/`.
pub fn ours(conninfo: &str, files: &[(&str, &Path)]) -> Output {
    let home = home_with(files);
    run(
        Command::new(env!("CARGO_BIN_EXE_pgrush")),
        home.path(),
        conninfo,
    )
}

/// pgbench 15's run alone, in a home with `files` in `~/.postgresql/`.
pub fn pgbench15(conninfo: &str, files: &[(&str, &Path)]) -> Output {
    oracle_run(Which::Pgbench15, conninfo, files)
}

/// An oracle's run alone, in a home with `files` in `~/.postgresql/`.
pub fn oracle_run(which: Which, conninfo: &str, files: &[(&str, &Path)]) -> Output {
    let home = home_with(files);
    run(oracle::require(which).command(), home.path(), conninfo)
}

/// Like [`compare`] with pgbench 18 (built without TLS: only for what libpq checks
/// before connecting, such as option values).
pub fn same_as_pgbench18(conninfo: &str) -> Output {
    let theirs = oracle_run(Which::Pgbench18, conninfo, &[]);
    let ours = ours(conninfo, &[]);
    assert_eq!(ours.code, theirs.code, "exit code for {conninfo}");
    assert_eq!(
        ours.stderr,
        theirs.stderr.replace("pgbench", "pgrush"),
        "stderr for {conninfo}"
    );
    ours
}

/// Runs both programs (stdin empty, not a terminal) in a home with `files` in
/// `~/.postgresql/` and asserts the same exit code and whole stderr; returns
/// pgrush's output.
pub fn compare(conninfo: &str, files: &[(&str, &Path)]) -> Output {
    let theirs = pgbench15(conninfo, files);
    let ours = ours(conninfo, files);
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

/// For a case where libpq 18 differs from pgbench 15's libpq: pgbench 15's stderr
/// must contain `fifteen_says`, and pgrush must fail with exactly `expected` (libpq
/// 18's words, `pgrush: error: ` lines) after the connection failure line.
pub fn like_libpq18(conninfo: &str, fifteen_says: &str, expected: &str) {
    let theirs = pgbench15(conninfo, &[]);
    assert!(
        theirs.stderr.contains(fifteen_says),
        "pgbench 15 for {conninfo}: {}",
        theirs.stderr
    );
    let out = ours(conninfo, &[]);
    assert_eq!(out.code, 1, "{conninfo}: {}", out.stderr);
    assert_eq!(out.stderr, expected, "stderr for {conninfo}");
}

/// pgrush's connection failure message for `c` (libpq: `connection to server at
/// "127.0.0.1", port N failed: MESSAGE`) followed by pgbench's setup failure line.
pub fn failure_stderr(c: &Cluster, message: &str) -> String {
    format!(
        "pgrush: error: connection to server at \"127.0.0.1\", port {} failed: {message}\npgrush: error: could not create connection for setup\n",
        c.port()
    )
}

/// Both connect.
pub fn accepts(conninfo: &str, home_root: Option<&Path>) {
    let out = same_as_pgbench15(conninfo, home_root);
    assert_eq!(out.code, 0, "{conninfo}: {}", out.stderr);
}

/// Both refuse, with `needle` in the (identical) message.
pub fn refuses(conninfo: &str, home_root: Option<&Path>, needle: &str) {
    let out = same_as_pgbench15(conninfo, home_root);
    assert_eq!(out.code, 1, "{conninfo}");
    assert!(out.stderr.contains(needle), "{conninfo}: {}", out.stderr);
}

/// A connection string to `c` on 127.0.0.1 naming `host` for the certificate check.
pub fn conn(c: &Cluster, host: &str, rest: &str) -> String {
    format!(
        "host={host} hostaddr=127.0.0.1 port={} user=postgres dbname=postgres {rest}",
        c.port()
    )
}
