//! `--server-stats` against throwaway servers 15 and 18: what the sampler reports is
//! what was made to happen on the server during the run (a forced checkpoint, lock
//! contention on pgbench_branches, HOT updates by fillfactor, autovacuum), a role
//! without pg_monitor gets the warning, and a sampler whose connection is killed
//! leaves the benchmark and its report intact.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use pgrush_cluster::{Cluster, PgInstall};
use serde_json::Value;

/// A throwaway cluster of PostgreSQL `major` with extra settings.
fn cluster(major: u32, settings: &[(&str, &str)]) -> Cluster {
    let install =
        PgInstall::for_major(major).unwrap_or_else(|e| panic!("PostgreSQL {major} is needed: {e}"));
    let mut b = Cluster::builder().install(install);
    for (k, v) in settings {
        b = b.setting(*k, *v);
    }
    b.start().expect("start cluster")
}

fn pgrush(c: &Cluster, db: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    pgrush_testkit::clear_pg_env(&mut cmd);
    cmd.envs(c.env()).env("PGDATABASE", db).stdin(Stdio::null());
    cmd
}

/// `pgrush -i -q -s 1 [-F fillfactor] db` after creating `db`.
fn init(c: &Cluster, db: &str, fillfactor: u32) {
    c.create_database(db).expect("create database");
    let out = pgrush(c, db)
        .args(["-i", "-q", "-s", "1", "-F", &fillfactor.to_string()])
        .output()
        .expect("init");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A scratch file path for a run's JSON document.
fn json_path(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    (dir, path)
}

/// The run schema's complaints about `doc`.
fn schema_errors(doc: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/pgrush-run.v1.schema.json"
    )))
    .expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read json")).expect("parse json")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A tpcb-like run with more clients than branches and a CHECKPOINT forced 2 s in:
/// the checkpoint appears near 2 s, the lock waits are on pgbench_branches.
fn checkpoint_and_contention(major: u32) {
    let c = cluster(
        major,
        &[("checkpoint_timeout", "1h"), ("max_wal_size", "4GB")],
    );
    init(&c, "bench", 100);
    let (dir, json) = json_path("run.json");
    let html = dir.path().join("run.html");
    let child = pgrush(&c, "bench")
        .args(["-n", "-c", "8", "-j", "2", "-T", "5", "--server-stats"])
        .arg(format!("--json={}", json.display()))
        .arg(format!("--html={}", html.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    std::thread::sleep(Duration::from_millis(2000));
    c.psql("CHECKPOINT").expect("checkpoint");
    let out = child.wait_with_output().expect("wait");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("server statistics (counters every 1 s"),
        "{stdout}"
    );
    let doc = read_json(&json);
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(
        page.contains("backends spent their time</text>"),
        "no waits chart"
    );
    assert!(
        page.contains("<title>checkpoint</title>"),
        "no checkpoint mark"
    );
    let ss = &doc["server_stats"];
    assert_eq!(
        ss["server_version_num"].as_u64().map(|v| v / 10000),
        Some(u64::from(major))
    );
    let checkpoints: Vec<&Value> = ss["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "checkpoint")
        .collect();
    assert!(!checkpoints.is_empty(), "{ss}");
    let start = checkpoints[0]["start_s"].as_f64().expect("start");
    assert!(
        (1.0..=4.0).contains(&start),
        "checkpoint at {start} s: {ss}"
    );
    let branch_waits = ss["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .any(|i| {
            i["lock_waits"]
                .as_object()
                .is_some_and(|m| m.keys().any(|k| k.ends_with(":pgbench_branches")))
        });
    assert!(branch_waits, "no lock waits on pgbench_branches: {ss}");
    assert!(
        stdout.contains("a checkpoint ran from"),
        "the checkpoint finding: {stdout}"
    );
}

#[test]
fn checkpoint_and_lock_waits_on_18() {
    checkpoint_and_contention(18);
}

#[test]
fn checkpoint_and_lock_waits_on_15() {
    checkpoint_and_contention(15);
}

/// The HOT share of pgbench_accounts' updates in a short tpcb-like run whose
/// document is written to `json`.
fn accounts_hot_share(c: &Cluster, db: &str, json: &Path) -> f64 {
    let out = pgrush(c, db)
        .args(["-n", "-c", "2", "-T", "3"])
        .arg(format!("--json={}", json.display()))
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", text(&out).1);
    let doc = read_json(json);
    let tables = doc["server_stats"]["tables"]
        .as_array()
        .expect("tables")
        .clone();
    let accounts = tables
        .iter()
        .find(|t| t["name"] == "pgbench_accounts")
        .expect("pgbench_accounts");
    let updates = accounts["updates"].as_f64().expect("updates");
    assert!(updates > 100.0, "{accounts}");
    accounts["hot_updates"].as_f64().expect("hot") / updates
}

#[test]
fn fillfactor_80_gives_more_hot_updates_than_100() {
    let c = cluster(18, &[]);
    init(&c, "ff100", 100);
    init(&c, "ff80", 80);
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b) = (dir.path().join("ff100.json"), dir.path().join("ff80.json"));
    let full = accounts_hot_share(&c, "ff100", &a);
    let spaced = accounts_hot_share(&c, "ff80", &b);
    assert!(
        spaced > full + 0.2,
        "HOT share at fillfactor 80: {spaced}, at 100: {full}"
    );
    // `pgrush report` puts the two side by side.
    let out = Command::new(env!("CARGO_BIN_EXE_pgrush"))
        .arg("report")
        .args([&a, &b])
        .output()
        .expect("report");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let row = stdout
        .lines()
        .find(|l| l.contains("HOT updates on pgbench_accounts"))
        .unwrap_or_else(|| panic!("no HOT row: {stdout}"));
    let cells: Vec<&str> = row
        .split_whitespace()
        .filter(|c| c.ends_with('%'))
        .collect();
    assert_eq!(cells.len(), 2, "{row}");
    assert_ne!(cells[0], cells[1], "{row}");
    assert!(stdout.contains("buffer cache hit ratio"), "{stdout}");
}

