//! Differential tests of the script language through the pgrush binary against
//! pgbench 18: load errors (message, echoed line, caret), script/builtin options,
//! expression results and runtime errors via `debug()`, random sequences, `-D`
//! typing and script choice.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};

fn scratch() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let p = std::env::temp_dir().join(format!(
        "pgrush-script-diff-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).expect("scratch");
    p
}

struct Run {
    dir: PathBuf,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Run {
    fn new(files: &[(&str, &str)]) -> Run {
        let dir = scratch();
        for (n, t) in files {
            std::fs::write(dir.join(n), t).expect("write");
        }
        Run { dir }
    }

    fn cmd(&self, pgrush: bool, server: bool) -> Command {
        let mut c = if pgrush {
            Command::new(env!("CARGO_BIN_EXE_pgrush"))
        } else {
            oracle::require(Which::Pgbench18).command()
        };
        c.current_dir(&self.dir);
        c.env_remove("PGBENCH_RANDOM_SEED");
        if server {
            c.envs(pgrush_testkit::shared().env());
        } else {
            c.env("PGHOST", "/nonexistent-pgrush-socket-dir");
        }
        c
    }

    /// Runs both programs with the same arguments.
    fn both(&self, args: &[&str], server: bool) -> (Output, Output) {
        let theirs = testkit::run(self.cmd(false, server).args(args));
        let ours = testkit::run(self.cmd(true, server).args(args));
        (theirs, ours)
    }
}

/// pgbench's stderr with its program name replaced by pgrush's.
fn as_pgrush(s: &str) -> String {
    s.lines()
        .map(|l| match l.strip_prefix("pgbench: ") {
            Some(rest) => format!("pgrush: {rest}"),
            None => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect()
}

fn interesting(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| {
            l.starts_with("debug(")
                || ((l.starts_with("pgrush: error: ") || l.starts_with("pgbench: error: "))
                    && !l.contains("Run was aborted"))
        })
        .map(|l| l.replacen("pgbench: ", "pgrush: ", 1))
        .collect()
}

const BAD: &[&str] = &[
    "\\set i 1 +\n",
    "SELECT 1;\n\\set x 1 + * 2\n",
    "\\set x foo(1)\n",
    "\\set x random(1)\n",
    "\\nosuch a b\n",
    "\\set\n",
    "\\gset\n",
    "\\sleep 1 2 3\n",
    "\\sleep foo\n",
    "\\sleep 1 xs\n",
    "\\sleep 1.5\n",
    "\\if 1\nSELECT 1;\n",
    "\\if 1\n\\else\n\\else\n\\endif\n",
    "\\if 1\n\\else\n\\elif 1\n\\endif\n",
    "\\endif\n",
    "\\setshell x\n",
    "\\shell\n",
    "\\startpipeline x\n",
    "\\set i 100000000000000000000\n",
    "\\set d 1.0E309\n",
    "\\set x 1 $ 2\n",
    "-- only a comment\n",
    "\\set x greatest()\n",
    "\\set x case when 1 then 2 else 3\n",
    "SELECT 1 \\gset p_ x\n",
    "\\set x 1\n\\gset\n",
    "\\set y 9223372036854775808\n",
    "\\set x 1 < 2 < 3\n",
    "\\set x 1 + \\\n  * 2\n",
    "\\set x 1 + * $ 2\n",
    "\\set x hash(1,2,3)\n",
    "\\set x permute(1)\n",
    "\\Sleep\n",
    "\\SLEEP 1 xs\n",
    "\\SETSHELL x\n",
    "\\SHELL\n",
    "\\SET\n",
    "SELECT 1 \\GSET x y\n",
    "\\IF 1\n\\ELSE 3\n\\endif\n",
    "\\STARTPIPELINE x\n",
];

#[test]
fn load_errors_match_pgbench18() {
    for (i, text) in BAD.iter().enumerate() {
        let name = format!("bad{i}.sql");
        let run = Run::new(&[(&name, text)]);
        let (theirs, ours) = run.both(&["-n", "-t", "1", "-f", &name], false);
        assert_eq!(theirs.code, 1, "{text:?}: {}", theirs.stderr);
        assert_eq!(ours.code, theirs.code, "{text:?}: {}", ours.stderr);
        assert_eq!(ours.stderr, as_pgrush(&theirs.stderr), "script {text:?}");
        assert_eq!(ours.stdout, theirs.stdout);
    }
}

#[test]
fn script_options_match_pgbench18() {
    let run = Run::new(&[("a@b.sql", "SELECT 1;\n"), ("one.sql", "SELECT 1;\n")]);
    let cases: &[&[&str]] = &[
        &["-b", "list"],
        &["--show-script=tpcb-like"],
        &["--show-script=se"],
        &["--show-script=s"],
        &["-b", "nosuch"],
        &["-b", "s"],
        &["-b", "select-only@x"],
        &["-b", "select-only@-1"],
        &["-b", "select-only@0"],
        &["-f", "one.sql@0"],
        &["-f", "a@b.sql"],
        &["-f", "missing.sql"],
        &["-D", "foo"],
        &["-D", "=1"],
        &["-D", "x="],
        &["-D", "1x=2", "-f", "one.sql"],
        &["--random-seed=abc"],
        &["--random-seed=5 ", "-f", "one.sql"],
    ];
    for args in cases {
        let (theirs, ours) = run.both(args, false);
        assert_eq!(ours.code, theirs.code, "{args:?}: {}", ours.stderr);
        assert_eq!(ours.stderr, as_pgrush(&theirs.stderr), "{args:?}");
        assert_eq!(ours.stdout, theirs.stdout, "{args:?}");
    }
}

/// One expression per client (`\if :client_id = k`), so runtime errors abort only
/// that client; compare every client's debug and error lines.
fn expression_batch(exprs: &[&str]) {
    command_batch(exprs, 1, |e| format!("\\set x debug({e})\n"));
}

/// Like [`expression_batch`], with the commands `commands(e)` for each expression
/// and `transactions` per client.
fn command_batch(exprs: &[&str], transactions: u32, commands: impl Fn(&str) -> String) {
    let mut text = String::from("\\set m debug(:client_id)\n");
    for (k, e) in exprs.iter().enumerate() {
        let kw = if k == 0 { "\\if" } else { "\\elif" };
        text.push_str(&format!("{kw} :client_id = {k}\n{}", commands(e)));
    }
    text.push_str("\\endif\n");
    let run = Run::new(&[("e.sql", &text)]);
    let n = exprs.len().to_string();
    let t = transactions.to_string();
    let (theirs, ours) = run.both(
        &["-n", "-t", &t, "-c", &n, "--random-seed=1", "-f", "e.sql"],
        true,
    );
    assert_eq!(ours.code, theirs.code, "{}", ours.stderr);
    let group = |lines: Vec<String>| {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for l in lines {
            if l.starts_with("debug(script=0,command=1): ") {
                out.push((l, Vec::new()));
            } else if let Some((_, v)) = out.last_mut() {
                v.push(l);
            }
        }
        out.sort();
        out
    };
    let want = group(interesting(&theirs.stderr));
    let got = group(interesting(&ours.stderr));
    let clients: std::collections::BTreeSet<&String> = want.iter().map(|(m, _)| m).collect();
    assert_eq!(clients.len(), exprs.len(), "{}", theirs.stderr);
    for (w, g) in want.iter().zip(got.iter()) {
        assert_eq!(w, g);
    }
    assert_eq!(want.len(), got.len());
}

#[test]
fn expressions_match_pgbench18() {
    expression_batch(&[
        "1 + 2 * 3",
        "-7 / 2",
        "7 % -3",
        "7.0 / 2",
        "7 % 2.5",
        ".5",
        "1/3.0",
        "pi()",
        "5 & 3 | 8 # 1",
        "~5",
        "1 << 64",
        "-8 >> 1",
        "1 = 1.0",
        "null is null",
        "1 notnull",
        "null or true",
        "case when 0.0 then 1 when null then 2 when 5 then 3 end",
        "least(3, 1.5, 2)",
        "sqrt(2)",
        "int(-3.5)",
        "int(2.5)",
        "1.0 / 0",
        "0.0 / 0",
        "1234567.0 * 1000000000",
        "1e-5",
        "-9223372036854775808",
        "hash(0)",
        "hash_fnv1a(0)",
        "permute(3, 10)",
        "random(1, 100)",
        "random_exponential(1, 1000, 2.5)",
        "random_gaussian(1, 1000, 2.5)",
        "random_zipfian(1, 1000, 1.5)",
        ":default_seed",
        ":random_seed",
        ":client_id",
        ":scale",
        "abs(true)",
        "greatest(,1)",
        "mod(7, 3)",
        ":nosuch + 1",
        "1 / 0",
        "9223372036854775807 + 1",
        "random(5, 1)",
        "random_gaussian(1, 10, 1.5)",
        "random_zipfian(1, 10, 1.0)",
        "random_exponential(1, 10, 0)",
        "int(1e300)",
        "true + 1",
        "permute(1, 0)",
        "random(-9223372036854775808, 9223372036854775807)",
        "(-9223372036854775807 - 1) / -1",
        "not 1",
        "least(1, 2.5, :nosuch2)",
        "true + 1.5",
        "least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)",
        "int(0.0/0)",
        "1000000 * 1000000 * 1000000 * 10",
        "debug(debug(1) > debug(2))",
        "false and debug(1) = 1",
    ]);
}

#[test]
fn random_sequences_and_defines_match_pgbench18() {
    let rnd = "\\set m debug(:client_id)
\\set a random(1, 1000000)
\\set e random_exponential(1, 1000, 2.5)
\\set g random_gaussian(1, 1000, 2.5)
\\set z random_zipfian(1, 1000, 1.5)
\\set x debug(:a + :e * 1000 + :g * 1000000 + :z * 1000000000)
\\set x debug(permute(:a, 1000000))
\\set x debug(hash(:a))
\\set x debug(:default_seed)
\\set x debug(:random_seed)
\\set x debug(:v)
\\set x debug(:w + 0)
";
    let run = Run::new(&[("rnd.sql", rnd)]);
    for (seed, clients, defines) in [
        ("12345", "2", vec!["-D", "v=true", "-D", "w=0x10"]),
        ("0", "3", vec!["-D", "v= 12", "-D", "w=1.5"]),
        (
            "18446744073709551615",
            "1",
            vec!["-D", "v=of", "-D", "w=1e400"],
        ),
        (
            "777",
            "2",
            vec!["-D", "v=NULL", "-D", "w=7", "-D", "default_seed=5"],
        ),
    ] {
        let seed_arg = format!("--random-seed={seed}");
        let mut args = vec!["-n", "-t", "3", "-c", clients, &seed_arg, "-f", "rnd.sql"];
        args.extend(defines.iter());
        let (theirs, ours) = run.both(&args, true);
        assert_eq!(ours.code, theirs.code, "{}", ours.stderr);
        assert_eq!(
            interesting(&ours.stderr),
            interesting(&theirs.stderr),
            "seed {seed}"
        );
    }
}

#[test]
fn script_choice_matches_pgbench18() {
    let run = Run::new(&[
        ("a.sql", "\\set x 1\n"),
        ("b.sql", "\\set x 2\n"),
        ("c.sql", "\\set x 3\n"),
    ]);
    let read_logs = |prefix: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&run.dir)
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(prefix))
            .collect();
        names.sort_by_key(|n| {
            n.split('.')
                .nth(2)
                .and_then(|t| t.parse::<u32>().ok())
                .unwrap_or(0)
        });
        names
            .iter()
            .map(|n| {
                let text = std::fs::read_to_string(run.dir.join(n)).expect("log");
                let cols: Vec<String> = text
                    .lines()
                    .map(|l| {
                        let f: Vec<&str> = l.split(' ').collect();
                        format!("{} {} {}", f[0], f[1], f[3])
                    })
                    .collect();
                cols.join(",")
            })
            .collect()
    };
    for (who, pgrush) in [("theirs", false), ("ours", true)] {
        let prefix = format!("log_{who}");
        let out = testkit::run(run.cmd(pgrush, true).args([
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
            "--log-prefix",
            &prefix,
        ]));
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let theirs = read_logs("log_theirs");
    assert_eq!(theirs.len(), 2);
    assert_eq!(read_logs("log_ours"), theirs);
}

#[test]
fn meta_command_runtime_errors_match_pgbench18() {
    let scripts = [
        "\\sleep :nosuch\n",
        "\\set s -3\n\\sleep :s ms\n\\set t abc\n\\setshell u echo x\n",
        "\\setshell x echo abc\n",
        "\\setshell x echo 12 \n\\set y debug(:x)\n",
        "\\setshell x printf ''\n",
        "\\shell false\n",
        "\\shell echo :nosuch\n",
        "\\set v 7\n\\setshell x echo :v ::v\n\\set y debug(:x)\n",
        "\\set 1x 2\n",
        "SELECT 1 AS \"1x\" \\gset\n",
        "SELECT 1 AS a UNION SELECT 2 \\gset\n",
        "SELECT 1 WHERE false \\gset\n",
        "SELECT 1 AS a \\; SELECT 2 AS b \\aset p_\n\\set z debug(:p_a + :p_b)\n",
    ];
    runtime_lines_match(&scripts, &[]);
}

/// Runs each script once (`-n -t 1 EXTRA... -f SCRIPT`) with both programs on the shared
/// cluster: the exit statuses and the error and `debug()` lines must match. Returns
/// pgbench's exit statuses.
fn runtime_lines_match(scripts: &[&str], extra: &[&str]) -> Vec<i32> {
    let mut codes = Vec::new();
    for (i, text) in scripts.iter().enumerate() {
        let name = format!("rt{i}.sql");
        let run = Run::new(&[(&name, text)]);
        let mut args = vec!["-n", "-t", "1"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-f", &name]);
        let (theirs, ours) = run.both(&args, true);
        assert_eq!(ours.code, theirs.code, "{text:?}: {}", ours.stderr);
        assert_eq!(
            interesting(&ours.stderr),
            interesting(&theirs.stderr),
            "script {text:?}"
        );
        codes.push(theirs.code);
    }
    codes
}

/// pgbench names `\set`, `\if` and `\elif` by their word as written (`SET`,
/// `Set`) in run-time messages, and the other meta-commands in lower case.
#[test]
fn meta_command_words_keep_their_case_as_pgbench18() {
    let scripts = [
        "\\SET x 1/0\n",
        "\\Set 1x 2\n",
        "\\SetShell y echo 5\n\\SET 1y 3\n",
        "\\IF 1/0\n\\endif\n",
        "\\if 0\n\\ELIF 1/0\n\\endif\n",
        "\\SLEEP :nosuch\n",
        "\\SETSHELL x echo abc\n",
        "\\SETSHELL 1x echo 1\n",
        "\\SHELL false\n",
        "\\ENDPIPELINE\n",
        "\\SYNCPIPELINE\n",
        "\\startpipeline\n\\STARTPIPELINE\n\\endpipeline\n",
        "\\startpipeline\nSELECT 1 \\GSET\n\\endpipeline\n",
        "SELECT 1 AS \"1x\" \\ASET\n",
    ];
    // Every script aborts its client.
    let codes = runtime_lines_match(&scripts, &["-M", "extended", "-D", "x=abc"]);
    assert_eq!(codes, [2; 14]);
}

/// `\shell` and `\setshell` start the shell as `system()`/`popen()` do: `sh`
/// is its `$0` and the name in its messages.
#[test]
fn shell_commands_start_sh_as_pgbench18() {
    let scripts = [
        "\\shell ./nope.sh\n",
        "\\setshell v ./nope.sh\n",
        "\\setshell v expr length $0\n\\set y debug(:v)\n",
        "\\setshell v echo $0\n",
        "\\shell test $0 = sh\n\\set y debug(1)\n",
    ];
    for (i, text) in scripts.iter().enumerate() {
        let name = format!("sh{i}.sql");
        let run = Run::new(&[(&name, text)]);
        let (theirs, ours) = run.both(&["-n", "-t", "1", "-f", &name], true);
        assert_eq!(ours.code, theirs.code, "{text:?}: {}", ours.stderr);
        assert_eq!(ours.stderr, as_pgrush(&theirs.stderr), "script {text:?}");
    }
}

/// Runs pgrush with `args` in `run`'s directory, its address space limited to
/// 2 GiB and its time to 60 s (a run that reads a command's endless output to
/// its end is stopped, exit 124): its output and its peak resident memory (KiB).
fn ours_bounded(run: &Run, args: &[&str]) -> (Output, u64) {
    let ours = run.cmd(true, true);
    let mut sh = Command::new("sh");
    sh.current_dir(&run.dir);
    for (k, v) in ours.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    sh.arg("-c")
        .arg("ulimit -v 2097152 && exec timeout 60 \"$0\" \"$@\"")
        .arg(ours.get_program())
        .args(args);
    testkit::run_peak_rss(sh, &run.dir)
}

/// `\setshell` keeps what `fgets` reads into a 64-byte buffer, the first line up
/// to 63 bytes, then closes the pipe: the rest of the output is never read, so an
/// endless writer ends (by SIGPIPE) and memory stays small.
#[test]
fn setshell_reads_one_line_as_pgbench18() {
    let scripts = [
        "\\setshell v yes 7\n\\set y debug(:v)\n",
        "\\setshell v yes abc\n",
        "\\setshell v sh -c 'echo 7; while true; do echo x; sleep 0.1; done'\n\\set y debug(:v)\n",
        "\\setshell v seq 1 100000\n\\set y debug(:v)\n",
        "\\setshell v printf '%070d\\n' 5\n\\set y debug(:v)\n",
        "\\setshell v printf '%063d' 5\n\\set y debug(:v)\n",
        "\\setshell v printf 'x%070d\\n' 5\n",
        "\\setshell v printf '12\\n\\n\\nabc\\n'\n\\set y debug(:v)\n",
        "\\setshell v printf '1'; sleep 0.05; printf '2\\n3'\n\\set y debug(:v)\n",
    ];
    for (i, text) in scripts.iter().enumerate() {
        let name = format!("line{i}.sql");
        let run = Run::new(&[(&name, text)]);
        let args = ["-n", "-t", "1", "-f", &name];
        let theirs = testkit::run(run.cmd(false, true).args(args));
        let (ours, peak_kib) = ours_bounded(&run, &args);
        assert_eq!(ours.code, theirs.code, "{text:?}: {}", ours.stderr);
        assert_eq!(ours.stderr, as_pgrush(&theirs.stderr), "script {text:?}");
        assert!(peak_kib < 100 * 1024, "{text:?}: peak {peak_kib} KiB");
    }
}

/// A nesting shape: `open` n times, `inner`, `close` n times, with the largest n
/// pgbench 18 accepts (found by bisection against it; pgrush's parser models
/// bison's stack, see `expr::parser`).
struct Shape {
    open: &'static str,
    inner: &'static str,
    close: &'static str,
    max: usize,
}

impl Shape {
    fn expr(&self, n: usize) -> String {
        format!(
            "{}{}{}",
            self.open.repeat(n),
            self.inner,
            self.close.repeat(n)
        )
    }
}

const fn shape(open: &'static str, inner: &'static str, close: &'static str, max: usize) -> Shape {
    Shape {
        open,
        inner,
        close,
        max,
    }
}

const SHAPES: &[Shape] = &[
    shape("(", "1", ")", 9996),
    shape("-(", "1", ")", 4998),
    shape("- ", "1", "", 9997),
    shape("-", "1", "", 9997),
    shape("+", "1", "", 9997),
    shape("~", "1", "", 9997),
    shape("NOT ", "true", "", 9997),
    shape("abs(", "1", ")", 4998),
    shape("abs(", "pi()", ")", 4997),
    shape("1+(", "1", ")", 3332),
    shape("1+2*(", "1", ")", 1999),
    shape("greatest(1, 2, (", "1", "))", 1999),
    shape("least(,", "1", ")", 2499),
    shape("mod(1, ", "1", ")", 2499),
    shape("hash((", "1", "))", 3332),
    shape("pow(2,(", "1", "))", 1999),
    shape("CASE WHEN true THEN ", "1", " END", 2499),
    shape("CASE WHEN ", "true", " THEN 1 END", 4997),
    shape("CASE WHEN false THEN 0 ELSE ", "1", " END", 3332),
    shape("CASE WHEN false THEN 0 WHEN ", "true", " THEN 1 END", 3331),
    shape("CASE WHEN false THEN 0 WHEN true THEN ", "1", " END", 1999),
    shape("(", "1 IS NOT NULL", ")", 9994),
    shape("(", "1 ISNULL", ")", 9996),
    shape("NOT ", "true IS TRUE", "", 9995),
    shape("1=(", "1", ")", 3332),
    shape("false OR (", "true", ")", 3332),
    shape("(", "-9223372036854775808", ")", 9996),
    shape("(-abs(NOT ", "true", "))", 1999),
];

/// Shapes that are syntax errors whatever their depth: bison pushes the empty
/// argument list (a default reduction) or the token before it detects the error,
/// so from this depth on the error is `memory exhausted` instead.
const BAD_SHAPES: &[Shape] = &[
    shape("abs(", "*", ")", 4998),
    shape("abs(", "", ")", 4998),
    shape("(", "*", ")", 9998),
];

/// What pgbench does with a script of [`nesting_limits_match_pgbench18`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    Loads,
    Exhausted,
    OtherError,
}

#[test]
fn nesting_limits_match_pgbench18() {
    use Outcome::*;
    let mut cases: Vec<(String, Outcome)> = Vec::new();
    let pair = |s: &Shape, template: &dyn Fn(String) -> String, at_max: Outcome| {
        [
            (template(s.expr(s.max)), at_max),
            (template(s.expr(s.max + 1)), Exhausted),
        ]
    };
    let set = |e: String| format!("\\set x {e}\n");
    let cond = |e: String| format!("\\if {e}\n\\endif\n");
    for s in SHAPES {
        cases.extend(pair(s, &set, Loads));
    }
    for s in &SHAPES[..3] {
        cases.extend(pair(s, &cond, Loads));
    }
    for s in BAD_SHAPES {
        cases.extend(pair(s, &set, OtherError));
    }
    // Left-associative chains never deepen bison's stack.
    cases.push((set(format!("1{}", "+1".repeat(100_000))), Loads));
    cases.push((
        set(format!("true{}", " AND NOT true".repeat(30_000))),
        Loads,
    ));
    let run = Run::new(&[]);
    for (i, (text, outcome)) in cases.iter().enumerate() {
        let name = format!("nest{i}.sql");
        std::fs::write(run.dir.join(&name), text).expect("write");
        let (theirs, ours) = run.both(&["-n", "-t", "1", "-f", &name], false);
        let head = &text[..text.len().min(60)];
        let got = if theirs.stderr.contains("could not create connection") {
            Loads
        } else if theirs.stderr.contains(": memory exhausted in command") {
            Exhausted
        } else {
            OtherError
        };
        assert_eq!(got, *outcome, "{head}: {:.200}", theirs.stderr);
        assert_eq!(ours.code, theirs.code, "{head}");
        assert!(ours.stderr == as_pgrush(&theirs.stderr), "{head}");
    }
}

/// The deepest expression of each shape evaluates as in pgbench (its value through
/// `debug()`, or its evaluation error), in `\set` and in `\if`.
#[test]
fn deepest_expressions_evaluate_as_pgbench18() {
    let exprs: Vec<String> = SHAPES.iter().map(|s| s.expr(s.max)).collect();
    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
    command_batch(&refs, 2, |e| format!("\\set x {e}\n\\set y debug(:x)\n"));
    command_batch(&refs[..4], 2, |e| {
        format!("\\if {e}\n\\set y debug(1)\n\\else\n\\set y debug(0)\n\\endif\n")
    });
}

/// Operator chains far longer than pgbench can evaluate (it overflows its stack
/// from about 100000 operators) evaluate on pgrush's worker threads.
#[test]
fn long_operator_chains_evaluate() {
    let text = format!("\\set x 1{}\n\\set y debug(:x)\n", "+1".repeat(150_000));
    let run = Run::new(&[("chain.sql", &text)]);
    let out = testkit::run(run.cmd(true, true).args([
        "-n",
        "-t",
        "2",
        "-c",
        "2",
        "-j",
        "2",
        "-f",
        "chain.sql",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = interesting(&out.stderr);
    assert_eq!(lines, vec!["debug(script=0,command=2): int 150001"; 4]);
}
