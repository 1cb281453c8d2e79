//! Serialization failures and retries against pgbench 18: a REPEATABLE READ
//! hot-row script under concurrency, and a deterministic retry that must see
//! the same random values on each try. Failure reports with `--failures-detailed`
//! (and `--continue-on-error`) are compared with pgbench 19's, which pgrush follows.

mod bench_common;

use bench_common::{
    DB, Prog, Scratch, StderrMode, cluster, compare, compare_with, masked, rename, run,
    without_banner,
};

const HOT_ROW: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ;\n\
SELECT bbalance FROM pgbench_branches WHERE bid = 1;\n\
SELECT pg_sleep(0.002);\n\
UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;\n\
END;\n";

fn report_value(stdout: &str, label: &str) -> Option<u64> {
    stdout.lines().find_map(|l| {
        let rest = l.strip_prefix(label)?;
        let digits: String = rest
            .trim_start_matches([':', ' '])
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

#[test]
fn hot_row_retries_report_like_pgbench() {
    let dir = Scratch::new(&[("ser.sql", HOT_ROW)]);
    let args = [
        "-n",
        "-t",
        "10",
        "-c",
        "4",
        "-j",
        "2",
        "-f",
        "ser.sql",
        "--max-tries",
        "3",
        "--failures-detailed",
        "-r",
        "--verbose-errors",
    ];
    let ours = run(Prog::Pgrush, &dir.path, DB, &args);
    // pgbench 19's failure lines (`number of other failures` too); its banner differs.
    let theirs = run(Prog::Pgbench19, &dir.path, DB, &args);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(theirs.code, 0, "{}", theirs.stderr);
    // Same report lines (numbers masked).
    assert_eq!(
        masked(&without_banner(&ours.stdout)),
        masked(&without_banner(&rename(&theirs.stdout))),
        "{}\n{}",
        ours.stdout,
        theirs.stdout
    );
    // Every transaction ended: processed + failed = 40.
    let processed = report_value(&ours.stdout, "number of transactions actually processed")
        .expect("processed line");
    let failed = report_value(&ours.stdout, "number of failed transactions").expect("failed line");
    assert_eq!(processed + failed, 40, "{}", ours.stdout);
    let retried = report_value(&ours.stdout, "number of transactions retried").expect("retried");
    let retries = report_value(&ours.stdout, "total number of retries").expect("retries");
    assert!(retries >= retried, "{}", ours.stdout);
    // With 4 clients on one row, conflicts happen.
    assert!(retries + failed > 0, "no conflict at all?\n{}", ours.stdout);
    // Verbose error lines have pgbench's shapes.
    for l in ours.stderr.lines() {
        let ok = l.starts_with("pgrush: client ")
            && (l.contains(" got an error in command 3 (SQL) of script 0; ERROR:  could not serialize access due to concurrent update")
                || l.contains(" repeats the transaction after the error (try ")
                || l.contains(" ends the failed transaction (try "));
        assert!(ok, "unexpected stderr line: {l}\n{}", ours.stderr);
    }
}

#[test]
fn retry_replays_the_same_random_values() {
    let c = cluster();
    c.psql_db(
        DB,
        "create sequence if not exists retry_seq; \
         create or replace function fail_odd(bigint) returns int language plpgsql as $$ \
         begin if nextval('retry_seq') % 2 = 1 then \
         raise exception 'forced' using errcode = '40001'; end if; return 1; end $$;",
    )
    .expect("create function");
    let script = (
        "retry.sql",
        "\\set r random(1, 1000000000)\n\\set d debug(:r)\nselect fail_odd(:r);\n",
    );
    // The sequence alternates, so each transaction fails once and succeeds on its second try;
    // reset it before each program so both see the same pattern.
    let dir = Scratch::new(&[script]);
    let args = [
        "-n",
        "-t",
        "3",
        "--max-tries",
        "2",
        "--random-seed",
        "1",
        "-f",
        "retry.sql",
    ];
    c.psql_db(DB, "select setval('retry_seq', 1, false)")
        .expect("reset");
    let ours = run(Prog::Pgrush, &dir.path, DB, &args);
    c.psql_db(DB, "select setval('retry_seq', 1, false)")
        .expect("reset");
    let theirs = run(Prog::Pgbench, &dir.path, DB, &args);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let debug_lines = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.contains("debug("))
            .map(|l| l.replace("pgbench: ", "pgrush: "))
            .collect()
    };
    let ours_dbg = debug_lines(&ours.stderr);
    assert_eq!(
        ours_dbg,
        debug_lines(&theirs.stderr),
        "{}\n{}",
        ours.stderr,
        theirs.stderr
    );
    // 3 transactions, 2 tries each: each value printed twice in a row, values differ across tx.
    assert_eq!(ours_dbg.len(), 6, "{}", ours.stderr);
    for pair in ours_dbg.chunks(2) {
        assert_eq!(pair[0], pair[1]);
    }
    assert_ne!(ours_dbg[0], ours_dbg[2]);
    assert_eq!(
        report_value(&ours.stdout, "number of transactions retried"),
        Some(3)
    );
}

#[test]
fn unlimited_tries_under_duration() {
    compare(
        &[("ser.sql", HOT_ROW)],
        &[
            "-n",
            "-T",
            "2",
            "-c",
            "3",
            "-f",
            "ser.sql",
            "--max-tries",
            "0",
            "-r",
        ],
        StderrMode::Unordered,
    );
}

#[test]
fn continue_on_error_counts_other_failures() {
    // PostgreSQL 19's --continue-on-error: non-retryable SQL errors end the
    // transaction as a failure and the client goes on (pgbench 18 has no oracle).
    let dir = Scratch::new(&[(
        "div.sql",
        "\\if :client_id = 0\nselect 1/0;\n\\endif\nselect 1;\n",
    )]);
    let out = run(
        Prog::Pgrush,
        &dir.path,
        DB,
        &[
            "-n",
            "-t",
            "4",
            "-c",
            "2",
            "--continue-on-error",
            "--failures-detailed",
            "-f",
            "div.sql",
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(!out.stderr.contains("aborted"), "{}", out.stderr);
    assert_eq!(
        report_value(&out.stdout, "number of failed transactions"),
        Some(4),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("number of transactions actually processed: 4/8"),
        "{}",
        out.stdout
    );
}

/// pgbench 19's `--failures-detailed` report: serialization, deadlock and other
/// failures, in the totals and in each script's block, with and without
/// `--continue-on-error`, `-r` and `--max-tries`.
#[test]
fn detailed_failure_report_matches_pgbench19() {
    let dir = Scratch::new(&[
        (
            "div.sql",
            "\\if :client_id = 0\nselect 1/0;\n\\endif\nselect 1;\n",
        ),
        (
            "ser.sql",
            "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40001'; END $$;\n",
        ),
        ("one.sql", "select 1;\n"),
    ]);
    let base = ["-n", "-t", "3", "-c", "2", "--random-seed=5"];
    for extra in [
        &[
            "-f",
            "ser.sql",
            "-f",
            "one.sql",
            "--failures-detailed",
            "-r",
        ][..],
        &["-f", "ser.sql", "--failures-detailed", "--max-tries", "2"],
        &[
            "-f",
            "div.sql",
            "-f",
            "ser.sql",
            "--continue-on-error",
            "--failures-detailed",
            "-r",
            "--max-tries",
            "2",
        ],
        &[
            "-f",
            "div.sql",
            "--continue-on-error",
            "--failures-detailed",
        ],
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        compare_with(Prog::Pgbench19, &dir, DB, &args, &[], StderrMode::Unordered);
    }
}
