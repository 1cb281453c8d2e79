//! `--reconnect`: a client whose connection is lost counts a connection failure,
//! reconnects (through the conninfo's host list) and goes on; the report, the `-l`
//! log and the JSON document say so, with the outage windows. Without the option
//! the same loss ends as in pgbench (`bench_lost_connection.rs` compares that
//! with pgbench 18 and 19).

mod bench_common;

use bench_common::{DB, Prog, Scratch, cluster, command, run};
use pgrush_testkit::Output;

/// Each client's second transaction ends its own session (a `FATAL` error, then
/// the server closes the connection); the others succeed.
const SECOND_TERMINATES: (&str, &str) = (
    "second.sql",
    "\\set k :k + 1\n\\if :k = 2\nselect pg_terminate_backend(pg_backend_pid());\n\\endif\nselect 1;\n",
);

/// The value of report line `label: N (...)`.
fn count(stdout: &str, label: &str) -> Option<u64> {
    stdout.lines().find_map(|l| {
        l.strip_prefix(label)?
            .strip_prefix(": ")?
            .split([' ', '/'])
            .next()?
            .parse()
            .ok()
    })
}

/// Runs pgrush with `-n -t TX -c CLIENTS -D k=0 -f SCRIPT` and `extra`.
fn counted(dir: &Scratch, script: &str, tx: &str, clients: &str, extra: &[&str]) -> Output {
    let mut args = vec!["-n", "-t", tx, "-c", clients, "-D", "k=0", "-f", script];
    args.extend_from_slice(extra);
    run(Prog::Pgrush, &dir.path, DB, &args)
}

fn second_terminates(dir: &Scratch, extra: &[&str]) -> Output {
    let mut args = vec!["-j", "2"];
    args.extend_from_slice(extra);
    counted(dir, "second.sql", "4", "2", &args)
}

