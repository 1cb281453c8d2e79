//! `pgrush timing` and the `pg_test_timing` personality against pg_test_timing 18:
//! the option/error matrix byte for byte, and the shape of real one-second runs.

use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

const PGRUSH: &str = env!("CARGO_BIN_EXE_pgrush");

/// A directory under Cargo's test temp dir with a symlink `pg_test_timing` -> pgrush.
fn symlink() -> &'static PathBuf {
    static LINK: OnceLock<PathBuf> = OnceLock::new();
    LINK.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("timing-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let link = dir.join("pg_test_timing");
        std::os::unix::fs::symlink(PGRUSH, &link).expect("symlink");
        link
    })
}

/// pg_test_timing 18 started with argv[0] = the symlink's path, so that
/// getopt's messages (which print argv[0] as typed) are comparable.
fn oracle_run(args: &[&str]) -> Output {
    let mut cmd = oracle::require(Which::PgTestTiming18).command();
    cmd.arg0(symlink()).args(args).env_remove("POSIXLY_CORRECT");
    testkit::run(&mut cmd)
}

fn compat_run(args: &[&str]) -> Output {
    testkit::run(
        Command::new(symlink())
            .args(args)
            .env_remove("POSIXLY_CORRECT"),
    )
}

fn pgrush_timing(args: &[&str]) -> Output {
    testkit::run(
        Command::new(PGRUSH)
            .arg("timing")
            .args(args)
            .env_remove("POSIXLY_CORRECT"),
    )
}

/// Command lines that end before any measurement (errors, help).
const MATRIX: &[&[&str]] = &[
    &["-d", "0"],
    &["-d", "+0"],
    &["-d", "-1"],
    &["-d", "abc"],
    &["-d", "5x"],
    &["-d", "1 "],
    &["-d", ""],
    &["-d", "99999999999"],
    &["-d", "4294967296"],
    &["-d", "-18446744069414584320"],
    &["--duration="],
    &["--dur=abc"],
    &["--d", "x"],
    &["-d"],
    &["--duration"],
    &["-x"],
    &["-d1", "-x"],
    &["--bogus"],
    &["--help=x"],
    &["-d", "1", "--help"],
    &["-d1", "-?"],
    &["-d", "1", "-V"],
    &["-?x"],
    &["extra"],
    &["1", "extra"],
    &["--", "extra"],
    &["-"],
    &["-d", "1", "--", "-d"],
    &["x", "-d", "0"],
    &["-d", "0", "x"],
    &["-d", "x", "y"],
    &["-?"],
    &["--help"],
    &["--help", "-x"],
];

#[test]
fn error_and_help_matrix_matches_pg_test_timing_18() {
    for args in MATRIX {
        let want = oracle_run(args);
        let got = compat_run(args);
        assert_eq!(
            (&got.stdout, &got.stderr, got.code),
            (&want.stdout, &want.stderr, want.code),
            "pg_test_timing {args:?}"
        );
        assert!(want.code != 0 || want.stdout.starts_with("Usage: pg_test_timing"));
    }
}

#[test]
fn posixly_correct_stops_at_the_first_non_option() {
    for args in [
        &["x", "-d", "0"][..],
        &["-d", "0", "x"],
        &["-d", "1", "x", "--bogus"],
    ] {
        let mut cmd = oracle::require(Which::PgTestTiming18).command();
        cmd.arg0(symlink()).args(args).env("POSIXLY_CORRECT", "1");
        let want = testkit::run(&mut cmd);
        let got = testkit::run(
            Command::new(symlink())
                .args(args)
                .env("POSIXLY_CORRECT", "1"),
        );
        assert_eq!(
            (&got.stdout, &got.stderr, got.code),
            (&want.stdout, &want.stderr, want.code),
            "POSIXLY_CORRECT pg_test_timing {args:?}"
        );
    }
}

/// pg_test_timing's complaint in pgrush's voice: glibc's line as it is, the message as
/// `pgrush: error: ...`, then always the hint naming `pgrush timing --help`.
fn in_pgrush_voice(oracle_stderr: &str, link: &str) -> String {
    let hint = "pgrush: hint: Try \"pgrush timing --help\" for more information.\n";
    let mut text = String::new();
    for line in oracle_stderr.lines() {
        if line.starts_with("Try \"pg_test_timing --help\"") {
            continue;
        }
        match line.strip_prefix("pg_test_timing: ") {
            Some(msg) => text.push_str(&format!("pgrush: error: {msg}\n")),
            None => text.push_str(&format!("{}\n", line.replace(link, PGRUSH))),
        }
    }
    text + hint
}

