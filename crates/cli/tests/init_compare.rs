//! Differential tests of `pgrush -i` against pgbench 18: messages (timings masked), exit
//! status, the statements the server received, `pg_dump --schema-only` and a checksum
//! of every table, for many option sets.

mod init_common;

use init_common::*;

/// Runs pgbench and pgrush with `args` on two fresh databases and compares everything.
/// `prepare` runs SQL in both databases first.
fn compare(args: &[&str], prepare: &str) {
    let a = new_db("pgb");
    let b = new_db("rush");
    if !prepare.is_empty() {
        cluster().psql_db(&a, prepare).unwrap();
        cluster().psql_db(&b, prepare).unwrap();
    }
    let want = pgbench(args, &a);
    let got = pgrush(args, &b);
    assert_eq!(
        normalize(&got.stderr),
        normalize(&want.stderr),
        "stderr differs for {args:?}\n--- pgrush:\n{}\n--- pgbench:\n{}",
        got.stderr,
        want.stderr
    );
    assert_eq!(got.code, want.code, "exit status for {args:?}");
    assert_eq!(got.stdout, want.stdout, "stdout for {args:?}");
    let statements = logged_statements(&a);
    if want.code == 0 && !args.contains(&"-I") {
        assert!(
            statements.iter().any(|s| s.contains("statement: commit")),
            "the server log shows no load for {args:?}: {statements:?}"
        );
    }
    assert_eq!(
        logged_statements(&b),
        statements,
        "statements differ for {args:?}"
    );
    assert_eq!(schema(&b), schema(&a), "schema differs for {args:?}");
    assert_eq!(contents(&b), contents(&a), "contents differ for {args:?}");
}

#[test]
fn default_steps() {
    compare(&["-i"], "");
}

#[test]
fn partitions_foreign_keys_unlogged_fillfactor() {
    compare(
        &[
            "-i",
            "-s",
            "2",
            "--partitions=3",
            "--foreign-keys",
            "--unlogged-tables",
            "-F",
            "90",
        ],
        "",
    );
}

#[test]
fn hash_partitions() {
    compare(
        &[
            "-i",
            "--partitions",
            "4",
            "--partition-method",
            "HASH",
            "-s",
            "2",
        ],
        "",
    );
}

#[test]
fn server_side_generation_with_foreign_keys() {
    compare(&["-i", "-I", "dtGvpf"], "");
}

#[test]
fn quiet_scale_3() {
    compare(&["-i", "-q", "-s", "3"], "");
}

#[test]
fn bigint_ids_and_tablespaces_without_data() {
    compare(
        &[
            "-i",
            "-I",
            " d t",
            "-s",
            "20000",
            "--tablespace=pg_default",
            "--index-tablespace=pg_default",
        ],
        "",
    );
}

#[test]
fn no_vacuum_and_repeated_steps() {
    compare(
        &["-i", "-n", "-I", "dtggvp", "--partitions", "2", "-s", "2"],
        "",
    );
}

#[test]
fn data_after_keys() {
    compare(&["-i", "-I", "dtpfgv", "-F", "50"], "");
}

#[test]
fn blank_steps_only() {
    compare(&["-i", "-I", "  "], "");
}

#[test]
fn generate_without_tables_fails() {
    compare(&["-i", "-I", "g"], "");
}

#[test]
fn second_primary_key_fails() {
    compare(&["-i", "-I", "dtpp"], "");
}

#[test]
fn copy_rejected_by_constraint() {
    compare(
        &["-i", "-I", "g", "-s", "2"],
        "create table pgbench_history(tid int,bid int,aid int,delta int,mtime timestamp,filler char(22));
         create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84));
         create table pgbench_branches(bid int not null,bbalance int,filler char(88));
         create table pgbench_accounts(aid int not null,bid int,abalance int,filler char(84));
         alter table pgbench_accounts add constraint small check (aid < 150000);",
    );
}

#[test]
fn missing_tablespace_fails() {
    compare(&["-i", "-I", "dt", "--tablespace=no\"such"], "");
}

#[test]
fn unknown_step_is_an_option_error() {
    compare(&["-i", "-I", "dtx"], "");
}

#[test]
fn own_tablespace() {
    let c = cluster();
    let dir = c
        .data_dir()
        .parent()
        .expect("data dir has a parent")
        .join(format!("ts_init_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let meta = std::fs::metadata(c.data_dir()).unwrap();
    use std::os::unix::fs::MetadataExt;
    std::os::unix::fs::chown(&dir, Some(meta.uid()), Some(meta.gid())).unwrap();
    c.psql(&format!(
        "create tablespace \"init ts\" location '{}'",
        dir.display()
    ))
    .unwrap();
    compare(
        &[
            "-i",
            "--tablespace=init ts",
            "--index-tablespace=init ts",
            "--partitions=2",
            "--foreign-keys",
        ],
        "",
    );
}

#[test]
fn connection_failure() {
    compare(&["-i", "-h", "/nonexistent/socket/dir"], "");
}
