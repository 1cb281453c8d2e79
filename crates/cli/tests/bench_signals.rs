//! Runs that end abnormally: the server dies mid-run, and Ctrl-C (SIGINT).
//! Both exit 2 with the partial report, and every transaction the report
//! counts is in the `-l` log; Ctrl-C in the `--warmup` exits 2 with no report.

mod bench_common;
mod child_process;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use child_process::{Streams, wait_with_timeout};

use bench_common::Scratch;
use pgrush_cluster::Cluster;
use pgrush_testkit as testkit;
use pgrush_testkit::oracle::{self, Which};

fn spawn_pgrush(dir: &Scratch, env: Vec<(String, String)>, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_pgrush"))
        .current_dir(&dir.path)
        .envs(env)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pgrush")
}

fn processed(stdout: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|v| v.split('/').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no processed line in:\n{stdout}"))
}

fn log_lines(dir: &Scratch, prefix: &str) -> u64 {
    dir.files_with_prefix(prefix)
        .values()
        .map(|t| t.lines().count() as u64)
        .sum()
}

#[test]
fn server_killed_mid_run() {
    let cluster = Cluster::start().expect("start cluster");
    let init = testkit::run(
        oracle::require(Which::Pgbench18)
            .command()
            .args(["-i", "-s", "1", "-q"])
            .envs(cluster.env()),
    );
    assert_eq!(init.code, 0, "{}", init.stderr);
    let dir = Scratch::new(&[]);
    let mut child = spawn_pgrush(
        &dir,
        cluster.env(),
        &[
            "-n",
            "-T",
            "30",
            "-c",
            "2",
            "-j",
            "2",
            "-S",
            "-l",
            "--log-prefix=kill",
            "-P",
            "1",
        ],
    );
    let streams = Streams::new(&mut child);
    assert!(
        streams.wait_for("progress: ", Duration::from_secs(20)),
        "no progress line"
    );
    let pid = cluster.pid().expect("postmaster pid");
    // SAFETY: sending SIGQUIT (immediate shutdown) to the sandbox's postmaster.
    unsafe { libc::kill(pid as i32, libc::SIGQUIT) };
    let code = wait_with_timeout(&mut child, Duration::from_secs(20));
    let (stdout, stderr) = streams.finish();
    assert_eq!(code, Some(2), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("transaction type: <builtin: select only>"),
        "{stdout}"
    );
    assert!(
        stderr.contains("Run was aborted; the above results are incomplete."),
        "{stderr}"
    );
    let n = processed(&stdout);
    assert!(n > 0, "{stdout}");
    assert_eq!(log_lines(&dir, "kill"), n, "log lines vs report");
    drop(cluster);
}

/// Runs pgrush with `args` on the shared cluster's benchmark database, sends it
/// SIGINT after its first progress line, and waits for its end: the exit status,
/// stdout, stderr and how long it took to stop.
fn interrupted_run(dir: &Scratch, args: &[&str]) -> (Option<i32>, String, String, Duration) {
    let cluster = bench_common::cluster();
    let mut env = cluster.env();
    env.push(("PGDATABASE".to_string(), bench_common::DB.to_string()));
    let mut child = spawn_pgrush(dir, env, args);
    let streams = Streams::new(&mut child);
    assert!(
        streams.wait_for("progress: ", Duration::from_secs(20)),
        "no progress line"
    );
    let started = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let code = wait_with_timeout(&mut child, Duration::from_secs(10));
    let stopped = started.elapsed();
    let (stdout, stderr) = streams.finish();
    (code, stdout, stderr, stopped)
}

