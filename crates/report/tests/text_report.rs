//! The final report, compared with texts written from pgbench 18's samples and format rules
//! (pgbench 19's where they differ: `--failures-detailed` adds `number of other failures`).

use pgrush_report::text::{banner, render_report, render_report_lossy, write_report};
use pgrush_stats::{
    PartitionMethod, Partitioning, QueryMode, RunConfig, RunLimit, RunSummary, ScriptInfo,
    SimpleStats, TxOutcome, TxRecord,
};

fn config() -> RunConfig {
    RunConfig {
        scale: 1,
        partitioning: None,
        query_mode: QueryMode::Simple,
        clients: 1,
        threads: 1,
        max_tries: 1,
        limit: RunLimit::Transactions(20),
        rate: None,
        latency_limit_us: None,
        progress_s: None,
        connect_per_tx: false,
        failures_detailed: false,
        per_command: false,
        continue_on_error: false,
        warmup_s: None,
        reconnect: false,
    }
}

fn script(desc: &str, weight: u32, commands: &[&str]) -> ScriptInfo {
    ScriptInfo {
        desc: desc.as_bytes().to_vec(),
        weight,
        commands: commands.iter().map(|c| c.as_bytes().to_vec()).collect(),
    }
}

/// The report as text; these reports hold only UTF-8.
fn render(s: &RunSummary) -> String {
    String::from_utf8(render_report(s)).unwrap_or_else(|e| panic!("not UTF-8: {e}"))
}

fn tpcb() -> ScriptInfo {
    script("<builtin: TPC-B (sort of)>", 1, &[])
}

fn record(sum: &mut RunSummary, script: usize, outcome: TxOutcome, n: u64, tries: u32) {
    for _ in 0..n {
        sum.stats.record_tx(&TxRecord {
            script,
            outcome,
            latency_us: 100.0,
            lag_us: 0.0,
            tries,
        });
    }
}

/// Latency statistics with the given count, mean and stddev (µs).
fn latency(count: u64, mean: f64, sd: f64, max: f64) -> SimpleStats {
    let n = count as f64;
    SimpleStats {
        count,
        min: 0.0,
        max,
        sum: n * mean,
        sum2: n * (sd * sd + mean * mean),
    }
}

#[test]
fn basic_t20_sample() {
    let mut s = RunSummary::empty(config(), vec![tpcb()]);
    record(&mut s, 0, TxOutcome::Success, 20, 1);
    s.bench_duration_us = 4469;
    s.initial_connection_us = 1444;
    let mut out = Vec::new();
    write_report(&s, &mut out).unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&out),
        "transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 1
number of threads: 1
maximum number of tries: 1
number of transactions per client: 20
number of transactions actually processed: 20/20
number of failed transactions: 0 (0.000%)
latency average = 0.223 ms
initial connection time = 1.444 ms
tps = 4475.274111 (without initial connection time)
"
    );
}

#[test]
fn every_optional_line_sample() {
    let mut cfg = config();
    cfg.max_tries = 3;
    cfg.limit = RunLimit::Duration(3);
    cfg.rate = Some(200.0);
    cfg.latency_limit_us = Some(5000.0);
    cfg.progress_s = Some(1);
    cfg.failures_detailed = true;
    let mut s = RunSummary::empty(cfg, vec![script("<builtin: select only>", 1, &[])]);
    record(&mut s, 0, TxOutcome::Success, 665, 1);
    s.stats.total.latency = latency(665, 259.0, 429.0, 9000.0);
    s.stats.total.lag = SimpleStats {
        count: 665,
        min: 0.0,
        max: 4667.0,
        sum: 665.0 * 115.0,
        sum2: 0.0,
    };
    s.stats.total.late = 0;
    s.bench_duration_us = 2_988_000;
    s.initial_connection_us = 1802;
    assert_eq!(
        render(&s),
        "transaction type: <builtin: select only>
scaling factor: 1
query mode: simple
number of clients: 1
number of threads: 1
maximum number of tries: 3
duration: 3 s
number of transactions actually processed: 665
number of failed transactions: 0 (0.000%)
number of serialization failures: 0 (0.000%)
number of deadlock failures: 0 (0.000%)
number of other failures: 0 (0.000%)
number of transactions retried: 0 (0.000%)
total number of retries: 0
number of transactions skipped: 0 (0.000%)
number of transactions above the 5.0 ms latency limit: 0/665 (0.000%)
latency average = 0.259 ms
latency stddev = 0.429 ms
rate limit schedule lag: avg 0.115 (max 4.667) ms
initial connection time = 1.802 ms
tps = 222.556894 (without initial connection time)
"
    );
}

