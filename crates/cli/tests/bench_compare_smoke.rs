//! Smoke tests of `bench/compare` (the side-by-side benchmark harness): one short pair of
//! select-only prepared runs, pgbench 18 against this build of pgrush, once on the
//! script's own throwaway cluster (table output) and once on a sandbox cluster named by
//! connection options (`--json`, with the strace, callgrind and cachegrind passes).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use pgrush_cluster::Cluster;
use pgrush_testkit as testkit;
use pgrush_testkit::oracle::{self, Which};

/// The repository's `bench/compare`.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/compare")
}

/// `bench/compare` with the common options and no `PG*` connection variables.
fn compare_command() -> Command {
    let pgbench = oracle::require(Which::Pgbench18);
    let mut cmd = Command::new("python3");
    cmd.arg(script())
        .args(["--pairs", "1", "--duration", "1", "--scale", "1"])
        .args(["--workloads", "select-prepared", "--quiet"])
        .arg("--pgrush")
        .arg(env!("CARGO_BIN_EXE_pgrush"))
        .arg("--pgbench")
        .arg(pgbench.path());
    for var in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGHOSTADDR"] {
        cmd.env_remove(var);
    }
    cmd
}

/// The table's `select-prepared` row for `metric`: (pgbench, pgrush, ratio).
fn row(table: &str, metric: &str) -> (f64, f64, f64) {
    let line = table
        .lines()
        .find(|l| {
            l.starts_with("select-prepared")
                && l["select-prepared".len()..]
                    .trim_start()
                    .starts_with(metric)
        })
        .unwrap_or_else(|| panic!("no {metric:?} row in:\n{table}"));
    let nums: Vec<f64> = line
        .split_whitespace()
        .rev()
        .take(3)
        .map(|w| {
            w.parse()
                .unwrap_or_else(|_| panic!("not a number {w:?} in {line:?}"))
        })
        .collect();
    (nums[2], nums[1], nums[0])
}

#[test]
fn table_on_its_own_cluster() {
    // The harness's cluster goes into a private directory, so that its removal is visible.
    let work = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(work.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = testkit::run(compare_command().env("PGRUSH_SANDBOX_DIR", work.path()));
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert!(out.stdout.contains("throwaway cluster"), "{}", out.stdout);
    assert!(
        out.stdout.contains("ratio = pgrush / pgbench"),
        "{}",
        out.stdout
    );
    for metric in ["client CPU us/tx", "tps", "peak RSS MiB"] {
        let (a, b, r) = row(&out.stdout, metric);
        assert!(a > 0.0 && b > 0.0, "{metric}: {a} {b}");
        assert!(r.is_finite() && r > 0.0, "{metric}: ratio {r}");
        // The ratio column is the ratio of the two medians (both rounded for printing).
        assert!(
            (b / a - r).abs() <= 0.05 * r + 0.002,
            "{metric}: {a} {b} {r}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(work.path())
        .expect("read temp dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "the harness left {left:?} behind");
}

#[test]
fn json_with_syscalls_on_a_given_server() {
    let cluster = Cluster::start().expect("sandbox cluster");
    let port = cluster.port().to_string();
    let mut cmd = compare_command();
    cmd.arg("-h")
        .arg(cluster.socket_dir())
        .args(["-p", &port, "-U", cluster.superuser(), "-d", "postgres"])
        .args(["--json", "--syscalls", "--instructions", "--footprint"])
        .args(["--instr-tx", "40"]);
    let out = testkit::run(&mut cmd);
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON document");
    let runs = &doc["workloads"]["select-prepared"]["runs"];
    for client in ["pgbench", "pgrush"] {
        let run = &runs[client][0];
        let tx = run["transactions"].as_u64().expect("transactions");
        assert!(tx > 0, "{client}: {run}");
        let cpu = run["cpu_us_per_tx"].as_f64().expect("cpu_us_per_tx");
        let total = run["cpu_s"].as_f64().expect("cpu_s");
        assert!((cpu - total * 1e6 / tx as f64).abs() < 1e-6 * cpu.max(1.0));
    }
    let medians = doc["medians"].as_array().expect("medians");
    let metric = |name: &str| {
        medians
            .iter()
            .find(|m| m["metric"] == name)
            .unwrap_or_else(|| panic!("no {name} median in {}", out.stdout))
    };
    for name in [
        "client CPU us/tx",
        "paired ratio (median)",
        "tps",
        "peak RSS MiB",
        "syscalls/tx",
        "instructions/tx (user)",
        "code lines/tx (cold)",
        "data lines/tx (cold)",
    ] {
        let ratio = metric(name)["ratio"].as_f64().expect("finite ratio");
        assert!(ratio.is_finite() && ratio > 0.0, "{name}: {ratio}");
    }
    // With one pair, the median of the per-pair ratios is that pair's ratio.
    let paired = metric("paired ratio (median)")["ratio"]
        .as_f64()
        .expect("paired");
    let of_medians = metric("client CPU us/tx")["ratio"].as_f64().expect("ratio");
    assert!(
        (paired - of_medians).abs() < 1e-9,
        "{paired} against {of_medians}"
    );
    // Every transaction is at least one send and one receive for either client, and
    // building, sending and decoding one takes some hundreds of instructions at least.
    for client in ["pgbench", "pgrush"] {
        let per_tx = metric("syscalls/tx")[client].as_f64().expect("syscalls/tx");
        assert!(per_tx >= 2.0, "{client}: {per_tx} syscalls/tx");
        let instr = metric("instructions/tx (user)")[client]
            .as_f64()
            .expect("instructions/tx");
        assert!(instr > 300.0, "{client}: {instr} instructions/tx");
        let instr_runs = &doc["workloads"]["select-prepared"]["instructions"][client]["runs"];
        let short = instr_runs[0]["transactions"].as_u64().expect("short run");
        let long = instr_runs[1]["transactions"].as_u64().expect("long run");
        assert!(long > short, "{client}: {instr_runs}");
        // With 4 KiB of simulated cache, a transaction fetches again at least the
        // code of a send and a receive and the buffers it fills and reads.
        let code = metric("code lines/tx (cold)")[client]
            .as_f64()
            .expect("code");
        let data = metric("data lines/tx (cold)")[client]
            .as_f64()
            .expect("data");
        assert!(
            code > 10.0 && data > 5.0,
            "{client}: {code} code, {data} data lines/tx"
        );
    }
}
