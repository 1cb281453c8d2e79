//! `pgrush ops --pgdata DIR`: every step, crash recovery and PITR included, on an
//! existing local cluster, which is handed back as found (running or stopped, its
//! configuration files and settings as before, the user's tables untouched); and the
//! clear errors for a directory that cannot be adopted.

mod ops_common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ops_common::{
    Sandbox, errors_of, existing_cluster_of, postmaster_pid, spawn_until_step, step, steps_of,
    stop_left_server,
};
use pgrush_cluster::Cluster;
use pgrush_testkit::run;

/// The configuration files `--pgdata` must leave as they were.
const CONFIG_FILES: [&str; 2] = ["postgresql.conf", "postgresql.auto.conf"];

/// A kept PostgreSQL 15 cluster (see [`existing_cluster_of`]).
fn existing_cluster(sandbox: &Sandbox) -> Cluster {
    existing_cluster_of(sandbox, 15)
}

fn config_files(data_dir: &Path) -> Vec<Vec<u8>> {
    CONFIG_FILES
        .iter()
        .map(|name| std::fs::read(data_dir.join(name)).expect("config file"))
        .collect()
}

/// Directories pgrush made in the sandbox and should have removed.
fn leftovers(sandbox: &Sandbox) -> Vec<String> {
    std::fs::read_dir(sandbox.path())
        .expect("read sandbox")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pgrush-sandbox-") || n.starts_with("pgrush-adopted-"))
        .collect()
}

