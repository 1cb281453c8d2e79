//! GSSAPI encryption under the non-blocking transport, against a real KDC and
//! a PostgreSQL 15 server: a statement far larger than the socket buffers is
//! sent in non-blocking mode (partial writes of wrapped packets, finished by
//! later `flush` calls), and results far larger than one packet come back
//! (partial reads, packets split across reads).
//!
//! This binary holds a single test because it sets the Kerberos environment
//! of the process.

use std::os::fd::AsRawFd;

use pgrush_cluster::{Cluster, PgInstall};
use pgrush_testkit::krb::Kdc;
use pgrush_wire::{BackendMessage, ConnectConfig, Connection, Endpoint, EndpointKind, GssEncMode};

const USER: &str = "krbuser";

fn wait_writable(conn: &Connection) {
    let mut pfd = libc::pollfd {
        fd: conn.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let rc = unsafe { libc::poll(&mut pfd, 1, 10_000) };
    assert!(rc > 0, "socket not writable within 10 s");
}

/// The single value of the result of the statement already sent.
fn single_value(conn: &mut Connection) -> Vec<u8> {
    let mut value = None;
    loop {
        match conn.recv().expect("receive") {
            BackendMessage::DataRow(row) => value = row.get(0).map(<[u8]>::to_vec),
            BackendMessage::ErrorResponse(e) => panic!("server error: {e:?}"),
            BackendMessage::ReadyForQuery(_) => break,
            _ => {}
        }
    }
    value.expect("one row")
}

#[test]
fn large_messages_over_gssapi_encryption() {
    let kdc = Kdc::start();
    kdc.add_user(USER, "pw");
    kdc.kinit(USER, "pw");
    // SAFETY: the only test of this binary, before any thread uses the variables.
    unsafe {
        std::env::set_var("KRB5_CONFIG", kdc.config());
        std::env::set_var("KRB5CCNAME", format!("FILE:{}", kdc.ccache().display()));
    }
    let cluster = Cluster::builder()
        .install(PgInstall::for_major(15).expect("PostgreSQL 15"))
        .setting("krb_server_keyfile", kdc.keytab().display().to_string())
        .user(USER, "pw")
        .hba([format!(
            "hostgssenc all {USER} 127.0.0.1/32 gss include_realm=0"
        )])
        .start()
        .expect("start the Kerberos cluster");
    let endpoint = Endpoint {
        host: "localhost".into(),
        hostaddr: Some("127.0.0.1".into()),
        port: cluster.port().to_string(),
        kind: EndpointKind::Tcp,
        pgpass: None,
    };
    let mut cfg = ConnectConfig::single(endpoint, USER, "postgres");
    cfg.gss.enc_mode = GssEncMode::Require;
    let mut conn = Connection::connect_config(&cfg).expect("connect over GSSAPI encryption");
    assert!(conn.is_gss_encrypted());
    let rows = conn
        .simple_query("SELECT encrypted FROM pg_stat_gssapi WHERE pid = pg_backend_pid()")
        .expect("query pg_stat_gssapi");
    assert_eq!(rows[0].get(0, 0), Some("t"));

    // 16 MB out while the server sleeps: more than the socket buffers hold,
    // so writes stop part-way and later flushes finish them.
    let big = 16 * 1024 * 1024;
    conn.set_nonblocking(true).expect("non-blocking");
    conn.queue_query("SELECT pg_sleep(0.5)").expect("queue");
    conn.queue_query(format!("SELECT length('{}')", "z".repeat(big)))
        .expect("queue");
    let mut blocked = 0;
    while !conn.flush().expect("flush") {
        blocked += 1;
        wait_writable(&conn);
    }
    assert!(blocked > 0, "the socket never filled up");
    conn.set_nonblocking(false).expect("blocking");
    assert_eq!(single_value(&mut conn), b"");
    assert_eq!(single_value(&mut conn), big.to_string().into_bytes());

    // 5 MB back, in hundreds of packets.
    let rows = conn
        .simple_query("SELECT repeat('x', 5000000), 'end'")
        .expect("large result");
    assert_eq!(rows[0].get(0, 0).map(str::len), Some(5_000_000));
    assert_eq!(rows[0].get(0, 1), Some("end"));
    conn.close().expect("close");
}
