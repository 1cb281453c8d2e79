//! Signature algorithms beyond the usual ones, made with `openssl`, against pgbench 15
//! (libpq with Debian's OpenSSL 3, security level 2): certificates signed with SHA-1
//! (refused below the trust anchor, accepted as the self-signed anchor itself, whose
//! signature is not checked), an RSA certificate signed with RSASSA-PSS padding, and
//! RSA-PSS and P-521 server keys (the `rsa_pss_pss_*` and `ecdsa_secp521r1_sha512`
//! handshake schemes; P-521 over TLS 1.2 too, which needs the `secp521r1` group).
//! libpq 15 and 18 word these alike.

mod tls_common;

use tls_common::{Key, Pki, VERIFY_FAILED, accepts, conn, refuses};

#[test]
fn sha1_signatures() {
    // PostgreSQL refuses to serve a SHA-1 signed certificate ("ca md too weak"), but
    // a client may hold a SHA-1 signed intermediate in its root file.
    let pki = Pki::new();
    pki.self_signed("root", Key::Rsa, "/CN=SHA-1 test root", &[]);
    pki.request("inter", Key::Rsa, "/CN=SHA-1 signed intermediate");
    pki.sign_with(
        "inter",
        "root",
        Some("basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign,cRLSign\n"),
        &["-sha1"],
    );
    pki.request("server", Key::Rsa, "/CN=localhost");
    pki.sign("server", "inter", Some("subjectAltName=DNS:localhost\n"));
    pki.concat("roots.crt", &["root.crt", "inter.crt"]);
    let c = pki.cluster("server.crt", "server.key");
    let root = pki.path("roots.crt").display().to_string();
    accepts(&conn(&c, "localhost", "sslmode=require"), None);
    for mode in ["verify-ca", "verify-full"] {
        refuses(
            &conn(
                &c,
                "localhost",
                &format!("sslmode={mode} sslrootcert={root}"),
            ),
            None,
            VERIFY_FAILED,
        );
    }
    // A SHA-1 self-signed certificate as its own root.
    let own = Pki::new();
    own.openssl(&[
        "req",
        "-new",
        "-x509",
        "-sha1",
        "-days",
        "365",
        "-nodes",
        "-newkey",
        "rsa:2048",
        "-keyout",
        "server.key",
        "-out",
        "server.crt",
        "-subj",
        "/CN=localhost",
    ]);
    let c2 = own.cluster("server.crt", "server.key");
    let root2 = own.path("server.crt").display().to_string();
    accepts(
        &conn(
            &c2,
            "localhost",
            &format!("sslmode=verify-full sslrootcert={root2}"),
        ),
        None,
    );
}

#[test]
fn rsa_certificate_signed_with_pss_padding() {
    let pki = Pki::new();
    pki.self_signed("ca", Key::Rsa, "/CN=PSS test CA", &[]);
    pki.self_signed("wrong", Key::Rsa, "/CN=PSS test CA", &[]);
    pki.request("server", Key::Rsa, "/CN=localhost");
    pki.sign_with(
        "server",
        "ca",
        Some("subjectAltName=DNS:localhost\n"),
        &[
            "-sigopt",
            "rsa_padding_mode:pss",
            "-sigopt",
            "rsa_pss_saltlen:-1",
        ],
    );
    let c = pki.cluster("server.crt", "server.key");
    let root = pki.path("ca.crt").display().to_string();
    let wrong = pki.path("wrong.crt").display().to_string();
    accepts(
        &conn(
            &c,
            "localhost",
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
}

/// A CA and a server of `key`'s type, checked over each of `versions`.
fn over_tls_versions(key: Key, versions: &[&str]) {
    let pki = Pki::new();
    pki.self_signed("ca", key, "/CN=Algorithm test CA", &[]);
    pki.request("server", key, "/CN=localhost");
    pki.sign("server", "ca", Some("subjectAltName=DNS:localhost\n"));
    let c = pki.cluster("server.crt", "server.key");
    let root = pki.path("ca.crt").display().to_string();
    for version in versions {
        let range =
            format!("ssl_min_protocol_version={version} ssl_max_protocol_version={version}");
        accepts(
            &conn(&c, "localhost", &format!("sslmode=require {range}")),
            None,
        );
        accepts(
            &conn(
                &c,
                "localhost",
                &format!("sslmode=verify-full sslrootcert={root} {range}"),
            ),
            None,
        );
        refuses(
            &conn(
                &c,
                "db.example",
                &format!("sslmode=verify-full sslrootcert={root} {range}"),
            ),
            None,
            "server certificate for \"localhost\" does not match host name \"db.example\"",
        );
    }
}

/// TLS 1.3 only: rustls refuses an `rsa_pss_pss_*` signature on a TLS 1.2 key
/// exchange (`peer misbehaved: SignedKxWithWrongAlgorithm`) where OpenSSL takes it, a
/// known difference for a server with an RSA-PSS key limited to TLS 1.2.
#[test]
fn rsa_pss_keys_over_tls13() {
    over_tls_versions(Key::RsaPss, &["TLSv1.3"]);
}

#[test]
fn p521_keys_over_tls12_and_tls13() {
    over_tls_versions(Key::P521, &["TLSv1.2", "TLSv1.3"]);
}
