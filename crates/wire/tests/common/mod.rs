//! Helpers shared by the wire integration tests.
#![allow(dead_code)]

use pgrush_wire::conninfo::{ConnectRequest, resolve};
use pgrush_wire::{BackendMessage, Connection, ReadOutcome, TransactionStatus};

/// Keeps the user's real password file out of the tests unless one is named.
fn with_passfile(conninfo: &str) -> String {
    if conninfo.contains("passfile=") {
        conninfo.to_string()
    } else {
        format!("{conninfo} passfile=/nonexistent/pgpass")
    }
}

/// Resolves `conninfo` (a keyword/value string) and connects; errors as text.
pub fn connect(conninfo: &str) -> Result<Connection, String> {
    let req = ConnectRequest {
        dbname: Some(with_passfile(conninfo)),
        ..Default::default()
    };
    let params = resolve(&req).map_err(|e| e.to_string())?;
    Connection::connect(&params).map_err(|e| e.to_string())
}

/// Like [`connect`] but panics with the error.
pub fn must_connect(conninfo: &str) -> Connection {
    connect(conninfo).unwrap_or_else(|e| panic!("connect {conninfo}: {e}"))
}

/// Conninfo for the Unix socket of a cluster.
pub fn socket_conninfo(c: &pgrush_cluster::Cluster, user: &str, db: &str) -> String {
    format!(
        "host={} port={} user={user} dbname={db}",
        c.socket_dir().display(),
        c.port()
    )
}

/// Conninfo for TCP on 127.0.0.1.
pub fn tcp_conninfo(c: &pgrush_cluster::Cluster, user: &str, db: &str) -> String {
    format!(
        "host={} port={} user={user} dbname={db}",
        c.tcp_host(),
        c.port()
    )
}

/// The connection error libpq 15 reports for `conninfo` (via pgbench 15, which prints
/// `pgbench: error: <PQerrorMessage>` then `could not create connection for setup`).
pub fn libpq15_error(conninfo: &str) -> String {
    libpq_error(pgrush_testkit::oracle::Which::Pgbench15, conninfo)
}

/// The connection error libpq 18 (built without TLS) reports, via pgbench 18.
pub fn libpq18_error(conninfo: &str) -> String {
    libpq_error(pgrush_testkit::oracle::Which::Pgbench18, conninfo)
}

fn libpq_error(which: pgrush_testkit::oracle::Which, conninfo: &str) -> String {
    use pgrush_testkit::oracle::require;
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("one.sql");
    std::fs::write(&script, "SELECT 1;\n").expect("write script");
    let mut cmd = require(which).command();
    cmd.arg("-n")
        .arg("-t")
        .arg("1")
        .arg("-f")
        .arg(&script)
        .arg(with_passfile(conninfo))
        .env("HOME", dir.path())
        .env_remove("PGPASSWORD")
        .env_remove("PGSSLMODE")
        .env_remove("PGHOST")
        .env_remove("PGPORT");
    let out = pgrush_testkit::run(&mut cmd);
    assert_eq!(out.code, 1, "{} should fail: {out:?}", which.name());
    // pgbench prompts once for a password when the server asks for one (not libpq).
    let stderr = out
        .stderr
        .strip_prefix("Password: \n")
        .unwrap_or(&out.stderr);
    let text = stderr
        .strip_prefix("pgbench: error: ")
        .unwrap_or_else(|| panic!("unexpected pgbench output: {}", out.stderr));
    text.strip_suffix("pgbench: error: could not create connection for setup\n")
        .unwrap_or_else(|| panic!("unexpected pgbench output: {}", out.stderr))
        .trim_end_matches('\n')
        .to_string()
}

/// Asserts pgrush fails to connect with exactly libpq 15's message.
#[track_caller]
pub fn assert_same_error_as_libpq(conninfo: &str) -> String {
    let ours = match connect(conninfo) {
        Ok(_) => panic!("pgrush connected with {conninfo}"),
        Err(e) => e,
    };
    let theirs = libpq15_error(conninfo);
    assert_eq!(ours, theirs, "conninfo: {conninfo}");
    ours
}

