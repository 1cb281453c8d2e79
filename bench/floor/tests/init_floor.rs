//! `pgrush-floor init` against pgbench 18 on the shared cluster: whatever the source of
//! the rows and the streams, the floor leaves the tables pgbench's `-i` leaves (same
//! relations and constraints, same rows), vacuumed (every accounts page all-visible);
//! its report has pgbench's `done in` line and the client's CPU; bad input is refused.

mod common;

use std::process::{Command, Output, Stdio};

use pgrush_cluster::Cluster;

fn pgbench_init(cluster: &Cluster, db: &str, extra: &[&str]) {
    let mut args = vec!["-s", "1"];
    args.extend_from_slice(extra);
    common::pgbench_init(cluster, db, &args);
}

fn floor_init(cluster: &Cluster, db: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush-floor"));
    pgrush_testkit::clear_pg_env(&mut cmd);
    cmd.envs(cluster.env())
        .arg("init")
        .args(args)
        .arg(db)
        .stdin(Stdio::null())
        .output()
        .expect("run pgrush-floor init")
}

/// Relations, constraints and a digest of every table's rows in key order.
fn contents(cluster: &Cluster, db: &str) -> String {
    let sql = "select string_agg(x, E'\\n' order by x) from (
        select c.relname || ' ' || c.relkind::text || ' ' || coalesce(pg_get_expr(c.relpartbound, c.oid), '') as x
          from pg_class c where c.relname like 'pgbench%'
        union all
        select conname || ' ' || pg_get_constraintdef(oid) from pg_constraint where conname like 'pgbench%'
        union all
        select 'accounts ' || md5(string_agg(a::text, ',' order by aid)) from pgbench_accounts a
        union all
        select 'tellers ' || md5(string_agg(t::text, ',' order by tid)) from pgbench_tellers t
        union all
        select 'branches ' || md5(string_agg(b::text, ',' order by bid)) from pgbench_branches b
        union all
        select 'history ' || count(*) from pgbench_history) s";
    cluster.psql_db(db, sql).expect("contents")
}

/// Accounts heap pages (of the table or its partitions) that are not all-visible.
fn not_all_visible(cluster: &Cluster, db: &str) -> String {
    let sql = "select sum(relpages - relallvisible) from pg_class where relname like 'pgbench_accounts%' and relkind = 'r'";
    cluster.psql_db(db, sql).expect("relallvisible")
}

fn check(db: &str, reference: &str, args: &[&str]) {
    let cluster = pgrush_testkit::shared();
    cluster.create_database(db).expect("create database");
    let out = floor_init(cluster, db, args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let done = stdout
        .lines()
        .find(|l| l.starts_with("done in "))
        .expect("done in line");
    assert!(
        done.contains("vacuum ") && done.contains("primary keys "),
        "{done}"
    );
    assert!(
        stdout.contains("client CPU in the timed part: "),
        "{stdout}"
    );
    assert_eq!(
        contents(cluster, db),
        contents(cluster, reference),
        "{args:?}"
    );
    // COPY FREEZE leaves every page all-visible whatever other sessions do; the vacuum
    // of unfrozen rows cannot mark pages that another test's open transaction (the shared
    // cluster's) may still need to see as they were, so only frozen loads are checked.
    let frozen = args
        .iter()
        .any(|a| a.contains("frozen") || *a == "--partitions");
    if frozen {
        assert_eq!(not_all_visible(cluster, db), "0", "{args:?}");
    }
}

#[test]
fn ordinary_table_from_every_source_equals_pgbench() {
    let cluster = pgrush_testkit::shared();
    pgbench_init(cluster, "floor_init_ref", &[]);
    let cases: [(&str, &[&str]); 4] = [
        (
            "floor_init_frozen",
            &["-s", "1", "-j", "2", "--streams", "frozen"],
        ),
        (
            "floor_init_parallel",
            &["-s", "1", "-j", "3", "--streams=parallel"],
        ),
        (
            "floor_init_file",
            &["-s", "1", "-j", "2", "--streams=parallel", "--source=file"],
        ),
        (
            "floor_init_generate",
            &["-s", "1", "-j", "1", "--source", "generate"],
        ),
    ];
    for (db, args) in cases {
        check(db, "floor_init_ref", args);
    }
}

#[test]
fn range_partitions_equal_pgbench() {
    let cluster = pgrush_testkit::shared();
    pgbench_init(cluster, "floor_init_ref_parts", &["--partitions", "3"]);
    check(
        "floor_init_parts",
        "floor_init_ref_parts",
        &["-s", "1", "-j", "2", "--partitions", "3"],
    );
}

#[test]
fn bad_input_is_refused() {
    let cluster = pgrush_testkit::shared();
    for args in [
        &["-j", "4", "--partitions", "2"][..],
        &["--source", "disk"],
        &["-s", "x"],
    ] {
        let out = floor_init(cluster, "postgres", args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.starts_with("pgrush-floor init: "), "{stderr}");
    }
}
