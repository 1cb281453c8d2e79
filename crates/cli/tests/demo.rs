//! `pgrush demo`: argument handling, server choice, and the whole run on small sizes.

use std::path::{Path, PathBuf};
use std::process::Command;

use pgrush_testkit::{Output, run};

/// `pgrush demo ARGS` in `dir` (where it writes its HTML report), without the
/// caller's `PG*` variables.
fn pgrush_demo_in(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    cmd.arg("demo").args(args).current_dir(dir);
    for (name, _) in std::env::vars() {
        if name.starts_with("PG") {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// A scratch directory for one demo run.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn pgrush_demo(args: &[&str]) -> Command {
    pgrush_demo_in(Path::new("/"), args)
}

fn assert_ok(out: &Output) {
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
}

#[test]
fn help_and_bad_arguments() {
    let out = run(&mut pgrush_demo(&["--help"]));
    assert_ok(&out);
    assert!(
        out.stdout.starts_with("pgrush demo runs a first benchmark"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\nUsage:\n  pgrush demo"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Report bugs to <"), "{}", out.stdout);
    let out = run(&mut pgrush_demo(&["-x"]));
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        format!(
            "{}: invalid option -- 'x'\npgrush: hint: Try \"pgrush demo --help\" for more information.\n",
            env!("CARGO_BIN_EXE_pgrush")
        )
    );
    let out = run(&mut pgrush_demo(&["-s", "0"]));
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("positive integer"), "{}", out.stderr);
}

#[test]
fn unreachable_server_falls_back_to_a_throwaway_cluster() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let port = port.to_string();
    let dir = scratch();
    let out = run(&mut pgrush_demo_in(
        dir.path(),
        &[
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-s",
            "1",
            "-T",
            "1",
            "-c",
            "3",
            "-j",
            "1",
            "--json",
            "run.json",
        ],
    ));
    assert!(out.stdout.contains("does not answer"), "{}", out.stdout);
    assert!(
        out.stdout.contains("pgrush demo: started PostgreSQL"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("throwaway cluster removed"),
        "{}",
        out.stdout
    );
    assert_ok(&out);
    assert!(
        out.stdout.contains("number of clients: 3"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("number of threads: 1"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\ntps = "), "{}", out.stdout);
    // The throwaway cluster's durability settings are said with the report.
    let note = "\npgrush demo: note: the throwaway cluster runs with fsync=off, \
                full_page_writes=off, synchronous_commit=off\n\
                pgrush demo: fast but not crash-safe: its tps is no figure for a production \
                server\n";
    assert!(out.stdout.contains(note), "{}", out.stdout);
    let json = std::fs::read_to_string(dir.path().join("run.json")).expect("--json's file");
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(doc["config"]["clients"], 3, "{json}");
    // What pgrush adds: percentiles after the report, and an HTML report that outlives
    // the cluster and opens in a browser.
    assert!(
        out.stdout.contains("latency percentiles: p50 = "),
        "{}",
        out.stdout
    );
    let page = html_report_path(&out.stdout);
    let name = page.file_name().and_then(|n| n.to_str()).unwrap_or("");
    assert!(
        name.starts_with("pgrush-demo-") && name.ends_with(".html"),
        "{name}"
    );
    assert!(page.starts_with(dir.path().canonicalize().expect("canonical")));
    let dom = pgrush_testkit::chromium::dump_dom(&page);
    for needle in ["Throughput over time", "tps", "number of clients"] {
        assert!(dom.contains(needle), "{needle} not in the rendered page");
    }
}

/// The path printed after `HTML report written to `; the file must exist.
fn html_report_path(stdout: &str) -> PathBuf {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("pgrush demo: HTML report written to "))
        .unwrap_or_else(|| panic!("no HTML report line:\n{stdout}"));
    let path = PathBuf::from(line);
    assert!(path.is_file(), "{} does not exist", path.display());
    path
}

#[test]
fn configured_server_is_used() {
    let cluster = pgrush_testkit::shared();
    cluster
        .create_database("demo_target")
        .expect("create database");
    let dir = scratch();
    let mut cmd = pgrush_demo_in(dir.path(), &["-s", "1", "-T", "1", "--html", "given.html"]);
    for (name, value) in cluster.env() {
        cmd.env(name, value);
    }
    cmd.env("PGDATABASE", "demo_target");
    let out = run(&mut cmd);
    assert!(
        out.stdout
            .contains("using the server configured by PGHOST/PGPORT/PGDATABASE"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("throwaway"), "{}", out.stdout);
    assert_ok(&out);
    let rows = cluster
        .psql_db("demo_target", "SELECT count(*) FROM pgbench_accounts")
        .expect("pgbench_accounts exists");
    assert_eq!(rows, "100000");
    assert_eq!(
        html_report_path(&out.stdout),
        dir.path()
            .canonicalize()
            .expect("canonical")
            .join("given.html")
    );
}
