//! `--target SCRIPT=CONNINFO`: a script's transactions go to a server of their own.
//! One primary and one streaming standby (`pg_basebackup -R`) serve the whole test
//! binary: a read script on the standby, a write script on the primary, per-target
//! figures that add up, `--server-stats` sampling the standby too; and the bad input (an unreachable target, a write script on
//! the standby, a script not in the run, a host list without a primary).

mod bench_common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pgrush_cluster::{Cluster, ShutdownMode};
use pgrush_testkit::{Output, run};
use serde_json::Value;

/// The primary and its standby.
struct Pair {
    primary: Cluster,
    standby: Cluster,
}

static PAIR: OnceLock<Pair> = OnceLock::new();

extern "C" fn discard_pair() {
    if let Some(pair) = PAIR.get() {
        pair.standby.discard();
        pair.primary.discard();
    }
}

/// The primary (a table `t` with one row) and a standby streaming from it, started
/// on first use, removed at exit.
fn pair() -> &'static Pair {
    PAIR.get_or_init(|| {
        let primary = Cluster::builder()
            .hba(["local replication all trust"])
            .start()
            .expect("primary");
        primary
            .psql("CREATE TABLE t (x int); INSERT INTO t VALUES (0)")
            .expect("table");
        let base = std::env::temp_dir().join(format!("pgrush-targets-base-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let out = run(primary
            .install()
            .command("pg_basebackup")
            .arg("-D")
            .arg(&base)
            .args(["-c", "fast", "-X", "stream", "-R"])
            .envs(primary.env()));
        assert_eq!(out.code, 0, "pg_basebackup: {}", out.stderr);
        let mut standby = Cluster::builder().start().expect("standby cluster");
        standby.stop(ShutdownMode::Fast).expect("stop");
        standby.replace_data_dir(&base).expect("standby data");
        standby.set_superuser(primary.superuser());
        standby.start_server().expect("start standby");
        let _ = std::fs::remove_dir_all(&base);
        let deadline = Instant::now() + Duration::from_secs(30);
        while primary
            .psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")
            .expect("replication")
            .trim()
            != "1"
        {
            assert!(Instant::now() < deadline, "the standby does not stream");
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: registering a plain extern "C" function with no captured state.
        unsafe {
            libc::atexit(discard_pair);
        }
        Pair { primary, standby }
    })
}

/// The conninfo of `cluster` over its Unix socket.
fn conninfo(cluster: &Cluster) -> String {
    format!(
        "host={} port={}",
        cluster.socket_dir().display(),
        cluster.port()
    )
}

/// Fails (division by zero) unless the server is in recovery, as `\gset` saw it.
const READ: &str = "SELECT pg_is_in_recovery() AS rec \\gset\n\\if :rec\nSELECT count(*) FROM t;\n\\else\nSELECT 1/0 AS primary_seen;\n\\endif\n";
/// Fails on a standby (the UPDATE, read-only) and checks it is on the primary.
const WRITE: &str = "SELECT pg_is_in_recovery() AS rec \\gset\n\\if :rec\nSELECT 1/0 AS standby_seen;\n\\endif\nUPDATE t SET x = x + 1;\n";

/// A directory with the two scripts; removed on drop.
struct Scripts(PathBuf);

impl Scripts {
    fn new() -> Scripts {
        let dir = tempfile::tempdir().expect("scratch").keep();
        std::fs::write(dir.join("read.sql"), READ).expect("read.sql");
        std::fs::write(dir.join("write.sql"), WRITE).expect("write.sql");
        Scripts(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scripts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// pgrush in `dir`, connected to the primary, with `args`.
fn pgrush(dir: &Path, args: &[&str]) -> Output {
    let primary = &pair().primary;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    cmd.current_dir(dir)
        .envs(primary.env())
        .env_remove("PGBENCH_RANDOM_SEED")
        .args(args);
    run(&mut cmd)
}

/// The exit status is `code` (else the output is shown).
#[track_caller]
fn assert_code(out: &Output, code: i32) {
    assert_eq!(
        out.code, code,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
}

/// The run document at `path`, checked against the schema.
fn read_json(path: &Path) -> Value {
    bench_common::checked_run_document(path)
}

fn reads_go_to_the_standby_writes_to_the_primary_and_the_counts_add_up() {
    let standby = conninfo(&pair().standby);
    let dir = Scripts::new();
    let target = format!("--target=read.sql={standby}");
    let json = dir.path().join("run.json");
    let out = pgrush(
        dir.path(),
        &[
            "-n",
            "-c",
            "2",
            "-t",
            "25",
            "--random-seed",
            "7",
            "-f",
            "read.sql@9",
            "-f",
            "write.sql@1",
            &target,
            "--server-stats=0.1",
            "--json",
            json.to_str().expect("utf-8"),
        ],
    );
    assert_code(&out, 0);
    assert_target_server_sampled(&out, &standby, &read_json(&json));
    let block = out
        .stdout
        .split("per target:\n")
        .nth(1)
        .expect("a per-target block");
    assert!(
        block.contains(" - target 1: default (SQL script 2)"),
        "{block}"
    );
    assert!(
        block.contains(&format!(" - target 2: {standby} (SQL script 1)")),
        "{block}"
    );
    let doc = read_json(&json);
    let targets = doc["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 2, "{targets:?}");
    let processed: Vec<u64> = targets
        .iter()
        .map(|t| t["transactions"]["processed"].as_u64().expect("processed"))
        .collect();
    assert_eq!(processed.iter().sum::<u64>(), 50, "{targets:?}");
    assert!(processed.iter().all(|&n| n > 0), "{targets:?}");
    let scripts = doc["scripts"].as_array().expect("scripts");
    assert_eq!(
        processed,
        [1, 0].map(|i| scripts[i]["transactions"]["processed"].as_u64().unwrap()),
        "each target counts its scripts' transactions"
    );
    assert!(targets[1]["latency"]["average_ms"].as_f64().is_some());
    // The writes reached the primary only.
    let writes: u64 = pair()
        .primary
        .psql("SELECT x FROM t")
        .expect("x")
        .trim()
        .parse()
        .expect("a number");
    assert!(writes >= processed[0], "{writes} < {}", processed[0]);
}

/// `--server-stats` sampled the standby target on a connection of its own: it is in
/// recovery, its sampler produced intervals as the run's own server's did, and its
/// summary follows the run's.
#[track_caller]
fn assert_target_server_sampled(out: &Output, standby: &str, doc: &Value) {
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(!text.contains("--target servers"), "{text}");
    assert!(
        text.contains(&format!(
            "server statistics of target 2: {standby}, in recovery (counters every 0.1 s"
        )),
        "{text}"
    );
    let intervals = |v: &Value| v["intervals"].as_array().map_or(0, Vec::len);
    assert!(
        intervals(&doc["server_stats"]) > 0,
        "{}",
        doc["server_stats"]
    );
    let targets = &doc["targets"];
    assert!(intervals(&targets[1]["server_stats"]) > 0, "{targets}");
    assert_eq!(targets[1]["server_in_recovery"], true, "{targets}");
    // The default target's server is the run's: sampled once, in `server_stats`.
    assert!(targets[0].get("server_stats").is_none(), "{targets}");
}

fn per_transaction_connections_go_to_each_scripts_target() {
    let standby = conninfo(&pair().standby);
    let dir = Scripts::new();
    let target = format!("--target=read.sql={standby}");
    let out = pgrush(
        dir.path(),
        &[
            "-n",
            "-C",
            "-t",
            "12",
            "--random-seed",
            "3",
            "-f",
            "read.sql",
            "-f",
            "write.sql",
            &target,
        ],
    );
    assert_code(&out, 0);
    assert!(out.stdout.contains("per target:"), "{}", out.stdout);
}

fn a_write_script_on_the_standby_fails_as_any_sql_error() {
    let standby = conninfo(&pair().standby);
    let dir = Scripts::new();
    let target = format!("--target=write.sql={standby}");
    let out = pgrush(dir.path(), &["-n", "-t", "3", "-f", "write.sql", &target]);
    assert_code(&out, 2);
    assert!(out.stderr.contains("division by zero"), "{}", out.stderr);
    assert!(
        out.stderr.contains("client 0 script 0 aborted in command"),
        "{}",
        out.stderr
    );
    // Without the check, the UPDATE itself is refused; counted under --continue-on-error.
    std::fs::write(dir.path().join("update.sql"), "UPDATE t SET x = x + 1;\n").expect("script");
    let target = format!("--target=update.sql={standby}");
    let json = dir.path().join("run.json");
    let out = pgrush(
        dir.path(),
        &[
            "-n",
            "-t",
            "3",
            "-f",
            "update.sql",
            &target,
            "--continue-on-error",
            "--json",
            json.to_str().expect("utf-8"),
        ],
    );
    assert_code(&out, 0);
    let doc = read_json(&json);
    assert_eq!(
        doc["targets"][0]["transactions"]["failed"], 3,
        "{}",
        doc["targets"]
    );
    assert_eq!(doc["targets"][0]["transactions"]["processed"], 0);
    let out = pgrush(dir.path(), &["-n", "-t", "1", "-f", "update.sql", &target]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("cannot execute UPDATE in a read-only transaction"),
        "{}",
        out.stderr
    );
}

fn an_unreachable_target_fails_as_a_failed_connection() {
    let dir = Scripts::new();
    let port = pgrush_testkit::closed_port();
    let target = format!("--target=read.sql=host=127.0.0.1 port={port}");
    let out = pgrush(
        dir.path(),
        &[
            "-n",
            "-t",
            "1",
            "-f",
            "read.sql",
            "-f",
            "write.sql",
            &target,
        ],
    );
    assert_code(&out, 1);
    assert!(out.stderr.contains("Connection refused"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("pgrush: error: could not create connection for client 0"),
        "{}",
        out.stderr
    );
}

fn a_host_list_without_a_primary_fails_at_the_start_and_after_a_loss() {
    let standby = &pair().standby;
    let dir = Scripts::new();
    let sock = standby.socket_dir().display().to_string();
    let port = standby.port();
    let target = format!(
        "--target=write.sql=host={sock},{sock} port={port},{port} target_session_attrs=read-write"
    );
    let out = pgrush(
        dir.path(),
        &["-n", "-t", "2", "-f", "write.sql", &target, "--reconnect=1"],
    );
    assert_code(&out, 1);
    assert!(out.stderr.contains("read-only"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("could not create connection for client 0")
    );
    // The primary turns read-only after the client connected: its session ends, and
    // the host list (the primary only) yields no read-write server any more; the
    // client aborts after the timeout.
    let primary = &pair().primary;
    let target = format!(
        "--target=cut.sql={} target_session_attrs=read-write",
        conninfo(primary)
    );
    std::fs::write(
        dir.path().join("cut.sql"),
        "ALTER SYSTEM SET default_transaction_read_only = on;\nSELECT pg_reload_conf();\nSELECT pg_terminate_backend(pg_backend_pid());\n",
    )
    .expect("script");
    let out = pgrush(
        dir.path(),
        &[
            "-n",
            "-t",
            "2",
            "-f",
            "cut.sql",
            "-f",
            "read.sql@0",
            &target,
            "--reconnect=1",
        ],
    );
    primary
        .psql("ALTER SYSTEM RESET default_transaction_read_only; SELECT pg_reload_conf()")
        .expect("reset");
    assert_code(&out, 2);
    assert!(out.stderr.contains("lost its connection"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("client 0 aborted: no connection within the reconnect timeout of 1 s;"),
        "{}",
        out.stderr
    );
}

/// One primary and standby for every case (each test is a process of its own).
#[test]
fn scripts_on_their_own_targets() {
    reads_go_to_the_standby_writes_to_the_primary_and_the_counts_add_up();
    per_transaction_connections_go_to_each_scripts_target();
    a_write_script_on_the_standby_fails_as_any_sql_error();
    an_unreachable_target_fails_as_a_failed_connection();
    a_host_list_without_a_primary_fails_at_the_start_and_after_a_loss();
}

#[test]
fn a_target_naming_a_script_not_in_the_run_is_a_usage_error() {
    let dir = Scripts::new();
    let bare = |args: &[&str]| {
        run(Command::new(env!("CARGO_BIN_EXE_pgrush"))
            .current_dir(dir.path())
            .args(args))
    };
    let out = bare(&[
        "-n",
        "-t",
        "1",
        "-f",
        "read.sql",
        "--target=other.sql=host=x",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "pgrush: error: --target names script \"other.sql\", which is not in the run (a -f file as given, or a builtin's full name, e.g. select-only)\n\
         pgrush: hint: Try \"pgrush --help\" for more information.\n"
    );
    let out = bare(&[
        "-n",
        "-t",
        "1",
        "-S",
        "--target=select-only=host=a",
        "--target=select-only=host=b",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("pgrush: error: --target given twice for script \"select-only\"\n"),
        "{}",
        out.stderr
    );
    let out = bare(&["-n", "-t", "1", "-S", "--target=select-only"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("SCRIPT=CONNINFO expected"),
        "{}",
        out.stderr
    );
}
