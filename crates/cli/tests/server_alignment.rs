//! The server's counters per interval line up with the client's series: a lock held
//! on pgbench_branches for 2 s from about 1.5 s into a 5 s run stalls every client for
//! at least one whole interval, and the client's tps and the server's commits are
//! lowest in the same stalled interval, on PostgreSQL 15 and 18; the first interval's
//! commits and WAL are not missing (backends flush their statistics about once a
//! second, after the fact).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pgrush_cluster::{Cluster, PgInstall};
use serde_json::Value;

fn cluster(major: u32) -> Cluster {
    let install =
        PgInstall::for_major(major).unwrap_or_else(|e| panic!("PostgreSQL {major} is needed: {e}"));
    Cluster::builder()
        .install(install)
        .setting("checkpoint_timeout", "1h")
        .start()
        .expect("start cluster")
}

fn pgrush(c: &Cluster) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    pgrush_testkit::clear_pg_env(&mut cmd);
    cmd.envs(c.env())
        .env("PGDATABASE", "bench")
        .stdin(Stdio::null());
    cmd
}

/// Waits for the sampler's connection, which opens as the run starts; the instant.
fn run_start(c: &Cluster) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let n = c
            .psql_db(
                "bench",
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE application_name = 'pgrush-server-stats'",
            )
            .unwrap_or_default();
        if n.trim() == "1" {
            return Instant::now();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the run did not start");
}

/// The index of the smallest value (the first one on ties).
fn argmin(v: &[f64]) -> usize {
    (0..v.len())
        .min_by(|&a, &b| v[a].total_cmp(&v[b]))
        .expect("values")
}

fn stalled_run(major: u32) {
    let c = cluster(major);
    c.create_database("bench").expect("create database");
    let init = pgrush(&c)
        .args(["-i", "-q", "-s", "1"])
        .output()
        .expect("init");
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("run.json");
    let child = pgrush(&c)
        .args(["-n", "-c", "2", "-j", "2", "-T", "5", "-P", "1"])
        .arg(format!("--json={}", json.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    let t0 = run_start(&c);
    std::thread::sleep(
        (t0 + Duration::from_millis(1500)).saturating_duration_since(Instant::now()),
    );
    c.psql_db(
        "bench",
        "BEGIN; LOCK TABLE pgbench_branches IN ACCESS EXCLUSIVE MODE; \
         SELECT pg_sleep(2); COMMIT",
    )
    .expect("lock");
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    let client: Vec<(f64, f64)> = doc["time_series"]["intervals"]
        .as_array()
        .expect("client intervals")
        .iter()
        .map(|i| {
            let n = i["transactions"]["processed"].as_f64().expect("processed");
            (i["start_s"].as_f64().expect("start"), n)
        })
        .collect();
    let server: Vec<(f64, f64, f64)> = doc["server_stats"]["intervals"]
        .as_array()
        .expect("server intervals")
        .iter()
        .map(|i| {
            (
                i["start_s"].as_f64().expect("start"),
                i["database"]["commits"].as_f64().expect("commits"),
                i["wal_bytes"].as_f64().expect("wal"),
            )
        })
        .collect();
    let shown = format!("client {client:?}\nserver {server:?}");
    // The first four intervals (0 s to 4 s) of both sides start at the same times.
    assert!(client.len() >= 4 && server.len() >= 4, "{shown}");
    for k in 0..4 {
        assert!((client[k].0 - k as f64).abs() < 1e-6, "{shown}");
        assert!((server[k].0 - k as f64).abs() < 1e-6, "{shown}");
    }
    let client_tx: Vec<f64> = client[..4].iter().map(|c| c.1).collect();
    let server_commits: Vec<f64> = server[..4].iter().map(|s| s.1).collect();
    // The stall fills at least one whole interval: nearly no transactions there, on
    // both sides, and each side's lowest interval is a stalled one on the other side.
    let stalled = |v: &[f64], k: usize| v[k] <= 0.1 * v.iter().copied().fold(0.0, f64::max);
    let (low_client, low_server) = (argmin(&client_tx), argmin(&server_commits));
    assert!(stalled(&client_tx, low_client), "no stall: {shown}");
    assert!(
        stalled(&client_tx, low_server) && stalled(&server_commits, low_client),
        "the stall's interval differs: {shown}"
    );
    assert!(
        server_commits[0] >= client_tx[0] / 2.0,
        "first interval's commits: {shown}"
    );
    assert!(server[0].2 > 0.0, "first interval's WAL: {shown}");
}

#[test]
fn a_stall_shows_in_the_same_interval_on_15() {
    stalled_run(15);
}

#[test]
fn a_stall_shows_in_the_same_interval_on_18() {
    stalled_run(18);
}
