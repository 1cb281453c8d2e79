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
    // One run per client: too few for the fit at equal context switches.
    assert!(!table.contains("(fit)"), "{table}");
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

/// One saved run of `cpu` µs of client CPU and `switches` context switches per
/// transaction (the other figures are fillers).
fn saved_run(switches: f64, cpu: f64) -> Value {
    let tx = 100_000.0;
    serde_json::json!({
        "wall_s": 5.0, "user_s": cpu * tx / 2e6, "sys_s": cpu * tx / 2e6,
        "cpu_s": cpu * tx / 1e6, "peak_rss_kib": 4096, "ctx_switches": switches * tx,
        "transactions": tx as u64, "tps": 20_000.0, "cpu_us_per_tx": cpu,
        "user_us_per_tx": cpu / 2.0, "sys_us_per_tx": cpu / 2.0,
        "ctx_switches_per_tx": switches, "tx_per_cpu_s": 1e6 / cpu,
    })
}

/// The words of the row of `table` whose label (the words after the workload) starts
/// with `metric`.
fn table_row(table: &str, metric: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| {
            l.split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ")
                .starts_with(metric)
        })
        .unwrap_or_else(|| panic!("no {metric} row in:\n{table}"));
    line.split_whitespace().map(str::to_string).collect()
}

/// The table `bench/compare --from-json` prints for the saved document `doc`.
fn saved_table(doc: &Value) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("saved.json");
    std::fs::write(&path, doc.to_string()).expect("write");
    let out = pgrush_testkit::run(
        Command::new("python3")
            .arg(script())
            .arg("--from-json")
            .arg(&path),
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    out.stdout
}

#[test]
fn the_fit_compares_pgrush_and_the_floor_at_the_same_context_switches() {
    // pgrush: CPU = 1 + 16 x over x = 0.50..0.60; the floor: 0.5 + 14 x over 0.52..0.60.
    // Both at x = 0.52 (the fewest switches both reached): 9.32 and 7.78.
    let runs = |a: f64, b: f64, xs: &[f64]| -> Vec<Value> {
        xs.iter().map(|&x| saved_run(x, a + b * x)).collect()
    };
    let doc = serde_json::json!({
        "pgbench": "pgbench", "pgrush": "pgrush", "floor": "floor", "pairs": 3,
        "duration_s": 5, "scale": 1, "server": "saved",
        "workloads": {"select-prepared": {
            "options": {}, "syscalls": null, "instructions": null, "footprint": null,
            "runs": {
                "pgbench": runs(2.0, 20.0, &[0.56, 0.58, 0.60]),
                "pgrush": runs(1.0, 16.0, &[0.50, 0.60, 0.55]),
                "floor": runs(0.5, 14.0, &[0.60, 0.52, 0.56]),
            },
        }},
    });
    let table = saved_table(&doc);
    let row = table_row(&table, "at 0.520 ctx sw/tx (fit)");
    // workload, 5 label words, pgbench (-), pgrush, floor, ratio (-), /floor.
    assert_eq!(row[6..], ["-", "9.32", "7.78", "-", "1.198"], "{row:?}");
    // With clients whose switches barely vary, there is no fit.
    let mut flat = doc.clone();
    flat["workloads"]["select-prepared"]["runs"]["floor"] =
        Value::Array(runs(0.5, 14.0, &[0.55, 0.56, 0.57]));
    let table = saved_table(&flat);
    assert!(!table.contains("(fit)"), "{table}");
    // Nor where the CPU does not follow the switches.
    let mut scattered = doc.clone();
    scattered["workloads"]["select-prepared"]["runs"]["floor"] = Value::Array(vec![
        saved_run(0.52, 9.0),
        saved_run(0.56, 7.0),
        saved_run(0.60, 9.0),
    ]);
    let table = saved_table(&scattered);
    assert!(!table.contains("(fit)"), "{table}");
}
