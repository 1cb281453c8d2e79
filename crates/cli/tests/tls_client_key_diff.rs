//! Client certificates whose keys are encrypted the ways `openssl` does it, against
//! pgbench 15 (libpq with OpenSSL 3) on a cluster whose `pg_hba.conf` says `cert`, so
//! the certificate is used and checked: PKCS#8 (`openssl pkcs8 -topk8 -v2
//! aes-256-cbc`, `openssl genpkey -aes256`) and traditional PEM (`openssl rsa -aes256
//! -traditional`, `-des3`, `openssl ec -aes128`). The passphrase comes from
//! `sslpassword`; a wrong one is `bad decrypt`; without one OpenSSL asks ("Enter PEM
//! pass phrase:", on stderr as stdin is not a terminal here, twice as the answer is
//! empty) and fails with `processing error`. Then libpq's refusal of a key file
//! others can read, with its exception for files owned by root. libpq 15 and 18 word
//! these messages alike.

mod tls_common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use pgrush_cluster::Cluster;
use tls_common::{Key, Pki, compare, conn};

const PASS: &str = "correct horse";

/// A CA, a server certificate, a client certificate for `postgres` with its key
/// (`client.key`), and a cluster that requires it (`cert` in `pg_hba.conf`).
fn client_cert_setup() -> (Pki, Cluster) {
    let pki = Pki::new();
    pki.self_signed("ca", Key::Rsa, "/CN=Client key test CA", &[]);
    pki.request("server", Key::P256, "/CN=localhost");
    pki.sign("server", "ca", Some("subjectAltName=DNS:localhost\n"));
    pki.request("client", Key::Rsa, "/CN=postgres");
    pki.sign("client", "ca", None);
    let c = pki.cluster_with(
        Cluster::builder().hba(["hostssl all postgres 127.0.0.1/32 cert"]),
        "server.crt",
        "server.key",
        Some("ca.crt"),
    );
    (pki, c)
}

