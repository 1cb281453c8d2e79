//! Trust-authenticated connections on the shared sandbox cluster: blocking helpers,
//! error rendering (compared with psql, i.e. libpq), notices, COPY, cancel,
//! target_session_attrs, accessors and connection failures (compared with libpq 15).

mod common;

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{assert_same_error_as_libpq, connect, must_connect, socket_conninfo, tcp_conninfo};
use pgrush_wire::{Connection, TransactionStatus};

fn cluster() -> &'static pgrush_cluster::Cluster {
    pgrush_testkit::shared()
}

fn superuser_conn() -> Connection {
    let c = cluster();
    must_connect(&socket_conninfo(c, c.superuser(), "postgres"))
}

#[test]
fn socket_and_tcp_simple_query() {
    let c = cluster();
    for ci in [
        socket_conninfo(c, c.superuser(), "postgres"),
        tcp_conninfo(c, c.superuser(), "postgres") + " sslmode=disable",
    ] {
        let mut conn = must_connect(&ci);
        assert!(conn.backend_pid() > 0);
        assert_eq!(conn.server_version_num(), c.version_num());
        let res = conn
            .simple_query("SELECT 1 AS a, NULL::text AS b; SELECT 'x' || 'y'; ")
            .expect("query");
        assert_eq!(res.len(), 2);
        assert_eq!(res[0].columns(), ["a", "b"]);
        assert_eq!(res[0].get(0, 0), Some("1"));
        assert_eq!(res[0].get(0, 1), None);
        assert_eq!(res[0].command_tag(), "SELECT 1");
        assert_eq!(res[1].get(0, 0), Some("xy"));
        conn.close().expect("close");
    }
}

#[test]
fn accessors_and_transaction_status() {
    let c = cluster();
    let mut conn = must_connect(&format!(
        "{} application_name=wiretest",
        tcp_conninfo(c, c.superuser(), "postgres")
    ));
    assert_eq!(conn.host(), "127.0.0.1");
    assert_eq!(conn.port(), c.port().to_string());
    assert_eq!(conn.db(), "postgres");
    assert_eq!(conn.user(), c.superuser());
    assert_eq!(conn.parameter("application_name"), Some("wiretest"));
    assert!(
        conn.server_version()
            .starts_with(&(c.version_num() / 10000).to_string())
    );
    conn.simple_query("BEGIN").expect("begin");
    assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
    assert!(conn.simple_query("SELECT 1/0").is_err());
    assert_eq!(conn.transaction_status(), TransactionStatus::Failed);
    conn.simple_query("ROLLBACK").expect("rollback");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    let socket = superuser_conn();
    assert_eq!(socket.host(), c.socket_dir().display().to_string());
}

#[test]
fn exec_params_text_and_null() {
    let mut conn = superuser_conn();
    let r = conn
        .exec_params(
            "SELECT $1::int + 1, $2::text IS NULL, $3::text",
            &[Some("41"), None, Some("héllo")],
        )
        .expect("exec_params");
    assert_eq!(r.get(0, 0), Some("42"));
    assert_eq!(r.get(0, 1), Some("t"));
    assert_eq!(r.get(0, 2), Some("héllo"));
    assert_eq!(r.command_tag(), "SELECT 1");
    let e = conn
        .exec_params("SELECT $1::int", &[Some("x")])
        .expect_err("bad int");
    assert_eq!(e.code(), Some("22P02"));
    // The connection is usable after the error.
    assert_eq!(
        conn.exec_params("SELECT 7", &[])
            .expect("after error")
            .get(0, 0),
        Some("7")
    );
}

/// psql (libpq) renders the error of `sql`; returns its stderr without the final newline.
fn psql_error(sql: &str) -> String {
    let c = cluster();
    let out = pgrush_testkit::run(
        c.install()
            .command("psql")
            .arg("-X")
            .arg("-q")
            .arg("-h")
            .arg(c.socket_dir())
            .arg("-p")
            .arg(c.port().to_string())
            .arg("-U")
            .arg(c.superuser())
            .arg("-d")
            .arg("postgres")
            .arg("-c")
            .arg(sql),
    );
    assert_ne!(out.code, 0, "psql should fail: {out:?}");
    out.stderr.trim_end_matches('\n').to_string()
}

