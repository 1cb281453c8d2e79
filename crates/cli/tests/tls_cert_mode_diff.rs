//! `sslcertmode` (libpq 16) and `sslnegotiation` (libpq 17), which pgbench 15's libpq
//! rejects as invalid connection options: pgrush says what libpq 18 says (its
//! `check_expected_areq` and `pqConnectOptions2` messages, read from its source), and
//! where pgbench 15 can reach the same server behaviour another way (no client
//! certificate instead of `sslcertmode=disable`) the two are compared.
//!
//! `sslcertmode=require` is checked when the server says AuthenticationOk: "server did
//! not request an SSL certificate" when no CertificateRequest came (a server without
//! `ssl_ca_file`, or no TLS at all), "server accepted connection without a valid SSL
//! certificate" when one came but none was sent.
//!
//! `sslnegotiation=direct` against PostgreSQL 15, which does not know direct TLS: the
//! server reads the ClientHello as a startup packet and hangs up, and the handshake
//! fails (libpq 18: "SSL SYSCALL error: EOF detected", or the reset error when the
//! server's close resets the connection).

mod tls_common;

use pgrush_cluster::Cluster;
use tls_common::{Key, Pki, compare, conn, failure_stderr, ours, pgbench15, same_as_pgbench18};

const UNKNOWN_CERTMODE: &str = "invalid connection option \"sslcertmode\"";
const UNKNOWN_NEGOTIATION: &str = "invalid connection option \"sslnegotiation\"";

