//! `--warmup DURATION`: the clients run the workload first and nothing of it is
//! counted. Checked by arithmetic on a script of a fixed `\sleep`: each client
//! runs ten transactions a second, the `-l` log's start times (end minus latency)
//! against the instant the program was started, the report's counts, and the
//! server's commits (`--server-stats`) against the measured transactions.

mod bench_common;

use std::time::{SystemTime, UNIX_EPOCH};

use bench_common::{EMPTY_DB, Prog, Scratch, run};
use pgrush_testkit::Output;

/// Each transaction takes 100 ms (and a little more): ten a second per client.
const SLEEP: (&str, &str) = ("sleep.sql", "\\sleep 100 ms\n");

/// Now, in Unix µs.
fn unix_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_micros() as i64
}

/// One `-l` line: client, transaction number, start (Unix µs), lag (µs, with `-R`).
#[derive(Debug)]
struct Line {
    client: u32,
    tx_no: u64,
    start_us: i64,
    lag_us: Option<i64>,
}

/// The lines of every log file starting with `prefix`.
fn log_lines(dir: &Scratch, prefix: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    for text in dir.files_with_prefix(prefix).values() {
        for l in text.lines() {
            let f: Vec<i64> = l
                .split(' ')
                .map(|v| v.parse().unwrap_or_else(|_| panic!("bad field in {l:?}")))
                .collect();
            let end_us = f[4] * 1_000_000 + f[5];
            lines.push(Line {
                client: f[0] as u32,
                tx_no: f[1] as u64,
                start_us: end_us - f[2],
                lag_us: f.get(6).copied(),
            });
        }
    }
    lines
}

/// The report's `number of transactions actually processed: N` (or `N/M`) count.
fn processed(out: &Output) -> u64 {
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .unwrap_or_else(|| panic!("no processed line in:\n{}", out.stdout));
    line.split('/').next().unwrap().parse().unwrap()
}

/// `-n -f sleep.sql` and `extra` (split at spaces).
fn sleep_run(extra: &str) -> Vec<&str> {
    let mut args = vec!["-n", "-f", SLEEP.0];
    args.extend(extra.split(' '));
    args
}

/// Every logged transaction started at least a second (the warm-up) after `launched`.
fn assert_after_warmup(lines: &[Line], launched: i64) {
    for l in lines {
        assert!(
            l.start_us >= launched + 1_000_000,
            "transaction {l:?} started {} µs after the launch, in the warm-up",
            l.start_us - launched
        );
    }
}

/// Runs pgrush in `dir` with `args`; returns the output and when it was started.
fn run_timed(dir: &Scratch, args: &[&str]) -> (Output, i64) {
    bench_common::cluster(); // set up before the clock is read
    let launched = unix_us();
    let out = run(Prog::Pgrush, &dir.path, EMPTY_DB, args);
    assert_eq!(out.code, 0, "pgrush failed: {}", out.stderr);
    (out, launched)
}

#[test]
fn duration_counts_nothing_of_the_warmup() {
    let dir = Scratch::new(&[SLEEP]);
    let args = sleep_run(
        "-c 2 -j 2 --warmup 1s -T 1 -P 1 -l --log-prefix=warm --json=run.json --html=run.html",
    );
    let (out, launched) = run_timed(&dir, &args);
    let lines = log_lines(&dir, "warm");
    // Two seconds of running at ten a second per client would be about 40; the
    // measured second is about 20 (the transaction in flight at the -T end is counted).
    let n = lines.len() as u64;
    assert!(
        (12..=26).contains(&n),
        "{n} transactions logged:\n{}",
        out.stdout
    );
    assert_eq!(processed(&out), n, "report and log disagree");
    // The warm-up ends one second after the run start, which follows the launch.
    assert_after_warmup(&lines, launched);
    // Numbering starts with the first measured transaction of each client.
    for client in [0, 1] {
        let nos: Vec<u64> = lines
            .iter()
            .filter(|l| l.client == client)
            .map(|l| l.tx_no)
            .collect();
        assert_eq!(nos.iter().min(), Some(&1), "client {client}: {nos:?}");
    }
    assert!(out.stdout.contains("\nduration: 1 s\n"), "{}", out.stdout);
    // pgrush's own line after pgbench's report says there was a warm-up.
    assert!(
        out.stdout
            .contains("\nwarm-up: 1 s before the measured duration, not counted\n"),
        "{}",
        out.stdout
    );
    // The document starts at the end of the warm-up; its intervals hold what the log does.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path.join("run.json")).unwrap()).unwrap();
    assert_eq!(doc["config"]["warmup_s"], 1, "{}", doc["config"]);
    let page = std::fs::read_to_string(dir.path.join("run.html")).unwrap();
    assert!(
        page.contains("<th>warm-up</th><td>1 s before the measured run, not counted</td>"),
        "no warm-up in the page's summary"
    );
    let start_us = (doc["start_time_unix"].as_f64().unwrap() * 1e6) as i64;
    assert!(
        start_us >= launched + 1_000_000,
        "document starts {start_us}"
    );
    let intervals = doc["time_series"]["intervals"].as_array().unwrap();
    let in_series: u64 = intervals
        .iter()
        .map(|i| i["transactions"]["processed"].as_u64().unwrap())
        .sum();
    assert_eq!(in_series, n, "{intervals:?}");
    // Progress: the warm-up's line says so; the measured one is pgbench's, its time
    // counted from the warm-up's end (about 1 s, not 2).
    let progress: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(
        progress
            .first()
            .is_some_and(|l| l.contains(" s (warm-up), ")),
        "{progress:?}"
    );
    assert!(
        progress
            .last()
            .is_some_and(|l| l.starts_with("progress: 1.") && !l.contains("warm-up")),
        "{progress:?}"
    );
}