#[test]
fn ctrl_c_stops_with_partial_report() {
    let dir = Scratch::new(&[]);
    let args = "-n -T 60 -c 2 -S -l --log-prefix=int -P 1";
    let args: Vec<&str> = args.split(' ').collect();
    let (code, stdout, stderr, stopped) = interrupted_run(&dir, &args);
    assert_eq!(code, Some(2), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stopped < Duration::from_secs(5), "too slow to stop");
    assert!(stdout.contains("duration: 60 s"), "{stdout}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let n = processed(&stdout);
    assert!(n > 0, "{stdout}");
    assert_eq!(log_lines(&dir, "int"), n, "log lines vs report");
}

#[test]
fn ctrl_c_in_the_warmup_reports_that_nothing_was_measured() {
    let dir = Scratch::new(&[]);
    let args = "-n --warmup 60 -T 60 -c 2 -S -l --log-prefix=warm -P 1 --json=run.json";
    let args: Vec<&str> = args.split(' ').collect();
    let (code, stdout, stderr, _) = interrupted_run(&dir, &args);
    let shown = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    // An interrupted run's status, a line saying why there is no report, and none of
    // a report's lines or warnings (not "the run lasted only 0.0 s").
    assert_eq!(code, Some(2), "{shown}");
    assert!(
        stderr.ends_with(
            "pgrush: error: Run was interrupted by a signal during the warm-up; \
             nothing was measured.\n"
        ),
        "{shown}"
    );
    assert!(!stdout.contains("number of transactions"), "{shown}");
    assert!(!stderr.contains("warning"), "{shown}");
    assert!(stderr.contains(" s (warm-up), "), "{shown}");
    assert!(!dir.path.join("run.json").exists(), "{shown}");
    assert_eq!(log_lines(&dir, "warm"), 0, "{shown}");
}

#[test]
fn client_connection_failure_exits_1() {
    let cluster = Cluster::builder()
        .setting("max_connections", "6")
        .setting("superuser_reserved_connections", "0")
        .start()
        .expect("start cluster");
    let dir = Scratch::new(&[("one.sql", "select 1;\n")]);
    let args = ["-n", "-t", "1", "-c", "9", "-j", "1", "-f", "one.sql"];
    let ours = testkit::run(
        Command::new(env!("CARGO_BIN_EXE_pgrush"))
            .current_dir(&dir.path)
            .envs(cluster.env())
            .args(args),
    );
    let theirs = testkit::run(
        oracle::require(Which::Pgbench18)
            .command()
            .current_dir(&dir.path)
            .envs(cluster.env())
            .args(args),
    );
    assert_eq!(ours.code, 1, "{}", ours.stderr);
    assert_eq!(ours.code, theirs.code);
    assert_eq!(
        testkit::mask_numbers(&ours.stderr),
        testkit::mask_numbers(&bench_common::rename(&theirs.stderr)) + "\n",
    );
    assert!(
        ours.stderr
            .contains("could not create connection for client"),
        "{}",
        ours.stderr
    );
}

/// Client 0 stays in a long statement (so a graceful stop waits for it); client 1
/// logs a line every few milliseconds, in the same thread (`-j 1`): far fewer bytes
/// than the log's buffer by the time the signals come.
const SLOW_AND_FAST: &str =
    "\\if :client_id = 0\nSELECT pg_sleep(10);\n\\else\nSELECT 1;\n\\sleep 5 ms\n\\endif\n";

/// Runs `prog` with `-l` and [`SLOW_AND_FAST`], sends `signals` (in a row) after the
/// first progress line; returns the exit status as a shell shows it and the log files.
fn killed_run(prog: bench_common::Prog, signals: &[libc::c_int]) -> (Option<i32>, Vec<String>) {
    let dir = Scratch::new(&[("s.sql", SLOW_AND_FAST)]);
    let mut child = bench_common::command(prog, &dir.path, bench_common::DB)
        .args(["-n", "-f", "s.sql", "-T", "30", "-c", "2", "-j", "1"])
        .args(["-l", "--log-prefix=sig", "-P", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let streams = Streams::new(&mut child);
    assert!(
        streams.wait_for("progress: ", Duration::from_secs(20)),
        "{prog:?}: no progress line"
    );
    for &sig in signals {
        // SAFETY: sending a signal to our own child process.
        unsafe { libc::kill(child.id() as i32, sig) };
        std::thread::sleep(Duration::from_millis(10));
    }
    let code = wait_with_timeout(&mut child, Duration::from_secs(20));
    let _ = streams.finish();
    (code, dir.files_with_prefix("sig").into_values().collect())
}

/// The signals that end a run at once (a second SIGINT or SIGTERM, SIGHUP, SIGQUIT)
/// end pgrush as they end pgbench 18 (same status: killed by that signal), and
/// pgrush keeps every complete `-l` line it had (pgbench only what its stdio buffer
/// had written): lines are there, whole, and parse.
#[test]
fn signals_that_end_the_run_keep_the_complete_log_lines() {
    use bench_common::Prog;
    bench_common::cluster();
    let cases: [&[libc::c_int]; 4] = [
        &[libc::SIGINT, libc::SIGINT],
        &[libc::SIGTERM, libc::SIGTERM],
        &[libc::SIGHUP],
        &[libc::SIGQUIT],
    ];
    for signals in cases {
        let (pgbench, pgrush) = std::thread::scope(|s| {
            let pgbench = s.spawn(|| killed_run(Prog::Pgbench, signals));
            let pgrush = killed_run(Prog::Pgrush, signals);
            (pgbench.join().expect("pgbench run"), pgrush)
        });
        assert_eq!(pgrush.0, pgbench.0, "exit status after {signals:?}");
        let lines: Vec<&str> = pgrush.1.iter().flat_map(|t| t.lines()).collect();
        assert!(!lines.is_empty(), "no log line kept after {signals:?}");
        for text in &pgrush.1 {
            assert!(
                text.is_empty() || text.ends_with('\n'),
                "torn line after {signals:?}: {text:?}"
            );
        }
        for line in lines {
            let fields: Vec<u64> = line
                .split(' ')
                .map(|f| f.parse().unwrap_or_else(|_| panic!("bad line {line:?}")))
                .collect();
            assert_eq!(fields.len(), 6, "{line:?}");
            assert_eq!(fields[0], 1, "only client 1 ends transactions: {line:?}");
        }
    }
}
