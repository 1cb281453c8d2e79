//! The non-blocking path used by the engine: queued Parse/Bind/Describe/Execute with
//! one or more Syncs (pipelines), errors in the middle of a pipeline, prepared
//! statements, and a pipeline large enough to fill the socket buffers.

mod common;

use common::{must_connect, run, socket_conninfo, tcp_conninfo};
use pgrush_wire::{Connection, TransactionStatus};

fn queue_extended(conn: &mut Connection, sql: &str, params: &[Option<&[u8]>]) {
    conn.queue_parse("", sql, 0).expect("parse");
    conn.queue_bind("", "", params.iter().copied())
        .expect("bind");
    conn.queue_describe_portal("").expect("describe");
    conn.queue_execute("", 0).expect("execute");
}

fn nonblocking(conninfo: &str) -> Connection {
    let mut conn = must_connect(conninfo);
    conn.set_nonblocking(true).expect("nonblocking");
    assert!(conn.is_nonblocking());
    conn
}

fn conninfos() -> Vec<String> {
    let c = pgrush_testkit::shared();
    vec![
        socket_conninfo(c, c.superuser(), "postgres"),
        tcp_conninfo(c, c.superuser(), "postgres") + " sslmode=disable",
    ]
}

#[test]
fn error_in_the_middle_of_a_pipeline() {
    for ci in conninfos() {
        let mut conn = nonblocking(&ci);
        queue_extended(&mut conn, "SELECT 1 AS a", &[]);
        queue_extended(&mut conn, "SELECT 1/0 AS b", &[]);
        queue_extended(&mut conn, "SELECT 3 AS c", &[]);
        conn.queue_sync();
        queue_extended(
            &mut conn,
            "SELECT $1::int * 2 AS d, $2::text AS e",
            &[Some(b"21"), None],
        );
        conn.queue_sync();
        let got = run(&mut conn, 2);
        assert_eq!(
            got,
            [
                // 1/0 is folded while planning, so Bind fails; the rest is skipped up to Sync.
                "1",
                "2",
                "T:a",
                "D:1",
                "C:SELECT 1",
                "1",
                "E:22012",
                "Z:I",
                "1",
                "2",
                "T:d,e",
                "D:42,NULL",
                "C:SELECT 1",
                "Z:I"
            ]
        );
    }
}

#[test]
fn prepared_statements_and_transactions() {
    for ci in conninfos() {
        let mut conn = nonblocking(&ci);
        conn.queue_parse("P_0", "SELECT $1::int + 1", 0)
            .expect("parse");
        conn.queue_sync();
        assert_eq!(run(&mut conn, 1), ["1", "Z:I"]);
        conn.queue_query("BEGIN").expect("query");
        for v in [b"1".as_slice(), b"x", b"3"] {
            conn.queue_bind("", "P_0", [Some(v)]).expect("bind");
            conn.queue_describe_portal("").expect("describe");
            conn.queue_execute("", 0).expect("execute");
        }
        conn.queue_sync();
        conn.queue_query("ROLLBACK").expect("query");
        let got = run(&mut conn, 3);
        assert_eq!(
            got,
            [
                "C:BEGIN",
                "Z:T",
                "2",
                "T:?column?",
                "D:2",
                "C:SELECT 1",
                "E:22P02",
                "Z:E",
                "C:ROLLBACK",
                "Z:I"
            ]
        );
        conn.queue_close_statement("P_0").expect("close");
        conn.queue_sync();
        assert_eq!(run(&mut conn, 1), ["3", "Z:I"]);
        assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    }
}

#[test]
fn large_pipeline_fills_socket_buffers() {
    for ci in conninfos() {
        let mut conn = nonblocking(&ci);
        let n = 4000;
        let payload = "y".repeat(300);
        for i in 0..n {
            let v = format!("{i}");
            conn.queue_parse("", "SELECT $1::int, repeat($2, 10)", 0)
                .expect("parse");
            conn.queue_bind("", "", [Some(v.as_bytes()), Some(payload.as_bytes())])
                .expect("bind");
            conn.queue_execute("", 0).expect("execute");
        }
        conn.queue_sync();
        let got = run(&mut conn, 1);
        let rows: Vec<&String> = got.iter().filter(|m| m.starts_with("D:")).collect();
        assert_eq!(rows.len(), n);
        assert!(rows[n - 1].starts_with(&format!("D:{},", n - 1)));
        assert_eq!(rows[0].len(), "D:0,".len() + 3000);
        assert_eq!(got.last().map(String::as_str), Some("Z:I"));
    }
}

#[test]
fn simple_query_in_nonblocking_mode() {
    let mut conn = nonblocking(&conninfos()[0]);
    conn.queue_query("SELECT 1; SELECT 'two'; ").expect("query");
    assert_eq!(
        run(&mut conn, 1),
        [
            "T:?column?",
            "D:1",
            "C:SELECT 1",
            "T:?column?",
            "D:two",
            "C:SELECT 1",
            "Z:I"
        ]
    );
    conn.queue_query("").expect("query");
    assert_eq!(run(&mut conn, 1), ["I", "Z:I"]);
    // The blocking helpers still work on a non-blocking connection.
    assert_eq!(
        conn.simple_query("SELECT 5").expect("query")[0].get(0, 0),
        Some("5")
    );
}
