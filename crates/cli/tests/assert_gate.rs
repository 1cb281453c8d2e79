//! Benchmarks as CI gates end to end: `--assert` verdicts after real runs on a sandbox
//! cluster (exit status 0, 3, and 2 when the run itself failed), option errors before
//! anything connects, the verdicts in the JSON document and in the `--junit` file, and
//! `pgrush report --baseline` gates over saved runs.

mod gate_common;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use gate_common::{junit_cases, report, verdict_lines};
use pgrush_cluster::Cluster;
use pgrush_report::document::RunDocument;
use pgrush_testkit::{self as testkit, Output};
use serde_json::Value;

const DB: &str = "assert_gate";
const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-run.v1.schema.json"
));

fn cluster() -> &'static Cluster {
    static READY: OnceLock<()> = OnceLock::new();
    let c = testkit::shared();
    READY.get_or_init(|| {
        c.create_database(DB)
            .unwrap_or_else(|e| panic!("create database: {e}"));
        let out = pgrush_in(&["-i", "-s", "1", "-q", DB], Path::new("."), c);
        assert_eq!(out.code, 0, "pgrush -i failed: {}", out.stderr);
    });
    c
}

fn pgrush_in(args: &[&str], dir: &Path, c: &Cluster) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    testkit::run(cmd.args(args).envs(c.env()).current_dir(dir))
}

/// A benchmark run on the test database.
fn bench(args: &[&str], dir: &Path) -> Output {
    let mut all = vec!["-n", "-d", DB];
    all.extend_from_slice(args);
    pgrush_in(&all, dir, cluster())
}

#[test]
fn passing_gate_exits_0_with_verdicts_in_every_output() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = bench(
        &[
            "-S",
            "-t",
            "50",
            "-R",
            "5000",
            "-L",
            "60000",
            "--assert",
            "tps>=1",
            "--assert=p99<60s",
            "--assert",
            "failed==0",
            "--assert",
            "select-only:p99.9<=60000ms",
            "--assert",
            "1:latency-max>0us",
            "--assert",
            "lag-max<60 s",
            "--assert",
            "late<=100%",
            "--json=run.json",
            "--junit=run.xml",
            "--no-warnings",
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let lines = verdict_lines(&out.stdout);
    assert_eq!(lines.len(), 7, "{}", out.stdout);
    assert!(
        lines.iter().all(|l| l.starts_with("assertion passed: ")),
        "{lines:?}"
    );
    assert!(
        lines[0].starts_with("assertion passed: tps >= 1 (measured "),
        "{}",
        lines[0]
    );
    assert!(lines[1].ends_with(" s)"), "{}", lines[1]);
    assert_eq!(lines[2], "assertion passed: failed == 0 (measured 0)");
    // The verdicts come last, after the report.
    assert!(out.stdout.trim_end().ends_with(lines[6]), "{}", out.stdout);

    let json = std::fs::read_to_string(dir.path().join("run.json")).unwrap_or_default();
    let doc = RunDocument::from_json(&json).unwrap_or_else(|e| panic!("{e}"));
    let verdicts = doc.assertions.unwrap_or_default();
    assert_eq!(verdicts.len(), 7);
    assert!(
        verdicts.iter().all(|v| v.passed && v.measured.is_some()),
        "{verdicts:?}"
    );
    assert_eq!(verdicts[3].expression, "select-only:p99.9<=60000ms");
    let schema: Value = serde_json::from_str(SCHEMA).unwrap_or(Value::Null);
    let instance: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{e}"));
    assert!(validator.is_valid(&instance));

    let (cases, system_out) = junit_cases(&dir.path().join("run.xml"));
    assert_eq!(cases.len(), 7);
    assert!(cases.iter().all(|(_, failed)| !failed), "{cases:?}");
    assert_eq!(cases[1].0, "p99 < 60 s");
    assert!(
        system_out.starts_with("transaction type: <builtin: select only>"),
        "{system_out}"
    );
    assert!(
        system_out.contains("assertion passed: p99 < 60 s"),
        "{system_out}"
    );
}

#[test]
fn failing_gate_exits_3() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = bench(
        &[
            "-S",
            "-t",
            "50",
            "--assert",
            "tps>=1e12",
            "--assert",
            "failed==0",
            "--junit",
            "gate.xml",
        ],
        dir.path(),
    );
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    let lines = verdict_lines(&out.stdout);
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(
        lines[0].starts_with("assertion FAILED: tps >= 1000000000000 (measured "),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "assertion passed: failed == 0 (measured 0)");
    let (cases, _) = junit_cases(&dir.path().join("gate.xml"));
    assert_eq!(
        cases,
        vec![
            ("tps >= 1000000000000".to_string(), true),
            ("failed == 0".to_string(), false)
        ]
    );
}

