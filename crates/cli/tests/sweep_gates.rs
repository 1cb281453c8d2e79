//! Gates over saved sweeps: `pgrush report DIR --assert EXPR` checks every cell (on its
//! median-tps run), labels each verdict with the cell, exits 3 when one fails and
//! writes one JUnit test case per cell and assertion; `--baseline BASE_DIR` compares
//! each cell with the baseline's cell of the same axis values, and a cell the baseline
//! lacks fails with a note.
//!
//! `a_real_sweep_is_gated_end_to_end` gates what `pgrush sweep` wrote; the other sweep
//! directories are built from two real run documents (`-c 1` and `-c 2` on
//! the shared sandbox cluster) and a plan written by the sweep's own types, which is
//! what `pgrush sweep` leaves behind; their tps are then set to known values so that
//! the expected verdicts are exact.

mod gate_common;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use gate_common::{junit_cases, report, verdict_lines};
use pgrush_lab::sweep::{Axis, Plan, PlanKey, RUNS_DIR};
use pgrush_testkit as testkit;
use serde_json::Value;

const DB: &str = "sweep_gates";

/// Two real run documents: `-c 1` and `-c 2`, 30 transactions per client.
fn run_documents() -> &'static [Value; 2] {
    static DOCS: OnceLock<[Value; 2]> = OnceLock::new();
    DOCS.get_or_init(|| {
        let c = testkit::shared();
        c.create_database(DB)
            .unwrap_or_else(|e| panic!("create database: {e}"));
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let pgrush = |args: &[&str]| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
            testkit::clear_pg_env(&mut cmd);
            let out = testkit::run(cmd.args(args).envs(c.env()).current_dir(dir.path()));
            assert_eq!(out.code, 0, "pgrush {args:?}: {}", out.stderr);
        };
        pgrush(&["-i", "-s", "1", "-q", DB]);
        let read = |clients: &str| {
            let file = format!("c{clients}.json");
            pgrush(&["-n", "-S", "-c", clients, "-t", "30", "--json", &file, DB]);
            let text = std::fs::read_to_string(dir.path().join(&file))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
        };
        [read("1"), read("2")]
    })
}

/// The run document of `clients` (1 or 2) with its tps set to `tps`.
fn with_tps(clients: usize, tps: f64) -> Value {
    let mut doc = run_documents()[clients - 1].clone();
    doc["results"]["tps"] = Value::from(tps);
    doc
}

