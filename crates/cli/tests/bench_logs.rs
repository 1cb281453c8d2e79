//! `-l` transaction logs against pgbench 18 (aggregation against pgbench 19,
//! whose aggregate lines pgrush writes): file names per thread, line formats,
//! sampling and aggregation; script choice and sampling are compared
//! exactly for a fixed seed.

mod bench_common;

use std::collections::BTreeMap;

use bench_common::{DB, Prog, Scratch, run};
use pgrush_testkit::mask_numbers;

const A: (&str, &str) = ("a.sql", "select 1;\n");
const B: (&str, &str) = ("b.sql", "select 2;\n");
const C: (&str, &str) = ("c.sql", "select 3;\n");

/// Runs one program, returns its log files with the pid in the name replaced by `PID`.
fn logs(prog: Prog, dir: &Scratch, prefix: &str, args: &[&str]) -> BTreeMap<String, String> {
    dir.remove_with_prefix(prefix);
    let out = run(prog, &dir.path, DB, args);
    assert_eq!(out.code, 0, "{prog:?} failed: {}", out.stderr);
    dir.files_with_prefix(prefix)
        .into_iter()
        .map(|(name, text)| {
            let parts: Vec<&str> = name.split('.').collect();
            let renamed = match parts.as_slice() {
                [p, _pid] => format!("{p}.PID"),
                [p, _pid, tid] => format!("{p}.PID.{tid}"),
                _ => name.clone(),
            };
            (renamed, text)
        })
        .collect()
}

/// Fields of each line except timing ones: (client, tx number, result word or `L`, script).
fn shape(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let lat = if f.get(2).is_some_and(|v| v.parse::<f64>().is_ok()) {
                "L"
            } else {
                f.get(2).copied().unwrap_or("")
            };
            format!(
                "{} {} {} {} fields={}",
                f.first().copied().unwrap_or(""),
                f.get(1).copied().unwrap_or(""),
                lat,
                f.get(3).copied().unwrap_or(""),
                f.len()
            )
        })
        .collect()
}

#[test]
fn per_thread_files_and_script_choice() {
    let dir = Scratch::new(&[A, B, C]);
    let args = [
        "-n",
        "-t",
        "12",
        "-c",
        "3",
        "-j",
        "2",
        "--random-seed=777",
        "-f",
        "a.sql@2",
        "-f",
        "b.sql@3",
        "-f",
        "c.sql@1",
        "-l",
    ];
    let ours = logs(Prog::Pgrush, &dir, "pgbench_log", &args);
    let theirs = logs(Prog::Pgbench, &dir, "pgbench_log", &args);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    assert_eq!(ours.len(), 2);
    // Thread 1 runs client 2 alone: its script sequence is exactly pgbench's.
    let t1 = "pgbench_log.PID.1";
    assert_eq!(
        shape(&ours[t1]),
        shape(&theirs[t1]),
        "{}\n--- pgbench:\n{}",
        ours[t1],
        theirs[t1]
    );
    // Thread 0's two clients share its choice generator, so which client gets which
    // script depends on timing; the thread's multiset of scripts does not.
    let scripts = |t: &str| {
        let mut v: Vec<String> = t
            .lines()
            .map(|l| l.split(' ').nth(3).unwrap_or("").to_string())
            .collect();
        v.sort();
        v
    };
    let t0 = "pgbench_log.PID";
    assert_eq!(scripts(&ours[t0]), scripts(&theirs[t0]));
    assert_eq!(ours[t0].lines().count(), 24);
}

#[test]
fn sampling_prefix_and_columns() {
    let dir = Scratch::new(&[A]);
    let args = [
        "-n",
        "-t",
        "20",
        "-f",
        "a.sql",
        "-l",
        "--sampling-rate=0.5",
        "--random-seed=4242",
        "--log-prefix=samp",
    ];
    let ours = logs(Prog::Pgrush, &dir, "samp", &args);
    let theirs = logs(Prog::Pgbench, &dir, "samp", &args);
    assert_eq!(ours.len(), 1);
    assert_eq!(
        ours.values().map(|t| shape(t)).collect::<Vec<_>>(),
        theirs.values().map(|t| shape(t)).collect::<Vec<_>>()
    );
    // Retries and lag columns.
    let args = [
        "-n",
        "-t",
        "5",
        "-f",
        "a.sql",
        "-l",
        "--max-tries",
        "2",
        "-R",
        "1000",
        "--random-seed=11",
        "--log-prefix=cols",
    ];
    let ours = logs(Prog::Pgrush, &dir, "cols", &args);
    let theirs = logs(Prog::Pgbench, &dir, "cols", &args);
    assert_eq!(
        ours.values().map(|t| shape(t)).collect::<Vec<_>>(),
        theirs.values().map(|t| shape(t)).collect::<Vec<_>>()
    );
}

