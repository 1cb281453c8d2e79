//! `pgrush ops` when things are missing or go wrong: a missing or mismatched `pg_dump`,
//! too little disk for a scale, a server pgrush does not control, a role without the
//! needed privileges, Ctrl-C. Each gives a clear error and leaves nothing behind.

mod ops_common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use ops_common::{Sandbox, errors_of, spawn_until_step, step, steps_of};
use pgrush_cluster::PgInstall;
use pgrush_testkit::run;
use serde_json::Value;

/// A bin dir holding links to every program of PostgreSQL 15 but those in `without`.
fn bin_dir_without(dir: &Path, without: &[&str]) -> std::path::PathBuf {
    let install = PgInstall::for_major(15).expect("PostgreSQL 15 (Debian)");
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).expect("mkdir bin");
    for entry in std::fs::read_dir(install.bin_dir())
        .expect("read bin dir")
        .flatten()
    {
        let name = entry.file_name();
        if !without.iter().any(|w| name == *w) {
            std::os::unix::fs::symlink(entry.path(), bin.join(&name)).expect("symlink");
        }
    }
    bin
}

#[test]
fn help_and_bad_options() {
    let sandbox = Sandbox::new();
    let out = run(&mut sandbox.command(None, &["--help"]));
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.starts_with("pgrush ops times the operations"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Report bugs to <"), "{}", out.stdout);
    let out = run(&mut sandbox.command(None, &["--steps", "load,backup"]));
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "pgrush: error: unknown step \"backup\" (steps: load,dump,restore,reindex,\
         basebackup,crash-recovery,pitr,switchover,failover)\npgrush: hint: Try \"pgrush ops --help\" for more information.\n"
    );
    // The rest of the command line is pgrush -i's: its own errors.
    let out = run(&mut sandbox.command(None, &["-c", "4"]));
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "pgrush: error: some of the specified options cannot be used in initialization (-i) mode\n"
    );
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
}