/// Writes a saved sweep of one repeat over `axis` (`clients=1,2`) into `dir`: the plan,
/// and each cell's run document where `docs` has one.
fn write_sweep(dir: &Path, axis: &str, docs: &[Option<Value>]) {
    let key = PlanKey {
        axes: vec![Axis::parse(axis).unwrap_or_else(|e| panic!("{axis}: {e}"))],
        repeats: 1,
        warmup_s: 0,
        init_args: Vec::new(),
        run_args: Vec::new(),
        target: "throwaway cluster".to_string(),
    };
    let plan = Plan::new(key, 1).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join(RUNS_DIR)).unwrap_or_else(|e| panic!("{e}"));
    plan.save(dir).unwrap_or_else(|e| panic!("{e}"));
    for step in &plan.steps {
        if let Some(Some(doc)) = docs.get(step.cell) {
            let path = dir.join(RUNS_DIR).join(step.document_name());
            std::fs::write(&path, doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn every_cell_gets_a_labelled_verdict_and_a_failing_cell_exits_3() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    write_sweep(
        &dir.join("new"),
        "clients=1,2",
        &[Some(with_tps(1, 1000.0)), Some(with_tps(2, 50.0))],
    );

    let pass = report(
        &[
            "new",
            "--assert",
            "tps>=10",
            "--assert=failed==0",
            "--junit=pass.xml",
        ],
        dir,
    );
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    assert!(pass.stdout.contains("clients"), "{}", pass.stdout);
    // The verdicts come before the sweep's table.
    assert!(
        pass.stdout.starts_with("assertion passed: "),
        "{}",
        pass.stdout
    );
    assert_eq!(
        verdict_lines(&pass.stdout),
        [
            "assertion passed: [clients=1] tps >= 10 (measured 1000)",
            "assertion passed: [clients=1] failed == 0 (measured 0)",
            "assertion passed: [clients=2] tps >= 10 (measured 50)",
            "assertion passed: [clients=2] failed == 0 (measured 0)",
        ]
    );
    let cases = junit_cases(&dir.join("pass.xml")).0;
    assert_eq!(cases.len(), 4, "{cases:?}");
    assert!(cases.iter().all(|(_, failed)| !failed), "{cases:?}");

    let fail = report(
        &[
            "new", "--assert", "tps>=100", "--assert", "p99<1h", "--junit", "fail.xml",
        ],
        dir,
    );
    // `1h` is no unit: an option error before anything is read.
    assert_eq!(fail.code, 1, "{}", fail.stderr);
    assert!(
        fail.stderr.contains("invalid assertion \"p99<1h\""),
        "{}",
        fail.stderr
    );
    let fail = report(
        &[
            "new", "--assert", "tps>=100", "--assert", "p99<100s", "--junit", "fail.xml",
        ],
        dir,
    );
    assert_eq!(fail.code, 3, "{}\n{}", fail.stdout, fail.stderr);
    let lines = verdict_lines(&fail.stdout);
    assert_eq!(lines.len(), 4, "{}", fail.stdout);
    assert!(lines[0].starts_with("assertion passed: [clients=1] tps >= 100"));
    assert!(lines[1].starts_with("assertion passed: [clients=1] p99 < 100 s"));
    assert_eq!(
        lines[2],
        "assertion FAILED: [clients=2] tps >= 100 (measured 50)"
    );
    assert!(lines[3].starts_with("assertion passed: [clients=2] p99 < 100 s"));
    let cases = junit_cases(&dir.join("fail.xml")).0;
    let failed: Vec<&str> = cases
        .iter()
        .filter(|(_, f)| *f)
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(cases.len(), 4, "{cases:?}");
    assert_eq!(failed, ["[clients=2] tps >= 100"]);

    // Without a gate option the directory is printed as a sweep report, as before.
    let plain = report(&["new"], dir);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(verdict_lines(&plain.stdout).is_empty(), "{}", plain.stdout);
    assert!(plain.stdout.contains("tps"), "{}", plain.stdout);
}

#[test]
fn a_cell_without_a_finished_run_fails_and_bad_gates_are_option_errors() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    write_sweep(
        &dir.join("half"),
        "clients=1,2",
        &[Some(with_tps(1, 500.0))],
    );
    let out = report(&["half", "--assert", "tps>0"], dir);
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        verdict_lines(&out.stdout),
        [
            "assertion passed: [clients=1] tps > 0 (measured 500)",
            "assertion FAILED: [clients=2] tps > 0 (not measured: no finished run in this cell)",
        ]
    );
    for refused in [
        &["half", "--assert", "tps>"][..],
        &["half", "--assert", "tps>=0.9*baseline"],
        &["half", "--assert", "lag<5ms"],
        &["--baseline", "half/sweep.json", "half", "--assert", "tps>0"],
    ] {
        let out = report(refused, dir);
        assert_eq!(out.code, 1, "{refused:?}: {}\n{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("pgrush: error: "), "{}", out.stderr);
    }
    let lag = report(&["half", "--assert", "lag<5ms"], dir);
    assert!(
        lag.stderr
            .contains("[clients=1] invalid assertion \"lag<5ms\""),
        "{}",
        lag.stderr
    );
}

#[test]
fn baseline_sweeps_compare_the_cells_of_equal_axis_values() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let base = [Some(with_tps(1, 1000.0)), Some(with_tps(2, 100.0))];
    write_sweep(&dir.join("base"), "clients=1,2", &base);
    write_sweep(
        &dir.join("same"),
        "clients=1,2",
        &[Some(with_tps(1, 990.0)), Some(with_tps(2, 100.0))],
    );
    write_sweep(
        &dir.join("slower"),
        "clients=1,2",
        &[Some(with_tps(1, 990.0)), Some(with_tps(2, 50.0))],
    );

    let gates = [
        "--assert",
        "tps>=0.95*baseline",
        "--assert=p99<=1.1*baseline",
    ];
    let mut args = vec!["--baseline", "base", "same"];
    args.extend(gates);
    let pass = report(&args, dir);
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    let lines = verdict_lines(&pass.stdout);
    assert_eq!(lines.len(), 4, "{}", pass.stdout);
    assert_eq!(
        lines[0],
        "assertion passed: [clients=1] tps >= 0.95 * baseline \
         (measured 990, baseline 1000, limit 950)"
    );
    assert!(
        lines[3].starts_with("assertion passed: [clients=2] p99 <= 1.1 * baseline (measured "),
        "{}",
        lines[3]
    );

    let mut args = vec!["--baseline=base", "slower", "--junit=regression.xml"];
    args.extend(gates);
    let fail = report(&args, dir);
    assert_eq!(fail.code, 3, "{}\n{}", fail.stdout, fail.stderr);
    assert_eq!(
        verdict_lines(&fail.stdout)[2],
        "assertion FAILED: [clients=2] tps >= 0.95 * baseline \
         (measured 50, baseline 100, limit 95)"
    );
    let failed: Vec<String> = junit_cases(&dir.join("regression.xml"))
        .0
        .into_iter()
        .filter(|(_, f)| *f)
        .map(|(n, _)| n)
        .collect();
    assert_eq!(failed, ["[clients=2] tps >= 0.95 * baseline"]);
}

