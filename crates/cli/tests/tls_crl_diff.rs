//! Certificate revocation lists made with `openssl ca -gencrl`: `sslcrl` (a PEM file),
//! `sslcrldir` (a hashed directory as `openssl rehash` makes it) and
//! `~/.postgresql/root.crl`, against pgbench 15 (libpq with OpenSSL 3). libpq turns on
//! `X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL` once the CRL location loads:
//! every certificate of the chain then needs a CRL from its issuer, so a CRL file
//! without one for an issuer refuses the chain, and a CRL directory is always
//! "loaded", even empty or missing. A file that holds no CRL nor certificate (or does
//! not exist) turns checking off. Every failure is `SSL error: certificate verify
//! failed`, worded alike by libpq 15 and 18.

mod tls_common;

use std::path::Path;

use tls_common::{Key, Pki, VERIFY_FAILED, accepts, compare, conn, refuses};

/// A CA, a server certificate it signed (`server`), and another CA (`other`), with
/// CRLs: `empty.crl` and `revoked.crl` (listing `server`) from `ca`, `other.crl` from
/// `other`.
fn crl_pki() -> Pki {
    let pki = Pki::new();
    pki.self_signed("ca", Key::Rsa, "/CN=CRL test CA", &[]);
    pki.self_signed("other", Key::Rsa, "/CN=Other CA", &[]);
    pki.request("server", Key::Rsa, "/CN=localhost");
    pki.sign("server", "ca", Some("subjectAltName=DNS:localhost\n"));
    pki.crl("ca", &[], "empty.crl");
    pki.crl("ca", &["server"], "revoked.crl");
    pki.crl("other", &[], "other.crl");
    pki
}

/// `sslmode=verify-full sslrootcert=ca.crt` plus `rest`.
fn verified(c: &pgrush_cluster::Cluster, pki: &Pki, rest: &str) -> String {
    let root = pki.path("ca.crt");
    conn(
        c,
        "localhost",
        &format!("sslmode=verify-full sslrootcert={} {rest}", root.display()),
    )
}

#[test]
fn crl_file() {
    let pki = crl_pki();
    let c = pki.cluster("server.crt", "server.key");
    let p = |name: &str| pki.path(name).display().to_string();
    accepts(&verified(&c, &pki, ""), None);
    accepts(
        &verified(&c, &pki, &format!("sslcrl={}", p("empty.crl"))),
        None,
    );
    refuses(
        &verified(&c, &pki, &format!("sslcrl={}", p("revoked.crl"))),
        None,
        VERIFY_FAILED,
    );
    // A CRL, but none from the server certificate's issuer.
    refuses(
        &verified(&c, &pki, &format!("sslcrl={}", p("other.crl"))),
        None,
        VERIFY_FAILED,
    );
    // Both CRLs in one file: the issuer's decides.
    pki.concat("both.crl", &["other.crl", "empty.crl"]);
    accepts(
        &verified(&c, &pki, &format!("sslcrl={}", p("both.crl"))),
        None,
    );
    // A missing file turns checking off; a file with a certificate only loads (the
    // certificate) and turns it on, with no CRL for anyone.
    accepts(&verified(&c, &pki, "sslcrl=/nonexistent/root.crl"), None);
    refuses(
        &verified(&c, &pki, &format!("sslcrl={}", p("other.crt"))),
        None,
        VERIFY_FAILED,
    );
    // No CRL check without a root certificate file, even in sslmode=require.
    accepts(
        &conn(
            &c,
            "localhost",
            &format!(
                "sslmode=require sslrootcert=/nonexistent/root.crt sslcrl={}",
                p("revoked.crl")
            ),
        ),
        None,
    );
    // With a root file, sslmode=require checks the chain and so the CRL too.
    refuses(
        &conn(
            &c,
            "localhost",
            &format!(
                "sslmode=require sslrootcert={} sslcrl={}",
                p("ca.crt"),
                p("revoked.crl")
            ),
        ),
        None,
        VERIFY_FAILED,
    );
}

#[test]
fn crl_directory() {
    let pki = crl_pki();
    let c = pki.cluster("server.crt", "server.key");
    let revoked = pki.crl_dir("revoked.d", &["other.crl", "revoked.crl"]);
    let current = pki.crl_dir("current.d", &["empty.crl"]);
    let foreign = pki.crl_dir("foreign.d", &["other.crl"]);
    let empty = pki.crl_dir("empty.d", &[]);
    let dir = |p: &Path| format!("sslcrldir={}", p.display());
    refuses(&verified(&c, &pki, &dir(&revoked)), None, VERIFY_FAILED);
    accepts(&verified(&c, &pki, &dir(&current)), None);
    refuses(&verified(&c, &pki, &dir(&foreign)), None, VERIFY_FAILED);
    // A directory is always taken: empty or missing, no certificate has a CRL.
    refuses(&verified(&c, &pki, &dir(&empty)), None, VERIFY_FAILED);
    refuses(
        &verified(&c, &pki, "sslcrldir=/nonexistent/crl.d"),
        None,
        VERIFY_FAILED,
    );
    // A file that fails to load stops the directory from being added.
    accepts(
        &verified(
            &c,
            &pki,
            &format!("sslcrl=/nonexistent/root.crl {}", dir(&empty)),
        ),
        None,
    );
    // File and directory together: the issuer's CRL may come from either.
    accepts(
        &verified(
            &c,
            &pki,
            &format!(
                "sslcrl={} {}",
                pki.path("other.crl").display(),
                dir(&current)
            ),
        ),
        None,
    );
    refuses(
        &verified(
            &c,
            &pki,
            &format!(
                "sslcrl={} {}",
                pki.path("other.crl").display(),
                dir(&revoked)
            ),
        ),
        None,
        VERIFY_FAILED,
    );
}