/// A CA, a server certificate, and a client certificate for `certuser`.
fn pki() -> Pki {
    let pki = Pki::new();
    pki.self_signed("ca", Key::P256, "/CN=Cert mode test CA", &[]);
    pki.request("server", Key::P256, "/CN=localhost");
    pki.sign("server", "ca", Some("subjectAltName=DNS:localhost\n"));
    pki.request("client", Key::P256, "/CN=certuser");
    pki.sign("client", "ca", None);
    std::fs::set_permissions(
        pki.path("client.key"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("chmod key");
    pki
}

/// A connection as `user` with the client certificate when `cert`, plus `rest`.
fn info(c: &Cluster, pki: &Pki, user: &str, cert: bool, rest: &str) -> String {
    let client = if cert {
        format!(
            "sslcert={} sslkey={}",
            pki.path("client.crt").display(),
            pki.path("client.key").display()
        )
    } else {
        "sslcert=/nonexistent/client.crt".to_string()
    };
    conn(
        c,
        "localhost",
        &format!(
            "user={user} sslmode=verify-full sslrootcert={} {client} {rest}",
            pki.path("ca.crt").display()
        ),
    )
}

/// pgbench 15 rejects the option; pgrush fails with `message` (libpq 18's).
fn fails_like_18(c: &Cluster, info: &str, unknown: &str, message: &str) {
    let theirs = pgbench15(info, &[]);
    assert!(theirs.stderr.contains(unknown), "{}", theirs.stderr);
    let out = ours(info, &[]);
    assert_eq!(out.code, 1, "{info}");
    assert_eq!(out.stderr, failure_stderr(c, message), "{info}");
}

#[test]
fn require_against_a_server_that_does_not_ask() {
    let pki = pki();
    // No ssl_ca_file: the server sends no CertificateRequest.
    let c = pki.cluster("server.crt", "server.key");
    let not_requested = "server did not request an SSL certificate";
    for cert in [false, true] {
        let i = info(&c, &pki, "postgres", cert, "sslcertmode=require");
        fails_like_18(&c, &i, UNKNOWN_CERTMODE, not_requested);
    }
    // Without TLS no certificate was requested either.
    let plain = conn(&c, "localhost", "sslmode=disable sslcertmode=require");
    fails_like_18(&c, &plain, UNKNOWN_CERTMODE, not_requested);
    // allow and disable connect, as pgbench 15 without the option does.
    for mode in ["allow", "disable"] {
        let out = ours(
            &info(&c, &pki, "postgres", true, &format!("sslcertmode={mode}")),
            &[],
        );
        assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
    }
    assert_eq!(compare(&info(&c, &pki, "postgres", true, ""), &[]).code, 0);
}

#[test]
fn require_and_disable_against_a_server_that_asks() {
    let pki = pki();
    let c = pki.cluster_with(
        Cluster::builder()
            .user("certuser", "pw")
            .hba(["hostssl all certuser 127.0.0.1/32 cert"]),
        "server.crt",
        "server.key",
        Some("ca.crt"),
    );
    // Trusted user, no certificate: the server asked, accepted none.
    fails_like_18(
        &c,
        &info(&c, &pki, "postgres", false, "sslcertmode=require"),
        UNKNOWN_CERTMODE,
        "server accepted connection without a valid SSL certificate",
    );
    for user in ["postgres", "certuser"] {
        let out = ours(&info(&c, &pki, user, true, "sslcertmode=require"), &[]);
        assert_eq!(out.code, 0, "{user}: {}", out.stderr);
    }
    // sslcertmode=disable keeps the certificate back: the server's `cert` method then
    // refuses as it refuses pgbench 15 connecting without one.
    let without = compare(&info(&c, &pki, "certuser", false, ""), &[]);
    assert_eq!(without.code, 1);
    assert!(
        without
            .stderr
            .contains("connection requires a valid client certificate"),
        "{}",
        without.stderr
    );
    let disabled = ours(
        &info(&c, &pki, "certuser", true, "sslcertmode=disable"),
        &[],
    );
    assert_eq!(disabled.code, without.code);
    assert_eq!(disabled.stderr, without.stderr);
    // The default (allow) sends it, as pgbench 15 does.
    assert_eq!(compare(&info(&c, &pki, "certuser", true, ""), &[]).code, 0);
    assert_eq!(
        ours(&info(&c, &pki, "certuser", true, "sslcertmode=allow"), &[]).code,
        0
    );
}

#[test]
fn option_values() {
    let pki = pki();
    let c = pki.cluster("server.crt", "server.key");
    // Checked before connecting: pgbench 18 (no TLS) words it as pgrush does.
    let out = same_as_pgbench18(&conn(&c, "localhost", "sslcertmode=bogus"));
    assert!(
        out.stderr.contains("invalid sslcertmode value: \"bogus\""),
        "{}",
        out.stderr
    );
    // libpq 18's check of sslnegotiation=direct with a weak sslmode.
    let weak = "weak sslmode \"prefer\" may not be used with sslnegotiation=direct (use \"require\", \"verify-ca\", or \"verify-full\")";
    for rest in [
        "sslnegotiation=direct",
        "sslmode=prefer sslnegotiation=direct",
    ] {
        let i = conn(&c, "localhost", rest);
        let theirs = pgbench15(&i, &[]);
        assert!(
            theirs.stderr.contains(UNKNOWN_NEGOTIATION),
            "{}",
            theirs.stderr
        );
        let out = ours(&i, &[]);
        assert_eq!(out.code, 1);
        assert_eq!(
            out.stderr,
            format!(
                "pgrush: error: {weak}\npgrush: error: could not create connection for setup\n"
            )
        );
    }
    // sslnegotiation=postgres is the SSLRequest every version knows: it connects.
    let out = ours(
        &conn(&c, "localhost", "sslmode=require sslnegotiation=postgres"),
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn direct_tls_against_postgresql_15() {
    let pki = pki();
    let c = pki.cluster("server.crt", "server.key");
    let i = conn(&c, "localhost", "sslmode=require sslnegotiation=direct");
    let theirs = pgbench15(&i, &[]);
    assert!(
        theirs.stderr.contains(UNKNOWN_NEGOTIATION),
        "{}",
        theirs.stderr
    );
    let out = ours(&i, &[]);
    assert_eq!(out.code, 1);
    let eof = failure_stderr(&c, "SSL SYSCALL error: EOF detected");
    let reset = failure_stderr(&c, "SSL SYSCALL error: Connection reset by peer");
    assert!(out.stderr == eof || out.stderr == reset, "{}", out.stderr);
}