/// Asserts pgrush fails to connect with exactly libpq 18's message.
#[track_caller]
pub fn assert_same_error_as_libpq18(conninfo: &str) -> String {
    let ours = match connect(conninfo) {
        Ok(_) => panic!("pgrush connected with {conninfo}"),
        Err(e) => e,
    };
    let theirs = libpq18_error(conninfo);
    assert_eq!(ours, theirs, "conninfo: {conninfo}");
    ours
}

/// Waits with poll() for `events` on the connection's socket.
pub fn wait(conn: &Connection, events: libc::c_short) {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd {
        fd: conn.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let rc = unsafe { libc::poll(&mut pfd, 1, 10_000) };
    assert!(rc > 0, "poll timed out or failed");
}

/// A compact text form of a message, for comparing message sequences.
pub fn describe(m: &BackendMessage<'_>) -> String {
    match m {
        BackendMessage::ParseComplete => "1".into(),
        BackendMessage::BindComplete => "2".into(),
        BackendMessage::CloseComplete => "3".into(),
        BackendMessage::NoData => "n".into(),
        BackendMessage::RowDescription(d) => {
            format!(
                "T:{}",
                d.fields()
                    .map(|f| String::from_utf8_lossy(f.name).into_owned())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
        BackendMessage::DataRow(r) => format!(
            "D:{}",
            r.fields()
                .map(
                    |f| f.map_or("NULL".to_string(), |v| String::from_utf8_lossy(v)
                        .into_owned())
                )
                .collect::<Vec<_>>()
                .join(",")
        ),
        BackendMessage::CommandComplete(tag) => format!("C:{tag}"),
        BackendMessage::ErrorResponse(f) => {
            format!("E:{}", String::from_utf8_lossy(f.code()))
        }
        BackendMessage::ReadyForQuery(s) => format!(
            "Z:{}",
            match s {
                TransactionStatus::Idle => "I",
                TransactionStatus::InTransaction => "T",
                TransactionStatus::Failed => "E",
            }
        ),
        BackendMessage::EmptyQueryResponse => "I".into(),
        other => format!("?{other:?}"),
    }
}

/// Sends everything queued and reads until `syncs` ReadyForQuery messages arrived,
/// interleaving reads and writes the way the engine does.
pub fn run(conn: &mut Connection, syncs: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut ready = 0;
    loop {
        let sent = conn.flush().expect("flush");
        while let Some(m) = conn.next_message().expect("decode") {
            let is_ready = matches!(m, BackendMessage::ReadyForQuery(_));
            out.push(describe(&m));
            if is_ready {
                ready += 1;
                if ready == syncs {
                    assert!(sent || !conn.has_pending_output());
                    return out;
                }
            }
        }
        match conn.read_some().expect("read") {
            ReadOutcome::Data(_) => {}
            ReadOutcome::Closed => panic!("server closed the connection"),
            ReadOutcome::WouldBlock => {
                let events = if sent {
                    libc::POLLIN
                } else {
                    libc::POLLIN | libc::POLLOUT
                };
                wait(conn, events);
            }
        }
    }
}

/// Cancels backend `pid`'s query once `pg_stat_activity` (read over a second
/// connection made with `watch`) shows its `pg_sleep` running. Returns whether the
/// cancel request was sent.
pub fn cancel_when_running(
    token: pgrush_wire::CancelToken,
    pid: i32,
    watch: String,
) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        let Ok(mut w) = connect(&watch) else {
            return false;
        };
        let sql = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = {pid} AND state = 'active' AND query LIKE 'SELECT pg_sleep%'"
        );
        for _ in 0..500 {
            let running = w
                .simple_query(&sql)
                .ok()
                .and_then(|r| r.first().and_then(|r| r.get(0, 0)).map(|v| v == "1"))
                .unwrap_or(false);
            if running {
                return token.cancel().is_ok();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        false
    })
}