#[test]
fn a_cell_missing_in_the_baseline_fails_with_a_note() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    write_sweep(
        &dir.join("base"),
        "clients=1,4",
        &[Some(with_tps(1, 1000.0)), Some(with_tps(2, 100.0))],
    );
    write_sweep(
        &dir.join("new"),
        "clients=1,2",
        &[Some(with_tps(1, 1000.0)), Some(with_tps(2, 100.0))],
    );
    let out = report(
        &[
            "--baseline",
            "base",
            "new",
            "--assert",
            "tps>=0.95*baseline",
            "--assert",
            "tps>0",
        ],
        dir,
    );
    assert_eq!(out.code, 3, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        verdict_lines(&out.stdout),
        [
            "assertion passed: [clients=1] tps >= 0.95 * baseline \
             (measured 1000, baseline 1000, limit 950)",
            "assertion passed: [clients=1] tps > 0 (measured 1000)",
            "assertion FAILED: [clients=2] tps >= 0.95 * baseline \
             (measured 100, no baseline value: the baseline sweep has no cell clients=2)",
            "assertion passed: [clients=2] tps > 0 (measured 100)",
        ]
    );
}

#[test]
fn a_real_sweep_is_gated_end_to_end() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    let args = [
        "sweep",
        "--vary",
        "clients=1,2",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--seed",
        "5",
        "--out",
        "real",
        "-s",
        "1",
        "-t",
        "30",
    ];
    let out = testkit::run(cmd.args(args).current_dir(dir));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);

    let pass = report(
        &[
            "--baseline",
            "real",
            "real",
            "--assert",
            "tps>=baseline",
            "--assert",
            "failed==0",
        ],
        dir,
    );
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    let lines = verdict_lines(&pass.stdout);
    assert_eq!(lines.len(), 4, "{}", pass.stdout);
    assert!(lines[0].starts_with("assertion passed: [clients=1] tps >= baseline (measured "));
    assert!(lines[2].starts_with("assertion passed: [clients=2] tps >= baseline (measured "));

    let fail = report(&["real", "--assert", "tps>=1e12"], dir);
    assert_eq!(fail.code, 3, "{}\n{}", fail.stdout, fail.stderr);
    let lines = verdict_lines(&fail.stdout);
    assert_eq!(lines.len(), 2, "{}", fail.stdout);
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("assertion FAILED: [clients="))
    );
}
