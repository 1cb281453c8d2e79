//! TLS protocol options against pgbench 15 on throwaway PostgreSQL 15 clusters:
//! `ssl_min_protocol_version`/`ssl_max_protocol_version` (valid, invalid, an empty
//! range, and a mismatch with the server's own bounds), `sslsni` (the server name seen
//! by a small listener that reads the ClientHello), and the options pgbench 15's
//! libpq does not know (`sslcertmode`, libpq 16; `sslnegotiation`, libpq 17), where
//! pgrush says what libpq 18 says.
//!
//! After the server's `protocol_version` alert libpq adds "This may indicate that the
//! server does not support any SSL protocol version between MIN and MAX." (MIN and
//! MAX as written, even empty; `TLSv1.3` for an unset maximum). Where libpq 18 differs from 15:
//! an invalid version value names the option in quotes (checked against pgbench 18,
//! which validates options before connecting although it has no TLS).
//!
//! rustls speaks TLS 1.2 and 1.3 only: a range below TLS 1.2 fails as libpq fails
//! against a server with PostgreSQL's default minimum (TLSv1.2), without connecting.

mod tls_common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;

use pgrush_cluster::Cluster;
use tls_common::{Key, Pki, compare, conn, failure_stderr, ours, pgbench15, same_as_pgbench18};

/// A server certificate for `localhost` signed by `ca`.
fn server_pki() -> Pki {
    let pki = Pki::new();
    pki.self_signed("ca", Key::P256, "/CN=Protocol test CA", &[]);
    pki.request("server", Key::P256, "/CN=localhost");
    pki.sign("server", "ca", Some("subjectAltName=DNS:localhost\n"));
    pki
}

/// `sslmode=verify-full` against `c` plus `rest`.
fn verified(c: &Cluster, pki: &Pki, rest: &str) -> String {
    conn(
        c,
        "localhost",
        &format!(
            "sslmode=verify-full sslrootcert={} {rest}",
            pki.path("ca.crt").display()
        ),
    )
}

/// Both fail with OpenSSL's `protocol_version` alert and libpq's hint naming the
/// range `min`..`max`.
fn alert(c: &Cluster, info: &str, min: &str, max: &str) {
    let out = compare(info, &[]);
    let message = format!(
        "SSL error: tlsv1 alert protocol version\nThis may indicate that the server does not support any SSL protocol version between {min} and {max}."
    );
    assert_eq!(out.stderr, failure_stderr(c, &message), "{info}");
}

#[test]
fn protocol_versions_on_the_client() {
    let pki = server_pki();
    let c = pki.cluster("server.crt", "server.key");
    for rest in [
        "ssl_min_protocol_version=TLSv1.3",
        "ssl_max_protocol_version=TLSv1.2",
        "ssl_min_protocol_version=tlsv1.2 ssl_max_protocol_version=TLSV1.3",
        "ssl_min_protocol_version=TLSv1 ssl_max_protocol_version=TLSv1.2",
        "ssl_min_protocol_version=''",
    ] {
        assert_eq!(compare(&verified(&c, &pki, rest), &[]).code, 0, "{rest}");
    }
    // libpq 18 quotes the option name ("invalid \"ssl_min_protocol_version\" value"),
    // libpq 15 does not: these are checked before connecting, against pgbench 18.
    for (rest, message) in [
        (
            "ssl_min_protocol_version=TLSv1.4",
            "invalid \"ssl_min_protocol_version\" value: \"TLSv1.4\"",
        ),
        (
            "ssl_max_protocol_version=bogus",
            "invalid \"ssl_max_protocol_version\" value: \"bogus\"",
        ),
    ] {
        // Without sslmode: pgbench 18 has no TLS and refuses verify-full first.
        let info = conn(&c, "localhost", rest);
        let out = same_as_pgbench18(&info);
        assert_eq!(out.code, 1, "{rest}");
        assert!(out.stderr.contains(message), "{rest}: {}", out.stderr);
        let theirs = pgbench15(&info, &[]);
        assert!(
            theirs.stderr.contains(&message.replacen('"', "", 2)),
            "pgbench 15: {}",
            theirs.stderr
        );
    }
    for rest in [
        "ssl_min_protocol_version=TLSv1.3 ssl_max_protocol_version=TLSv1.2",
        "ssl_max_protocol_version=TLSv1.1",
    ] {
        let out = compare(&verified(&c, &pki, rest), &[]);
        assert_eq!(out.code, 1, "{rest}");
        assert!(
            out.stderr.contains("invalid SSL protocol version range"),
            "{rest}: {}",
            out.stderr
        );
    }
    // Below TLS 1.2 only: the server (PostgreSQL's default minimum TLSv1.2) refuses.
    alert(
        &c,
        &verified(
            &c,
            &pki,
            "ssl_min_protocol_version=TLSv1 ssl_max_protocol_version=TLSv1.1",
        ),
        "TLSv1",
        "TLSv1.1",
    );
}

