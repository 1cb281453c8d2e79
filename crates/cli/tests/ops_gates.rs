//! Gates over `pgrush ops` results: `pgrush report OPS.json --assert 'STEP<=DURATION'`
//! checks each step's duration at every scale the results asked for (labelled with the
//! scale), exits 3 when one fails and writes one JUnit test case per scale and
//! assertion; `--baseline BASE.json` with `STEP<=FACTOR*baseline` compares scale by
//! scale. `real_ops_results_are_gated_end_to_end` gates what `pgrush ops --json`
//! wrote; the other results are written as it writes them (schema `pgrush-ops/1`,
//! checked) with known durations, so that the expected verdicts are exact.

mod gate_common;
mod ops_common;

use std::path::Path;

use gate_common::{report, verdict_lines};
use ops_common::Sandbox;
use pgrush_testkit as testkit;
use serde_json::{Value, json};

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-ops.v1.schema.json"
));

/// One round of a step: (step, seconds, why it was skipped).
type Round<'a> = (&'a str, f64, Option<&'a str>);

/// An ops result asking for `asked` scales, with the rounds of each scale that ran.
fn ops_results(asked: &[u32], scales: &[(u32, &[Round])], stopped: Option<&str>) -> Value {
    let scales: Vec<Value> = scales
        .iter()
        .map(|(scale, rounds)| {
            let steps: Vec<Value> = rounds
                .iter()
                .map(|(step, seconds, skipped)| {
                    json!({
                        "step": step, "round": 1, "seconds": seconds, "bytes": null,
                        "bytes_per_second": null, "check": null, "skipped": skipped,
                        "details": {"kind": "none"}
                    })
                })
                .collect();
            json!({"scale": scale, "estimated_bytes": 0, "free_bytes": 0, "steps": steps})
        })
        .collect();
    json!({
        "schema": "pgrush-ops/1",
        "pgrush_version": "0.1.0",
        "server_version": "18.0",
        "server_version_num": 180000,
        "target": "throwaway",
        "started_at": "2026-11-23T21:00:00Z",
        "settings": {
            "scales": asked, "steps": ["load", "dump"], "jobs": 1, "dump_format": "custom",
            "repeat": 1, "workload_seconds": 10, "fillfactor": 100, "unlogged_tables": false,
            "partitions": 0, "init_steps": "dtgvp"
        },
        "scales": scales,
        "stopped": stopped,
    })
}

/// Writes `doc` as `dir/name` after checking it against the ops schema.
fn write(dir: &Path, name: &str, doc: &Value) {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap_or_else(|e| panic!("{e}"));
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{e}"));
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
    std::fs::write(dir.join(name), doc.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[test]
fn every_scale_is_gated_and_a_slow_step_exits_3() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let doc = ops_results(
        &[1, 10],
        &[
            (1, &[("load", 2.0, None), ("dump", 1.0, None)]),
            (10, &[("load", 20.0, None), ("dump", 5.0, None)]),
        ],
        None,
    );
    write(dir, "ops.json", &doc);
    let pass = report(
        &["ops.json", "--assert", "load<=30", "--assert=dump<10s"],
        dir,
    );
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    assert_eq!(
        verdict_lines(&pass.stdout),
        [
            "assertion passed: [scale 1] load <= 30 s (measured 2.000 s)",
            "assertion passed: [scale 1] dump < 10 s (measured 1.000 s)",
            "assertion passed: [scale 10] load <= 30 s (measured 20.000 s)",
            "assertion passed: [scale 10] dump < 10 s (measured 5.000 s)",
        ]
    );
    let fail = report(
        &[
            "ops.json",
            "--assert",
            "load<=30",
            "--assert=dump<=2000ms",
            "--junit=ops.xml",
        ],
        dir,
    );
    assert_eq!(fail.code, 3, "{}\n{}", fail.stdout, fail.stderr);
    assert_eq!(
        verdict_lines(&fail.stdout)[3],
        "assertion FAILED: [scale 10] dump <= 2000 ms (measured 5000.000 ms)"
    );
    let xml = std::fs::read_to_string(dir.join("ops.xml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(xml.contains("tests=\"4\" failures=\"1\""), "{xml}");
    assert!(
        xml.contains("name=\"[scale 10] dump &lt;= 2000 ms\""),
        "{xml}"
    );

    for (expr, why) in [
        (
            "tps>=10",
            "unknown step \"tps\" (known: load, dump, restore, reindex, basebackup, crash-recovery, pitr, switchover, failover)",
        ),
        ("load<=5%", "cannot be compared in \"%\""),
        (
            "load<=2*baseline",
            "invalid assertion \"load<=2*baseline\": ",
        ),
    ] {
        let out = report(&["ops.json", "--assert", expr], dir);
        assert_eq!(out.code, 1, "{expr}: {}\n{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(why), "{}", out.stderr);
    }
}

#[test]
fn skipped_steps_and_a_series_stopped_early_fail_with_a_note() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let doc = ops_results(
        &[1, 10],
        &[(
            1,
            &[
                ("load", 2.0, None),
                ("dump", 0.0, Some("pg_dump not found")),
            ],
        )],
        Some("not enough disk space for scale 10"),
    );
    write(dir, "ops.json", &doc);
    let out = report(
        &["ops.json", "--assert", "load<=30", "--assert=dump<=30"],
        dir,
    );
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        verdict_lines(&out.stdout),
        [
            "assertion passed: [scale 1] load <= 30 s (measured 2.000 s)",
            "assertion FAILED: [scale 1] dump <= 30 s (not measured: dump was skipped: pg_dump not found)",
            "assertion FAILED: [scale 10] load <= 30 s (not measured: the series stopped before \
             scale 10: not enough disk space for scale 10)",
            "assertion FAILED: [scale 10] dump <= 30 s (not measured: the series stopped before \
             scale 10: not enough disk space for scale 10)",
        ]
    );
}