/// Makes `name` readable by its owner only, as libpq wants.
fn private(pki: &Pki, name: &str) {
    let path = pki.path(name);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

/// Connects with `client.crt` and the key file `key` plus `rest`; both programs must
/// agree; returns the exit code and stderr.
fn with_key(c: &Cluster, pki: &Pki, key: &str, rest: &str) -> (i32, String) {
    let info = conn(
        c,
        "localhost",
        &format!(
            "sslmode=verify-full sslrootcert={} sslcert={} sslkey={} {rest}",
            pki.path("ca.crt").display(),
            pki.path("client.crt").display(),
            pki.path(key).display()
        ),
    );
    let out = compare(&info, &[]);
    (out.code, out.stderr)
}

/// The right passphrase connects, a wrong one is `bad decrypt`, none asks twice.
fn encrypted_key_cases(c: &Cluster, pki: &Pki, key: &str) {
    let (code, err) = with_key(c, pki, key, &format!("sslpassword='{PASS}'"));
    assert_eq!(code, 0, "{key}: {err}");
    let (code, err) = with_key(c, pki, key, "sslpassword=wrong");
    assert_eq!(code, 1, "{key}");
    assert!(
        err.contains(&format!(
            "could not load private key file \"{}\": bad decrypt",
            pki.path(key).display()
        )),
        "{key}: {err}"
    );
    let (code, err) = with_key(c, pki, key, "");
    assert_eq!(code, 1, "{key}");
    assert!(
        err.starts_with("Enter PEM pass phrase:\nEnter PEM pass phrase:\n"),
        "{key}: {err}"
    );
    assert!(err.contains(": processing error\n"), "{key}: {err}");
}

#[test]
fn pkcs8_encrypted_keys() {
    let (pki, c) = client_cert_setup();
    let pass = format!("pass:{PASS}");
    pki.openssl(&[
        "pkcs8",
        "-topk8",
        "-v2",
        "aes-256-cbc",
        "-in",
        "client.key",
        "-out",
        "p8.key",
        "-passout",
        &pass,
    ]);
    private(&pki, "p8.key");
    encrypted_key_cases(&c, &pki, "p8.key");
    // `openssl genpkey -aes256`: an encrypted PKCS#8 EC key with its own certificate.
    pki.openssl(&[
        "genpkey",
        "-algorithm",
        "EC",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-aes256",
        "-pass",
        &pass,
        "-out",
        "ec.key",
    ]);
    private(&pki, "ec.key");
    pki.openssl(&[
        "req",
        "-new",
        "-key",
        "ec.key",
        "-passin",
        &pass,
        "-subj",
        "/CN=postgres",
        "-out",
        "ec.csr",
    ]);
    pki.sign("ec", "ca", None);
    let info = conn(
        &c,
        "localhost",
        &format!(
            "sslmode=verify-full sslrootcert={} sslcert={} sslkey={} sslpassword='{PASS}'",
            pki.path("ca.crt").display(),
            pki.path("ec.crt").display(),
            pki.path("ec.key").display()
        ),
    );
    assert_eq!(compare(&info, &[]).code, 0);
}

#[test]
fn traditional_encrypted_keys() {
    let (pki, c) = client_cert_setup();
    let pass = format!("pass:{PASS}");
    pki.openssl(&[
        "rsa",
        "-aes256",
        "-traditional",
        "-in",
        "client.key",
        "-out",
        "trad.key",
        "-passout",
        &pass,
    ]);
    pki.openssl(&[
        "rsa",
        "-des3",
        "-traditional",
        "-in",
        "client.key",
        "-out",
        "des3.key",
        "-passout",
        &pass,
    ]);
    for key in ["trad.key", "des3.key"] {
        private(&pki, key);
        let text = std::fs::read_to_string(pki.path(key)).expect("read key");
        assert!(text.contains("Proc-Type: 4,ENCRYPTED"), "{text}");
        encrypted_key_cases(&c, &pki, key);
    }
    // An unencrypted key with a passphrase given: the passphrase is not needed.
    private(&pki, "client.key");
    let (code, err) = with_key(&c, &pki, "client.key", "sslpassword=unused");
    assert_eq!(code, 0, "{err}");
    // The key of another certificate: of the same type, and of another type.
    pki.request("stranger-rsa", Key::Rsa, "/CN=postgres");
    pki.request("stranger-ec", Key::P256, "/CN=postgres");
    for (key, message) in [
        ("stranger-rsa.key", "could not load private key file"),
        (
            "stranger-ec.key",
            "certificate does not match private key file",
        ),
    ] {
        private(&pki, key);
        let (code, err) = with_key(&c, &pki, key, "");
        assert_eq!(code, 1, "{key}");
        assert!(err.contains(message), "{key}: {err}");
    }
    // No key file at all.
    let (code, err) = with_key(&c, &pki, "missing.key", "");
    assert_eq!(code, 1);
    assert!(
        err.contains("certificate present, but not private key file"),
        "{err}"
    );
}

#[test]
fn traditional_encrypted_ec_key() {
    let (pki, c) = client_cert_setup();
    let pass = format!("pass:{PASS}");
    pki.request("ecplain", Key::P384, "/CN=postgres");
    pki.openssl(&[
        "ec",
        "-aes128",
        "-in",
        "ecplain.key",
        "-out",
        "client-ec.key",
        "-passout",
        &pass,
    ]);
    private(&pki, "client-ec.key");
    pki.sign("ecplain", "ca", None);
    std::fs::copy(pki.path("ecplain.crt"), pki.path("client.crt")).expect("copy cert");
    encrypted_key_cases(&c, &pki, "client-ec.key");
}

#[test]
fn key_file_permissions() {
    let (pki, c) = client_cert_setup();
    let me = std::fs::metadata(pki.path("client.key"))
        .expect("stat key")
        .uid();
    let refused = "has group or world access; file must have permissions u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r (0640) or less if owned by root";
    for (mode, ok_when_root) in [
        (0o600, true),
        (0o400, true),
        (0o640, true),
        (0o660, false),
        (0o604, false),
        (0o644, false),
    ] {
        std::fs::set_permissions(pki.path("client.key"), PermissionsExt::from_mode(mode))
            .expect("chmod");
        let (code, err) = with_key(&c, &pki, "client.key", "");
        // Owned by root, a key may be readable by its group.
        let ok = if me == 0 {
            ok_when_root
        } else {
            mode & 0o077 == 0
        };
        assert_eq!(code, if ok { 0 } else { 1 }, "mode {mode:o}: {err}");
        if !ok {
            assert!(err.contains(refused), "mode {mode:o}: {err}");
        }
    }
    if me == 0 {
        // Another owner than root (root reads it anyway): 0640 is refused.
        let other = pki.path("other-owner.key");
        std::fs::copy(pki.path("client.key"), &other).expect("copy key");
        std::os::unix::fs::chown(&other, Some(65534), Some(65534)).expect("chown");
        for (mode, ok) in [(0o600, true), (0o640, false)] {
            std::fs::set_permissions(&other, PermissionsExt::from_mode(mode)).expect("chmod");
            let (code, err) = with_key(&c, &pki, "other-owner.key", "");
            assert_eq!(code, if ok { 0 } else { 1 }, "mode {mode:o}: {err}");
        }
    }
}