#[test]
fn server_allows_tls12_only() {
    let pki = server_pki();
    let c = pki.cluster_with(
        Cluster::builder().setting("ssl_max_protocol_version", "TLSv1.2"),
        "server.crt",
        "server.key",
        None,
    );
    assert_eq!(compare(&verified(&c, &pki, ""), &[]).code, 0);
    alert(
        &c,
        &verified(&c, &pki, "ssl_min_protocol_version=TLSv1.3"),
        "TLSv1.3",
        "TLSv1.3",
    );
    alert(
        &c,
        &verified(
            &c,
            &pki,
            "ssl_min_protocol_version=tlsv1.3 ssl_max_protocol_version=''",
        ),
        "tlsv1.3",
        "",
    );
}

#[test]
fn server_allows_tls13_only() {
    let pki = server_pki();
    let c = pki.cluster_with(
        Cluster::builder().setting("ssl_min_protocol_version", "TLSv1.3"),
        "server.crt",
        "server.key",
        None,
    );
    assert_eq!(compare(&verified(&c, &pki, ""), &[]).code, 0);
    alert(
        &c,
        &verified(&c, &pki, "ssl_max_protocol_version=TLSv1.2"),
        "TLSv1.2",
        "TLSv1.2",
    );
    alert(
        &c,
        &verified(
            &c,
            &pki,
            "ssl_min_protocol_version='' ssl_max_protocol_version=TLSv1.2",
        ),
        "",
        "TLSv1.2",
    );
    // sslmode=prefer: the failed handshake is followed by a plain attempt.
    let info = conn(
        &c,
        "localhost",
        "sslmode=prefer ssl_max_protocol_version=TLSv1.2",
    );
    let theirs = pgbench15(&info, &[]);
    let out = ours(&info, &[]);
    assert_eq!(out.code, theirs.code, "{}\n{}", out.stderr, theirs.stderr);
}

/// The server name in a ClientHello (`None` without the SNI extension).
fn sni_of(hello: &[u8]) -> Option<String> {
    // Record header (5), handshake header (4), version (2), random (32).
    let mut at = 5 + 4 + 2 + 32;
    let byte = |i: usize| hello.get(i).copied().map(usize::from);
    let u16_at = |i: usize| Some((byte(i)? << 8) | byte(i + 1)?);
    at += 1 + byte(at)?; // session id
    at += 2 + u16_at(at)?; // cipher suites
    at += 1 + byte(at)?; // compression methods
    let end = at + 2 + u16_at(at)?;
    at += 2;
    while at + 4 <= end {
        let (kind, len) = (u16_at(at)?, u16_at(at + 2)?);
        if kind == 0 {
            // server_name_list: length (2), type (1), name length (2), name.
            let n = u16_at(at + 4 + 3)?;
            let name = hello.get(at + 4 + 5..at + 4 + 5 + n)?;
            return Some(String::from_utf8_lossy(name).into_owned());
        }
        at += 4 + len;
    }
    None
}

/// Runs `cmd` against a listener that answers the SSLRequest with `S`, reads the
/// ClientHello and hangs up; returns the server name it carried.
fn sni_seen_by(mut cmd: Command, host: &str, rest: &str) -> Option<String> {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut request = [0u8; 8];
        s.read_exact(&mut request).expect("SSLRequest");
        s.write_all(b"S").expect("answer");
        let mut header = [0u8; 5];
        s.read_exact(&mut header).expect("record header");
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let mut body = vec![0u8; len];
        s.read_exact(&mut body).expect("ClientHello");
        let mut hello = header.to_vec();
        hello.extend_from_slice(&body);
        sni_of(&hello)
    });
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("one.sql"), "SELECT 1;\n").expect("script");
    let info =
        format!("host={host} hostaddr=127.0.0.1 port={port} user=postgres sslmode=require {rest}");
    let out = tls_common::run(
        {
            cmd.env("PGCONNECT_TIMEOUT", "10");
            cmd
        },
        home.path(),
        &info,
    );
    assert_eq!(out.code, 1, "the listener hangs up: {}", out.stderr);
    server.join().expect("listener thread")
}

#[test]
fn sslsni_sends_the_host_name() {
    let pgrush = || Command::new(env!("CARGO_BIN_EXE_pgrush"));
    let pgbench =
        || pgrush_testkit::oracle::require(pgrush_testkit::oracle::Which::Pgbench15).command();
    for (host, rest, expected) in [
        ("localhost", "", Some("localhost")),
        ("localhost", "sslsni=1", Some("localhost")),
        ("localhost", "sslsni=0", None),
        ("127.0.0.1", "sslsni=1", None),
    ] {
        let expected = expected.map(str::to_string);
        assert_eq!(
            sni_seen_by(pgbench(), host, rest),
            expected,
            "pgbench {rest}"
        );
        assert_eq!(sni_seen_by(pgrush(), host, rest), expected, "pgrush {rest}");
    }
    // And both connect to a real server either way.
    let pki = server_pki();
    let c = pki.cluster("server.crt", "server.key");
    for rest in ["sslsni=0", "sslsni=1"] {
        assert_eq!(compare(&verified(&c, &pki, rest), &[]).code, 0, "{rest}");
    }
}