#[test]
fn baseline_ops_results_compare_scale_by_scale() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let base = ops_results(&[1], &[(1, &[("load", 2.0, None)])], None);
    let new = ops_results(
        &[1, 10],
        &[(1, &[("load", 2.2, None)]), (10, &[("load", 30.0, None)])],
        None,
    );
    write(dir, "base.json", &base);
    write(dir, "new.json", &new);
    let out = report(
        &[
            "--baseline",
            "base.json",
            "new.json",
            "--assert",
            "load<=1.2*baseline",
        ],
        dir,
    );
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        verdict_lines(&out.stdout),
        [
            "assertion passed: [scale 1] load <= 1.2 * baseline (measured 2.200 s, baseline \
             2.000 s, limit 2.400 s)",
            "assertion FAILED: [scale 10] load <= 1.2 * baseline (measured 30.000 s, no baseline \
             value: no results for scale 10)",
        ]
    );
    let same = report(
        &[
            "--baseline=new.json",
            "new.json",
            "--assert",
            "load<=baseline",
        ],
        dir,
    );
    assert_eq!(same.code, 0, "{}\n{}", same.stdout, same.stderr);
    // A baseline that is not an ops result is refused.
    std::fs::write(dir.join("run.json"), r#"{"format": "pgrush-run"}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let refused = report(
        &[
            "--baseline=run.json",
            "new.json",
            "--assert",
            "load<=baseline",
        ],
        dir,
    );
    assert_eq!(refused.code, 1, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused
            .stderr
            .contains("\"run.json\": not a pgrush ops result"),
        "{}",
        refused.stderr
    );
}

#[test]
fn real_ops_results_are_gated_end_to_end() {
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let json_s = json.to_str().unwrap_or_else(|| panic!("{json:?}"));
    let args = ["--scale", "1", "--steps", "load", "--json", json_s];
    let out = testkit::run(&mut sandbox.command(None, &args));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let dir = sandbox.path();
    let pass = report(
        &[
            "--baseline",
            json_s,
            json_s,
            "--assert",
            "load<=600",
            "--assert=load<=baseline",
        ],
        dir,
    );
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    // The verdicts come first, then the side-by-side table of the baseline and the results.
    assert!(
        pass.stdout.starts_with("assertion passed: "),
        "{}",
        pass.stdout
    );
    assert!(pass.stdout.contains("\n\nA: "), "{}", pass.stdout);
    let lines = verdict_lines(&pass.stdout);
    assert_eq!(lines.len(), 2, "{}", pass.stdout);
    assert!(lines[0].starts_with("assertion passed: [scale 1] load <= 600 s (measured "));
    assert!(lines[1].starts_with("assertion passed: [scale 1] load <= baseline (measured "));
    let fail = report(&[json_s, "--assert", "load<1us"], dir);
    assert_eq!(fail.code, 3, "{}\n{}", fail.stdout, fail.stderr);
    assert!(
        verdict_lines(&fail.stdout)[0].starts_with("assertion FAILED: [scale 1] load < 1 us"),
        "{}",
        fail.stdout
    );
}
