//! Differential tests of pgbench 18's command-line handling: every command line
//! below runs through `pgrush` and through the real pgbench 18, and their stderr,
//! stdout and exit codes are compared.
//!
//! Both programs get the same argv[0] (`bin/pgbench-under-test`), so their
//! messages name the same program. The server address comes from PGHOST/PGPORT
//! and points at a closed port: a command line that pgbench accepts fails at
//! its first connection. For those, only what precedes the connection failure
//! is compared (connecting is not the option parser's business), and pgrush
//! must not have complained about its options.
//!
//! Deliberate differences, not in these matrices: pgrush's extra options
//! (`--continue-on-error` from PostgreSQL 19, `--percentiles`, `--json`,
//! `--html`, `--no-warnings`; their `--help` section is cut before comparing), `-f -` (standard input is read when
//! the run starts, so its errors come after option errors), and `setting
//! random seed to N` (printed when the run starts, not while parsing, so it is
//! missing when a later option is rejected).

use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const ARGV0: &str = "bin/pgbench-under-test";
const PROG: &str = "pgbench-under-test";

/// A scratch directory with the script files the cases refer to.
struct Workdir(PathBuf);

impl Workdir {
    fn new(tag: &str) -> Workdir {
        let dir = std::env::temp_dir().join(format!("pgrush-options-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("adir")).expect("create work dir");
        std::fs::write(dir.join("one.sql"), "select 1;\n").expect("write one.sql");
        std::fs::write(dir.join("two@x.sql"), "select 2;\n").expect("write two@x.sql");
        std::fs::write(dir.join("empty.sql"), "").expect("write empty.sql");
        std::fs::write(dir.join("bad.sql"), "select 1;\n\\set x 1 +\n").expect("write bad.sql");
        std::fs::write(dir.join("meta.sql"), "\\foo bar\n").expect("write meta.sql");
        Workdir(dir)
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn command(program: &Path, dir: &Path, port: u16, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.arg0(ARGV0)
        .args(args)
        .current_dir(dir)
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", port.to_string())
        .env("PGCONNECT_TIMEOUT", "5")
        .env_remove("PGBENCH_RANDOM_SEED")
        .env_remove("POSIXLY_CORRECT")
        .env_remove("PGDATABASE")
        .env_remove("PG_COLOR");
    cmd
}

fn oracle_command(oracle: &oracle::Oracle, dir: &Path, port: u16, args: &[&str]) -> Command {
    let cmd = oracle.command();
    let program = cmd.get_program().to_owned();
    let mut full = command(Path::new(&program), dir, port, args);
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => full.env(key, v),
            None => full.env_remove(key),
        };
    }
    full
}

/// Lines from the first connection failure on.
fn split_at_connection(stderr: &str) -> Option<(&str, &str)> {
    let marker = format!("{PROG}: error: connection to server");
    stderr.find(&marker).map(|i| stderr.split_at(i))
}

/// Phrases of option complaints; none may follow a successful parse.
const OPTION_COMPLAINTS: &[&str] = &[
    "for more information",
    "must be in range",
    "invalid value",
    "cannot be used",
    "must not be",
    "is allowed only",
    "too many command-line arguments",
    "specify either",
    "unrecognized",
    "ambiguous",
    "requires",
    "builtin script",
    "weight",
    "could not open file",
];

/// pgrush's `--help` has two extra sections (options pgbench 18 does not have, and
/// the subcommands), each from its header to the next empty line, and sends bug
/// reports to the project instead of PostgreSQL's list. Everything else must be
/// pgbench's.
fn without_extensions_help(out: &Output) -> Output {
    let mut out = out.clone();
    for header in [
        "Options beyond pgbench 18 (pgrush):\n",
        "Subcommands (pgrush only):\n",
    ] {
        let start = out.stdout.find(header);
        if let Some((start, len)) = start.and_then(|s| Some((s, out.stdout[s..].find("\n\n")?))) {
            out.stdout.replace_range(start..start + len + 2, "");
        }
    }
    let ours = format!(
        "Report bugs to <{}/issues>.\npgrush home page: <{}>\n",
        env!("CARGO_PKG_REPOSITORY"),
        env!("CARGO_PKG_HOMEPAGE")
    );
    if out.stdout.ends_with(&ours) {
        let cut = out.stdout.len() - ours.len();
        out.stdout.truncate(cut);
        out.stdout.push_str(
            "Report bugs to <pgsql-bugs@lists.postgresql.org>.\nPostgreSQL home page: <https://www.postgresql.org/>\n",
        );
    }
    out
}

/// The `--help` line of PostgreSQL 19's `--continue-on-error`, which pgrush lists
/// among the benchmarking options as pgbench 19 does.
const PG19_HELP_LINE: &str = "  --continue-on-error      continue running after an SQL error\n";

/// pgrush's help without the benchmarking option pgbench 18 lacks (compared with
/// pgbench 19 in `help_matches_pgbench19`).
fn as_pgbench18_help(out: &Output) -> Output {
    let mut out = out.clone();
    out.stdout = out.stdout.replacen(PG19_HELP_LINE, "", 1);
    out
}

/// Compares one command line; returns a description of the difference.
fn compare(args: &[&str], pgrush: &Output, pgbench: &Output) -> Option<String> {
    let label = format!("{args:?}");
    if let Some((before, after)) = split_at_connection(&pgbench.stderr) {
        if !after.contains("could not create connection") {
            return Some(format!(
                "{label}: unexpected pgbench output {:?}",
                pgbench.stderr
            ));
        }
        if !pgrush.stderr.starts_with(before) {
            return Some(format!(
                "{label}: pgbench accepted the options; stderr before connecting:\n{before:?}\npgrush:\n{:?}",
                pgrush.stderr
            ));
        }
        let rest = &pgrush.stderr[before.len()..];
        if let Some(p) = OPTION_COMPLAINTS.iter().find(|p| rest.contains(*p)) {
            return Some(format!(
                "{label}: pgbench accepted the options, pgrush complained ({p}):\n{rest}"
            ));
        }
        if pgrush.code == 0 || !pgrush.stdout.is_empty() && pgbench.stdout.is_empty() {
            return Some(format!(
                "{label}: pgrush cannot have succeeded without a server: {pgrush:?}"
            ));
        }
        return None;
    }
    let pgrush = &as_pgbench18_help(&without_extensions_help(pgrush));
    if pgrush != pgbench {
        return Some(format!(
            "{label}:\n--- pgbench (exit {}):\n{}{}\n--- pgrush (exit {}):\n{}{}",
            pgbench.code, pgbench.stdout, pgbench.stderr, pgrush.code, pgrush.stdout, pgrush.stderr
        ));
    }
    None
}

fn run_matrix(tag: &str, cases: &[&[&str]]) {
    run_matrix_with(Which::Pgbench18, tag, cases);
}

/// [`run_matrix`] against the `which` pgbench.
fn run_matrix_with(which: Which, tag: &str, cases: &[&[&str]]) {
    let pgbench = oracle::require(which);
    let pgrush = PathBuf::from(env!("CARGO_BIN_EXE_pgrush"));
    let dir = Workdir::new(tag);
    let port = pgrush_testkit::closed_port();
    let mut failures = Vec::new();
    for args in cases {
        let ours = testkit::run(&mut command(&pgrush, &dir.0, port, args));
        let theirs = testkit::run(&mut oracle_command(&pgbench, &dir.0, port, args));
        if let Some(diff) = compare(args, &ours, &theirs) {
            failures.push(diff);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} command lines differ:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Where pgbench 18 and 19 differ pgrush follows 19: its `--help` is pgbench 19's
/// (but for pgrush's own sections), `--continue-on-error` among the benchmarking
/// options.
#[test]
fn help_matches_pgbench19() {
    let pgbench = oracle::require(Which::Pgbench19);
    let pgrush = PathBuf::from(env!("CARGO_BIN_EXE_pgrush"));
    let dir = Workdir::new("help19");
    let port = pgrush_testkit::closed_port();
    let ours = testkit::run(&mut command(&pgrush, &dir.0, port, &["--help"]));
    let theirs = testkit::run(&mut oracle_command(&pgbench, &dir.0, port, &["--help"]));
    assert!(theirs.stdout.contains(PG19_HELP_LINE), "{}", theirs.stdout);
    assert_eq!(without_extensions_help(&ours), theirs);
}

/// PostgreSQL 19's `--continue-on-error` takes part in prefix matching as pgbench 19's
/// own option: `--c`, `--co` and `--con` are ambiguous (`--con` was `--connect` in 18),
/// `--cont` is `--continue-on-error`, `--conn` still `--connect`.
#[test]
fn continue_on_error_prefixes_match_pgbench19() {
    run_matrix_with(
        Which::Pgbench19,
        "prefix19",
        &[
            &["--=x"],
            &["--c"],
            &["--co"],
            &["--con"],
            &["--con=1"],
            &["--co=x"],
            &["-n", "--con", "-t", "1"],
            &["--conn"],
            &["--conn=1"],
            &["--cont"],
            &["--cont=1"],
            &["--continue"],
            &["--continue-on-error=1"],
            &["--cl", "2"],
            &["--rep", "--j", "2"],
        ],
    );
}

#[test]
fn getopt_behaviour_matches_pgbench18() {
    run_matrix(
        "getopt",
        &[
            &["--help"],
            &["-?"],
            &["-?", "--bogus"],
            &["-n", "--help"],
            &["-n", "-?"],
            &["-n", "-V"],
            &["-n", "--version"],
            &["--bogus=1"],
            &["--bogus"],
            &["---x"],
            &["-x"],
            &["-nx"],
            &["-W", "foo"],
            &["--pro=5"],
            &["--pro"],
            // `--=x`: every option is a candidate, `--continue-on-error` only in 19
            // (see `continue_on_error_prefixes_match_pgbench19`).
            &["--p"],
            &["--debug=1"],
            &["--no-vac=1"],
            &["-c"],
            &["-n", "-t"],
            &["--time"],
            &["--tim"],
            &["--time="],
            &["-tn"],
            &["-nt5", "-T5"],
            &["-c5", "-c"],
            &["-d"],
            &["db1", "db2"],
            &["db1", "--", "-x"],
            &["--dbname=foo", "db"],
            &["-d", "x", "--", "y"],
            &["-n", "db", "-t", "0"],
            &["--aggr=5"],
            &["--log", "--log-p=x"],
            &["--partition=3"],
            &["--init"],
            &["--initi", "--init-s=dt"],
            &["--s"],
            &["--sc=5", "--ti", "10"],
            &["-t", "--", "db"],
            &["-c", "1", "-j", "2", "--", "db", "more"],
            // `--con` is pgbench 18's `--connect`, ambiguous in 19: see
            // `continue_on_error_prefixes_match_pgbench19`.
            &["--connect", "-C", "--conn"],
            &["--no-vac", "--sel", "--skip", "-r", "--rep"],
            &["-", "-n"],
            &["--", "-n"],
            &["db", "-c", "2", "--jobs", "3", "-M", "prepared"],
        ],
    );
}

#[test]
fn value_checks_match_pgbench18() {
    run_matrix(
        "values",
        &[
            &["-c", "0"],
            &["-c", ""],
            &["-c", "99999999999"],
            &["-c", "abc"],
            &["-c", "5x"],
            &["-c", " 2 "],
            &["-c", "+3"],
            &["-c", "0x1"],
            &["-c", "2147483647"],
            &["-j", "0"],
            &["-j", "a"],
            &["-t", "0"],
            &["-T", "-1"],
            &["-T", "1.5"],
            &["-s", "0"],
            &["-P", "0"],
            &["-F", "5"],
            &["-F", "101"],
            &["-F", "x"],
            &["--partitions=-1"],
            &["--partitions=x"],
            &["--aggregate-interval=0"],
            &["-M", "foo"],
            &["-M", "Simple"],
            &["-M", "extended", "-M", "prepared"],
            &["-R", "0"],
            &["-R", "-5"],
            &["-R", "abc"],
            &["-R", "10abc"],
            &["-R", "0x10"],
            &["-L", "-1"],
            &["-L", "0"],
            &["-L", "0.0001"],
            &["-R", "10abc", "-L", "-1"],
            &["--max-tries=-1"],
            &["--max-tries=0"],
            &["--max-tries=abc"],
            &["--max-tries=4294967296"],
            &["--max-tries=99999999999999999999"],
            &["--max-tries=0", "-T", "5"],
            &["--max-tries=0", "-L", "5"],
            &["--max-tries=0", "-L", "0.0001"],
            &["--max-tries=3", "--failures-detailed", "--verbose-errors"],
            &["--random-seed=5 "],
            &["--random-seed="],
            &["--random-seed=0x5"],
            &["--random-seed=abc", "-c", "x"],
            &["-D", "foo"],
            &["-D", "=1"],
            &["-D", "x="],
            &["-D", "1x=2"],
            &["-D", "a b=2"],
            &["-D", "a=b=c", "-D", "_x=1", "-Dy=2"],
            &["--sampling-rate=0.5"],
            &["--sampling-rate=2", "-l"],
            &["--sampling-rate=0", "-l"],
            &["--sampling-rate=0.5", "-l", "--aggregate-interval=1"],
            &["--sampling-rate=1", "-l"],
            &["--aggregate-interval=5"],
            &["--aggregate-interval", "5", "-l", "-T", "3"],
            &["--aggregate-interval", "2", "-l", "-T", "3"],
            &["-l", "--aggregate-interval=2", "-T", "4", "-P", "1"],
            &["--log-prefix=x"],
            &["-l", "--log-prefix=x"],
            &["--progress-timestamp"],
            &["-P", "1", "--progress-timestamp"],
            &["-t", "5", "-T", "5"],
            &["-t", "5", "-T", "5", "-c", "x"],
            &["-T", "5", "-t"],
        ],
    );
}

#[test]
fn scripts_and_modes_match_pgbench18() {
    run_matrix(
        "scripts",
        &[
            &["-b", "nosuch"],
            &["-b", "s"],
            &["-b", ""],
            &["-b", "list"],
            &["-b", "list", "-c", "x"],
            &["-c", "x", "-b", "list"],
            &["-b", "list@1"],
            &["-b", "se@x"],
            &["-b", "se@-1"],
            &["-b", "se@0"],
            &["-b", "se@"],
            &["-b", "se@ 5", "-b", "tpcb@99999999999"],
            &["-b", "tpcb-like@+3", "-b", "si@2", "-S", "-N"],
            &["-b", "se@0", "-b", "simple@0"],
            &["--show-script=se"],
            &["--show-script=s"],
            &["--show-script=tpcb-like", "-c", "x"],
            &["--show-script=simple"],
            &["--show-script=list"],
            &["-f", "missing.sql"],
            &["-f", "adir"],
            &["-f", "missing.sql@x"],
            &["-f", "two@x.sql"],
            &["-f", "two@x.sql@2", "-f", "one.sql@0"],
            &["-f", "one.sql@0"],
            &["-f", "x@y@2"],
            &["-f", "empty.sql"],
            &["-f", "empty.sql@0"],
            &["-i", "-f", "empty.sql"],
            &["-f", "bad.sql", "-t", "5", "-T", "5"],
            &["-f", "bad.sql", "-c", "x"],
            &["-c", "x", "-f", "bad.sql"],
            &["-f", "one.sql", "-f", "meta.sql@2"],
            &["-f", "meta.sql", "db1", "db2"],
            &["-f", "missing.sql", "-c", "x"],
            &["-c", "x", "-f", "missing.sql"],
            &["-I", ""],
            &["-I", "dt"],
            &["-I", "dtx"],
            &["-i", "-I", "dtx"],
            &["-i", "-I", "d\tt"],
            &["-i", "-I", " "],
            &["-i", "-I", "d t G v p f"],
            &["-i", "-c", "5"],
            &["-i", "-S"],
            &["-i", "-N"],
            &["-i", "-b", "se@0"],
            &["-i", "-f", "one.sql"],
            &["-i", "--exit-on-abort"],
            &["-i", "-q", "-s", "2", "-n", "--debug"],
            &["-i", "--foreign-keys", "-I", "dt", "-F", "90", "--unlogged"],
            &["-i", "--tablesp=x", "--index-t=y"],
            &["-i", "--partition-method=hash"],
            &["-i", "--partition-method=list"],
            &["-i", "--partitions=3", "--partition-m=HASH"],
            &["-i", "x", "y"],
            &["-F", "50"],
            &["-q"],
            &["--foreign-keys"],
            &["--unlogged-tables", "-c", "2"],
            &["--partitions=2"],
            &["-s", "5", "-n", "-v", "-r", "-C", "-l"],
            &["-d", "foo", "-U", "nobody", "--exit-on-abort", "--debug"],
        ],
    );
}

#[test]
fn script_count_limit_matches_pgbench18() {
    let mut at_limit = vec!["-S"; 127];
    at_limit.push("-b");
    at_limit.push("tpcb@2");
    let mut over_limit = at_limit.clone();
    over_limit.push("-N");
    let mut over_then_bad = over_limit.clone();
    over_then_bad.extend(["-c", "x"]);
    let mut files = vec!["-f"; 1];
    for _ in 0..128 {
        files.extend(["one.sql@3", "-f"]);
    }
    files.push("missing.sql");
    run_matrix("count", &[&at_limit, &over_limit, &over_then_bad, &files]);
}

#[test]
fn version_line_keeps_pgbench_format() {
    let pgbench = oracle::require(Which::Pgbench18);
    let pgrush = PathBuf::from(env!("CARGO_BIN_EXE_pgrush"));
    let dir = Workdir::new("version");
    for flag in ["-V", "--version"] {
        let ours = testkit::run(&mut command(&pgrush, &dir.0, 1, &[flag, "--bogus"]));
        let theirs = testkit::run(&mut oracle_command(&pgbench, &dir.0, 1, &[flag]));
        assert_eq!((ours.code, theirs.code), (0, 0));
        assert_eq!(ours.stderr, "");
        // pgbench prints "pgbench (PostgreSQL) 18.6"; pgrush uses its program name
        // and appends its own version in parentheses.
        let theirs_words: Vec<&str> = theirs.stdout.split_whitespace().collect();
        let ours_words: Vec<&str> = ours.stdout.split_whitespace().collect();
        assert_eq!(ours_words[0], PROG);
        assert_eq!(ours_words[1..3], theirs_words[1..3]);
        assert!(ours_words[3].starts_with("(pgrush"), "{}", ours.stdout);
        assert_eq!(ours.stdout.lines().count(), 1);
    }
}

#[test]
fn environment_matches_pgbench18() {
    let pgbench = oracle::require(Which::Pgbench18);
    let pgrush = PathBuf::from(env!("CARGO_BIN_EXE_pgrush"));
    let dir = Workdir::new("env");
    let port = pgrush_testkit::closed_port();
    let cases: &[(&str, &str, &[&str])] = &[
        ("PGBENCH_RANDOM_SEED", "x", &["-n"]),
        ("PGBENCH_RANDOM_SEED", "5 ", &["-c", "x"]),
        ("PGBENCH_RANDOM_SEED", "", &["--help"]),
        ("POSIXLY_CORRECT", "1", &["db", "-c", "5"]),
        ("POSIXLY_CORRECT", "", &["-n", "db", "--", "x"]),
    ];
    let mut failures = Vec::new();
    for (key, value, args) in cases {
        let ours = testkit::run(command(&pgrush, &dir.0, port, args).env(key, value));
        let theirs = testkit::run(oracle_command(&pgbench, &dir.0, port, args).env(key, value));
        if let Some(diff) = compare(args, &ours, &theirs) {
            failures.push(format!("{key}={value:?} {diff}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