#[test]
fn error_rendering_matches_libpq() {
    let mut conn = superuser_conn();
    let long = format!(
        "SELECT {} + nosuchcolumn + {}",
        "1 + ".repeat(30),
        "2 + ".repeat(30) + "3"
    );
    for sql in [
        "selec 1",
        "SELECT 1,\n\tnosuchcolumn",
        "SELECT 'é', 'ü',\r\n  'x' + 1",
        long.as_str(),
        "SELECT 1/0",
        "DO $$BEGIN PERFORM 1/0; END$$",
        "DO $$BEGIN RAISE EXCEPTION 'boom' USING DETAIL = 'the detail', HINT = 'the hint'; END$$",
        "SELECT * FROM (SELECT 1) s WHERE x = (SELECT nosuch FROM pg_class)",
    ] {
        let e = conn.simple_query(sql).expect_err(sql);
        assert_eq!(
            e.libpq_message(Some(sql)),
            psql_error(sql),
            "query: {sql:?}"
        );
    }
}

#[test]
fn notices_go_to_the_handler() {
    let mut conn = superuser_conn();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    conn.set_notice_handler(Box::new(move |n| {
        if let Ok(mut v) = sink.lock() {
            v.push(n.libpq_message(None));
        }
    }));
    conn.simple_query("DO $$BEGIN RAISE NOTICE 'hello %', 42; RAISE WARNING 'careful'; END$$")
        .expect("do");
    conn.simple_query("DROP TABLE IF EXISTS no_such_table_here")
        .expect("drop");
    let v = seen.lock().map(|v| v.clone()).unwrap_or_default();
    assert_eq!(
        v,
        [
            "NOTICE:  hello 42",
            "WARNING:  careful",
            "NOTICE:  table \"no_such_table_here\" does not exist, skipping"
        ]
    );
}

/// Errors of the blocking helpers are read in the client encoding: in LATIN1 the
/// server's bytes come back unchanged (as libpq prints them), in UTF8 as UTF-8.
#[test]
fn blocking_errors_keep_single_byte_encoding_bytes() {
    let mut conn = superuser_conn();
    let sql = "DO $$BEGIN RAISE EXCEPTION 'caf%', chr(233) USING DETAIL = chr(232); END$$";
    let context = "\nCONTEXT:  PL/pgSQL function inline_code_block line 1 at RAISE";
    for (encoding, utf8, text) in [
        ("LATIN1", false, &b"caf\xe9\nDETAIL:  \xe8"[..]),
        ("UTF8", true, "caf\u{e9}\nDETAIL:  \u{e8}".as_bytes()),
    ] {
        conn.simple_query(&format!("SET client_encoding = '{encoding}'"))
            .expect("set client_encoding");
        assert_eq!(conn.client_encoding().is_utf8(), utf8);
        let Err(e) = conn.simple_query(sql) else {
            panic!("the DO block raises");
        };
        let want = [&b"ERROR:  "[..], text, context.as_bytes()].concat();
        assert_eq!(
            e.libpq_message_bytes(Some(sql.as_bytes()))
                .escape_ascii()
                .to_string(),
            want.escape_ascii().to_string(),
            "{encoding}"
        );
        // The same from the extended-protocol helper.
        let Err(e) = conn.exec_params(sql, &[]) else {
            panic!("the DO block raises");
        };
        assert_eq!(e.libpq_message_bytes(None), want, "{encoding}");
    }
}

