//! Misbehaving servers (a socket that answers by hand): pgrush must report what
//! libpq 15 reports for the same bytes.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;

use common::assert_same_error_as_libpq;

/// Serves `count` connections on 127.0.0.1 with `script`, returning the port.
fn serve(count: usize, script: fn(&mut std::net::TcpStream)) -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let t = std::thread::spawn(move || {
        for _ in 0..count {
            if let Ok((mut s, _)) = l.accept() {
                script(&mut s);
            }
        }
    });
    (port, t)
}

/// Reads one length-prefixed startup-phase packet.
fn read_packet(s: &mut std::net::TcpStream) -> Vec<u8> {
    let mut len = [0u8; 4];
    if s.read_exact(&mut len).is_err() {
        return Vec::new();
    }
    let mut body = vec![0u8; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
    let _ = s.read_exact(&mut body);
    body
}

fn check(conninfo_tail: &str, script: fn(&mut std::net::TcpStream)) -> String {
    // One connection for pgrush, one for libpq.
    let (port, t) = serve(2, script);
    let e = assert_same_error_as_libpq(&format!(
        "host=127.0.0.1 port={port} user=x dbname=x {conninfo_tail}"
    ));
    let _ = t.join();
    e
}

#[test]
fn server_closes_after_startup_packet() {
    let e = check("sslmode=disable", |s| {
        read_packet(s);
    });
    assert!(
        e.ends_with("before or while processing the request."),
        "{e}"
    );
}

#[test]
fn invalid_answer_to_ssl_request() {
    let e = check("sslmode=prefer", |s| {
        read_packet(s);
        let _ = s.write_all(b"X");
    });
    assert!(
        e.contains("received invalid response to SSL negotiation: X"),
        "{e}"
    );
}

#[test]
fn unsupported_authentication_method() {
    let e = check("sslmode=disable", |s| {
        read_packet(s);
        // An authentication request code nobody knows.
        let _ = s.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 99]);
        let _ = s.read(&mut [0u8; 64]);
    });
    assert!(e.ends_with("authentication method 99 not supported"), "{e}");
}

#[test]
fn server_rejects_ssl_then_closes() {
    let e = check("sslmode=require", |s| {
        read_packet(s);
        let _ = s.write_all(b"N");
    });
    assert!(
        e.ends_with("server does not support SSL, but SSL was required"),
        "{e}"
    );
}