#[test]
fn a_lost_connection_is_a_failure_and_the_client_goes_on() {
    let dir = Scratch::new(&[SECOND_TERMINATES]);
    let out = second_terminates(
        &dir,
        &[
            "--reconnect=5",
            "--failures-detailed",
            "-l",
            "--json",
            "run.json",
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let s = &out.stdout;
    assert_eq!(
        count(s, "number of transactions actually processed"),
        Some(6),
        "{s}"
    );
    assert_eq!(count(s, "number of failed transactions"), Some(2), "{s}");
    assert_eq!(count(s, "number of connection failures"), Some(2), "{s}");
    assert!(s.contains("outage windows: "), "{s}");
    assert!(s.contains("failures by SQLSTATE class: 57: 2"), "{s}");
    for c in 0..2 {
        let line = format!(
            "pgrush: error: client {c} lost its connection in command 2 of script 0; reconnecting"
        );
        assert!(out.stderr.contains(&line), "{}", out.stderr);
    }
    // The log: one `connection` failure per client, as its second transaction.
    let logs = dir.files_with_prefix("pgbench_log");
    let lines: Vec<&str> = logs.values().flat_map(|t| t.lines()).collect();
    assert_eq!(lines.len(), 8, "{lines:?}");
    let mut failed: Vec<&str> = lines
        .iter()
        .filter(|l| l.split(' ').nth(2) == Some("connection"))
        .map(|l| &l[..4])
        .collect();
    failed.sort();
    assert_eq!(failed, ["0 2 ", "1 2 "], "{lines:?}");
    // The document: the counts and the windows.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path.join("run.json")).unwrap()).unwrap();
    assert_eq!(doc["config"]["reconnect"], true);
    assert_eq!(doc["results"]["transactions"]["connection_failures"], 2);
    let windows = doc["outages"]["windows"].as_array().expect("windows");
    let in_windows: u64 = windows
        .iter()
        .map(|w| w["connection_failures"].as_u64().unwrap())
        .sum();
    assert_eq!(in_windows, 2, "{windows:?}");
    for w in windows {
        assert!(w["end_s"].as_f64() >= w["start_s"].as_f64(), "{w}");
        assert_eq!(w["open"], false, "{w}");
    }
    let clients = doc["outages"]["clients"].as_array().expect("clients");
    assert_eq!(clients.len(), 2);
    for c in clients {
        assert_eq!(c["sqlstate"], "57P01", "{c}");
        assert_eq!(c["before"], c["after"], "{c}");
        assert_eq!(c["before"]["in_recovery"], false, "{c}");
    }
}

#[test]
fn without_the_option_the_client_aborts_as_in_pgbench() {
    let dir = Scratch::new(&[SECOND_TERMINATES]);
    let out = second_terminates(&dir, &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        !out.stdout.contains("connection failures"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("outage"), "{}", out.stdout);
    let theirs = run(
        Prog::Pgbench19,
        &dir.path,
        DB,
        &[
            "-n",
            "-t",
            "4",
            "-c",
            "2",
            "-j",
            "2",
            "-D",
            "k=0",
            "-f",
            "second.sql",
        ],
    );
    assert_eq!(theirs.code, 2, "{}", theirs.stderr);
    assert_eq!(
        count(&out.stdout, "number of transactions actually processed"),
        count(&theirs.stdout, "number of transactions actually processed"),
    );
}

/// The new connection walks the host list to the server that answers, which the
/// report names before and after the window, with the window's throughput.
#[test]
fn the_new_connection_walks_the_host_list() {
    let dir = Scratch::new(&[SECOND_TERMINATES]);
    let c = cluster();
    let conninfo = format!(
        "host=/nonexistent-pgrush-dir,{} port={} dbname={DB}",
        c.socket_dir().display(),
        c.port()
    );
    let out = counted(&dir, "second.sql", "3", "1", &["--reconnect=5", &conninfo]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(count(&out.stdout, "number of connection failures"), Some(1));
    let server = format!("{}:{} (primary)", c.socket_dir().display(), c.port());
    assert!(
        out.stdout.contains(&format!("   servers: {server}")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!("-> {server}")),
        "{}",
        out.stdout
    );
    // Throughput and p99 around the window, from the run's intervals (kept for
    // `--reconnect` without a document too): the window's own interval had commits.
    let stretches = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("   tps before/during/after: "))
        .unwrap_or_else(|| panic!("no tps line:\n{}", out.stdout));
    let during = stretches.split(' ').nth(1).expect("during");
    assert!(
        during.parse::<f64>().is_ok_and(|tps| tps > 0.0),
        "{stretches}"
    );
}

#[test]
fn bad_timeouts_are_refused() {
    let dir = Scratch::new(&[]);
    for (value, message) in [
        (
            "0",
            "pgrush: error: --reconnect must be in range 1..2147483647",
        ),
        (
            "x",
            "pgrush: error: invalid value \"x\" for option --reconnect",
        ),
    ] {
        let out = command(Prog::Pgrush, &dir.path, DB)
            .args(["-n", "-t", "1", &format!("--reconnect={value}")])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with(message), "{stderr}");
    }
}

/// A server restarted with `-m immediate` in the middle of a `-T` run, then one
/// stopped for good: with `--reconnect=10` the clients fail once each, wait, come
/// back and go on (one outage window, as long as the server was down and at most
/// the backoff's cap more); with `--reconnect=1` they give up a second after the
/// server went away (exit status 2, as pgbench's aborted clients).
#[test]
fn clients_survive_a_restart_and_give_up_on_a_server_that_stays_down() {
    use pgrush_cluster::{Cluster, ShutdownMode};
    use std::time::{Duration, Instant};

    let cluster = Cluster::start().expect("throwaway cluster");
    let dir = Scratch::new(&[("select.sql", "select 1;\n")]);
    let bench = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pgrush"));
        cmd.current_dir(&dir.path)
            .envs(cluster.env())
            .args(["-n", "-c", "4", "-j", "2", "-f", "select.sql"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd.spawn().expect("pgrush starts")
    };
    let wait = |child: std::process::Child| {
        let out = child.wait_with_output().expect("pgrush ends");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    // 1. A restart: down between `stopped` and `started`.
    let child = bench(&[
        "--reconnect=10",
        "-T",
        "5",
        "--json",
        "run.json",
        "--no-server-stats",
    ]);
    std::thread::sleep(Duration::from_secs(2));
    let stopping = Instant::now();
    cluster.stop(ShutdownMode::Immediate).expect("stop");
    let stopped = Instant::now();
    std::thread::sleep(Duration::from_millis(800));
    let starting = Instant::now();
    cluster.start_server().expect("start");
    let started = Instant::now();
    let (code, stdout, stderr) = wait(child);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let failures = count(&stdout, "number of connection failures").expect("the line");
    assert!((1..=4).contains(&failures), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path.join("run.json")).unwrap()).unwrap();
    let windows = doc["outages"]["windows"].as_array().expect("windows");
    assert_eq!(windows.len(), 1, "{windows:?}");
    let w = &windows[0];
    assert_eq!(w["open"], false, "{w}");
    let length = w["end_s"].as_f64().unwrap() - w["start_s"].as_f64().unwrap();
    let down_at_least = (starting - stopped).as_secs_f64();
    let down_at_most = (started - stopping).as_secs_f64();
    // At most the backoff's cap (1 s) after the server is back, plus a connection
    // and a first transaction on a busy machine (0.5 s).
    assert!(
        length >= down_at_least && length <= down_at_most + 1.0 + 0.5,
        "window of {length} s, server down {down_at_least}..{down_at_most} s"
    );
    // Transactions went on after it: the intervals after the window have some.
    let after: u64 = doc["time_series"]["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .filter(|iv| iv["start_s"].as_f64().unwrap() > w["end_s"].as_f64().unwrap())
        .map(|iv| iv["transactions"]["processed"].as_u64().unwrap_or(0))
        .sum();
    assert!(after > 0, "no transaction after the window");

    // 2. A server that stays down: each client gives up after its timeout.
    let child = bench(&["--reconnect=1", "-T", "30"]);
    std::thread::sleep(Duration::from_secs(1));
    cluster.stop(ShutdownMode::Immediate).expect("stop");
    let stopped = Instant::now();
    let (code, stdout, stderr) = wait(child);
    let waited = stopped.elapsed().as_secs_f64();
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    // The timeout, one backoff step at most and a connection attempt, not -T.
    assert!(waited < 1.0 + 1.0 + 2.0, "ended {waited} s after the stop");
    for c in 0..4 {
        let line = format!(
            "pgrush: error: client {c} aborted: no connection within the reconnect timeout of 1 s; connection to server on socket"
        );
        assert!(stderr.contains(&line), "{stderr}");
    }
    assert!(
        stderr.contains("pgrush: error: Run was aborted; the above results are incomplete."),
        "{stderr}"
    );
}

/// Each client's second transaction is refused as on a standby (SQLSTATE 25006).
const SECOND_READ_ONLY: (&str, &str) = (
    "read_only.sql",
    "\\set k :k + 1\n\\if :k = 2\nbegin read only;\nupdate pgbench_branches set bbalance = bbalance where bid = 1;\nend;\n\\endif\nselect 1;\n",
);

/// With a conninfo that asks for a read-write server, a read-only error means the
/// server is no longer the primary: the client looks for one again. Without that
/// setting it is an SQL error like any other (the client aborts, as in pgbench).
#[test]
fn a_read_only_error_reconnects_when_the_conninfo_wants_a_primary() {
    let dir = Scratch::new(&[SECOND_READ_ONLY]);
    let bench = |conninfo: &str| {
        let extra = ["--reconnect=5", "--json", "run.json", conninfo];
        counted(&dir, "read_only.sql", "3", "2", &extra)
    };
    let out = bench(&format!("dbname={DB} target_session_attrs=read-write"));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(count(&out.stdout, "number of connection failures"), Some(2));
    assert!(
        out.stdout.contains("failures by SQLSTATE class: 25: 2"),
        "{}",
        out.stdout
    );
    let out = bench(&format!("dbname={DB}"));
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(count(&out.stdout, "number of connection failures"), Some(0));
    assert!(
        out.stderr.contains(
            "client 0 script 0 aborted in command 3 query 0: ERROR:  cannot execute UPDATE in a read-only transaction"
        ),
        "{}",
        out.stderr
    );
}

/// A host list that never yields the server asked for, from the start: the first
/// connections fail as in pgbench (libpq's message, exit status 1), `--reconnect`
/// or not; and an unreachable target likewise.
#[test]
fn a_target_never_reached_ends_as_in_pgbench() {
    let dir = Scratch::new(&[("select.sql", "select 1;\n")]);
    for conninfo in [
        format!("dbname={DB} target_session_attrs=standby"),
        format!("host=/nonexistent-pgrush-dir dbname={DB}"),
    ] {
        let args = ["-n", "-t", "1", "-f", "select.sql", &conninfo];
        let theirs = run(Prog::Pgbench19, &dir.path, DB, &args);
        let mut with_option = args.to_vec();
        with_option.push("--reconnect=1");
        let ours = run(Prog::Pgrush, &dir.path, DB, &with_option);
        assert_eq!(ours.code, theirs.code, "{conninfo}: {}", ours.stderr);
        assert_eq!(ours.code, 1, "{conninfo}: {}", ours.stderr);
        let errors = |stderr: &str| -> Vec<String> {
            bench_common::rename(stderr)
                .lines()
                .filter(|l| l.contains("error"))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(errors(&ours.stderr), errors(&theirs.stderr), "{conninfo}");
    }
}
