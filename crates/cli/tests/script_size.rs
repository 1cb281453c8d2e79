//! Inputs that grow: a 200,000-line script and 20,000 `-D` options are handled in
//! time linear in their size (ten times the input must take less than
//! [`MAX_RATIO`] times as long; the small case is the shortest of a few runs so
//! that noise on a busy machine does not tighten the bound, and a quadratic step
//! takes ~100 times longer), with the same results as pgbench 18.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};

const MAX_RATIO: u32 = 30;

fn pgrush(dir: &Path, args: &[String]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    cmd.current_dir(dir).args(args);
    cmd
}

fn timed(mut cmd: Command) -> (Duration, Output) {
    let start = Instant::now();
    let out = testkit::run(&mut cmd);
    (start.elapsed(), out)
}

/// Asserts that the run of `big` (ten times `small`'s input) stays within
/// [`MAX_RATIO`] of the fastest of three runs of `small`; returns its output.
fn assert_linear(what: &str, small: &dyn Fn() -> Command, big: &dyn Fn() -> Command) -> Output {
    let small_time = (0..3).map(|_| timed(small()).0).min().expect("repetitions");
    let (mut big_time, mut out) = timed(big());
    // More tries only while it looks too slow (a busy moment); a quadratic step is
    // too slow every time.
    for _ in 1..3 {
        if big_time < small_time * MAX_RATIO {
            break;
        }
        (big_time, out) = timed(big());
    }
    assert!(
        big_time < small_time * MAX_RATIO,
        "{what}: 10x the input took {big_time:?}, the small input {small_time:?}: \
         more than {MAX_RATIO}x (not linear)"
    );
    out
}

/// `-n -t 1 -f big.sql` against a server that cannot be reached: pgrush reads and
/// parses the script before connecting, so the time is the loading.
#[test]
fn a_200000_line_script_loads_in_linear_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, n: usize| {
        let text: String = (1..=n).map(|i| format!("select {i};\n")).collect();
        std::fs::write(dir.path().join(name), text).expect("write");
    };
    write("small.sql", 20_000);
    write("big.sql", 200_000);
    let args = |file: &str| -> Vec<String> {
        [
            "-h",
            "/nonexistent-pgrush-socket-dir",
            "-n",
            "-t",
            "1",
            "-f",
            file,
        ]
        .map(String::from)
        .to_vec()
    };
    let ours = assert_linear(
        "a 200,000-line script",
        &|| pgrush(dir.path(), &args("small.sql")),
        &|| pgrush(dir.path(), &args("big.sql")),
    );
    let mut theirs = oracle::require(Which::Pgbench18).command();
    testkit::clear_pg_env(&mut theirs);
    let theirs = testkit::run(theirs.current_dir(dir.path()).args(args("big.sql")));
    assert_eq!(theirs.code, 1, "{}", theirs.stderr);
    assert_eq!(ours.code, theirs.code, "{}", ours.stderr);
    assert_eq!(
        ours.stderr,
        theirs.stderr.replace("pgbench: ", "pgrush: "),
        "the script loads, then the connection fails"
    );
}

/// `n` options `-D v{i}={i}` and the script `last{n}.sql`.
fn defines(n: usize) -> Vec<String> {
    let script = format!("last{n}.sql");
    let mut args: Vec<String> = ["-n", "-t", "1", "-f", &script].map(String::from).to_vec();
    args.extend((1..=n).map(|i| format!("-Dv{i}={i}")));
    args
}

#[test]
fn many_defines_are_set_in_linear_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Each script prints its last variable plus the first.
    for n in [2_000, 20_000] {
        let text = format!("\\set x debug(:v{n} + :v1)\n");
        std::fs::write(dir.path().join(format!("last{n}.sql")), text).expect("write");
    }
    let server = pgrush_testkit::shared();
    let run = |n: usize| {
        let mut cmd = pgrush(dir.path(), &defines(n));
        cmd.envs(server.env()).env("PGDATABASE", "postgres");
        cmd
    };
    // pgbench 18 takes time quadratic in the number of -D (a minute for 20,000):
    // compare the smaller run with it.
    let mut theirs = oracle::require(Which::Pgbench18).command();
    testkit::clear_pg_env(&mut theirs);
    theirs
        .current_dir(dir.path())
        .args(defines(2_000))
        .envs(server.env())
        .env("PGDATABASE", "postgres");
    let theirs = testkit::run(&mut theirs);
    let ours = testkit::run(&mut run(2_000));
    assert_eq!(theirs.code, 0, "{}", theirs.stderr);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let debug = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("debug("))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        debug(&theirs.stderr),
        ["debug(script=0,command=1): int 2001"]
    );
    assert_eq!(debug(&ours.stderr), debug(&theirs.stderr));

    let ours = assert_linear("20,000 -D options", &|| run(2_000), &|| run(20_000));
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(
        debug(&ours.stderr),
        ["debug(script=0,command=1): int 20001"]
    );
}

/// `-r` with a 20,000-command script (`select i;` lines) on a live server: one histogram
/// per command used to take 184 KiB per thread and copy (7 GB); plain `-r` keeps sums and
/// `--json` histograms that grow with use. Peak RSS stays under 300 MB, resp. 200 MB, and
/// every command gets its `-r` line.
#[test]
fn a_20000_command_script_with_r_stays_small() {
    const N: usize = 20_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let text: String = (1..=N).map(|i| format!("select {i};\n")).collect();
    std::fs::write(dir.path().join("big.sql"), text).expect("write");
    let server = pgrush_testkit::shared();
    for (extra, limit_mb) in [(None, 300), (Some("--json=run.json"), 200)] {
        let mut args: Vec<String> = ["-n", "-t", "1", "-r", "-f", "big.sql"]
            .map(String::from)
            .to_vec();
        args.extend(extra.map(String::from));
        let mut cmd = pgrush(dir.path(), &args);
        cmd.envs(server.env()).env("PGDATABASE", "postgres");
        let (out, peak_kib) = testkit::run_peak_rss(cmd, dir.path());
        assert_eq!(out.code, 0, "{extra:?}: {}", out.stderr);
        let command_lines = out
            .stdout
            .lines()
            .filter(|l| l.contains(" select ") && l.ends_with(';'))
            .count();
        assert_eq!(command_lines, N, "{extra:?}: one -r line per command");
        assert!(
            out.stdout.lines().any(|l| l.ends_with(" select 20000;")),
            "{extra:?}: last command's line missing"
        );
        assert!(
            peak_kib < limit_mb * 1024,
            "{extra:?}: peak RSS {peak_kib} KiB, limit {limit_mb} MB"
        );
    }
    let doc = std::fs::read_to_string(dir.path().join("run.json")).expect("run.json");
    let doc: serde_json::Value = serde_json::from_str(&doc).expect("json");
    let commands = doc["scripts"][0]["commands"].as_array().map(Vec::len);
    assert_eq!(commands, Some(N), "a command entry each in the document");
    let last = &doc["scripts"][0]["commands"][N - 1];
    assert_eq!(last["latency"]["count"], 1, "{last}");
    assert_eq!(last["latency"]["percentiles"][0]["p"], 50.0, "{last}");
}
