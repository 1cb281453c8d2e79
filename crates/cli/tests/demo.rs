//! `pgrush demo`: argument handling, server choice, and the whole run on small sizes.

use std::process::Command;

use pgrush_testkit::{Output, run};

fn pgrush_demo(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    cmd.arg("demo").args(args);
    for (name, _) in std::env::vars() {
        if name.starts_with("PG") {
            cmd.env_remove(name);
        }
    }
    cmd
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
        out.stdout.starts_with("Usage:\n  pgrush demo"),
        "{}",
        out.stdout
    );
    let out = run(&mut pgrush_demo(&["-x"]));
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "pgrush: error: demo: unknown option \"-x\"\nTry \"pgrush demo --help\" for more information.\n"
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
    let out = run(&mut pgrush_demo(&[
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-s",
        "1",
        "-T",
        "1",
    ]));
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
        out.stdout.contains("number of clients: 4"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("number of threads: 2"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\ntps = "), "{}", out.stdout);
}

#[test]
fn configured_server_is_used() {
    let cluster = pgrush_testkit::shared();
    cluster
        .create_database("demo_target")
        .expect("create database");
    let mut cmd = pgrush_demo(&["-s", "1", "-T", "1"]);
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
}
