//! `pgrush timing --explain-analyze` (text and `--json`) against a sandbox cluster.

use pgrush_testkit::{self as testkit, Output};
use std::process::Command;

const PGRUSH: &str = env!("CARGO_BIN_EXE_pgrush");

fn run_with_cluster(args: &[&str]) -> Output {
    let c = pgrush_testkit::shared();
    let mut cmd = Command::new(PGRUSH);
    cmd.arg("timing").args(args);
    pgrush_testkit::clear_pg_env(&mut cmd);
    // Connection options on the command line (not the environment).
    cmd.args([
        "-h",
        &c.socket_dir().to_string_lossy(),
        "-p",
        &c.port().to_string(),
        "-U",
        c.superuser(),
        "--dbname",
        "postgres",
    ]);
    testkit::run(&mut cmd)
}

#[test]
fn explain_analyze_json_document() {
    let out = run_with_cluster(&["-d", "1", "--json", "--explain-analyze"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout));
    assert_eq!(doc["duration_s"], 1);
    assert_eq!(doc["backwards_detected"], false);
    let clocks = doc["clocks"].as_array().expect("clocks");
    assert_eq!(clocks.len(), 1);
    let c = &clocks[0];
    assert_eq!(c["clock"], "monotonic");
    let loops = c["loops"].as_u64().expect("loops");
    assert!(loops > 1000);
    assert!(c["elapsed_ns"].as_i64().expect("elapsed") >= 1_000_000_000);
    let per_loop = c["per_loop_ns"].as_f64().expect("per_loop_ns");
    assert!(per_loop > 0.0 && per_loop < 1e6);
    assert!(c["resolution_ns"].as_f64().is_some());
    for key in ["histogram_us", "histogram_ns"] {
        let rows = c[key].as_array().expect(key);
        let sum: u64 = rows
            .iter()
            .map(|b| b["count"].as_u64().expect("count"))
            .sum();
        assert_eq!(sum, loops, "{key}");
        for b in rows {
            assert!(b["upper"].as_u64().is_some_and(u64::is_power_of_two));
            assert!(b["percent"].as_f64().is_some());
        }
    }
    assert_eq!(c["histogram_us"][0]["upper"], 1);
    let p = &c["percentiles_ns"];
    let values: Vec<u64> = ["p50", "p90", "p99", "p99.9", "p99.99", "max"]
        .iter()
        .map(|k| p[k].as_u64().unwrap_or_else(|| panic!("{k}")))
        .collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
    assert_eq!(c["backwards"]["count"], 0);
    assert_eq!(c["backwards"]["largest_step_ns"], 0);

    let e = &doc["explain_analyze"];
    assert_eq!(e["rows"], 100_000);
    assert!(e["runs"].as_u64().is_some_and(|r| r >= 3));
    let select = e["select_median_ns"].as_i64().expect("select");
    let explain = e["explain_analyze_median_ns"].as_i64().expect("explain");
    assert!(select > 0 && explain > 0);
    let per_row = e["overhead_ns_per_row"].as_f64().expect("overhead");
    assert!((per_row - (explain - select) as f64 / 100_000.0).abs() < 1e-6);
    assert!(e["server_version"].as_str().is_some_and(|v| !v.is_empty()));
}

#[test]
fn explain_analyze_text_line() {
    let out = run_with_cluster(&["-d", "1", "--explain-analyze"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.contains("NOTICE"),
        "the server's notices leak to stderr:\n{}",
        out.stderr
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "Testing timing overhead for 1 second.");
    let start = lines
        .iter()
        .position(|l| l.starts_with("EXPLAIN ANALYZE experiment (100000 rows, median of "))
        .unwrap_or_else(|| panic!("no experiment section:\n{}", out.stdout));
    assert_eq!(lines[start - 1], "");
    assert!(lines[start + 1].starts_with("SELECT count(*): ") && lines[start + 1].ends_with(" ms"));
    assert!(lines[start + 2].starts_with("EXPLAIN ANALYZE SELECT count(*): "));
    let last = lines[start + 3];
    let rest = last
        .strip_prefix("EXPLAIN ANALYZE timing overhead: ")
        .unwrap_or_else(|| panic!("{last}"));
    let (value, tail) = rest
        .split_once(" ns per row (clock cost per reading: ")
        .expect("shape");
    let value: f64 = value.parse().expect("overhead value");
    assert!(value.is_finite());
    assert_eq!(
        rest.split_once(' ')
            .map(|(v, _)| v.split('.').nth(1).map(str::len)),
        Some(Some(1))
    );
    let cost: f64 = tail
        .strip_suffix(" ns)")
        .expect("cost")
        .parse()
        .expect("cost value");
    let per_loop: f64 = lines[1]
        .strip_prefix("Per loop time including overhead: ")
        .and_then(|s| s.strip_suffix(" ns"))
        .and_then(|s| s.parse().ok())
        .expect("per-loop line");
    assert_eq!(format!("{cost:.2}"), format!("{per_loop:.2}"));
    assert_eq!(lines.len(), start + 4);
}

#[test]
fn explain_analyze_uses_the_environment() {
    let c = pgrush_testkit::shared();
    let mut cmd = Command::new(PGRUSH);
    testkit::clear_pg_env(&mut cmd);
    cmd.args([
        "timing",
        "-d",
        "1",
        "--json",
        "--explain-analyze",
        "--clock=monotonic_coarse",
    ])
    .envs(c.env());
    let out = testkit::run(&mut cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(doc["clocks"][0]["clock"], "monotonic_coarse");
    assert_eq!(doc["explain_analyze"]["rows"], 100_000);
}