#[test]
fn copy_in_text_binary_and_fail() {
    let c = cluster();
    c.create_database("wire_copy").expect("create db");
    let mut conn = must_connect(&socket_conninfo(c, c.superuser(), "wire_copy"));
    conn.simple_query("CREATE TABLE t (a int, b text)")
        .expect("create");
    let mut copy = conn.copy_in("COPY t FROM STDIN").expect("copy");
    for i in 0..1000 {
        copy.send(format!("{i}\trow {i}\n").as_bytes())
            .expect("send");
    }
    assert_eq!(copy.finish().expect("finish"), 1000);

    let mut bin = Vec::new();
    bin.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    bin.extend_from_slice(&[0; 8]);
    bin.extend_from_slice(&2i16.to_be_bytes());
    bin.extend_from_slice(&4i32.to_be_bytes());
    bin.extend_from_slice(&5000i32.to_be_bytes());
    bin.extend_from_slice(&3i32.to_be_bytes());
    bin.extend_from_slice(b"bin");
    bin.extend_from_slice(&(-1i16).to_be_bytes());
    let mut copy = conn
        .copy_in("COPY t FROM STDIN (FORMAT binary)")
        .expect("copy binary");
    copy.send(&bin).expect("send");
    assert_eq!(copy.finish().expect("finish binary"), 1);

    let copy = conn.copy_in("COPY t FROM STDIN").expect("copy");
    let err = copy.fail("stopped by test").expect("fail");
    assert_eq!(err.message, "COPY from stdin failed: stopped by test");

    let mut copy = conn.copy_in("COPY t FROM STDIN").expect("copy");
    copy.send(b"notanint\tx\n").expect("send");
    let e = copy.finish().expect_err("bad data");
    assert_eq!(e.code(), Some("22P02"));

    let r = conn
        .simple_query("SELECT count(*), sum(a) FILTER (WHERE b = 'bin') FROM t")
        .expect("count");
    assert_eq!(r[0].get(0, 0), Some("1001"));
    assert_eq!(r[0].get(0, 1), Some("5000"));
    assert!(conn.copy_in("SELECT 1").is_err());
    assert!(conn.copy_in("COPY nosuch FROM STDIN").is_err());
    assert_eq!(
        conn.simple_query("SELECT 1").expect("usable")[0].get(0, 0),
        Some("1")
    );
}

#[test]
fn cancel_running_query() {
    for conninfo in [
        socket_conninfo(cluster(), cluster().superuser(), "postgres"),
        tcp_conninfo(cluster(), cluster().superuser(), "postgres") + " sslmode=disable",
    ] {
        let mut conn = must_connect(&conninfo);
        let token = conn.cancel_token();
        let start = Instant::now();
        let canceller = common::cancel_when_running(token, conn.backend_pid(), conninfo.clone());
        let e = conn
            .simple_query("SELECT pg_sleep(10)")
            .expect_err("cancelled");
        assert!(canceller.join().unwrap_or(false));
        assert!(start.elapsed() < Duration::from_secs(8));
        assert_eq!(e.code(), Some("57014"));
        assert_eq!(
            e.libpq_message(None),
            "ERROR:  canceling statement due to user request"
        );
        assert_eq!(
            conn.simple_query("SELECT 1").expect("usable")[0].get(0, 0),
            Some("1")
        );
    }
}

#[test]
fn target_session_attrs() {
    let c = cluster();
    let b = tcp_conninfo(c, c.superuser(), "postgres") + " sslmode=disable";
    for ok in ["any", "read-write", "primary", "prefer-standby"] {
        must_connect(&format!("{b} target_session_attrs={ok}"));
    }
    let e = assert_same_error_as_libpq(&format!("{b} target_session_attrs=standby"));
    assert!(e.ends_with("server is not in hot standby mode"), "{e}");
    let e = assert_same_error_as_libpq(&format!("{b} target_session_attrs=read-only"));
    assert!(e.ends_with("session is not read-only"), "{e}");
    // With a read-only default the session is not read-write.
    let e = assert_same_error_as_libpq(&format!(
        "{b} target_session_attrs=read-write options='-c default_transaction_read_only=on'"
    ));
    assert!(e.ends_with("session is read-only"), "{e}");
}

