//! The floor client against a throwaway cluster: for each workload, the transactions it
//! reports are the ones the server executed (index scans of pgbench_accounts for
//! select-only, pgbench_history rows for tpcb-like, whose balances must also add up),
//! and bad input ends with a clear error, never a panic.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pgrush_cluster::Cluster;
use pgrush_testkit::oracle::{self, Which};

/// Creates `db` and initializes it at scale 1 with pgbench 18.
fn init(cluster: &Cluster, db: &str) {
    cluster.create_database(db).expect("create database");
    let mut cmd = oracle::require(Which::Pgbench18).command();
    pgrush_testkit::clear_pg_env(&mut cmd);
    let out = cmd
        .envs(cluster.env())
        .args(["-i", "-q", "-s", "1", db])
        .output()
        .expect("pgbench -i");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs the floor client on `db` with `args`.
fn floor(cluster: &Cluster, db: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush-floor"));
    pgrush_testkit::clear_pg_env(&mut cmd);
    cmd.envs(cluster.env())
        .env("PGDATABASE", db)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run pgrush-floor")
}

/// The count of `number of transactions actually processed: N`, checking that a
/// positive `tps = ` line follows.
fn processed(out: &Output) -> u64 {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let count = stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .unwrap_or_else(|| panic!("no count in:\n{stdout}"));
    let tps: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|l| l.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no tps in:\n{stdout}"));
    assert!(tps > 0.0, "{stdout}");
    count.parse().expect("count")
}

fn accounts_index_scans(cluster: &Cluster, db: &str) -> u64 {
    let sql =
        "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'pgbench_accounts_pkey'";
    cluster
        .psql_db(db, sql)
        .expect("idx_scan")
        .parse()
        .expect("integer")
}

/// Select-only: every transaction is one index scan of pgbench_accounts. The backends
/// flush their statistics when they exit, just after the client: wait for the count to
/// reach the reported one, then require equality.
fn select_only(db: &str, mode: &str) {
    let cluster = pgrush_testkit::shared();
    init(cluster, db);
    let before = accounts_index_scans(cluster, db);
    let n = processed(&floor(
        cluster,
        db,
        &["-S", "-M", mode, "-c", "4", "-j", "2", "-n", "-T", "1"],
    ));
    assert!(n > 100, "only {n} transactions in 1 s");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut scans = accounts_index_scans(cluster, db) - before;
    while scans < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        scans = accounts_index_scans(cluster, db) - before;
    }
    assert_eq!(
        scans, n,
        "index scans on the server vs transactions reported"
    );
}

#[test]
fn select_only_prepared_count_matches_the_server() {
    select_only("floor_select_prepared", "prepared");
}

#[test]
fn select_only_simple_count_matches_the_server() {
    select_only("floor_select_simple", "simple");
}

/// tpcb-like: one pgbench_history row per transaction, and each transaction added the
/// same delta to an account, a teller, a branch and the history.
fn tpcb(db: &str, mode: &str, limit: &[&str]) -> u64 {
    let cluster = pgrush_testkit::shared();
    init(cluster, db);
    let mut args = vec!["-M", mode, "-c", "3", "-j", "2", "-n"];
    args.extend_from_slice(limit);
    let n = processed(&floor(cluster, db, &args));
    let rows = cluster.psql_db(
        db,
        "SELECT count(*), count(DISTINCT aid) FROM pgbench_history",
    );
    let rows = rows.expect("history");
    let (count, distinct) = rows.split_once('|').expect("two columns");
    assert_eq!(
        count.parse::<u64>().unwrap(),
        n,
        "history rows vs transactions reported"
    );
    assert!(
        distinct.parse::<u64>().unwrap() > n / 2,
        "aids do not vary: {rows}"
    );
    let sums = cluster
        .psql_db(
            db,
            "SELECT (SELECT sum(delta) FROM pgbench_history), (SELECT sum(abalance) FROM pgbench_accounts), \
             (SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches)",
        )
        .expect("sums");
    let sums: Vec<&str> = sums.split('|').collect();
    assert!(
        sums.iter().all(|s| *s == sums[0]),
        "balances disagree: {sums:?}"
    );
    n
}

#[test]
fn tpcb_like_prepared_transactions_per_client() {
    assert_eq!(
        tpcb("floor_tpcb_prepared", "prepared", &["-t", "40"]),
        3 * 40
    );
}

#[test]
fn tpcb_like_simple_count_matches_the_history() {
    let n = tpcb("floor_tpcb_simple", "simple", &["-T", "1"]);
    assert!(n > 10, "only {n} transactions in 1 s");
}

#[test]
fn bad_input_is_a_clear_error() {
    let cluster = pgrush_testkit::shared();
    let out = floor(cluster, "postgres", &["-c", "zero"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value \"zero\" for -c"), "{err}");
    let out = floor(cluster, "floor_no_such_db", &["-S", "-t", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
    // A database without the pgbench tables: the server's error, not a panic.
    let out = floor(cluster, "postgres", &["-S", "-t", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pgbench_branches"), "{err}");
}