#[test]
fn per_script_blocks_with_commands() {
    let mut cfg = config();
    cfg.limit = RunLimit::Transactions(30);
    cfg.per_command = true;
    let scripts = vec![
        script(
            "<builtin: simple update>",
            2,
            &["\\set aid random(1, 100000 * :scale)", "BEGIN;"],
        ),
        script("<builtin: select only>", 3, &["SELECT 1;"]),
        script("one.sql", 1, &["SELECT 2;"]),
        script("never.sql", 0, &["SELECT 3;"]),
    ];
    let mut s = RunSummary::empty(cfg, scripts);
    record(&mut s, 0, TxOutcome::Success, 11, 1);
    record(&mut s, 1, TxOutcome::Success, 14, 1);
    record(&mut s, 2, TxOutcome::Success, 5, 1);
    s.stats.scripts[0].tx.latency = latency(11, 3746.0, 654.0, 5000.0);
    s.stats.scripts[1].tx.latency = latency(14, 1000.0, 0.0, 1000.0);
    s.stats.scripts[2].tx.latency = latency(5, 2000.0, 500.0, 3000.0);
    s.stats.record_command(0, 0, 1.0);
    s.stats.record_command(0, 1, 120.0);
    s.stats.record_command(0, 1, 130.0);
    s.stats.record_command(1, 0, 1234.5678);
    s.bench_duration_us = 42_250;
    s.initial_connection_us = 2000;
    let text = render(&s);
    let expected_tail = "initial connection time = 2.000 ms
tps = 710.059172 (without initial connection time)
SQL script 1: <builtin: simple update>
 - weight: 2 (targets 33.3% of total)
 - 11 transactions (36.7% of total)
 - number of transactions actually processed: 11 (tps = 260.355030)
 - number of failed transactions: 0 (0.000%)
 - latency average = 3.746 ms
 - latency stddev = 0.654 ms
 - statement latencies in milliseconds and failures:
         0.001           0 \\set aid random(1, 100000 * :scale)
         0.125           0 BEGIN;
SQL script 2: <builtin: select only>
 - weight: 3 (targets 50.0% of total)
 - 14 transactions (46.7% of total)
 - number of transactions actually processed: 14 (tps = 331.360947)
 - number of failed transactions: 0 (0.000%)
 - latency average = 1.000 ms
 - latency stddev = 0.000 ms
 - statement latencies in milliseconds and failures:
         1.235           0 SELECT 1;
SQL script 3: one.sql
 - weight: 1 (targets 16.7% of total)
 - 5 transactions (16.7% of total)
 - number of transactions actually processed: 5 (tps = 118.343195)
 - number of failed transactions: 0 (0.000%)
 - latency average = 2.000 ms
 - latency stddev = 0.500 ms
 - statement latencies in milliseconds and failures:
         0.000           0 SELECT 2;
SQL script 4: never.sql
 - weight: 0 (targets 0.0% of total)
 - 0 transactions (0.0% of total)
 - statement latencies in milliseconds and failures:
         0.000           0 SELECT 3;
";
    assert!(
        text.starts_with("transaction type: multiple scripts\n"),
        "{text}"
    );
    assert!(
        text.contains("number of transactions actually processed: 30/30\n"),
        "{text}"
    );
    assert!(text.ends_with(expected_tail), "{text}");
}

