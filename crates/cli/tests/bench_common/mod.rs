//! Shared harness of the benchmark differential tests: one sandbox cluster per
//! test binary, a database initialised by the real pgbench, and helpers that run
//! pgrush and pgbench 18 side by side and compare their masked output.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use pgrush_cluster::Cluster;
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output, mask_numbers};

/// The database initialised with `pgbench -i -s 1`.
pub const DB: &str = "bench";
/// An empty database.
pub const EMPTY_DB: &str = "empty";

/// The cluster shared by this test binary, with [`DB`] and [`EMPTY_DB`] ready.
pub fn cluster() -> &'static Cluster {
    static READY: OnceLock<()> = OnceLock::new();
    let c = pgrush_testkit::shared();
    READY.get_or_init(|| {
        c.create_database(DB).expect("create bench db");
        c.create_database(EMPTY_DB).expect("create empty db");
        let out = testkit::run(
            oracle::require(Which::Pgbench18)
                .command()
                .args(["-i", "-s", "1", "-q", DB])
                .envs(c.env()),
        );
        assert_eq!(out.code, 0, "pgbench -i failed: {}", out.stderr);
    });
    c
}

/// A scratch directory holding script files; removed on drop.
pub struct Scratch {
    /// Its path.
    pub path: PathBuf,
}

