//! The floor client against a throwaway cluster: for each workload, the transactions it
//! reports are the ones the server executed (index scans of pgbench_accounts for
//! select-only, pgbench_history rows for tpcb-like, whose balances must also add up),
//! with the epoll loop and with `--io uring` (and its fallback to epoll where io_uring
//! is refused), and bad input ends with a clear error, never a panic.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use pgrush_cluster::Cluster;

/// The variable that makes the floor's io_uring setup fail (see `uring_loop.rs`).
const REFUSE_IO_URING: &str = "PGRUSH_FLOOR_REFUSE_IO_URING";

/// Creates `db` and initializes it at scale 1 with pgbench 18.
fn init(cluster: &Cluster, db: &str) {
    common::pgbench_init(cluster, db, &["-s", "1"]);
}

/// Runs the floor client on `db` with `args`.
fn floor(cluster: &Cluster, db: &str, args: &[&str]) -> Output {
    floor_with_env(cluster, db, args, &[])
}

/// Runs the floor client on `db` with `args` and the extra environment `env`.
fn floor_with_env(cluster: &Cluster, db: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush-floor"));
    pgrush_testkit::clear_pg_env(&mut cmd);
    cmd.env_remove(REFUSE_IO_URING)
        .envs(env.iter().copied())
        .envs(cluster.env())
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
/// Returns the client's standard error.
fn select_only(db: &str, mode: &str, io: &str, env: &[(&str, &str)]) -> String {
    let cluster = pgrush_testkit::shared();
    init(cluster, db);
    let before = accounts_index_scans(cluster, db);
    let args = [
        "-S", "-M", mode, "-c", "4", "-j", "2", "-n", "-T", "1", "--io", io,
    ];
    let out = floor_with_env(cluster, db, &args, env);
    let n = processed(&out);
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
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn select_only_prepared_count_matches_the_server() {
    select_only("floor_select_prepared", "prepared", "epoll", &[]);
}

#[test]
fn select_only_simple_count_matches_the_server() {
    select_only("floor_select_simple", "simple", "epoll", &[]);
}

/// `--describe`: the server answers each Describe with a RowDescription, which the
/// floor reads past; every transaction is still one index scan, counted once.
#[test]
fn describe_adds_a_row_description_and_keeps_the_count() {
    let cluster = pgrush_testkit::shared();
    let db = "floor_describe";
    init(cluster, db);
    for io in ["epoll", "uring"] {
        let before = accounts_index_scans(cluster, db);
        let args = [
            "-S",
            "-M",
            "prepared",
            "--describe",
            "-c",
            "2",
            "-j",
            "1",
            "-t",
            "50",
            "--io",
            io,
        ];
        let n = processed(&floor(cluster, db, &args));
        assert_eq!(n, 100, "--io {io}");
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut scans = accounts_index_scans(cluster, db) - before;
        while scans < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
            scans = accounts_index_scans(cluster, db) - before;
        }
        assert_eq!(scans, n, "--io {io}: index scans on the server");
    }
}

/// The notice of the fallback to epoll when io_uring is refused with EPERM.
const REFUSED_NOTICE: &str =
    "pgrush-floor: io_uring is not available (Operation not permitted (os error 1)): using epoll\n";

/// `--io uring` ran the io_uring loop (nothing on standard error) where this machine
/// lets a process create a ring; where it does not (a container's seccomp filter), the
/// run must have fallen back to epoll with its notice.
fn assert_ran_with_io_uring(stderr: &str) {
    match io_uring::IoUring::new(8) {
        Ok(_) => assert_eq!(stderr, "", "--io uring wrote to standard error"),
        Err(e) => assert!(
            stderr.starts_with("pgrush-floor: io_uring is not available"),
            "io_uring is refused here ({e}), yet no fallback notice: {stderr}"
        ),
    }
}

#[test]
fn uring_select_only_prepared_count_matches_the_server() {
    let stderr = select_only("floor_uring_select_prepared", "prepared", "uring", &[]);
    assert_ran_with_io_uring(&stderr);
}

#[test]
fn uring_select_only_simple_count_matches_the_server() {
    let stderr = select_only("floor_uring_select_simple", "simple", "uring", &[]);
    assert_ran_with_io_uring(&stderr);
}

/// Where io_uring is refused, `--io uring` says so in one line and runs with epoll.
#[test]
fn uring_refused_falls_back_to_epoll() {
    let env = [(REFUSE_IO_URING, "1")];
    let stderr = select_only("floor_uring_refused", "prepared", "uring", &env);
    assert_eq!(stderr, REFUSED_NOTICE);
}

/// tpcb-like: one pgbench_history row per transaction, and each transaction added the
/// same delta to an account, a teller, a branch and the history.
fn tpcb(db: &str, mode: &str, io: &str, limit: &[&str]) -> u64 {
    let cluster = pgrush_testkit::shared();
    init(cluster, db);
    let mut args = vec!["-M", mode, "-c", "3", "-j", "2", "-n", "--io", io];
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
        tpcb("floor_tpcb_prepared", "prepared", "epoll", &["-t", "40"]),
        3 * 40
    );
}

#[test]
fn tpcb_like_simple_count_matches_the_history() {
    let n = tpcb("floor_tpcb_simple", "simple", "epoll", &["-T", "1"]);
    assert!(n > 10, "only {n} transactions in 1 s");
}

#[test]
fn uring_tpcb_like_prepared_transactions_per_client() {
    assert_eq!(
        tpcb(
            "floor_uring_tpcb_prepared",
            "prepared",
            "uring",
            &["-t", "40"]
        ),
        3 * 40
    );
}

#[test]
fn uring_tpcb_like_simple_count_matches_the_history() {
    let n = tpcb("floor_uring_tpcb_simple", "simple", "uring", &["-T", "1"]);
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

/// A server that ends the connections in the middle of a `--io uring` run: the run
/// stops with the server's message (or the closed connection), exit status 2.
#[test]
fn uring_terminated_backends_end_the_run_with_a_clear_error() {
    let cluster = pgrush_testkit::shared();
    let db = "floor_uring_terminated";
    init(cluster, db);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush-floor"));
    pgrush_testkit::clear_pg_env(&mut cmd);
    let child = cmd
        .env_remove(REFUSE_IO_URING)
        .envs(cluster.env())
        .env("PGDATABASE", db)
        .args([
            "-S", "-c", "2", "-j", "1", "-n", "-T", "30", "--io", "uring",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pgrush-floor");
    // The run's backends: those that have run the script's SELECT.
    let running =
        format!("FROM pg_stat_activity WHERE datname = '{db}' AND query LIKE 'SELECT abalance%'");
    let deadline = Instant::now() + Duration::from_secs(10);
    while cluster
        .psql_db(db, &format!("SELECT count(*) {running}"))
        .expect("count")
        != "2"
    {
        assert!(Instant::now() < deadline, "the floor's run never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let sql = format!("SELECT count(pg_terminate_backend(pid)) {running}");
    assert_eq!(cluster.psql_db(db, &sql).expect("terminate"), "2");
    let out = child.wait_with_output().expect("wait for pgrush-floor");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("terminating connection") || err.contains("closed the connection"),
        "{err}"
    );
}
