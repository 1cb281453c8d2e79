//! `bench/compare --floor` and `--capacity` with the floor client in every column (as
//! pgrush too, so that the test needs no engine build): the floor runs third in each
//! pair, its medians and the pgrush/floor ratios are in the JSON document and the
//! table, and the capacity figure is transactions per second of client CPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use pgrush_testkit::oracle::{self, Which};
use serde_json::Value;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../compare")
}

/// `bench/compare` on its own throwaway cluster, 1 pair of 1 s, scale 1, with the
/// floor client standing in for pgrush.
fn compare(args: &[&str]) -> (Value, String) {
    let floor = env!("CARGO_BIN_EXE_pgrush-floor");
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("doc.json");
    let mut cmd = Command::new("python3");
    cmd.arg(script())
        .args(["--pairs", "1", "--duration", "1", "--scale", "1", "--quiet"])
        .args(["--pgrush", floor, "--floor", floor])
        .arg("--pgbench")
        .arg(oracle::require(Which::Pgbench18).path())
        .arg("--json-out")
        .arg(&json)
        .args(args);
    for var in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGHOSTADDR"] {
        cmd.env_remove(var);
    }
    let out = pgrush_testkit::run(&mut cmd);
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let doc = serde_json::from_str(&std::fs::read_to_string(&json).expect("read JSON"))
        .expect("JSON document");
    (doc, out.stdout)
}

/// The median entry of `metric` for `workload`.
fn median<'a>(doc: &'a Value, workload: &str, metric: &str) -> &'a Value {
    doc["medians"]
        .as_array()
        .expect("medians")
        .iter()
        .find(|m| m["workload"] == workload && m["metric"] == metric)
        .unwrap_or_else(|| panic!("no {workload} {metric} in {doc}"))
}

/// The ratio pgrush/floor is the ratio of the medians, and the floor column is filled.
fn assert_floor_ratio(doc: &Value, workload: &str, metric: &str) {
    let m = median(doc, workload, metric);
    let (rush, floor) = (m["pgrush"].as_f64().unwrap(), m["floor"].as_f64().unwrap());
    assert!(rush > 0.0 && floor > 0.0, "{m}");
    let r = m["ratio_floor"].as_f64().expect("ratio_floor");
    assert!((r - rush / floor).abs() < 1e-9 * r.max(1.0), "{m}");
}

#[test]
fn floor_is_the_third_column() {
    let (doc, table) = compare(&["--workloads", "select-prepared", "--syscalls"]);
    let runs = &doc["workloads"]["select-prepared"]["runs"];
    let tx = runs["floor"][0]["transactions"]
        .as_u64()
        .expect("floor transactions");
    assert!(tx > 100, "{runs}");
    for metric in [
        "client CPU us/tx",
        "user us/tx",
        "sys us/tx",
        "tps",
        "syscalls/tx",
    ] {
        assert_floor_ratio(&doc, "select-prepared", metric);
    }
    // The floor makes at least one send and one receive per transaction.
    let calls = median(&doc, "select-prepared", "syscalls/tx")["floor"]
        .as_f64()
        .unwrap();
    assert!(calls >= 2.0, "{calls}");
    assert!(table.contains("/floor"), "{table}");
}

#[test]
fn capacity_reports_transactions_per_client_cpu_second() {
    let (doc, table) = compare(&["--capacity"]);
    assert!(
        table.contains("server on CPU 0, clients on CPU 1"),
        "{table}"
    );
    for workload in ["capacity-prepared", "capacity-simple"] {
        let runs = &doc["workloads"][workload]["runs"];
        for client in ["pgbench", "pgrush", "floor"] {
            let run = &runs[client][0];
            let tx = run["transactions"].as_f64().expect("transactions");
            let cpu = run["cpu_s"].as_f64().expect("cpu_s");
            let per = run["tx_per_cpu_s"].as_f64().expect("tx_per_cpu_s");
            assert!((per - tx / cpu).abs() < 1e-6 * per, "{client} {run}");
        }
        assert_floor_ratio(&doc, workload, "tx per client CPU s");
    }
}

#[test]
fn floor_describe_passes_describe_to_the_floor_only() {
    let (doc, table) = compare(&["--workloads", "select-prepared", "--floor-describe"]);
    assert_eq!(doc["floor_describe"], Value::Bool(true), "{doc}");
    let tx = doc["workloads"]["select-prepared"]["runs"]["floor"][0]["transactions"]
        .as_u64()
        .expect("floor transactions");
    assert!(tx > 100, "{doc}");
    assert!(table.contains("pgrush-floor --describe;"), "{table}");
    let options = &doc["workloads"]["select-prepared"]["options"];
    assert!(
        options["floor"].as_str().unwrap().contains("--describe"),
        "{options}"
    );
    assert!(
        !options["pgrush"].as_str().unwrap().contains("--describe"),
        "{options}"
    );
    assert_floor_ratio(&doc, "select-prepared", "client CPU us/tx");
}
