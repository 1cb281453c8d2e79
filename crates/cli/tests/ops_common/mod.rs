//! Shared by the `pgrush ops` tests: running the command in a private sandbox
//! directory (so that leftovers can be seen), reading and validating its JSON.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pgrush_cluster::{Cluster, PgInstall};
use serde_json::Value;

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-ops.v1.schema.json"
));

/// A private directory for throwaway clusters (`PGRUSH_SANDBOX_DIR`) and the output.
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    /// A fresh sandbox in `/dev/shm` when there is one (as the clusters prefer).
    pub fn new() -> Sandbox {
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm)
        } else {
            tempfile::tempdir()
        }
        .expect("sandbox dir");
        // The server account (as root: postgres) must reach the clusters inside.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod sandbox");
        Sandbox { dir }
    }

    /// The sandbox directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where `--json` goes.
    pub fn json_path(&self) -> PathBuf {
        self.dir.path().join("ops.json")
    }

    /// `pgrush ops ARGS` with the PostgreSQL binaries of `bin_dir` (if given), clusters
    /// in this sandbox and none of the caller's `PG*` variables.
    pub fn command(&self, bin_dir: Option<&Path>, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
        cmd.arg("ops").args(args);
        for (name, _) in std::env::vars() {
            if name.starts_with("PG") {
                cmd.env_remove(name);
            }
        }
        cmd.env("PGRUSH_SANDBOX_DIR", self.path());
        if let Some(dir) = bin_dir {
            cmd.env("PGRUSH_PG_BIN", dir);
        }
        cmd
    }

    /// Throwaway clusters still in the sandbox.
    pub fn leftover_clusters(&self) -> Vec<String> {
        std::fs::read_dir(self.path())
            .expect("read sandbox")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("pgrush-sandbox-"))
            .collect()
    }

    /// The `--json` document, checked against the schema.
    pub fn document(&self) -> Value {
        let text = std::fs::read_to_string(self.json_path()).expect("ops.json written");
        let doc: Value = serde_json::from_str(&text).expect("ops.json is JSON");
        let errors = schema_errors(&doc);
        assert!(errors.is_empty(), "schema errors: {errors:#?}\n{text}");
        doc
    }
}

/// Where `doc` breaks `schema/pgrush-ops.v1.schema.json`.
pub fn schema_errors(doc: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// The results of one scale.
pub fn steps_of(doc: &Value, scale: u64) -> Vec<Value> {
    doc["scales"]
        .as_array()
        .expect("scales")
        .iter()
        .find(|s| s["scale"] == scale)
        .unwrap_or_else(|| panic!("no scale {scale} in {doc}"))["steps"]
        .as_array()
        .expect("steps")
        .clone()
}

/// The result of `step` in `steps`.
pub fn step<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no {name} in {steps:?}"))
}

/// Each process as `(pid, parent pid, command name)`, from `/proc`.
pub fn processes() -> Vec<(u32, u32, String)> {
    std::fs::read_dir("/proc")
        .expect("read /proc")
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let comm = head.split_once('(')?.1.to_string();
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            (state != "Z").then_some((pid, ppid, comm))
        })
        .collect()
}

/// The running child of `parent` named `program`, if there is one.
pub fn child_named(parent: u32, program: &str) -> Option<u32> {
    processes()
        .into_iter()
        .find(|(_, ppid, comm)| *ppid == parent && comm == program)
        .map(|(pid, _, _)| pid)
}

/// Whether process `pid` still runs (zombies count as gone).
pub fn is_running(pid: u32) -> bool {
    processes().iter().any(|(p, _, _)| *p == pid)
}

/// Running processes whose command line mentions `path` (a cluster's server, a
/// program writing there), as `pid: command line`.
pub fn processes_using(path: &Path) -> Vec<String> {
    let needle = path.to_string_lossy().into_owned();
    processes()
        .into_iter()
        .filter_map(|(pid, _, _)| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            text.contains(&needle).then(|| format!("{pid}: {text}"))
        })
        .collect()
}

/// `stderr` without the progress lines (the disk estimate, and `pgrush ops: scale N:
/// STEP`, one as each step starts when standard error is not a terminal): the error
/// messages.
pub fn errors_of(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| {
            !line.starts_with("pgrush ops: scale ") && !line.starts_with("pgrush ops: disk space: ")
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Entries of `dir` whose names start with `prefix`.
pub fn entries_starting(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(prefix))
        .collect()
}

/// Spawns `cmd` (a `pgrush ops` run) with its output captured and waits until `json`
/// holds the result of `step` (at most 60 s).
pub fn spawn_until_step(cmd: &mut Command, json: &Path, step: &str) -> std::process::Child {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn pgrush ops");
    let started = std::time::Instant::now();
    let finished = format!("\"kind\": \"{step}\"");
    while !std::fs::read_to_string(json).is_ok_and(|t| t.contains(&finished)) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no {step} result"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child
}

/// A kept PostgreSQL `major` cluster in the sandbox, with a user table, settings of its
/// own and archiving off (pitr must switch it on, and back).
pub fn existing_cluster_of(sandbox: &Sandbox, major: u32) -> Cluster {
    let install = PgInstall::for_major(major).expect("PostgreSQL binaries");
    let cluster = Cluster::builder()
        .install(install)
        .directory(sandbox.path().join("existing"))
        .hba(["local replication all trust"])
        .setting("max_wal_size", "321MB")
        .setting("archive_mode", "off")
        .start()
        .expect("existing cluster");
    cluster
        .psql("CREATE TABLE my_table AS SELECT g AS id FROM generate_series(1, 1000) g")
        .expect("user table");
    cluster
}

/// The PID in `postmaster.pid`, while there is one.
pub fn postmaster_pid(data_dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(data_dir.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// Stops the server pgrush left running (no longer the test's child) and waits until
/// its PID file is gone.
pub fn stop_left_server(data_dir: &Path) {
    let Some(pid) = postmaster_pid(data_dir) else {
        return;
    };
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(i32::try_from(pid).unwrap_or(0), libc::SIGINT) };
    let started = Instant::now();
    while data_dir.join("postmaster.pid").exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
}
