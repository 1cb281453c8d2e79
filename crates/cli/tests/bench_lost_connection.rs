//! A backend that ends the session (`pg_terminate_backend` of its own pid: a
//! `FATAL` error, then the server closes the connection) against pgbench 18 and 19:
//! the client aborts with pgbench's one message, in every query mode, and under
//! PostgreSQL 19's `--continue-on-error` too (no failure counted, no retry).

mod bench_common;

use bench_common::{DB, Prog, Scratch, rename, run};

const TERMINATE: (&str, &str) = (
    "terminate.sql",
    "select 1;\nselect pg_terminate_backend(pg_backend_pid());\n",
);

/// The lines of `stderr` about clients (pgbench's name replaced by pgrush's),
/// sorted: clients of one thread abort in the order their replies come.
fn client_lines(stderr: &str) -> Vec<String> {
    let mut lines: Vec<String> = rename(stderr)
        .lines()
        .filter(|l| l.contains("client "))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// Runs pgrush and `oracle` with `args`: the same client messages, the same exit
/// status, and the same report lines on failures and processed transactions.
fn assert_same_end(oracle: Prog, dir: &Scratch, args: &[&str]) {
    let ours = run(Prog::Pgrush, &dir.path, DB, args);
    let theirs = run(oracle, &dir.path, DB, args);
    assert_eq!(
        client_lines(&ours.stderr),
        client_lines(&theirs.stderr),
        "{oracle:?} {args:?}\n--- pgrush:\n{}\n--- pgbench:\n{}",
        ours.stderr,
        theirs.stderr
    );
    assert_eq!(ours.code, theirs.code, "{args:?}");
    let report = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains("failed") || l.contains("processed"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(report(&ours.stdout), report(&theirs.stdout), "{args:?}");
}

#[test]
fn terminated_backend_aborts_with_one_message() {
    let dir = Scratch::new(&[TERMINATE]);
    for oracle in [Prog::Pgbench, Prog::Pgbench19] {
        for mode in ["simple", "extended", "prepared"] {
            let args = ["-n", "-t", "3", "-M", mode, "-f", "terminate.sql"];
            assert_same_end(oracle, &dir, &args);
        }
    }
}

#[test]
fn continue_on_error_still_aborts_on_a_lost_connection() {
    let dir = Scratch::new(&[TERMINATE]);
    let args = [
        "-n",
        "-t",
        "3",
        "-c",
        "2",
        "--continue-on-error",
        "--verbose-errors",
        "--failures-detailed",
        "-f",
        "terminate.sql",
    ];
    let ours = run(Prog::Pgrush, &dir.path, DB, &args);
    let lines = client_lines(&ours.stderr);
    let expected: Vec<String> = (0..2)
        .map(|c| {
            format!(
                "pgrush: error: client {c} script 0 aborted in command 1 query 0: FATAL:  terminating connection due to administrator command"
            )
        })
        .collect();
    assert_eq!(lines, expected, "{}", ours.stderr);
    assert_same_end(Prog::Pgbench19, &dir, &args);
}