#[test]
fn transactions_are_extra() {
    let dir = Scratch::new(&[SLEEP]);
    let args = sleep_run("-c 2 -j 2 --warmup 1 -t 3 -l --log-prefix=extra");
    let (out, launched) = run_timed(&dir, &args);
    assert!(
        out.stdout
            .contains("number of transactions actually processed: 6/6\n"),
        "{}",
        out.stdout
    );
    let lines = log_lines(&dir, "extra");
    assert_eq!(lines.len(), 6);
    assert_after_warmup(&lines, launched);
}

#[test]
fn rate_schedule_restarts_at_the_end_of_the_warmup() {
    // One client can run 10 a second; -R 50 leaves it 0.8 s behind after a 1 s
    // warm-up. Were the schedule not restarted, its slots would stay before the
    // warm-up's end for the whole measured second and none would count.
    let dir = Scratch::new(&[SLEEP]);
    let args = sleep_run("-c 1 -R 50 --warmup 1 -T 1 --random-seed=7 -l --log-prefix=rate");
    let (out, _) = run_timed(&dir, &args);
    let mut lines = log_lines(&dir, "rate");
    lines.sort_by_key(|l| l.tx_no);
    assert!(lines.len() >= 5, "{lines:?}\n{}", out.stdout);
    let first_lag = lines[0].lag_us.expect("a lag column with -R");
    assert!(
        first_lag < 500_000,
        "backlog of the warm-up in the first lag: {first_lag} µs"
    );
}

#[test]
fn bad_durations_are_refused() {
    let dir = Scratch::new(&[SLEEP]);
    for bad in ["0", "x", "1.5", "10ms"] {
        let out = run(Prog::Pgrush, &dir.path, EMPTY_DB, &["-n", "--warmup", bad]);
        assert_eq!(out.code, 1, "--warmup {bad}: {}", out.stderr);
        assert!(
            out.stderr.contains("--warmup"),
            "--warmup {bad}: {}",
            out.stderr
        );
    }
}

#[test]
fn aggregates_start_at_the_end_of_the_warmup() {
    let dir = Scratch::new(&[SLEEP]);
    let args = sleep_run("-c 1 --warmup 1 -T 2 -l --aggregate-interval=1 --log-prefix=agg");
    let (out, launched) = run_timed(&dir, &args);
    let files = dir.files_with_prefix("agg");
    let text = files.values().next().expect("a log file");
    // interval_start num_transactions ...: intervals are whole seconds, the first one
    // the second of the warm-up's end (so it is partial), none before it, not even an
    // empty one; about ten transactions in each whole measured second.
    let rows: Vec<(i64, u64)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap())
        })
        .collect();
    assert!(!rows.is_empty(), "{}", out.stdout);
    let warmup_end_s = (launched + 1_000_000) / 1_000_000;
    assert!(rows[0].0 >= warmup_end_s, "{rows:?} launch {launched}");
    assert!(
        rows[1..].iter().all(|&(_, n)| (5..=11).contains(&n)),
        "{rows:?}"
    );
}

#[test]
fn server_statistics_count_only_the_measured_time() {
    // One commit per transaction, twenty a second: a warm-up second counted by the
    // server would add about 20 commits to the measured 20. One client reading a
    // table: a backend flushes its statistics once a second only when it has a
    // table's pending (`SELECT 1` alone leaves its commits pending for longer), and
    // two backends that flush at the same instant can find the counters locked (the
    // one that waits not tries again for a second).
    let dir = Scratch::new(&[(
        "select.sql",
        "SELECT relname FROM pg_class WHERE oid = 1259;\n\\sleep 50 ms\n",
    )]);
    let args = [
        "-n",
        "-f",
        "select.sql",
        "-c",
        "1",
        "-j",
        "1",
        "--warmup",
        "2",
        "-T",
        "1",
        "--server-stats",
        "--json=run.json",
    ];
    let (out, _) = run_timed(&dir, &args);
    let measured = processed(&out) as f64;
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path.join("run.json")).unwrap()).unwrap();
    let ss = &doc["server_stats"];
    let commits = ss["database"]["commits"].as_f64().expect("commits");
    let in_intervals: f64 = ss["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .map(|i| i["database"]["commits"].as_f64().expect("commits"))
        .sum();
    // The sampler's own commits are subtracted already (each of its queries flushes
    // its statistics at once, so they are known exactly), and the end is exact (the
    // last reading follows the backends' exit flush). What is left is the count at the
    // warm-up's end: read-only transactions have no live signal, so each flush of the
    // backend (once a second) is spread evenly over the second before it; a flush is
    // seen within one wait period (100 ms: two transactions) and the estimate at the
    // edge rounds (one more).
    // Without readings before the edge the last second of the warm-up was counted:
    // about 20 too many.
    let shown = format!(
        "{commits} commits, {measured} measured: {ss}\n{}",
        out.stdout
    );
    assert!((commits - measured).abs() <= 3.0, "{shown}");
    assert!((in_intervals - commits).abs() <= 1.0, "{shown}");
}