#[test]
fn every_step_runs_on_a_running_cluster_which_is_handed_back_running() {
    let sandbox = Sandbox::new();
    let cluster = existing_cluster_of(&sandbox, 18);
    let data_dir = cluster.data_dir().to_path_buf();
    let before = config_files(&data_dir);
    let pid_before = postmaster_pid(&data_dir).expect("running");
    let json = sandbox.json_path();
    let out = run(&mut sandbox.command(
        None,
        &[
            "--pgdata",
            data_dir.to_str().unwrap(),
            "--scale",
            "1",
            "--steps",
            "load,basebackup,crash-recovery,pitr",
            "--workload-seconds",
            "2",
            "--json",
            json.to_str().unwrap(),
        ],
    ));
    let server_running = postmaster_pid(&data_dir);
    let checks = || -> Result<(), String> {
        assert_eq!(out.code, 0, "{out:?}\n{}", cluster.log_contents());
        let doc = sandbox.document();
        assert_eq!(doc["target"], "pgdata");
        assert_eq!(doc["server_version_num"].as_u64().unwrap() / 10000, 18);
        let steps = steps_of(&doc, 1);
        assert_eq!(steps.len(), 4, "{steps:?}");
        for name in ["crash-recovery", "pitr"] {
            let result = step(&steps, name);
            assert_eq!(result["check"]["passed"], true, "{name}: {result}");
            assert!(result["bytes"].as_u64().unwrap() > 0, "{name}: {result}");
        }
        assert!(step(&steps, "basebackup")["bytes"].as_u64().unwrap() > 1_000_000);
        // Handed back running, restarted by pgrush, with its own settings.
        let pid_after = server_running.ok_or("the server is not running afterwards")?;
        assert_ne!(pid_after, pid_before, "pgrush restarted it as its child");
        assert_eq!(
            config_files(&data_dir),
            before,
            "configuration files restored"
        );
        assert_eq!(cluster.show("archive_mode").unwrap(), "off");
        assert_eq!(cluster.show("max_wal_size").unwrap(), "321MB");
        assert_eq!(cluster.show("checkpoint_timeout").unwrap(), "5min");
        assert_eq!(cluster.pending_restart().unwrap(), Vec::<String>::new());
        // The user's data untouched, the scratch database gone.
        assert_eq!(
            cluster.psql("SELECT sum(id) FROM my_table").unwrap(),
            "500500"
        );
        let databases = cluster
            .psql("SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database")
            .unwrap();
        assert_eq!(databases, "postgres,template0,template1");
        let pgbench_tables = cluster
            .psql("SELECT count(*) FROM pg_class WHERE relname LIKE 'pgbench%'")
            .unwrap();
        assert_eq!(pgbench_tables, "0");
        assert!(data_dir.join("PG_VERSION").is_file(), "data directory kept");
        assert_eq!(leftovers(&sandbox), Vec::<String>::new());
        Ok(())
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(checks));
    stop_left_server(&data_dir);
    drop(cluster);
    match result {
        Ok(Ok(())) => {}
        Ok(Err(msg)) => panic!("{msg}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

#[test]
fn a_stopped_cluster_is_started_for_the_steps_and_stopped_again() {
    let sandbox = Sandbox::new();
    let cluster = existing_cluster(&sandbox);
    cluster
        .stop(pgrush_cluster::ShutdownMode::Fast)
        .expect("stop");
    let data_dir = cluster.data_dir().to_path_buf();
    let before = config_files(&data_dir);
    let out = run(&mut sandbox.command(
        None,
        &[
            "--pgdata",
            data_dir.to_str().unwrap(),
            "--scale",
            "1",
            "--steps",
            "load,reindex",
        ],
    ));
    let left_running = postmaster_pid(&data_dir).is_some();
    stop_left_server(&data_dir);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("(pgdata)"), "{}", out.stdout);
    assert!(!left_running, "the server was stopped and is stopped again");
    assert_eq!(config_files(&data_dir), before);
    assert_eq!(leftovers(&sandbox), Vec::<String>::new());
}

#[test]
fn ctrl_c_during_crash_recovery_hands_the_cluster_back_running() {
    let sandbox = Sandbox::new();
    let cluster = existing_cluster(&sandbox);
    let data_dir = cluster.data_dir().to_path_buf();
    let before = config_files(&data_dir);
    let json = sandbox.json_path();
    let started = Instant::now();
    let child = spawn_until_step(
        &mut sandbox.command(
            None,
            &[
                "--pgdata",
                data_dir.to_str().unwrap(),
                "--scale",
                "1",
                "--steps",
                "load,crash-recovery",
                "--workload-seconds",
                "60",
                "--json",
                json.to_str().unwrap(),
            ],
        ),
        &json,
        "load",
    );
    // The workload runs, with checkpoints held off by ALTER SYSTEM.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) };
    let out = child.wait_with_output().expect("wait");
    let running = postmaster_pid(&data_dir).is_some();
    let checks = std::panic::catch_unwind(|| {
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            errors_of(&String::from_utf8_lossy(&out.stderr)),
            "pgrush: error: ops: interrupted\n"
        );
        assert!(started.elapsed() < Duration::from_secs(40), "not cancelled");
        assert!(running, "handed back running");
        assert_eq!(
            config_files(&data_dir),
            before,
            "configuration files restored"
        );
        assert_eq!(cluster.show("checkpoint_timeout").unwrap(), "5min");
        assert_eq!(cluster.show("max_wal_size").unwrap(), "321MB");
        let databases = cluster
            .psql("SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database")
            .unwrap();
        assert_eq!(databases, "postgres,template0,template1", "scratch dropped");
        assert_eq!(
            cluster.psql("SELECT count(*) FROM my_table").unwrap(),
            "1000"
        );
        assert_eq!(sandbox.document()["stopped"], "interrupted");
        assert_eq!(leftovers(&sandbox), Vec::<String>::new());
    });
    stop_left_server(&data_dir);
    drop(cluster);
    if let Err(panic) = checks {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn a_running_cluster_that_refuses_us_is_a_clear_error_and_left_alone() {
    let sandbox = Sandbox::new();
    let cluster = existing_cluster(&sandbox);
    let data_dir = cluster.data_dir().to_path_buf();
    let hba = data_dir.join("pg_hba.conf");
    let own_hba = std::fs::read(&hba).unwrap();
    std::fs::write(&hba, "local all all reject\nhost all all all reject\n").unwrap();
    let pid = cluster.pid().expect("running");
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(i32::try_from(pid).unwrap(), libc::SIGHUP) };
    let started = Instant::now();
    while cluster.psql("SELECT 1").is_ok() {
        assert!(started.elapsed() < Duration::from_secs(10), "no reload");
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = config_files(&data_dir);
    let out = run(&mut sandbox.command(
        None,
        &["--pgdata", data_dir.to_str().unwrap(), "--scale", "1"],
    ));
    let still_ours = postmaster_pid(&data_dir) == Some(pid) && cluster.is_running();
    std::fs::write(&hba, own_hba).unwrap();
    // SAFETY: as above.
    unsafe { libc::kill(i32::try_from(pid).unwrap(), libc::SIGHUP) };
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.starts_with(&format!(
            "pgrush: error: ops: the server of {} runs (PID {pid}) but cannot be reached on ",
            data_dir.display()
        )) && out.stderr.contains("rejects connection"),
        "{}",
        out.stderr
    );
    assert!(still_ours, "the server was left running, untouched");
    assert_eq!(config_files(&data_dir), before);
    assert_eq!(leftovers(&sandbox), Vec::<String>::new());
}

/// A fake data directory of PostgreSQL `version`, owned by `owner` (uid) when given.
fn fake_data_dir(sandbox: &Sandbox, name: &str, version: &str, owner: Option<u32>) -> PathBuf {
    let dir = sandbox.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("PG_VERSION"), format!("{version}\n")).unwrap();
    if let Some(uid) = owner {
        std::os::unix::fs::chown(&dir, Some(uid), None).unwrap();
    }
    dir
}

/// The uid of a user that is not root: `postgres` (which the cluster crate creates).
fn postgres_uid() -> u32 {
    let out = run(std::process::Command::new("id").args(["-u", "postgres"]));
    out.stdout.trim().parse().expect("user postgres exists")
}

#[test]
fn directories_that_cannot_be_adopted_are_clear_errors() {
    let sandbox = Sandbox::new();
    let ops = |dir: &Path, extra: &[&str]| {
        let mut args = vec!["--pgdata", dir.to_str().unwrap(), "--scale", "1"];
        args.extend_from_slice(extra);
        run(&mut sandbox.command(None, &args))
    };
    let plain = sandbox.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let out = ops(&plain, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "pgrush: error: ops: {}: not a PostgreSQL data directory (no PG_VERSION file)\n",
            plain.display()
        )
    );
    assert_eq!(out.stdout, "");

    let out = ops(&plain, &["-p", "5432"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("--pgdata cannot be combined with -h, -p, -U or DBNAME"),
        "{}",
        out.stderr
    );

    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "this test needs root (as CI runs it): it chowns directories"
    );
    let _ = Cluster::start().expect("a cluster creates the postgres user");
    let owned_by_root = fake_data_dir(&sandbox, "root-owned", "15", None);
    let out = ops(&owned_by_root, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .ends_with("root-owned: it belongs to root, and PostgreSQL does not run as root\n"),
        "{}",
        out.stderr
    );
    let unknown_version = fake_data_dir(&sandbox, "version-99", "99", Some(postgres_uid()));
    let out = ops(&unknown_version, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("pgrush: error: ops: no PostgreSQL 99 binaries found (found: "),
        "{}",
        out.stderr
    );
    assert_eq!(leftovers(&sandbox), Vec::<String>::new());
}
