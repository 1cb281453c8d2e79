//! Protocol version negotiation (`min_protocol_version` / `max_protocol_version`):
//! protocol 3.2 with a PostgreSQL 18 server (longer cancel keys), downgrade to 3.0
//! with PostgreSQL 15, and libpq 18's error when the minimum cannot be met.

mod common;

use std::sync::OnceLock;

use common::{assert_same_error_as_libpq18, must_connect, socket_conninfo, tcp_conninfo};
use pgrush_cluster::Cluster;
use pgrush_testkit::oracle::{Which, require};

fn pg18() -> &'static Cluster {
    static C: OnceLock<Cluster> = OnceLock::new();
    C.get_or_init(|| {
        let pgbench = require(Which::Pgbench18);
        let bin = pgbench.path().parent().expect("bin dir").to_path_buf();
        Cluster::builder()
            .bin_dir(bin)
            .start()
            .expect("start PostgreSQL 18")
    })
}

#[test]
fn protocol_3_2_with_postgresql_18() {
    let c = pg18();
    assert!(c.version_num() >= 180000);
    for ci in [
        socket_conninfo(c, c.superuser(), "postgres"),
        tcp_conninfo(c, c.superuser(), "postgres") + " sslmode=disable",
    ] {
        let conn = must_connect(&ci);
        assert_eq!(conn.protocol_version(), 30000);
        let mut conn = must_connect(&format!("{ci} max_protocol_version=latest"));
        assert_eq!(conn.protocol_version(), 30002);
        // Cancel with the 3.2 (32-byte) key.
        let token = conn.cancel_token();
        let t = common::cancel_when_running(token, conn.backend_pid(), ci.clone());
        let e = conn
            .simple_query("SELECT pg_sleep(10)")
            .expect_err("cancelled");
        assert!(t.join().unwrap_or(false));
        assert_eq!(e.code(), Some("57014"));
    }
}

#[test]
fn downgrade_and_minimum_with_postgresql_15() {
    let pgbench = require(Which::Pgbench15);
    let bin = pgbench.path().parent().expect("bin dir").to_path_buf();
    let c = Cluster::builder()
        .bin_dir(bin)
        .start()
        .expect("start PostgreSQL 15");
    assert!(c.version_num() < 170000);
    let c = &c;
    let b = tcp_conninfo(c, c.superuser(), "postgres") + " sslmode=disable";
    let mut conn = must_connect(&format!("{b} max_protocol_version=3.2"));
    assert_eq!(conn.protocol_version(), 30000);
    assert_eq!(
        conn.simple_query("SELECT 1").expect("query")[0].get(0, 0),
        Some("1")
    );
    let e = assert_same_error_as_libpq18(&format!("{b} min_protocol_version=3.2"));
    assert!(
        e.contains("server only supports protocol version 3.0"),
        "{e}"
    );
}