#[test]
fn failure_words_and_retries_column() {
    let dir = Scratch::new(&[(
        "f.sql",
        "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40001'; END $$;\n",
    )]);
    for detailed in [true, false] {
        let mut args = vec![
            "-n",
            "-t",
            "3",
            "-f",
            "f.sql",
            "-l",
            "--max-tries",
            "2",
            "--log-prefix=fw",
        ];
        if detailed {
            args.push("--failures-detailed");
        }
        let ours = logs(Prog::Pgrush, &dir, "fw", &args);
        let theirs = logs(Prog::Pgbench, &dir, "fw", &args);
        let o: Vec<Vec<String>> = ours.values().map(|t| shape(t)).collect();
        assert_eq!(o, theirs.values().map(|t| shape(t)).collect::<Vec<_>>());
        let word = if detailed { "serialization" } else { "failed" };
        assert!(
            ours.values().all(|t| t.lines().all(|l| l.contains(word))),
            "{ours:?}"
        );
    }
}

#[test]
fn aggregate_intervals() {
    let dir = Scratch::new(&[A]);
    let args = [
        "-n",
        "-T",
        "2",
        "-f",
        "a.sql",
        "-l",
        "--aggregate-interval",
        "1",
        "--log-prefix=agg",
    ];
    let ours = logs(Prog::Pgrush, &dir, "agg", &args);
    // pgbench 19's lines: it added a 16th column (other failures), always written.
    let theirs = logs(Prog::Pgbench19, &dir, "agg", &args);
    let masked = |m: &BTreeMap<String, String>| -> Vec<String> {
        m.values()
            .flat_map(|t| t.lines().map(mask_numbers).collect::<Vec<_>>())
            .collect()
    };
    let o = masked(&ours);
    let t = masked(&theirs);
    assert!(!o.is_empty());
    // Same 16-field shape; line count may differ by one with the second boundary.
    for l in o.iter().chain(&t) {
        assert_eq!(l.split(' ').count(), 16, "{l}");
    }
    assert!(o.len().abs_diff(t.len()) <= 1, "{o:?} vs {t:?}");
    assert_eq!(o.first(), t.first());
}

#[test]
fn logged_transactions_match_report() {
    let dir = Scratch::new(&[A]);
    dir.remove_with_prefix("cnt");
    let out = run(
        Prog::Pgrush,
        &dir.path,
        DB,
        &[
            "-n",
            "-T",
            "1",
            "-c",
            "4",
            "-j",
            "2",
            "-f",
            "a.sql",
            "-l",
            "--log-prefix=cnt",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let processed: u64 = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("processed line");
    let lines: usize = dir
        .files_with_prefix("cnt")
        .values()
        .map(|t| t.lines().count())
        .sum();
    assert_eq!(lines as u64, processed);
}

/// `--exit-on-abort` with `-j 2`: client 1 (thread 1) aborts after a delay while
/// client 0 (thread 0) inserts one row per transaction. As pgbench's `exit()`
/// flushes every log buffer, thread 0's log must hold every transaction client 0
/// completed: the rows it inserted, but for at most one in flight at the exit.
#[test]
fn exit_on_abort_flushes_every_thread_log() {
    let c = bench_common::cluster();
    let db = "exitabort";
    c.create_database(db).expect("create db");
    let conn_psql = |sql: &str| {
        c.psql_db(db, sql)
            .unwrap_or_else(|e| panic!("psql {sql}: {e}"))
            .trim()
            .to_string()
    };
    conn_psql("create table hits(cid int)");
    let script = (
        "ab.sql",
        "\\if :client_id = 1\n\\sleep 400 ms\nselect 1/0;\n\\endif\ninsert into hits values (:client_id);\n",
    );
    let dir = Scratch::new(&[script]);
    let out = run(
        Prog::Pgrush,
        &dir.path,
        db,
        &[
            "-n",
            "-c",
            "2",
            "-j",
            "2",
            "-t",
            "1000000",
            "-l",
            "--log-prefix",
            "ab",
            "--exit-on-abort",
            "-f",
            "ab.sql",
        ],
    );
    assert_eq!(out.code, 2, "stderr: {}", out.stderr);
    assert!(
        out.stderr
            .contains("pgrush: error: Run was aborted due to an error in thread 1"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stdout
            .contains("number of transactions actually processed"),
        "no report expected: {}",
        out.stdout
    );
    let files = dir.files_with_prefix("ab.");
    let main_log = files
        .iter()
        .find(|(name, _)| name.split('.').count() == 2)
        .map(|(_, text)| text.clone())
        .expect("thread 0 log");
    assert!(
        main_log.is_empty() || main_log.ends_with('\n'),
        "truncated log line"
    );
    let logged = main_log
        .lines()
        .filter(|l| l.starts_with("0 ") && l.split(' ').count() == 6)
        .count() as u64;
    let rows: u64 = conn_psql("select count(*) from hits where cid = 0")
        .parse()
        .expect("row count");
    assert!(rows > 50, "client 0 ran too few transactions: {rows}");
    assert!(
        logged == rows || logged + 1 == rows,
        "thread 0 logged {logged} transactions, client 0 inserted {rows} rows"
    );
}
