//! `sslnegotiation=direct` against a hand-written TLS server (the local PostgreSQL
//! builds cannot offer TLS on a 17+ server): TLS starts without an SSLRequest, ALPN
//! `postgresql` is required, and the startup packet travels inside TLS.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use common::connect;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// A one-connection TLS server answering the startup packet with AuthenticationOk,
/// BackendKeyData, server_version and ReadyForQuery. Returns the port and a handle
/// yielding the startup packet body it received.
fn serve(alpn: bool) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("cert");
    let cert: CertificateDer<'static> = ck.cert.der().clone();
    let key = PrivateKeyDer::try_from(ck.signing_key.serialize_der()).expect("key");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("server config");
    if alpn {
        config.alpn_protocols = vec![b"postgresql".to_vec()];
    }
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let handle = std::thread::spawn(move || {
        let Ok((sock, _)) = listener.accept() else {
            return Vec::new();
        };
        let Ok(session) = rustls::ServerConnection::new(config) else {
            return Vec::new();
        };
        let mut tls = rustls::StreamOwned::new(session, sock);
        let mut len = [0u8; 4];
        if tls.read_exact(&mut len).is_err() {
            return Vec::new();
        }
        let mut body = vec![0u8; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
        if tls.read_exact(&mut body).is_err() {
            return Vec::new();
        }
        let mut out = Vec::new();
        out.extend_from_slice(&[b'R', 0, 0, 0, 8, 0, 0, 0, 0]);
        out.extend_from_slice(&[b'K', 0, 0, 0, 12, 0, 0, 0, 42, 1, 2, 3, 4]);
        let status = b"server_version\x0018.0\x00";
        out.push(b'S');
        out.extend_from_slice(&((status.len() + 4) as u32).to_be_bytes());
        out.extend_from_slice(status);
        out.extend_from_slice(&[b'Z', 0, 0, 0, 5, b'I']);
        let _ = tls.write_all(&out);
        let _ = tls.flush();
        // Wait for Terminate (or EOF).
        let mut rest = [0u8; 64];
        let _ = tls.read(&mut rest);
        body
    });
    (port, handle)
}

#[test]
fn direct_tls_with_alpn() {
    let (port, server) = serve(true);
    let conn = connect(&format!(
        "host=localhost hostaddr=127.0.0.1 port={port} user=u dbname=d sslmode=require sslnegotiation=direct"
    ))
    .unwrap_or_else(|e| panic!("direct TLS: {e}"));
    assert!(conn.is_tls());
    assert_eq!(conn.server_version(), "18.0");
    assert_eq!(conn.backend_pid(), 42);
    drop(conn);
    let body = server.join().expect("server");
    // The startup packet (protocol 3.0, user u, database d) arrived through TLS.
    assert_eq!(&body[..4], &[0, 3, 0, 0]);
    assert!(String::from_utf8_lossy(&body).contains("user\0u\0database\0d\0"));
}

#[test]
fn direct_tls_requires_alpn() {
    let (port, server) = serve(false);
    let e = connect(&format!(
        "host=localhost hostaddr=127.0.0.1 port={port} user=u dbname=d sslmode=require sslnegotiation=direct"
    ))
    .err()
    .unwrap_or_default();
    assert_eq!(
        e,
        format!(
            "connection to server at \"127.0.0.1\", port {port} failed: direct SSL connection was established without ALPN protocol negotiation extension"
        )
    );
    let _ = server.join();
}
