//! Server certificates made by the `openssl` command line (PostgreSQL's documentation
//! recipes and the usual tutorials), generated at run time into temp dirs: pgrush and
//! pgbench 15 (libpq linked with OpenSSL) connect to the same throwaway clusters with
//! the same connection strings, and their exit codes and whole stderr must match.
//! Every case that connects has a refused case next to it (wrong CA, wrong host name,
//! expired, not a CA...).
//!
//! libpq 15 and 18 word every message checked here alike (`SSL error: certificate
//! verify failed`, `server certificate for "..." does not match host name "..."`).

mod tls_common;

use tls_common::{Key, Pki, VERIFY_FAILED, accepts, conn, refuses};

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
fn ecdsa_p521_keys() {
    key_type(Key::P521);
}

#[test]
fn rsa_pss_keys() {
    key_type(Key::RsaPss);
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
