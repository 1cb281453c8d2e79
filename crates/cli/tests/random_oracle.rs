//! A fixed-seed sample of the differential fuzzer (`fuzz/differential/oracle_diff.py`):
//! random expressions and random scripts of valid and malformed lines, each run by
//! pgbench 18 and pgrush; exit status, stderr and the stable report lines must agree.
//! Longer runs with other seeds are described in fuzz/README.md.

use pgrush_testkit as testkit;
use pgrush_testkit::oracle::{self, Which};
use std::path::Path;
use std::process::Command;

fn differential(mode: &str, seed: &str, count: &str, min_completed: usize) {
    let pgbench = oracle::require(Which::Pgbench18);
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/differential/oracle_diff.py");
    let mut cmd = Command::new("python3");
    testkit::clear_pg_env(&mut cmd);
    cmd.arg(&script)
        .args([mode, "--seed", seed, "--count", count])
        .env("PGBENCH18", pgbench.path())
        .env("PGRUSH", env!("CARGO_BIN_EXE_pgrush"));
    // The oracle's library path, as its own command line would get it.
    for (name, value) in pgbench.command().get_envs() {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        };
    }
    cmd.envs(pgrush_testkit::shared().env());
    let out = testkit::run(&mut cmd);
    assert_eq!(
        out.code, 0,
        "{mode} seed {seed}:\n{}\n{}",
        out.stdout, out.stderr
    );
    let summary = format!("{count} cases, seed {seed}, 0 mismatches, ");
    let completed: usize = out
        .stdout
        .lines()
        .find_map(|l| l.split_once(&summary))
        .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no summary in:\n{}", out.stdout));
    // The sample must reach the server: a good part of the cases run (exit 0 or 2).
    assert!(
        completed >= min_completed,
        "only {completed} cases ran against the server:\n{}",
        out.stdout
    );
}

#[test]
fn random_expressions_match_pgbench18() {
    differential("exprs", "101", "120", 40);
}

#[test]
fn random_scripts_match_pgbench18() {
    differential("scripts", "102", "120", 10);
}