#[test]
fn failures_retries_and_retry_columns() {
    let mut cfg = config();
    cfg.clients = 4;
    cfg.threads = 1;
    cfg.limit = RunLimit::Transactions(10);
    cfg.max_tries = 3;
    cfg.failures_detailed = true;
    cfg.per_command = true;
    let cmds = [
        "BEGIN ISOLATION LEVEL REPEATABLE READ;",
        "SELECT bbalance FROM pgbench_branches WHERE bid = 1;",
        "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;",
    ];
    let mut s = RunSummary::empty(cfg, vec![script("ser.sql", 1, &cmds)]);
    // 25 successes (7 retried once), 15 failures (11 after 3 tries): 18 retried, 7 + 22 retries.
    record(&mut s, 0, TxOutcome::Success, 18, 1);
    record(&mut s, 0, TxOutcome::Success, 7, 2);
    record(&mut s, 0, TxOutcome::SerializationFailure, 11, 3);
    record(&mut s, 0, TxOutcome::SerializationFailure, 4, 1);
    s.stats.record_command(0, 0, 21.0);
    s.stats.record_command(0, 1, 62.0);
    for _ in 0..15 {
        s.stats.record_command_failure(0, 2);
    }
    for _ in 0..34 {
        s.stats.record_command_retry(0, 2);
    }
    s.bench_duration_us = 59_746;
    s.initial_connection_us = 5490;
    assert_eq!(
        render(&s),
        "transaction type: ser.sql
scaling factor: 1
query mode: simple
number of clients: 4
number of threads: 1
maximum number of tries: 3
number of transactions per client: 10
number of transactions actually processed: 25/40
number of failed transactions: 15 (37.500%)
number of serialization failures: 15 (37.500%)
number of deadlock failures: 0 (0.000%)
number of other failures: 0 (0.000%)
number of transactions retried: 18 (45.000%)
total number of retries: 29
latency average = 5.975 ms (including failures)
initial connection time = 5.490 ms
tps = 418.438054 (without initial connection time)
statement latencies in milliseconds, failures and retries:
         0.021           0          0 BEGIN ISOLATION LEVEL REPEATABLE READ;
         0.062           0          0 SELECT bbalance FROM pgbench_branches WHERE bid = 1;
         0.000          15         34 UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;
"
    );
}

#[test]
fn skipped_and_late_sample() {
    let mut cfg = config();
    cfg.limit = RunLimit::Transactions(200);
    cfg.rate = Some(20000.0);
    cfg.latency_limit_us = Some(100.0);
    let mut s = RunSummary::empty(cfg, vec![script("<builtin: select only>", 1, &[])]);
    record(&mut s, 0, TxOutcome::Success, 133, 1);
    record(&mut s, 0, TxOutcome::Skipped, 67, 1);
    s.stats.total.late = 55;
    s.stats.total.latency = latency(133, 118.0, 170.0, 900.0);
    s.stats.total.lag = SimpleStats {
        count: 133,
        min: 0.0,
        max: 100.0,
        sum: 133.0 * 59.0,
        sum2: 0.0,
    };
    s.bench_duration_us = 50_000;
    s.initial_connection_us = 1000;
    let text = render(&s);
    assert!(
        text.contains(
            "number of transactions actually processed: 133/200
number of failed transactions: 0 (0.000%)
number of transactions skipped: 67 (33.500%)
number of transactions above the 0.1 ms latency limit: 55/133 (41.353%)
latency average = 0.118 ms
latency stddev = 0.170 ms
rate limit schedule lag: avg 0.059 (max 0.100) ms
initial connection time = 1.000 ms
tps = 2660.000000 (without initial connection time)
"
        ),
        "{text}"
    );
    assert!(!text.contains("retried"), "{text}");
}

#[test]
fn connect_per_transaction_sample() {
    let mut cfg = config();
    cfg.limit = RunLimit::Transactions(3);
    cfg.connect_per_tx = true;
    let mut s = RunSummary::empty(cfg, vec![script("<builtin: select only>", 1, &[])]);
    record(&mut s, 0, TxOutcome::Success, 3, 1);
    s.stats.add_conn_time_us(6135);
    s.bench_duration_us = 7204;
    s.initial_connection_us = 999_999; // not printed with -C
    assert!(render(&s).ends_with(
        "number of failed transactions: 0 (0.000%)
latency average = 2.401 ms
average connection time = 2.045 ms
tps = 416.435314 (including reconnection times)
"
    ));
}

#[test]
fn nothing_ran_stops_after_processed_line() {
    let mut cfg = config();
    cfg.limit = RunLimit::Transactions(1);
    cfg.per_command = true;
    cfg.failures_detailed = true;
    let mut s = RunSummary::empty(cfg, vec![script("ab.sql", 1, &["SELECT 1/0;"])]);
    s.aborted = true;
    s.bench_duration_us = 1000;
    let text = render(&s);
    assert!(
        text.ends_with("number of transactions actually processed: 0/1\n"),
        "{text}"
    );
    assert!(!text.contains("failed"), "{text}");
}