#[test]
fn a_missing_pg_dump_is_an_error_before_anything_runs() {
    let sandbox = Sandbox::new();
    let bin = bin_dir_without(sandbox.path(), &["pg_dump"]);
    let json = sandbox.json_path();
    let out = run(&mut sandbox.command(
        Some(&bin),
        &["--scale", "1", "--json", json.to_str().unwrap()],
    ));
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .starts_with("pgrush: error: ops: pg_dump not found: ")
            && out.stderr.contains("/bin/pg_dump does not exist"),
        "{}",
        out.stderr
    );
    assert!(!json.exists(), "no results are written");
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
    // Steps that do not need pg_dump still run without it.
    let out = run(&mut sandbox.command(Some(&bin), &["--scale", "1", "--steps", "load,reindex"]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("reindex concurrently"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_pg_dump_of_another_major_version_is_refused() {
    let sandbox = Sandbox::new();
    let bin = bin_dir_without(sandbox.path(), &["pg_restore"]);
    // Stands in for an installation whose pg_restore is of another version.
    let fake = bin.join("pg_restore");
    std::fs::write(&fake, "#!/bin/sh\necho 'pg_restore (PostgreSQL) 14.9'\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run(&mut sandbox.command(Some(&bin), &["--steps", "restore"]));
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("pg_restore is version 14 but the server is PostgreSQL 15"),
        "{}",
        out.stderr
    );
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
}

#[test]
fn too_little_disk_stops_before_the_scale_and_keeps_the_smaller_ones() {
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    // Scale 10 million would need about 150 TB.
    let out = run(&mut sandbox.command(
        None,
        &[
            "--scale",
            "1,10000000",
            "--steps",
            "load,reindex",
            "--json",
            json.to_str().unwrap(),
        ],
    ));
    assert_eq!(out.code, 1, "{out:?}");
    let errors = errors_of(&out.stderr);
    assert!(
        errors.starts_with("pgrush: error: ops: scale 10000000 needs about ")
            && errors
                .contains("MB are free; stopping before it (the smaller scales' results are kept)"),
        "{errors}"
    );
    let doc = sandbox.document();
    assert_eq!(doc["scales"].as_array().map(Vec::len), Some(1));
    let steps = steps_of(&doc, 1);
    assert_eq!(steps.len(), 2);
    assert!(doc["stopped"].as_str().unwrap().contains("needs about"));
    assert!(
        out.stdout.contains("reindex concurrently"),
        "{}",
        out.stdout
    );
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
}

#[test]
fn another_server_skips_what_needs_control_and_checks_privileges() {
    let sandbox = Sandbox::new();
    let cluster = pgrush_testkit::shared();
    cluster
        .psql("CREATE ROLE ops_owner LOGIN; CREATE DATABASE ops_ext OWNER ops_owner")
        .expect("role and database");
    let conn = |steps: &str| {
        let mut cmd = sandbox.command(
            Some(cluster.bin_dir()),
            &["--scale", "1", "--steps", steps, "-U", "ops_owner", "-h"],
        );
        cmd.arg(cluster.socket_dir())
            .args(["-p", &cluster.port().to_string(), "ops_ext"]);
        cmd
    };
    let out = run(&mut conn("load,restore"));
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "pgrush: error: ops: role \"ops_owner\" lacks the CREATEDB privilege (restore creates a \
         scratch database): grant it, connect as another role, or leave restore out of --steps\n"
    );
    let tables = cluster
        .psql_db(
            "ops_ext",
            "SELECT count(*) FROM pg_class WHERE relname LIKE 'pgbench%'",
        )
        .unwrap();
    assert_eq!(tables, "0", "nothing ran");
    let out = run(&mut conn("load,reindex,crash-recovery,pitr"));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("crash-recovery")
            && out.stdout.contains("skipped: needs the server's files"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("(server)"), "{}", out.stdout);
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
}

/// Presses Ctrl-C 1.5 s into `step` (after the load, with a 60 s workload), and checks
/// that the run stops at once, removes its clusters and keeps the load's result.
fn interrupt_during(step_name: &str) {
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let steps = format!("load,{step_name}");
    let started = Instant::now();
    let child = spawn_until_step(
        &mut sandbox.command(
            None,
            &[
                "--scale",
                "1",
                "--steps",
                &steps,
                "--workload-seconds",
                "60",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        &json,
        "load",
    );
    std::thread::sleep(Duration::from_millis(1500));
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = child.wait_with_output().expect("wait");
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "{step_name}: the workload was not cancelled"
    );
    assert_eq!(out.status.code(), Some(1), "{step_name}");
    let stderr = errors_of(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(stderr, "pgrush: error: ops: interrupted\n", "{step_name}");
    let doc = sandbox.document();
    assert_eq!(doc["stopped"], "interrupted");
    let steps = steps_of(&doc, 1);
    assert_eq!(steps.len(), 1, "{step_name}");
    assert_eq!(
        step(&steps, "load")["details"]["rows"],
        Value::from(100_011)
    );
    assert_eq!(
        sandbox.leftover_clusters(),
        Vec::<String>::new(),
        "{step_name}"
    );
}

#[test]
fn ctrl_c_during_the_load_cancels_it_and_removes_the_cluster() {
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let child = sandbox
        .command(
            None,
            &[
                "--scale",
                "30",
                "--steps",
                "load",
                "--json",
                json.to_str().unwrap(),
            ],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn pgrush ops");
    let started = Instant::now();
    // The document appears once the server is open, then the load starts.
    while !json.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "no document");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1000));
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        errors_of(&String::from_utf8_lossy(&out.stderr)),
        "pgrush: error: ops: interrupted\n"
    );
    let doc = sandbox.document();
    assert_eq!(doc["stopped"], "interrupted");
    assert_eq!(
        steps_of(&doc, 30),
        Vec::<Value>::new(),
        "the load did not finish"
    );
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
}

#[test]
fn ctrl_c_stops_the_step_removes_the_clusters_and_keeps_the_results() {
    interrupt_during("crash-recovery");
    interrupt_during("pitr");
}