impl Scratch {
    /// A new empty directory with `files` written into it.
    pub fn new(files: &[(&str, &str)]) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "pgrush-bench-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("scratch dir");
        for (name, text) in files {
            std::fs::write(path.join(name), text).expect("write script");
        }
        Scratch { path }
    }

    /// Files whose name starts with `prefix`, with their contents, by name.
    pub fn files_with_prefix(&self, prefix: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        if let Ok(rd) = std::fs::read_dir(&self.path) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(prefix) {
                    let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                    out.insert(name, text);
                }
            }
        }
        out
    }

    /// Removes files whose name starts with `prefix`.
    pub fn remove_with_prefix(&self, prefix: &str) {
        for name in self.files_with_prefix(prefix).keys() {
            let _ = std::fs::remove_file(self.path.join(name));
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Which program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prog {
    /// The binary under test.
    Pgrush,
    /// The reference pgbench 18.
    Pgbench,
    /// The reference pgbench 19beta1 (where 18 and 19 differ, pgrush follows 19).
    Pgbench19,
}

/// A command for `prog` in `dir`, connected to the shared cluster's `db`.
pub fn command(prog: Prog, dir: &Path, db: &str) -> Command {
    let c = cluster();
    let mut cmd = match prog {
        Prog::Pgrush => Command::new(env!("CARGO_BIN_EXE_pgrush")),
        Prog::Pgbench => oracle::require(Which::Pgbench18).command(),
        Prog::Pgbench19 => oracle::require(Which::Pgbench19).command(),
    };
    cmd.current_dir(dir).envs(c.env()).env("PGDATABASE", db);
    cmd.env_remove("PGBENCH_RANDOM_SEED");
    cmd
}

/// Runs `prog` with `args` in `dir` against `db`.
pub fn run(prog: Prog, dir: &Path, db: &str, args: &[&str]) -> Output {
    testkit::run(command(prog, dir, db).args(args))
}

/// pgbench's output with its program name replaced by pgrush's.
pub fn rename(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = match l.strip_prefix("pgbench (") {
                Some(rest) => format!("pgrush ({rest}"),
                None => l.to_string(),
            };
            l.replace("pgbench: ", "pgrush: ")
                .replace("(\"pgbench -i\")", "(\"pgrush -i\")")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lines whose count depends on timing: compared as sets.
fn timing_line(l: &str) -> bool {
    l.starts_with("progress: ") || l.ends_with(" receiving")
}

/// Masked lines of a stream, split into exact lines (in order) and timing lines (as a set).
pub fn masked(text: &str) -> (Vec<String>, Vec<String>) {
    let mut exact = Vec::new();
    let mut timing = Vec::new();
    for l in mask_numbers(text).lines() {
        // Right-aligned columns (`-r` lines) change width with the masked numbers.
        let collapsed;
        let l = if l.starts_with(' ') {
            collapsed = l
                .split(' ')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            collapsed.as_str()
        } else {
            l
        };
        if timing_line(l) {
            if !timing.iter().any(|t: &String| t == l) {
                timing.push(l.to_string());
            }
        } else {
            exact.push(l.to_string());
        }
    }
    timing.sort();
    (exact, timing)
}

/// How to compare stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StderrMode {
    /// Same lines in the same order.
    Ordered,
    /// Same lines, any order (several threads print).
    Unordered,
}

/// Runs both programs and asserts equal exit codes, stdout (masked, in order) and stderr.
pub fn compare_in(dir: &Scratch, db: &str, args: &[&str], mode: StderrMode) -> (Output, Output) {
    compare_in_env(dir, db, args, &[], mode)
}

/// [`compare_in`] with extra environment variables for both programs.
pub fn compare_in_env(
    dir: &Scratch,
    db: &str,
    args: &[&str],
    env: &[(&str, &str)],
    mode: StderrMode,
) -> (Output, Output) {
    compare_with(Prog::Pgbench, dir, db, args, env, mode)
}

/// pgrush's banner line (`pgrush (18.6, server …)`) or pgbench's renamed one.
fn is_banner(line: &str) -> bool {
    line.starts_with("pgrush (")
}

/// `text` without its banner line: pgbench 19's reads `pgbench (19beta1, server 18.6)`
/// where pgrush's reads `pgrush (18.6)`.
pub fn without_banner(text: &str) -> String {
    text.lines()
        .filter(|l| !is_banner(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// [`compare_in_env`] against `oracle` (pgbench 18 or 19; with 19 the banner lines
/// are left out of the comparison).
pub fn compare_with(
    oracle: Prog,
    dir: &Scratch,
    db: &str,
    args: &[&str],
    env: &[(&str, &str)],
    mode: StderrMode,
) -> (Output, Output) {
    let both = |prog| {
        let mut cmd = command(prog, &dir.path, db);
        cmd.args(args).envs(env.iter().copied());
        testkit::run(&mut cmd)
    };
    let mut ours = both(Prog::Pgrush);
    let theirs = both(oracle);
    let mut theirs_renamed = Output {
        stdout: rename(&theirs.stdout),
        stderr: rename(&theirs.stderr),
        code: theirs.code,
    };
    if oracle == Prog::Pgbench19 {
        ours.stdout = without_banner(&ours.stdout);
        theirs_renamed.stdout = without_banner(&theirs_renamed.stdout);
    }
    let ctx = format!(
        "args {args:?} env {env:?}\n--- pgrush (exit {}) stdout:\n{}\n--- stderr:\n{}\n--- pgbench (exit {}) stdout:\n{}\n--- stderr:\n{}",
        ours.code, ours.stdout, ours.stderr, theirs.code, theirs.stdout, theirs.stderr
    );
    assert_eq!(ours.code, theirs_renamed.code, "exit codes differ; {ctx}");
    let (o_out, o_out_t) = masked(&ours.stdout);
    let (t_out, t_out_t) = masked(&theirs_renamed.stdout);
    assert_eq!(o_out, t_out, "stdout differs; {ctx}");
    assert_eq!(o_out_t, t_out_t, "stdout timing lines differ; {ctx}");
    let (mut o_err, o_err_t) = masked(&ours.stderr);
    let (mut t_err, t_err_t) = masked(&theirs_renamed.stderr);
    if mode == StderrMode::Unordered {
        o_err.sort();
        t_err.sort();
    }
    assert_eq!(o_err, t_err, "stderr differs; {ctx}");
    // Whether a progress report fell due before the end depends on load (slow
    // connections shorten a -T run), so compare progress lines when both have some.
    if !o_err_t.is_empty() && !t_err_t.is_empty() {
        assert_eq!(o_err_t, t_err_t, "stderr timing lines differ; {ctx}");
    }
    (ours, theirs)
}

/// [`compare_in`] in a fresh scratch directory holding `files`, against [`DB`].
pub fn compare(files: &[(&str, &str)], args: &[&str], mode: StderrMode) -> (Output, Output) {
    let dir = Scratch::new(files);
    compare_in(&dir, DB, args, mode)
}

/// [`compare`] against pgbench 19, for what 18 and 19 print differently (the
/// `--failures-detailed` lines): the banner lines are left out.
pub fn compare19(files: &[(&str, &str)], args: &[&str], mode: StderrMode) -> (Output, Output) {
    let dir = Scratch::new(files);
    compare_with(Prog::Pgbench19, &dir, DB, args, &[], mode)
}

/// The run document at `path`, checked against the schema and read back.
pub fn checked_run_document(path: &Path) -> serde_json::Value {
    const SCHEMA: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/pgrush-run.v1.schema.json"
    ));
    let json = std::fs::read_to_string(path).expect("run document");
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let schema: serde_json::Value = serde_json::from_str(SCHEMA).expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    pgrush_report::document::RunDocument::from_json(&json).expect("document reads back");
    value
}