#[test]
fn only_failures_prints_everything() {
    let mut cfg = config();
    cfg.limit = RunLimit::Transactions(3);
    cfg.per_command = true;
    let cmd = "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40001'; END $$;";
    let mut s = RunSummary::empty(cfg, vec![script("f40001.sql", 1, &[cmd])]);
    record(&mut s, 0, TxOutcome::SerializationFailure, 3, 1);
    for _ in 0..3 {
        s.stats.record_command_failure(0, 0);
    }
    s.bench_duration_us = 1200;
    s.initial_connection_us = 1704;
    let text = render(&s);
    assert!(
        text.ends_with(&format!(
            "number of transactions actually processed: 0/3
number of failed transactions: 3 (100.000%)
latency average = 0.400 ms (including failures)
initial connection time = 1.704 ms
tps = 0.000000 (without initial connection time)
statement latencies in milliseconds and failures:
         0.000           3 {cmd}
"
        )),
        "{text}"
    );
}

#[test]
fn only_failures_measured_and_throttled() {
    let mut cfg = config();
    cfg.limit = RunLimit::Transactions(3);
    cfg.max_tries = 2;
    cfg.rate = Some(1000.0);
    cfg.latency_limit_us = Some(100_000.0);
    let mut s = RunSummary::empty(cfg, vec![script("f40001.sql", 1, &[])]);
    record(&mut s, 0, TxOutcome::SerializationFailure, 3, 2);
    s.bench_duration_us = 3000;
    s.initial_connection_us = 1500;
    assert!(render(&s).ends_with(
        "number of transactions actually processed: 0/3
number of failed transactions: 3 (100.000%)
number of transactions retried: 3 (100.000%)
total number of retries: 3
number of transactions skipped: 0 (0.000%)
number of transactions above the 100.0 ms latency limit: 0/0 (0.000%)
rate limit schedule lag: avg NaN (max 0.000) ms
initial connection time = 1.500 ms
tps = 0.000000 (without initial connection time)
"
    ));
}

#[test]
fn partitions_unlimited_tries_and_modes() {
    let mut cfg = config();
    cfg.scale = 20;
    cfg.partitioning = Some(Partitioning {
        method: PartitionMethod::Hash,
        count: 3,
    });
    cfg.query_mode = QueryMode::Prepared;
    cfg.max_tries = 0;
    cfg.clients = 8;
    cfg.threads = 2;
    let mut s = RunSummary::empty(cfg, vec![tpcb()]);
    record(&mut s, 0, TxOutcome::Success, 10, 1);
    record(&mut s, 0, TxOutcome::DeadlockFailure, 2, 5);
    s.bench_duration_us = 1_000_000;
    let text = render(&s);
    assert!(
        text.starts_with(
            "transaction type: <builtin: TPC-B (sort of)>
scaling factor: 20
partition method: hash
partitions: 3
query mode: prepared
number of clients: 8
number of threads: 2
number of transactions per client: 20
number of transactions actually processed: 10/160
number of failed transactions: 2 (16.667%)
number of transactions retried: 2 (16.667%)
total number of retries: 8
latency average = 666.667 ms (including failures)
initial connection time = 0.000 ms
tps = 10.000000 (without initial connection time)
"
        ),
        "{text}"
    );
    assert!(!text.contains("maximum number of tries"));
}

