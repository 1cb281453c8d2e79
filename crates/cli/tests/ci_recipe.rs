//! `docs/ci.md`'s GitHub Actions workflow, replayed locally: the shell commands of the
//! run steps between the `ci-recipe:begin`/`ci-recipe:end` markers run with bash against a
//! throwaway cluster (PGHOST/PGPORT/PGUSER from the cluster, the workflow's knobs set
//! for a short run), with `pgrush` on PATH. A passing gate exits 0 and leaves the
//! artifacts the workflow uploads; an impossible threshold makes the same step exit 3.

use std::path::{Path, PathBuf};
use std::process::Command;

use pgrush_testkit::{self as testkit, Output};

const CI_DOC: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/ci.md"));
const DB: &str = "ci_recipe";

/// One `run:` step of the workflow.
#[derive(Debug, Clone)]
struct Step {
    name: String,
    script: String,
}

/// The YAML block that follows `<!-- ci-recipe:github -->`.
fn github_workflow() -> &'static str {
    let after = CI_DOC
        .split_once("<!-- ci-recipe:github -->")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("docs/ci.md has no ci-recipe:github marker"));
    let body = after
        .split_once("```yaml\n")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no yaml block after the marker"));
    body.split_once("\n```")
        .map(|(yaml, _)| yaml)
        .unwrap_or_else(|| panic!("unterminated yaml block"))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The run steps between the markers: each `- name:` and its `run: |` block, dedented.
fn marked_steps(workflow: &str) -> Vec<Step> {
    let marked = workflow
        .split_once("# ci-recipe:begin")
        .and_then(|(_, rest)| rest.split_once("# ci-recipe:end"))
        .map(|(steps, _)| steps)
        .unwrap_or_else(|| panic!("no ci-recipe:begin/end markers in the workflow"));
    let lines: Vec<&str> = marked.lines().collect();
    let mut steps = Vec::new();
    let mut name = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(n) = line.strip_prefix("- name:") {
            name = n.trim().to_string();
        } else if line == "run: |" {
            let key_indent = indent(lines[i]);
            let block: Vec<&str> = lines[i + 1..]
                .iter()
                .take_while(|l| l.trim().is_empty() || indent(l) > key_indent)
                .copied()
                .collect();
            let cut = block
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| indent(l))
                .min()
                .unwrap_or(0);
            let script: String = block
                .iter()
                .map(|l| format!("{}\n", l.get(cut..).unwrap_or("")))
                .collect();
            i += block.len();
            steps.push(Step {
                name: name.clone(),
                script,
            });
        }
        i += 1;
    }
    steps
}

/// Runs the recipe's steps in a work directory against the throwaway cluster.
struct Recipe {
    work: tempfile::TempDir,
    bin: tempfile::TempDir,
    steps: Vec<Step>,
}

impl Recipe {
    fn new() -> Recipe {
        let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pgrush"), bin.path().join("pgrush"))
            .unwrap_or_else(|e| panic!("{e}"));
        Recipe {
            work,
            bin,
            steps: marked_steps(github_workflow()),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.work.path().join(rel)
    }

    /// Runs the step named `name` with the workflow's knobs set for a short local run
    /// and `min_tps` as the tps floor.
    fn run(&self, name: &str, min_tps: &str) -> Output {
        let step = self
            .steps
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no step {name:?} in docs/ci.md: {:?}", self.steps));
        let cluster = testkit::shared();
        let path = format!(
            "{}:{}",
            self.bin.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("bash");
        testkit::clear_pg_env(&mut cmd);
        testkit::run(
            cmd.args([
                "--noprofile",
                "--norc",
                "-eo",
                "pipefail",
                "-c",
                &step.script,
            ])
            .envs(cluster.env())
            .env("PGDATABASE", DB)
            .env("PATH", path)
            .env("PGRUSH_SCALE", "1")
            .env("PGRUSH_SECONDS", "1")
            .env("PGRUSH_MIN_TPS", min_tps)
            .env("PGRUSH_MAX_P99_MS", "60000")
            .current_dir(self.work.path()),
        )
    }
}

fn exists(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

#[test]
fn the_workflow_names_the_knobs_the_test_sets() {
    let workflow = github_workflow();
    for knob in [
        "PGRUSH_SCALE:",
        "PGRUSH_SECONDS:",
        "PGRUSH_MIN_TPS:",
        "PGRUSH_MAX_P99_MS:",
    ] {
        assert!(workflow.contains(knob), "{knob} missing from the workflow");
    }
    let names: Vec<String> = marked_steps(workflow).into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "Initialize the tables",
            "Benchmark with assertions",
            "Compare with the baseline"
        ]
    );
    // The GitLab job runs the same pgrush command lines.
    let gitlab = CI_DOC
        .split_once("# .gitlab-ci.yml")
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    for step in marked_steps(workflow) {
        for line in step.script.lines().map(str::trim) {
            let line = line.trim_end_matches(" \\");
            if line.starts_with("pgrush") || line.starts_with("--assert") {
                assert!(gitlab.contains(line), "GitLab job lacks {line:?}");
            }
        }
    }
}

#[test]
fn the_github_steps_gate_a_local_run() {
    testkit::shared()
        .create_database(DB)
        .unwrap_or_else(|e| panic!("create database: {e}"));
    let recipe = Recipe::new();

    let init = recipe.run("Initialize the tables", "1");
    assert_eq!(init.code, 0, "{}\n{}", init.stdout, init.stderr);

    let pass = recipe.run("Benchmark with assertions", "1");
    assert_eq!(pass.code, 0, "{}\n{}", pass.stdout, pass.stderr);
    assert!(
        pass.stdout
            .contains("assertion passed: tps >= 1 (measured "),
        "{}",
        pass.stdout
    );
    for artifact in ["run.json", "report.html", "junit.xml", "report.txt"] {
        let path = recipe.path(&format!("pgrush-results/{artifact}"));
        assert!(exists(&path), "{artifact} missing");
    }

    // No committed baseline: the comparison step does nothing.
    let skipped = recipe.run("Compare with the baseline", "1");
    assert_eq!(skipped.code, 0, "{}", skipped.stderr);
    assert!(!exists(&recipe.path("pgrush-results/regression.xml")));
    // With this run as the baseline, the regression gate passes and writes its file.
    std::fs::create_dir_all(recipe.path("bench")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(
        recipe.path("pgrush-results/run.json"),
        recipe.path("bench/baseline.json"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let compared = recipe.run("Compare with the baseline", "1");
    assert_eq!(compared.code, 0, "{}\n{}", compared.stdout, compared.stderr);
    assert!(
        compared
            .stdout
            .contains("assertion passed: p99 <= 1.2 * baseline")
    );
    assert!(exists(&recipe.path("pgrush-results/regression.xml")));

    // A deliberately failing gate: the step's status is pgrush's 3, not tee's 0.
    let fail = recipe.run("Benchmark with assertions", "1e12");
    assert_eq!(fail.code, 3, "{}\n{}", fail.stdout, fail.stderr);
    assert!(
        fail.stdout
            .contains("assertion FAILED: tps >= 1000000000000")
    );
    let junit = std::fs::read_to_string(recipe.path("pgrush-results/junit.xml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        junit.contains("failures=\"1\"") && junit.contains("<failure "),
        "{junit}"
    );
}
