//! `pgrush -i -j N` against a single-connection `pgrush -i`: the same messages (timings
//! masked), exit status, schema and table contents, and all-visible tables after `v`.

mod init_common;

use init_common::*;

/// Loads with `-j jobs` and with one connection, and compares the results.
fn compare_parallel(args: &[&str], jobs: &str) {
    compare_parallel_env(args, jobs, &[]);
}

/// [`compare_parallel`] with extra environment variables for the parallel load.
fn compare_parallel_env(args: &[&str], jobs: &str, env: &[(&str, &str)]) -> String {
    let single = new_db("one");
    let multi = new_db("par");
    let want = pgrush(args, &single);
    let mut pargs: Vec<&str> = args.to_vec();
    pargs.extend(["-j", jobs]);
    let got = pgrush_env(&pargs, &multi, env);
    let (single_backends, multi_backends) = (backends(&single), backends(&multi));
    assert_eq!(
        want.code, 0,
        "single-connection load failed: {}",
        want.stderr
    );
    assert_eq!(got.code, 0, "parallel load failed: {}", got.stderr);
    assert_eq!(
        normalize(&got.stderr),
        normalize(&want.stderr),
        "stderr for {pargs:?}"
    );
    assert_eq!(schema(&multi), schema(&single), "schema for {pargs:?}");
    assert_eq!(
        contents(&multi),
        contents(&single),
        "contents for {pargs:?}"
    );
    // The parallel load is never less all-visible than pgbench's (with range partitions
    // it is more: partitions are loaded with COPY FREEZE, which pgbench cannot use).
    // Parallel plain COPY streams may leave a few empty pages (checked by rows instead).
    if env.is_empty() && all_visible(&single) == "t" {
        assert_eq!(all_visible(&multi), "t", "visibility for {pargs:?}");
    }
    // Several connections really were used.
    let jobs_n: usize = jobs.parse().unwrap_or(1);
    assert_eq!(single_backends, 1, "backends of the single-connection load");
    assert!(
        multi_backends >= jobs_n.min(3),
        "parallel load used {multi_backends} backends"
    );
    multi
}

#[test]
fn plain_table_two_jobs() {
    compare_parallel(&["-i", "-s", "3"], "2");
    assert_eq!(
        all_visible(&new_db_loaded(&["-i", "-s", "2", "-j", "2"])),
        "t"
    );
}

fn new_db_loaded(args: &[&str]) -> String {
    let db = new_db("vis");
    let out = pgrush(args, &db);
    assert_eq!(out.code, 0, "{}", out.stderr);
    db
}

#[test]
fn plain_table_parallel_copy_streams() {
    let db = compare_parallel_env(
        &["-i", "-s", "2", "--foreign-keys"],
        "3",
        &[("PGRUSH_INIT_PARALLEL_COPY", "1")],
    );
    let streams = logged_statements(&db)
        .iter()
        .filter(|s| s.ends_with("statement: copy pgbench_accounts from stdin"))
        .count();
    assert_eq!(streams, 3, "plain COPY streams");
    // Every row is on an all-visible page after the vacuum (bulk extension may leave
    // a few empty pages, which hold no rows).
    assert_eq!(rows_on_not_all_visible_pages(&db), "0");
}

#[test]
fn range_partitions_four_jobs() {
    compare_parallel(&["-i", "-s", "2", "--partitions=3", "--foreign-keys"], "4");
}

#[test]
fn range_partitions_whole_partition_streams() {
    compare_parallel(
        &[
            "-i",
            "-s",
            "2",
            "--partitions=5",
            "--unlogged-tables",
            "-F",
            "80",
        ],
        "2",
    );
}

#[test]
fn hash_partitions_quiet() {
    compare_parallel(
        &[
            "-i",
            "-q",
            "-s",
            "2",
            "--partitions=3",
            "--partition-method=hash",
        ],
        "3",
    );
}

#[test]
fn server_side_generation() {
    compare_parallel(&["-i", "-I", "dtGvpf", "-s", "2"], "4");
}