#[test]
fn pgrush_timing_errors_match_with_its_own_names() {
    let link = symlink().to_string_lossy().into_owned();
    for args in MATRIX {
        if args.first().is_some_and(|a| *a == "-?" || *a == "--help") {
            continue;
        }
        let want = oracle_run(args);
        assert_ne!(want.code, 0, "{args:?}");
        let got = pgrush_timing(args);
        let expected = in_pgrush_voice(&want.stderr, &link);
        assert_eq!(
            (&got.stdout, &got.stderr, got.code),
            (&want.stdout, &expected, want.code),
            "pgrush timing {args:?}"
        );
    }
}

#[test]
fn version_and_help() {
    for out in [
        compat_run(&["-V"]),
        compat_run(&["--version"]),
        pgrush_timing(&["-V"]),
    ] {
        assert_eq!(out.code, 0);
        assert!(
            out.stdout.starts_with("pg_test_timing (PostgreSQL) 18.6"),
            "{}",
            out.stdout
        );
        assert_eq!(out.stdout.lines().count(), 1);
    }
    let oracle_version = oracle_run(&["-V"]).stdout;
    assert!(oracle_version.starts_with("pg_test_timing (PostgreSQL) 18."));
    let help = pgrush_timing(&["--help"]);
    assert_eq!(help.code, 0);
    assert!(
        help.stdout.starts_with("pgrush timing measures")
            && help
                .stdout
                .contains("\nUsage:\n  pgrush timing [-d DURATION]"),
        "{}",
        help.stdout
    );
    for opt in [
        "--clock=CLOCK",
        "--all-clocks",
        "--json",
        "--explain-analyze",
        "--ns",
    ] {
        assert!(help.stdout.contains(opt), "{opt}");
    }
}