#[test]
fn a_failed_run_keeps_exit_status_2() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("bad.sql"), "SELECT 1/0;\n").unwrap_or_else(|e| panic!("{e}"));
    let out = bench(
        &["-f", "bad.sql", "-t", "5", "--assert", "tps>=1e12"],
        dir.path(),
    );
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("division by zero"), "{}", out.stderr);
    let lines = verdict_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    assert!(
        lines[0].starts_with("assertion FAILED: tps >= "),
        "{}",
        lines[0]
    );
}

#[test]
fn bad_assertions_are_option_errors_before_connecting() {
    let port = testkit::closed_port().to_string();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--assert", "p99<5min"],
            "invalid assertion \"p99<5min\": unknown unit \"min\"",
        ),
        (
            &["--assert", "tsp>1"],
            "invalid assertion \"tsp>1\": unknown metric \"tsp\"",
        ),
        (
            &["--assert", "lag<5"],
            "metric lag-avg needs a rate limit (-R)",
        ),
        (
            &["-S", "--assert", "tpcb-like:tps>1"],
            "no script \"tpcb-like\" in this run",
        ),
        (
            &["--assert", "tps>=0.9*baseline"],
            "\"baseline\" needs a saved run",
        ),
    ];
    for (args, message) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
        testkit::clear_pg_env(&mut cmd);
        let out = testkit::run(cmd.args(["-h", "127.0.0.1", "-p", &port]).args(args));
        assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.starts_with("pgrush: error: "), "{}", out.stderr);
        assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .ends_with("pgrush: hint: Try \"pgrush --help\" for more information.\n"),
            "{}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{}", out.stdout);
    }
}

#[test]
fn baseline_gates_on_saved_runs() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = bench(&["-S", "-t", "50", "--json=base.json"], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::copy(dir.path().join("base.json"), dir.path().join("new.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    let pass = report(
        &[
            "--baseline",
            "base.json",
            "new.json",
            "--assert",
            "tps>=0.95*baseline",
            "--assert=p99<=1.1*baseline",
            "--assert=select-only:failed<=baseline",
            "--junit=gate.xml",
        ],
        dir.path(),
    );
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    // The verdicts come before the (wide) side-by-side table.
    assert!(
        pass.stdout.starts_with("assertion passed: "),
        "{}",
        pass.stdout
    );
    let lines = verdict_lines(&pass.stdout);
    assert_eq!(lines.len(), 3, "{}", pass.stdout);
    assert!(lines[0].starts_with("assertion passed: tps >= 0.95 * baseline (measured "));
    assert!(
        lines[1].contains(" ms, baseline ") && lines[1].contains(" ms, limit "),
        "{}",
        lines[1]
    );
    let (cases, system_out) = junit_cases(&dir.path().join("gate.xml"));
    assert_eq!(cases.len(), 3);
    assert!(cases.iter().all(|(_, failed)| !failed));
    assert!(
        system_out.contains("base.json") && system_out.contains("new.json"),
        "{system_out}"
    );

    let fail = report(
        &[
            "--baseline=base.json",
            "new.json",
            "--assert",
            "tps>=1.5*baseline",
        ],
        dir.path(),
    );
    assert_eq!(fail.code, 3, "{}\n{}", fail.stdout, fail.stderr);
    assert!(
        fail.stdout
            .contains("assertion FAILED: tps >= 1.5 * baseline (measured ")
    );

    let absolute = report(&["new.json", "--assert", "tps>0"], dir.path());
    assert_eq!(absolute.code, 0, "{}", absolute.stderr);
    let unknown = report(&["new.json", "--assert", "tpcb-like:tps>0"], dir.path());
    assert_eq!(unknown.code, 1);
    assert!(
        unknown.stderr.contains("no script \"tpcb-like\""),
        "{}",
        unknown.stderr
    );
    let malformed = report(&["new.json", "--assert", "tps>"], dir.path());
    assert_eq!(malformed.code, 1);
    assert!(
        malformed
            .stderr
            .contains("invalid assertion \"tps>\": no value"),
        "{}",
        malformed.stderr
    );
    let lone_baseline = report(&["--baseline=base.json", "new.json"], dir.path());
    assert_eq!(lone_baseline.code, 1);
}
