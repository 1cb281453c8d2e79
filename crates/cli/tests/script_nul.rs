//! A NUL byte in a script file: pgbench reads the file into a C string before
//! parsing it, so the script ends at the first NUL. Differential tests against
//! pgbench 18 for `-f FILE`, `-f FILE@W` and `-f -` (standard input) in the three
//! query modes: exit code, what `--debug` says was sent, the transaction count and
//! the whole masked output.

mod bench_common;

use std::io::Write;
use std::process::Stdio;

use bench_common::{EMPTY_DB, Prog, Scratch, command, masked, rename};
use pgrush_testkit::Output;

/// Runs `prog` with `args`, `stdin` as its standard input.
fn run_with_stdin(prog: Prog, dir: &Scratch, args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = command(prog, &dir.path, EMPTY_DB);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start the program");
    let mut input = child.stdin.take().expect("stdin");
    // The program may exit before reading it all (a load error): ignore EPIPE.
    let _ = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output().expect("wait for the program");
    Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// The lines that show what was sent or evaluated, unmasked: `--debug`'s
/// `sending`/`preparing` lines and `debug()` output.
fn sent(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains(" sending ") || l.contains(" preparing ") || l.starts_with("debug("))
        .map(str::to_string)
        .collect()
}

/// The `number of transactions actually processed` line, unmasked.
fn processed(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .find(|l| l.starts_with("number of transactions actually processed"))
        .map(str::to_string)
}

const ALL_MODES: &[&str] = &["simple", "extended", "prepared"];

/// What pgbench 18 was expected to do with a script.
struct Expect {
    code: i32,
    /// The query modes to run.
    modes: &'static [&'static str],
    /// `sending`/`preparing`/`debug()` lines of one transaction, pgbench's words.
    sent_per_tx: &'static [&'static str],
}

/// Runs the script `text` with both programs through every way of naming it and
/// every query mode; checks pgbench against `expect` and pgrush against pgbench.
fn check(text: &[u8], expect: &Expect) {
    let dir = Scratch::new(&[]);
    std::fs::write(dir.path.join("nul.sql"), text).expect("write the script");
    for &mode in expect.modes {
        for (spec, stdin) in [("nul.sql", None), ("nul.sql@3", None), ("-", Some(text))] {
            let args = ["-n", "-t", "2", "-M", mode, "--debug", "-r", "-f", spec];
            let run = |prog| run_with_stdin(prog, &dir, &args, stdin.unwrap_or(b""));
            let theirs = run(Prog::Pgbench);
            let ours = run(Prog::Pgrush);
            let ctx = format!(
                "script {text:?}, args {args:?}\n--- pgrush (exit {}):\n{}{}\n--- pgbench (exit {}):\n{}{}",
                ours.code, ours.stdout, ours.stderr, theirs.code, theirs.stdout, theirs.stderr
            );
            assert_eq!(theirs.code, expect.code, "pgbench's exit code; {ctx}");
            assert_eq!(ours.code, theirs.code, "exit codes differ; {ctx}");

            if expect.code == 0 {
                // Each transaction sends the same commands (prepared once, in the first).
                let their_sent: Vec<String> = sent(&theirs.stderr)
                    .into_iter()
                    .filter(|l| !l.contains(" preparing "))
                    .collect();
                let (first_tx, second_tx) = their_sent.split_at(their_sent.len() / 2);
                assert_eq!(first_tx, second_tx, "{ctx}");
                if mode == "prepared" {
                    assert_eq!(first_tx.len(), expect.sent_per_tx.len(), "{ctx}");
                } else {
                    assert_eq!(first_tx, expect.sent_per_tx, "pgbench's sent lines; {ctx}");
                }
                assert_eq!(
                    processed(&theirs.stdout).as_deref(),
                    Some("number of transactions actually processed: 2/2"),
                    "{ctx}"
                );
            }
            assert_eq!(
                sent(&rename(&theirs.stderr)),
                sent(&ours.stderr),
                "sent lines differ; {ctx}"
            );
            assert_eq!(processed(&ours.stdout), processed(&theirs.stdout), "{ctx}");
            // `-r` command texts: the words after the two numbers of each line.
            let commands = |out: &str| -> Vec<String> {
                out.lines()
                    .filter(|l| l.starts_with("   "))
                    .map(|l| l.split_whitespace().skip(2).collect::<Vec<_>>().join(" "))
                    .collect()
            };
            assert_eq!(commands(&ours.stdout), commands(&theirs.stdout), "{ctx}");

            let (o_out, _) = masked(&ours.stdout);
            let (t_out, _) = masked(&rename(&theirs.stdout));
            assert_eq!(o_out, t_out, "stdout differs; {ctx}");
            let (o_err, o_timing) = masked(&ours.stderr);
            let (t_err, t_timing) = masked(&rename(&theirs.stderr));
            assert_eq!(o_err, t_err, "stderr differs; {ctx}");
            assert_eq!(o_timing, t_timing, "stderr timing lines differ; {ctx}");
        }
    }
}

#[test]
fn a_nul_byte_ends_the_script_as_in_pgbench18() {
    check(
        b"select 1;\nselect 2\0 junk;\nselect 3;\n",
        &Expect {
            code: 0,
            modes: ALL_MODES,
            sent_per_tx: &[
                "pgbench: client 0 sending select 1;",
                "pgbench: client 0 sending select 2",
            ],
        },
    );
}

#[test]
fn a_nul_byte_at_the_start_leaves_an_empty_script_as_in_pgbench18() {
    check(
        b"\0select 1;\nselect 2;\n",
        &Expect {
            code: 1,
            modes: ALL_MODES,
            sent_per_tx: &[],
        },
    );
}

#[test]
fn a_nul_byte_in_a_meta_command_ends_it_as_in_pgbench18() {
    check(
        b"select 10 as y \\gset\n\\set x debug(:y + 3) \0* 100\nselect :x;\n",
        &Expect {
            code: 0,
            modes: ALL_MODES,
            sent_per_tx: &[
                "pgbench: client 0 sending select 10 as y ",
                "debug(script=0,command=2): int 13",
            ],
        },
    );
}

#[test]
fn a_nul_byte_in_a_quoted_string_ends_the_script_as_in_pgbench18() {
    // The string is left open: the server refuses the text, the client aborts.
    // In prepared mode the refusal of the preparation is printed before
    // `sending P_1` (pgbench prepares synchronously), then the execution fails.
    check(
        b"select 1;\nselect 'ab\0cd';\nselect 3;\n",
        &Expect {
            code: 2,
            modes: ALL_MODES,
            sent_per_tx: &[],
        },
    );
}