#[test]
fn extension_option_errors() {
    let out = pgrush_timing(&["--clock=tai"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "pgrush: error: --clock must be one of monotonic, monotonic_raw, monotonic_coarse, realtime, tsc\npgrush: hint: Try \"pgrush timing --help\" for more information.\n"
    );
    let out = compat_run(&["--all-clocks", "--clock", "tsc"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("pg_test_timing: --clock and --all-clocks cannot be used together\n")
    );
    // Short connection options belong to `pgrush timing` only.
    let want = oracle_run(&["-h", "x"]);
    assert_eq!(compat_run(&["-h", "x"]).stderr, want.stderr);
    // A failed connection is reported before any measurement.
    let out = pgrush_timing(&["--explain-analyze", "-h", "/nonexistent-dir", "-p", "1"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.starts_with(
            "pgrush: error: connection to server on socket \"/nonexistent-dir/.s.PGSQL.1\" failed"
        ),
        "{}",
        out.stderr
    );
}

/// One parsed row of a `< us` / `< ns` histogram.
#[derive(Debug)]
struct Row {
    bound: u128,
    percent: f64,
    count: u64,
}

/// Checks pg_test_timing's compatible block at the start of `lines` and
/// returns (per-loop ns, rows, lines consumed).
fn check_compat_block(lines: &[&str]) -> (f64, Vec<Row>, usize) {
    assert_eq!(lines[0], "Testing timing overhead for 1 second.");
    let per_loop: f64 = lines[1]
        .strip_prefix("Per loop time including overhead: ")
        .and_then(|s| s.strip_suffix(" ns"))
        .unwrap_or_else(|| panic!("per-loop line: {:?}", lines[1]))
        .parse()
        .expect("per-loop value");
    assert_eq!(
        lines[1]
            .split(' ')
            .nth(5)
            .map(|v| v.split('.').nth(1).map(str::len)),
        Some(Some(2))
    );
    assert_eq!(lines[2], "Histogram of timing durations:");
    assert_eq!(lines[3], "  < us   % of total      count");
    let rows = parse_rows(&lines[4..], 6);
    assert!(!rows.is_empty());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.bound, 1u128 << i, "rows run from bucket 0 up");
    }
    assert_ne!(rows.last().map(|r| r.count), Some(0));
    let total: u64 = rows.iter().map(|r| r.count).sum();
    for r in &rows {
        assert!((r.percent - r.count as f64 * 100.0 / total as f64).abs() < 1e-4);
    }
    let consumed = 4 + rows.len();
    (per_loop, rows, consumed)
}

/// `%*ld    %9.5f %10lld` with a bound column `w` wide (6 for pg_test_timing).
fn row_of(line: &str, w: usize) -> Option<Row> {
    if line.len() < w + 24 || line.get(w..w + 4)? != "    " || line.as_bytes()[w + 13] != b' ' {
        return None;
    }
    let pct = &line[w + 4..w + 13];
    if pct.as_bytes().get(pct.len() - 6) != Some(&b'.') {
        return None;
    }
    Some(Row {
        bound: line[..w].trim().parse().ok()?,
        percent: pct.trim().parse().ok()?,
        count: line[w + 14..].trim().parse().ok()?,
    })
}

fn parse_rows(lines: &[&str], w: usize) -> Vec<Row> {
    lines.iter().map_while(|l| row_of(l, w)).collect()
}

#[test]
fn one_second_runs_have_pg_test_timing_shape() {
    let want = oracle_run(&["-d", "1"]);
    assert_eq!(want.code, 0, "{}", want.stderr);
    let got = compat_run(&["--dur", "1"]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(got.stderr, "");
    let want_lines: Vec<&str> = want.stdout.lines().collect();
    let got_lines: Vec<&str> = got.stdout.lines().collect();
    let (oracle_ns, _, n) = check_compat_block(&want_lines);
    assert_eq!(n, want_lines.len());
    let (ns, _, n) = check_compat_block(&got_lines);
    assert_eq!(n, got_lines.len(), "nothing after the compatible block");
    assert!(
        ns > 0.0 && ns < oracle_ns * 10.0,
        "pgrush {ns} ns vs pg_test_timing {oracle_ns} ns"
    );
}

#[test]
fn pgrush_timing_adds_the_nanosecond_section() {
    let out = pgrush_timing(&["-d", "1"]);
    let via_ns = compat_run(&["-d", "1", "--ns"]);
    for out in [out, via_ns] {
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines: Vec<&str> = out.stdout.lines().collect();
        let (_, us_rows, n) = check_compat_block(&lines);
        let loops: u64 = us_rows.iter().map(|r| r.count).sum();
        let rest = &lines[n..];
        assert_eq!(rest[0], "");
        assert!(
            rest[1].starts_with("Clock: monotonic, resolution "),
            "{}",
            rest[1]
        );
        assert_eq!(rest[2], "Histogram of timing durations in nanoseconds:");
        let w = rest[3].find("< ns").expect("ns header") + 4;
        assert!(w >= 6);
        assert_eq!(rest[3], format!("{:>w$}   % of total      count", "< ns"));
        let ns_rows = parse_rows(&rest[4..], w);
        assert_eq!(ns_rows.iter().map(|r| r.count).sum::<u64>(), loops);
        for w in ns_rows.windows(2) {
            assert_eq!(w[1].bound, w[0].bound * 2);
        }
        let k = 4 + ns_rows.len();
        assert_eq!(rest[k], "Percentiles of timing durations (ns):");
        let names: Vec<&str> = rest[k + 1].split_whitespace().collect();
        assert_eq!(names, ["p50", "p90", "p99", "p99.9", "p99.99", "max"]);
        let values: Vec<u64> = rest[k + 2]
            .split_whitespace()
            .map(|v| v.parse().expect("percentile"))
            .collect();
        assert_eq!(values.len(), 6);
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
        // The maximum lies in the highest ns bucket.
        let top = ns_rows.last().map(|r| r.bound).unwrap_or(0);
        assert!(u128::from(values[5]) < top && u128::from(values[5]) >= top / 2);
        assert_eq!(rest[k + 3], "Backwards steps: none");
        assert_eq!(rest.len(), k + 4);
    }
}

#[test]
fn all_clocks_side_by_side() {
    let out = pgrush_timing(&["--all-clocks", "-d", "1"]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let tsc = pgrush_timing::tsc::invariant_tsc();
    let n = if tsc { 5 } else { 4 };
    assert_eq!(
        lines[0],
        format!("Testing timing overhead of {n} clocks for 1 second each.")
    );
    let header: Vec<&str> = lines[1].split_whitespace().collect();
    let mut want = vec!["monotonic", "monotonic_raw", "monotonic_coarse", "realtime"];
    if tsc {
        want.push("tsc");
    }
    assert_eq!(header, want);
    let labels = [
        "cost per reading (ns)",
        "resolution (ns)",
        "smallest step (ns)",
        "p50 (ns)",
        "p90 (ns)",
        "p99 (ns)",
        "p99.9 (ns)",
        "p99.99 (ns)",
        "max (ns)",
        "backwards steps",
        "largest backwards (ns)",
    ];
    for (line, label) in lines[2..].iter().zip(labels) {
        assert!(line.starts_with(label), "{line}");
        let cells: Vec<&str> = line[label.len()..].split_whitespace().collect();
        assert_eq!(cells.len(), n, "{line}");
    }
    // Exit status 1 exactly when some clock went backwards (then reported on stderr).
    let backwards: Vec<&str> = lines[11][labels[9].len()..].split_whitespace().collect();
    let any_back = backwards.iter().any(|c| *c != "0");
    assert_eq!(out.code, i32::from(any_back), "{}", out.stderr);
    assert_eq!(
        out.stderr.contains("Detected clock going backwards"),
        any_back
    );
    // monotonic and monotonic_raw never go backwards.
    assert_eq!(&backwards[..2], ["0", "0"]);
    if !tsc {
        assert_eq!(
            lines[13],
            "tsc: not available (the CPU has no invariant TSC)"
        );
    }
}