#[test]
fn home_root_crl() {
    let pki = crl_pki();
    let c = pki.cluster("server.crt", "server.key");
    let root = pki.path("ca.crt");
    let files = |crl: &str| [("root.crt", root.clone()), ("root.crl", pki.path(crl))];
    let with = |crl: &str, mode: &str| {
        let f = files(crl);
        let refs: Vec<(&str, &Path)> = f.iter().map(|(n, p)| (*n, p.as_path())).collect();
        compare(&conn(&c, "localhost", &format!("sslmode={mode}")), &refs)
    };
    for mode in ["require", "verify-ca", "verify-full"] {
        let out = with("revoked.crl", mode);
        assert_eq!(out.code, 1, "{mode}");
        assert!(out.stderr.contains(VERIFY_FAILED), "{}", out.stderr);
        assert_eq!(with("empty.crl", mode).code, 0, "{mode}");
    }
    // sslcrldir set: ~/.postgresql/root.crl is not read.
    let current = pki.crl_dir("current.d", &["empty.crl"]);
    let f = files("revoked.crl");
    let refs: Vec<(&str, &Path)> = f.iter().map(|(n, p)| (*n, p.as_path())).collect();
    let out = compare(
        &conn(
            &c,
            "localhost",
            &format!("sslmode=verify-ca sslcrldir={}", current.display()),
        ),
        &refs,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn crl_with_an_intermediate_ca() {
    let pki = Pki::new();
    pki.self_signed("root", Key::P256, "/CN=CRL root", &[]);
    pki.request("inter", Key::P256, "/CN=CRL intermediate");
    pki.sign(
        "inter",
        "root",
        Some("basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign,cRLSign\n"),
    );
    pki.request("server", Key::P256, "/CN=localhost");
    pki.sign("server", "inter", Some("subjectAltName=DNS:localhost\n"));
    pki.concat("chain.crt", &["server.crt", "inter.crt"]);
    pki.crl("root", &[], "root-empty.crl");
    pki.crl("root", &["inter"], "root-revoked.crl");
    pki.crl("inter", &[], "inter-empty.crl");
    pki.crl("inter", &["server"], "inter-revoked.crl");
    let c = pki.cluster("chain.crt", "server.key");
    let root = pki.path("root.crt").display().to_string();
    let with = |crls: &[&str]| {
        let name = format!("{}.pem", crls.join("+"));
        pki.concat(&name, crls);
        conn(
            &c,
            "localhost",
            &format!(
                "sslmode=verify-full sslrootcert={root} sslcrl={}",
                pki.path(&name).display()
            ),
        )
    };
    accepts(&with(&["root-empty.crl", "inter-empty.crl"]), None);
    // CRL_CHECK_ALL: the intermediate needs the root's CRL too.
    refuses(&with(&["inter-empty.crl"]), None, VERIFY_FAILED);
    refuses(&with(&["root-empty.crl"]), None, VERIFY_FAILED);
    refuses(
        &with(&["root-revoked.crl", "inter-empty.crl"]),
        None,
        VERIFY_FAILED,
    );
    refuses(
        &with(&["root-empty.crl", "inter-revoked.crl"]),
        None,
        VERIFY_FAILED,
    );
}

#[test]
fn crl_dates_and_signature() {
    let pki = crl_pki();
    // A CRL past its nextUpdate, one not yet in force, and one signed by a stand-in
    // with the CA's name but another key.
    pki.crl_dated(
        "ca",
        &[],
        "expired.crl",
        &[
            "-crl_lastupdate",
            "20200101000000Z",
            "-crl_nextupdate",
            "20200201000000Z",
        ],
    );
    pki.crl_dated(
        "ca",
        &[],
        "future.crl",
        &[
            "-crl_lastupdate",
            "20990101000000Z",
            "-crl_nextupdate",
            "20990201000000Z",
        ],
    );
    pki.self_signed("standin", Key::Rsa, "/CN=CRL test CA", &[]);
    pki.crl("standin", &[], "forged.crl");
    let c = pki.cluster("server.crt", "server.key");
    for crl in ["expired.crl", "future.crl"] {
        refuses(
            &verified(&c, &pki, &format!("sslcrl={}", pki.path(crl).display())),
            None,
            VERIFY_FAILED,
        );
    }
    // A bad CRL signature: libpq reports the RSA layer's reason OpenSSL queued first.
    refuses(
        &verified(
            &c,
            &pki,
            &format!("sslcrl={}", pki.path("forged.crl").display()),
        ),
        None,
        "SSL error: ",
    );
    // A current CRL next to the expired one is the one taken.
    pki.concat("expired+current.crl", &["expired.crl", "empty.crl"]);
    accepts(
        &verified(
            &c,
            &pki,
            &format!("sslcrl={}", pki.path("expired+current.crl").display()),
        ),
        None,
    );
}