#[test]
fn autovacuum_during_the_run_is_seen() {
    let c = cluster(
        18,
        &[
            ("autovacuum_naptime", "1"),
            ("autovacuum_vacuum_threshold", "1"),
            ("autovacuum_vacuum_scale_factor", "0"),
        ],
    );
    init(&c, "bench", 100);
    let out = pgrush(&c, "bench")
        .args(["-n", "-c", "2", "-T", "4", "--server-stats"])
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("autovacuum ran on pgbench_") || stdout.contains("autovacuum finished"),
        "{stdout}"
    );
}

#[test]
fn role_without_pg_monitor_is_warned_and_still_sampled() {
    let c = cluster(15, &[]);
    init(&c, "bench", 100);
    c.psql_db(
        "bench",
        "CREATE ROLE plain LOGIN; GRANT ALL ON ALL TABLES IN SCHEMA public TO plain",
    )
    .expect("role");
    let out = pgrush(&c, "bench")
        .env("PGUSER", "plain")
        .args(["-n", "-c", "2", "-T", "2", "--server-stats"])
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "pgrush: warning: server statistics: role \"plain\" is not a member of pg_monitor"
        ),
        "{stderr}"
    );
    assert!(stdout.contains("backend time: "), "{stdout}");
}

#[test]
fn a_killed_sampler_leaves_the_run_intact() {
    let c = cluster(18, &[]);
    init(&c, "bench", 100);
    let (_dir, json) = json_path("run.json");
    let child = pgrush(&c, "bench")
        .args(["-n", "-c", "2", "-T", "4", "--server-stats"])
        .arg(format!("--json={}", json.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    std::thread::sleep(Duration::from_millis(1500));
    c.psql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = 'pgrush-server-stats'",
    )
    .expect("terminate the sampler");
    let out = child.wait_with_output().expect("wait");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("tps = "), "{stdout}");
    assert!(
        stderr.contains("server statistics: the sampling connection failed at"),
        "{stderr}"
    );
    let doc = read_json(&json);
    assert!(
        doc["results"]["transactions"]["processed"].as_u64() > Some(0),
        "{doc}"
    );
    assert!(
        !doc["server_stats"]["intervals"]
            .as_array()
            .expect("intervals")
            .is_empty()
    );
}