#[test]
fn per_script_failure_details_and_other_failures() {
    let mut cfg = config();
    cfg.limit = RunLimit::Duration(10);
    cfg.max_tries = 2;
    cfg.failures_detailed = true;
    cfg.continue_on_error = true;
    cfg.rate = Some(100.0);
    cfg.latency_limit_us = Some(1000.0);
    let mut s = RunSummary::empty(cfg, vec![script("a.sql", 1, &[]), script("b.sql", 1, &[])]);
    record(&mut s, 0, TxOutcome::Success, 6, 1);
    record(&mut s, 0, TxOutcome::OtherFailure, 1, 1);
    record(&mut s, 0, TxOutcome::Skipped, 1, 1);
    s.bench_duration_us = 2_000_000;
    let text = render(&s);
    assert!(
        text.contains(
            "number of serialization failures: 0 (0.000%)
number of deadlock failures: 0 (0.000%)
number of other failures: 1 (12.500%)
"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "SQL script 1: a.sql
 - weight: 1 (targets 50.0% of total)
 - 8 transactions (100.0% of total)
 - number of transactions actually processed: 6 (tps = 3.000000)
 - number of failed transactions: 1 (12.500%)
 - number of serialization failures: 0 (0.000%)
 - number of deadlock failures: 0 (0.000%)
 - number of other failures: 1 (12.500%)
 - number of transactions retried: 0 (0.000%)
 - total number of retries: 0
 - number of transactions skipped: 1 (12.500%)
 - latency average = 0.100 ms
 - latency stddev = 0.000 ms
SQL script 2: b.sql
 - weight: 1 (targets 50.0% of total)
 - 0 transactions (0.0% of total)
"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(" - 0 transactions (0.0% of total)\n"),
        "{text}"
    );
}

#[test]
fn banners() {
    assert_eq!(
        banner(150018, "15.18 (Debian 15.18-0+deb12u1)"),
        "pgrush (18.6, server 15.18 (Debian 15.18-0+deb12u1))"
    );
    assert_eq!(banner(180006, "18.6"), "pgrush (18.6)");
    assert_eq!(banner(180002, "18.2"), "pgrush (18.6, server 18.2)");
    assert_eq!(banner(170002, ""), "pgrush (18.6, server 17.2)");
    assert_eq!(banner(90624, ""), "pgrush (18.6, server 9.6.24)");
}

/// Captured from pgbench 18.6 (`-n -T 1 -c 2 -b simple-update@2 -b select-only@3 -f one.sql
/// -f w0.sql@0 -r --max-tries 0 -L 1000 -R 50`), stats rebuilt to give the same numbers.
#[test]
fn real_pgbench18_multi_script_unlimited_tries() {
    let mut cfg = config();
    cfg.clients = 2;
    cfg.max_tries = 0;
    cfg.limit = RunLimit::Duration(1);
    cfg.rate = Some(50.0);
    cfg.latency_limit_us = Some(1_000_000.0);
    cfg.per_command = true;
    let su = [
        "\\set aid random(1, 100000 * :scale)",
        "\\set bid random(1, 1 * :scale)",
        "\\set tid random(1, 10 * :scale)",
        "\\set delta random(-5000, 5000)",
        "BEGIN;",
        "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;",
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);",
        "END;",
    ];
    let so = [
        "\\set aid random(1, 100000 * :scale)",
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
    ];
    let scripts = vec![
        script("<builtin: simple update>", 2, &su),
        script("<builtin: select only>", 3, &so),
        script("one.sql", 1, &["SELECT 1;"]),
        script("w0.sql", 0, &["SELECT 1;"]),
    ];
    let mut s = RunSummary::empty(cfg, scripts);
    record(&mut s, 0, TxOutcome::Success, 22, 1);
    record(&mut s, 1, TxOutcome::Success, 18, 1);
    record(&mut s, 2, TxOutcome::Success, 2, 1);
    s.stats.total.latency = latency(42, 31486.0, 117159.0, 0.0);
    s.stats.total.lag.sum = 42.0 * 1850.0;
    s.stats.total.lag.max = 21871.0;
    s.stats.scripts[0].tx.latency = latency(22, 57834.0, 157241.0, 0.0);
    s.stats.scripts[1].tx.latency = latency(18, 2750.0, 5145.0, 0.0);
    s.stats.scripts[2].tx.latency = latency(2, 291.0, 205.0, 0.0);
    for (j, us) in [6.0, 2.0, 1.0, 1.0, 722.0, 627.0, 128.0, 98.0, 54653.0]
        .into_iter()
        .enumerate()
    {
        s.stats.record_command(0, j, us);
    }
    s.stats.record_command(1, 0, 5.0);
    s.stats.record_command(1, 1, 398.0);
    s.stats.record_command(2, 0, 109.0);
    s.bench_duration_us = 1_356_574;
    s.initial_connection_us = 20_250;
    let expected = "transaction type: multiple scripts
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 1
duration: 1 s
number of transactions actually processed: 42
number of failed transactions: 0 (0.000%)
number of transactions retried: 0 (0.000%)
total number of retries: 0
number of transactions skipped: 0 (0.000%)
number of transactions above the 1000.0 ms latency limit: 0/42 (0.000%)
latency average = 31.486 ms
latency stddev = 117.159 ms
rate limit schedule lag: avg 1.850 (max 21.871) ms
initial connection time = 20.250 ms
tps = 30.960346 (without initial connection time)
SQL script 1: <builtin: simple update>
 - weight: 2 (targets 33.3% of total)
 - 22 transactions (52.4% of total)
 - number of transactions actually processed: 22 (tps = 16.217324)
 - number of failed transactions: 0 (0.000%)
 - number of transactions retried: 0 (0.000%)
 - total number of retries: 0
 - number of transactions skipped: 0 (0.000%)
 - latency average = 57.834 ms
 - latency stddev = 157.241 ms
 - statement latencies in milliseconds, failures and retries:
         0.006           0          0 \\set aid random(1, 100000 * :scale)
         0.002           0          0 \\set bid random(1, 1 * :scale)
         0.001           0          0 \\set tid random(1, 10 * :scale)
         0.001           0          0 \\set delta random(-5000, 5000)
         0.722           0          0 BEGIN;
         0.627           0          0 UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
         0.128           0          0 SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
         0.098           0          0 INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
        54.653           0          0 END;
SQL script 2: <builtin: select only>
 - weight: 3 (targets 50.0% of total)
 - 18 transactions (42.9% of total)
 - number of transactions actually processed: 18 (tps = 13.268720)
 - number of failed transactions: 0 (0.000%)
 - number of transactions retried: 0 (0.000%)
 - total number of retries: 0
 - number of transactions skipped: 0 (0.000%)
 - latency average = 2.750 ms
 - latency stddev = 5.145 ms
 - statement latencies in milliseconds, failures and retries:
         0.005           0          0 \\set aid random(1, 100000 * :scale)
         0.398           0          0 SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SQL script 3: one.sql
 - weight: 1 (targets 16.7% of total)
 - 2 transactions (4.8% of total)
 - number of transactions actually processed: 2 (tps = 1.474302)
 - number of failed transactions: 0 (0.000%)
 - number of transactions retried: 0 (0.000%)
 - total number of retries: 0
 - number of transactions skipped: 0 (0.000%)
 - latency average = 0.291 ms
 - latency stddev = 0.205 ms
 - statement latencies in milliseconds, failures and retries:
         0.109           0          0 SELECT 1;
SQL script 4: w0.sql
 - weight: 0 (targets 0.0% of total)
 - 0 transactions (0.0% of total)
 - statement latencies in milliseconds, failures and retries:
         0.000           0          0 SELECT 1;
";
    assert_eq!(render(&s), expected);
}

