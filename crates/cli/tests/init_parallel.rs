//! `pgrush -i -j N` against a single-connection `pgrush -i`: the same messages (timings
//! masked), exit status, schema and table contents, and all-visible tables after `v`.

mod init_common;

use init_common::*;

/// Loads with `-j jobs` and with one connection, and compares the results.
fn compare_parallel(args: &[&str], jobs: &str) {
    let single = new_db("one");
    let multi = new_db("par");
    let want = pgrush(args, &single);
    let mut pargs: Vec<&str> = args.to_vec();
    pargs.extend(["-j", jobs]);
    let got = pgrush(&pargs, &multi);
    assert_eq!(want.code, 0, "single-connection load failed: {}", want.stderr);
    assert_eq!(got.code, 0, "parallel load failed: {}", got.stderr);
    assert_eq!(normalize(&got.stderr), normalize(&want.stderr), "stderr for {pargs:?}");
    assert_eq!(schema(&multi), schema(&single), "schema for {pargs:?}");
    assert_eq!(contents(&multi), contents(&single), "contents for {pargs:?}");
    assert_eq!(all_visible(&multi), all_visible(&single), "visibility for {pargs:?}");
    // Several connections really were used for the parallel load.
    let copies = logged_statements(&multi)
        .iter()
        .filter(|s| s.contains("statement: copy pgbench_accounts"))
        .count();
    if args.contains(&"-I") {
        return;
    }
    assert!(copies >= 2, "expected parallel COPY streams, saw {copies}");
}

#[test]
fn plain_table_two_jobs() {
    compare_parallel(&["-i", "-s", "3"], "2");
    assert_eq!(all_visible(&new_db_loaded(&["-i", "-s", "2", "-j", "2"])), "t");
}

fn new_db_loaded(args: &[&str]) -> String {
    let db = new_db("vis");
    let out = pgrush(args, &db);
    assert_eq!(out.code, 0, "{}", out.stderr);
    db
}

#[test]
fn range_partitions_four_jobs() {
    compare_parallel(&["-i", "-s", "2", "--partitions=3", "--foreign-keys"], "4");
}

#[test]
fn range_partitions_whole_partition_streams() {
    compare_parallel(&["-i", "-s", "2", "--partitions=5", "--unlogged-tables", "-F", "80"], "2");
}

#[test]
fn hash_partitions_quiet() {
    compare_parallel(&["-i", "-q", "-s", "2", "--partitions=3", "--partition-method=hash"], "3");
}

#[test]
fn server_side_generation() {
    compare_parallel(&["-i", "-I", "dtGvpf", "-s", "2"], "4");
}