#[test]
fn connection_failures_match_libpq() {
    let c = cluster();
    let port = pgrush_testkit::closed_port();
    let e = assert_same_error_as_libpq(&format!("host=127.0.0.1 port={port} user=x dbname=x"));
    assert_eq!(
        e,
        format!(
            "connection to server at \"127.0.0.1\", port {port} failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?"
        )
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let e = assert_same_error_as_libpq(&format!(
        "host={} port={port} user=x dbname=x",
        dir.path().display()
    ));
    assert_eq!(
        e,
        format!(
            "connection to server on socket \"{}/.s.PGSQL.{port}\" failed: No such file or directory\n\tIs the server running locally and accepting connections on that socket?",
            dir.path().display()
        )
    );
    assert_same_error_as_libpq(&format!("host=localhost port={port} user=x dbname=x"));
    assert_same_error_as_libpq(&format!(
        "host=localhost hostaddr=127.0.0.1 port={port} user=x dbname=x"
    ));
    assert_same_error_as_libpq(&format!("hostaddr=127.0.0.1 port={port} user=x dbname=x"));
    assert_same_error_as_libpq(&format!(
        "host=nosuchhost.invalid port={port} user=x dbname=x"
    ));
    // Every host of a list fails: all messages, in order.
    let e = assert_same_error_as_libpq(&format!(
        "host=127.0.0.1,{},nosuchhost.invalid port={port},{port},{port} user=x dbname=x",
        dir.path().display()
    ));
    assert_eq!(e.lines().filter(|l| !l.starts_with('\t')).count(), 3, "{e}");
    // A dead first host is skipped.
    let mut conn = must_connect(&format!(
        "host=127.0.0.1,{} port={port},{} user={} dbname=postgres",
        c.socket_dir().display(),
        c.port(),
        c.superuser()
    ));
    assert_eq!(
        conn.simple_query("SELECT 1").expect("query")[0].get(0, 0),
        Some("1")
    );
    assert_eq!(conn.host(), c.socket_dir().display().to_string());
}

#[test]
fn connect_timeout_on_a_silent_server() {
    let c = cluster();
    // Accepts TCP connections (kernel backlog) but never answers.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let sport = silent.local_addr().expect("addr").port();
    let start = Instant::now();
    let e = connect(&format!(
        "host=127.0.0.1 port={sport} user=x dbname=x connect_timeout=2 sslmode=disable"
    ))
    .err()
    .unwrap_or_default();
    let took = start.elapsed();
    assert_eq!(
        e,
        format!("connection to server at \"127.0.0.1\", port {sport} failed: timeout expired")
    );
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(6),
        "{took:?}"
    );
    // Same text as libpq, and the next host is tried after the timeout.
    let dead = pgrush_testkit::closed_port();
    assert_same_error_as_libpq(&format!(
        "host=127.0.0.1,127.0.0.1 port={sport},{dead} user=x dbname=x connect_timeout=2 sslmode=disable"
    ));
    let conn = must_connect(&format!(
        "host=127.0.0.1,127.0.0.1 port={sport},{} user={} dbname=postgres connect_timeout=2",
        c.port(),
        c.superuser()
    ));
    assert_eq!(conn.port(), c.port().to_string());
    drop(silent);
}

#[test]
fn ipv6_loopback() {
    let c = pgrush_cluster::Cluster::builder()
        .listen_ipv6(true)
        .start()
        .expect("start IPv6 cluster");
    let mut conn = must_connect(&format!(
        "host=::1 port={} user={} dbname=postgres sslmode=disable",
        c.port(),
        c.superuser()
    ));
    let r = conn
        .simple_query("SELECT family(inet_client_addr())")
        .expect("query");
    assert_eq!(r[0].get(0, 0), Some("6"));
    assert_eq!(conn.host(), "::1");
    let port = pgrush_testkit::closed_port();
    let e = assert_same_error_as_libpq(&format!("host=::1 port={port} user=x dbname=x"));
    assert!(
        e.starts_with(&format!(
            "connection to server at \"::1\", port {port} failed: Connection refused"
        )),
        "{e}"
    );
}