/// Script names and command texts are printed as their bytes (a Latin-1 file name and
/// SQL line stay Latin-1); the lossy text replaces just those bytes.
#[test]
fn script_bytes_are_printed_raw() {
    let mut cfg = config();
    cfg.limit = RunLimit::Transactions(1);
    cfg.per_command = true;
    let latin1 = |desc: &[u8], command: &[u8]| ScriptInfo {
        desc: desc.to_vec(),
        weight: 1,
        commands: vec![command.to_vec()],
    };
    let mut one = RunSummary::empty(cfg.clone(), vec![latin1(b"caf\xe9.sql", b"SELECT '\xe9';")]);
    record(&mut one, 0, TxOutcome::Success, 1, 1);
    one.bench_duration_us = 1000;
    let bytes = render_report(&one);
    assert!(bytes.starts_with(b"transaction type: caf\xe9.sql\n"));
    assert!(
        bytes.ends_with(b" SELECT '\xe9';\n"),
        "{}",
        bytes.escape_ascii()
    );
    let mut written = Vec::new();
    write_report(&one, &mut written).unwrap_or_default();
    assert_eq!(written, bytes);
    let lossy = render_report_lossy(&one);
    assert!(lossy.starts_with("transaction type: caf\u{fffd}.sql\n"));
    assert!(lossy.ends_with(" SELECT '\u{fffd}';\n"));
    assert_eq!(lossy.len(), bytes.len() + 4, "two bytes became U+FFFD");
    // Two scripts: the per-script headers carry the names' bytes.
    let mut two = RunSummary::empty(
        cfg,
        vec![
            latin1(b"\xe9t\xe9.sql", b"SELECT 1;"),
            latin1(b"b.sql", b"\\set x '\xff'"),
        ],
    );
    record(&mut two, 0, TxOutcome::Success, 1, 1);
    two.bench_duration_us = 1000;
    let bytes = render_report(&two);
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"transaction type: multiple scripts\n"));
    assert!(
        has(b"\nSQL script 1: \xe9t\xe9.sql\n"),
        "{}",
        bytes.escape_ascii()
    );
    assert!(has(b"\nSQL script 2: b.sql\n"));
    assert!(
        bytes.ends_with(b" \\set x '\xff'\n"),
        "{}",
        bytes.escape_ascii()
    );
}
