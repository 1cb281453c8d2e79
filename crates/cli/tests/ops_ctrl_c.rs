//! Ctrl-C while `pgrush ops` runs one of the PostgreSQL programs (`pg_dump`,
//! `pg_restore`, `pg_basebackup`): the program is killed, the finished steps' results
//! are written, and nothing is left behind (no cluster, no scratch database, no
//! process, no dump or backup directory).

mod ops_common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ops_common::{
    Sandbox, child_named, entries_starting, errors_of, is_running, processes_using, step, steps_of,
};
use serde_json::Value;

/// What an interrupted run left.
struct Interrupted {
    /// pgrush's exit status.
    code: Option<i32>,
    /// pgrush's standard error.
    stderr: String,
    /// The program's process id, seen while it ran.
    program_pid: u32,
}

/// Starts `cmd` (a `pgrush ops` run), waits until `json` holds the result of
/// `after_step` and pgrush runs `program` (not the `--version` checks before the
/// steps), sends `SIGINT` to pgrush alone (not its process group: pgrush itself must
/// stop the program) and waits for it to exit.
fn interrupt_at(mut cmd: Command, json: &Path, after_step: &str, program: &str) -> Interrupted {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pgrush ops");
    let started = Instant::now();
    let finished = format!("\"kind\": \"{after_step}\"");
    let program_pid = loop {
        let after = std::fs::read_to_string(json).is_ok_and(|t| t.contains(&finished));
        if let Some(pid) = child_named(child.id(), program).filter(|_| after) {
            break pid;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let out = child.wait_with_output().expect("output");
            panic!(
                "pgrush ended ({status}) before running {program}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{program} never ran"
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = child.wait_with_output().expect("wait");
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{program} was not stopped"
    );
    Interrupted {
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        program_pid,
    }
}

/// The checks every interrupted run must pass: exit status 1, the one-line message,
/// the program gone, the document stopped with `finished` steps at `scale`, no cluster
/// or process left in the sandbox.
fn assert_stopped_cleanly(sandbox: &Sandbox, run: &Interrupted, scale: u64, finished: &[&str]) {
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(errors_of(&run.stderr), "pgrush: error: ops: interrupted\n");
    assert!(!is_running(run.program_pid), "the program was not killed");
    let doc = sandbox.document();
    assert_eq!(doc["stopped"], "interrupted");
    let steps = steps_of(&doc, scale);
    let names: Vec<&str> = steps.iter().filter_map(|s| s["step"].as_str()).collect();
    assert_eq!(names, finished);
    // Accounts, tellers and branches.
    assert_eq!(
        step(&steps, "load")["details"]["rows"],
        Value::from(100_011 * scale)
    );
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
    assert_eq!(processes_using(sandbox.path()), Vec::<String>::new());
}

#[test]
fn ctrl_c_during_the_dump_kills_pg_dump_and_removes_the_cluster() {
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let cmd = sandbox.command(
        None,
        &[
            "--scale",
            "5",
            "--steps",
            "load,dump",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let run = interrupt_at(cmd, &json, "load", "pg_dump");
    assert_stopped_cleanly(&sandbox, &run, 5, &["load"]);
}

#[test]
fn ctrl_c_during_the_basebackup_kills_pg_basebackup_and_removes_the_cluster() {
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let cmd = sandbox.command(
        None,
        &[
            "--scale",
            "10",
            "--steps",
            "load,basebackup",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let run = interrupt_at(cmd, &json, "load", "pg_basebackup");
    assert_stopped_cleanly(&sandbox, &run, 10, &["load"]);
}

#[test]
fn ctrl_c_during_the_restore_drops_the_scratch_database_and_the_dump() {
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let cluster = pgrush_testkit::shared();
    cluster
        .create_database("ops_ctrl_c")
        .expect("database for the steps");
    let mut cmd = sandbox.command(
        None,
        &[
            "--scale",
            "5",
            "--steps",
            "load,restore",
            "--json",
            json.to_str().unwrap(),
            "-U",
            cluster.superuser(),
            "-p",
            &cluster.port().to_string(),
            "-h",
        ],
    );
    cmd.arg(cluster.socket_dir()).arg("ops_ctrl_c");
    // The dump goes to a scratch directory in the temp dir.
    cmd.env("TMPDIR", sandbox.path());
    cmd.env("PGRUSH_PG_BIN", cluster.bin_dir());
    let run = interrupt_at(cmd, &json, "dump", "pg_restore");
    assert_stopped_cleanly(&sandbox, &run, 5, &["load", "dump"]);
    let scratch = cluster
        .psql("SELECT count(*) FROM pg_database WHERE datname LIKE 'pgrush_ops%'")
        .unwrap();
    assert_eq!(scratch, "0", "the restore's scratch database was dropped");
    assert_eq!(
        entries_starting(sandbox.path(), "pgrush-ops-"),
        Vec::<String>::new(),
        "the dump's directory was removed"
    );
}