#[test]
fn load_balance_hosts_random() {
    let c = cluster();
    let hosts = format!(
        "host=127.0.0.1,{} port={} user={} dbname=postgres sslmode=disable",
        c.socket_dir().display(),
        c.port(),
        c.superuser()
    );
    let mut seen = std::collections::HashSet::new();
    for _ in 0..40 {
        seen.insert(
            must_connect(&format!("{hosts} load_balance_hosts=random"))
                .host()
                .to_string(),
        );
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
    for _ in 0..5 {
        assert_eq!(must_connect(&hosts).host(), "127.0.0.1");
    }
}

fn sockopt(conn: &Connection, level: libc::c_int, name: libc::c_int) -> libc::c_int {
    use std::os::fd::AsRawFd;
    let mut v: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: valid fd, value and length pointers.
    let rc = unsafe {
        libc::getsockopt(
            conn.as_raw_fd(),
            level,
            name,
            &mut v as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    assert_eq!(rc, 0);
    v
}

#[test]
fn tcp_keepalive_options() {
    let c = cluster();
    let b = tcp_conninfo(c, c.superuser(), "postgres") + " sslmode=disable";
    let conn = must_connect(&b);
    assert_eq!(sockopt(&conn, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 1);
    assert_eq!(sockopt(&conn, libc::IPPROTO_TCP, libc::TCP_NODELAY), 1);
    let conn = must_connect(&format!("{b} keepalives=0"));
    assert_eq!(sockopt(&conn, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 0);
    let conn = must_connect(&format!(
        "{b} keepalives_idle=7 keepalives_interval=3 keepalives_count=4 tcp_user_timeout=9000"
    ));
    assert_eq!(sockopt(&conn, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 7);
    assert_eq!(sockopt(&conn, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 3);
    assert_eq!(sockopt(&conn, libc::IPPROTO_TCP, libc::TCP_KEEPCNT), 4);
    assert_eq!(
        sockopt(&conn, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT),
        9000
    );
}

#[test]
fn terminated_backend_reports_fatal_and_lost_connection() {
    let sql = "SELECT pg_terminate_backend(pg_backend_pid())";
    let mut conn = superuser_conn();
    let e = conn.simple_query(sql).expect_err("terminated");
    assert_eq!(e.code(), Some("57P01"));
    // psql (libpq) prints the same text, then its own "connection to server was lost".
    let psql = psql_error(sql);
    let libpq = psql
        .strip_suffix("\nconnection to server was lost")
        .unwrap_or(&psql);
    assert_eq!(e.libpq_message(Some(sql)), libpq);
    assert!(matches!(
        conn.simple_query("SELECT 1"),
        Err(pgrush_wire::Error::Send(_) | pgrush_wire::Error::Closed | pgrush_wire::Error::Recv(_))
    ));
}

#[test]
fn requirepeer_checks_the_server_user() {
    let c = cluster();
    let b = socket_conninfo(c, c.superuser(), "postgres");
    must_connect(&format!("{b} requirepeer=postgres"));
    let e = assert_same_error_as_libpq(&format!("{b} requirepeer=nosuchuser"));
    assert!(
        e.ends_with(
            "requirepeer specifies \"nosuchuser\", but actual peer user name is \"postgres\""
        ),
        "{e}"
    );
}

#[test]
fn abstract_unix_socket_and_startup_packet() {
    use std::io::{Read, Write};
    use std::os::linux::net::SocketAddrExt;
    let name = format!("pgrush-wire-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(format!("{name}/.s.PGSQL.5999"))
        .expect("abstract address");
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).expect("bind");
    // A fake server: records the startup packet and refuses with a FATAL error.
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut len = [0u8; 4];
        s.read_exact(&mut len).expect("length");
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize - 4];
        s.read_exact(&mut body).expect("startup");
        let mut msg = Vec::new();
        for (code, v) in [(b'S', "FATAL"), (b'C', "28000"), (b'M', "fake refusal")] {
            msg.push(code);
            msg.extend_from_slice(v.as_bytes());
            msg.push(0);
        }
        msg.push(0);
        let mut out = vec![b'E'];
        out.extend_from_slice(&((msg.len() + 4) as u32).to_be_bytes());
        out.extend_from_slice(&msg);
        s.write_all(&out).expect("reply");
        body
    });
    let e = connect(&format!(
        "host=@{name} port=5999 user=bob dbname=things application_name=app options='-c x=1'"
    ))
    .err()
    .unwrap_or_default();
    assert_eq!(
        e,
        format!(
            "connection to server on socket \"@{name}/.s.PGSQL.5999\" failed: FATAL:  fake refusal"
        )
    );
    let body = server.join().expect("server thread");
    // Protocol 3.0, then name/value pairs in libpq's order.
    assert_eq!(&body[..4], &[0, 3, 0, 0]);
    let text = String::from_utf8_lossy(&body[4..]).replace('\0', "|");
    assert_eq!(
        text,
        "user|bob|database|things|options|-c x=1|application_name|app||"
    );
}

#[test]
fn invalid_parameters_match_libpq() {
    let port = pgrush_testkit::closed_port();
    for tail in [
        "port=abc",
        "port=99999",
        &format!("port={port} connect_timeout=abc"),
        &format!("port={port} sslmode=bogus"),
        &format!("port={port},{port},{port}"),
        &format!("port={port} target_session_attrs=bogus"),
    ] {
        assert_same_error_as_libpq(&format!("host=127.0.0.1,127.0.0.1 user=x dbname=x {tail}"));
    }
    // An unparsable connect_timeout is reported once an attempt has a socket.
    let c = cluster();
    let dir = tempfile::tempdir().expect("tempdir");
    assert_same_error_as_libpq(&format!(
        "host={},{} port={} user=x dbname=x connect_timeout=abc",
        dir.path().display(),
        c.socket_dir().display(),
        c.port()
    ));
    assert_same_error_as_libpq(&format!(
        "host=nosuchhost.invalid port={port} user=x dbname=x connect_timeout=abc"
    ));
}

/// Connects and returns whether the failure reached a server.
fn failure_reached_server(conninfo: &str) -> bool {
    let req = pgrush_wire::conninfo::ConnectRequest {
        dbname: Some(format!("{conninfo} passfile=/nonexistent/pgpass")),
        ..Default::default()
    };
    let params = pgrush_wire::conninfo::resolve(&req).expect("resolve");
    match Connection::connect(&params) {
        Ok(_) => panic!("connected with {conninfo}"),
        Err(e) => e.server_reached(),
    }
}

#[test]
fn failures_tell_whether_any_server_answered() {
    let c = cluster();
    let port = pgrush_testkit::closed_port();
    let dir = tempfile::tempdir().expect("tempdir");
    // Nothing listens: refused TCP, a missing socket, an unknown host, all of a list.
    assert!(!failure_reached_server(&format!(
        "host=127.0.0.1 port={port} user=x dbname=x"
    )));
    assert!(!failure_reached_server(&format!(
        "host={} port={port} user=x dbname=x",
        dir.path().display()
    )));
    assert!(!failure_reached_server(&format!(
        "host=nosuchhost.invalid port={port} user=x dbname=x"
    )));
    assert!(!failure_reached_server(&format!(
        "host=127.0.0.1,{} port={port} user=x dbname=x",
        dir.path().display()
    )));
    // A server answered, then refused: an unknown database, or one dead host and one live.
    assert!(failure_reached_server(&format!(
        "host={} port={} user={} dbname=no_such_database",
        c.socket_dir().display(),
        c.port(),
        c.superuser()
    )));
    assert!(failure_reached_server(&format!(
        "host=127.0.0.1,{} port={port},{} user={} dbname=no_such_database",
        c.socket_dir().display(),
        c.port(),
        c.superuser()
    )));
}
