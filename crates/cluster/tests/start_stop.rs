//! Starting, using and stopping clusters.

use std::path::PathBuf;

use pgrush_cluster::Cluster;

#[test]
fn start_query_and_drop_removes_files() {
    let cluster = Cluster::start().expect("start");
    assert_eq!(cluster.psql("SELECT 1 + 1").expect("psql"), "2");
    assert!(cluster.version_num() >= 100000, "{}", cluster.version_num());
    assert_eq!(cluster.superuser(), "postgres");
    assert_eq!(cluster.tcp_host(), "127.0.0.1");
    let env = cluster.env();
    assert!(env.contains(&("PGPORT".to_string(), cluster.port().to_string())));
    assert!(env.contains(&("PGDATABASE".to_string(), "postgres".to_string())));
    // Settings from the sandbox are in effect.
    assert_eq!(cluster.psql("SHOW fsync").unwrap(), "off");
    assert_eq!(cluster.psql("SHOW max_connections").unwrap(), "200");
    // Multi-statement input, one result per line.
    assert_eq!(cluster.psql("SELECT 1; SELECT 'a'").unwrap(), "1\na");
    // Errors come back as errors.
    let err = cluster.psql("SELECT * FROM no_such_table").unwrap_err();
    assert!(err.to_string().contains("no_such_table"), "{err}");
    cluster.create_database("db one").expect("create database");
    assert_eq!(
        cluster
            .psql_db("db one", "SELECT current_database()")
            .unwrap(),
        "db one"
    );

    let data: PathBuf = cluster.data_dir().to_path_buf();
    let pid = cluster.pid().expect("running");
    assert!(data.join("PG_VERSION").exists());
    drop(cluster);
    assert!(!data.exists(), "data dir {} left behind", data.display());
    assert!(!process_alive(pid), "postmaster {pid} still running");
}

#[test]
fn two_clusters_at_once() {
    let a = Cluster::start().expect("start a");
    let b = Cluster::start().expect("start b");
    assert_ne!(a.port(), b.port());
    assert_ne!(a.socket_dir(), b.socket_dir());
    a.psql("CREATE TABLE only_in_a (x int)").unwrap();
    assert_eq!(
        a.psql("SELECT count(*) FROM pg_class WHERE relname = 'only_in_a'")
            .unwrap(),
        "1"
    );
    assert_eq!(
        b.psql("SELECT count(*) FROM pg_class WHERE relname = 'only_in_a'")
            .unwrap(),
        "0"
    );
}

#[test]
fn tcp_and_socket_both_answer() {
    let cluster = pgrush_testkit::shared();
    for host in [
        cluster.tcp_host().to_string(),
        cluster.socket_dir().display().to_string(),
    ] {
        let out = cluster
            .install()
            .command("psql")
            .args([
                "-X",
                "-A",
                "-t",
                "-h",
                &host,
                "-p",
                &cluster.port().to_string(),
            ])
            .args(["-U", "postgres", "-d", "postgres", "-c", "SELECT 42"])
            .env_remove("PGPASSWORD")
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
    }
}

#[test]
fn settings_and_bad_setting_names() {
    let cluster = Cluster::builder()
        .setting("work_mem", "8MB")
        .setting("cluster_name", "it's quoted")
        .start()
        .expect("start");
    assert_eq!(cluster.psql("SHOW work_mem").unwrap(), "8MB");
    assert_eq!(cluster.psql("SHOW cluster_name").unwrap(), "it's quoted");
    let err = Cluster::builder()
        .setting("bad name", "1")
        .start()
        .unwrap_err();
    assert!(err.to_string().contains("bad name"), "{err}");
}

fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

#[test]
fn start_failure_reports_the_server_log() {
    let err = Cluster::builder()
        .setting("shared_buffers", "lots")
        .start()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("server did not start"), "{text}");
    assert!(text.contains("shared_buffers"), "log tail missing: {text}");
    // The failed cluster's files are gone.
    let log = text
        .split_once("--- tail of ")
        .and_then(|(_, rest)| rest.split_once(" ---"))
        .map(|(path, _)| PathBuf::from(path))
        .expect("log path in the error");
    assert!(
        !log.parent().unwrap().exists(),
        "{} left behind",
        log.display()
    );
}
