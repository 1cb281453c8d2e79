//! Differential test: script load errors (message, echoed line, caret) against
//! pgbench 18, and against pgbench 15 where both agree. No server is needed: pgbench
//! parses scripts before connecting.

mod common;

use common::*;
use pgrush_script::load_script;
use pgrush_testkit as testkit;
use pgrush_testkit::oracle::{self, Which};

/// Malformed scripts (the `s*`/`g*` matrix of the behaviour notes and more).
const BAD: &[&str] = &[
    "\\set i 1 +",
    "\\set i 1 +\n",
    "SELECT 1;\n\\set x 1 + * 2\n",
    "\\set x foo(1)\n",
    "\\set x random(1)\n",
    "\\nosuch a b\n",
    "\\set\n",
    "\\gset\n",
    "\\sleep\n",
    "\\sleep 1 2 3\n",
    "\\sleep foo\n",
    "\\sleep 1 xs\n",
    "\\if 1\nSELECT 1;\n",
    "\\endif\n",
    "\\else\n",
    "\\if 1\n\\else\n\\else\n\\endif\n",
    "\\if 1\n\\else\n\\elif 1\n\\endif\n",
    "\\elif 1\n",
    "\\setshell x\n",
    "\\shell\n",
    "\\startpipeline x\n",
    "\\endpipeline 1\n",
    "\\syncpipeline 2\n",
    "\\else x\n",
    "\\endif x\n",
    "\\set i 100000000000000000000\n",
    "\\set d 1.0E309\n",
    "\\set x 1 $ 2\n",
    "-- only a comment\n",
    "",
    "  \n\n",
    "\\set x greatest()\n",
    "\\set x case when 1 then 2 else 3\n",
    "SELECT 1 \\gset p_ x\n",
    "\\sleep 1 ms ms\n",
    "\\set x -9223372036854775808\n\\set y 9223372036854775808\n",
    "\\set x hash(1,2,3)\n",
    "\\set x permute(1)\n",
    "\\set x permute(1,2,3,4)\n",
    "\\set x 1\n\\gset\n",
    "SELECT 1 AS a \\gset\n\\gset\n",
    "\\sleep 1.5\n",
    "\\sleep 10ms x\n",
    "\\sleep +5 parsecs\n",
    "\\set x 1 <= 2 = true\n",
    "\\set y 2 - 9223372036854775808\n",
    "\\set x mod(7,3) + foo\n",
    "\\set x e\n",
    "\\set x 1e\n",
    "\\set x 1 + \\\n  * 2\n",
    "\\set x 1e-400\n",
    "\\set x 1e-310\n",
    "\\set x greatest(1,)\n",
    "\\set x 1 + * $ 2\n",
    "\\set x 1 $ 2 $\n",
    "\\set x (1 2)\n",
    "\\set x 1 < 2 < 3\n",
    "\\set x x IS 5\n",
    "\\set x 1 is not 5\n",
    "\\set x not\n",
    "\\set x case 1 when 1 then 2 end\n",
    "\\set x case when 1 then 2 when end\n",
    "\\set x (1\n",
    "\\set x 1)\n",
    "\\set x random(1,2\n",
    "\\set x :\n",
    "\\set x 1 ! 2\n",
    "\\set x 'a'\n",
    "\\set x 1 ^ 2\n",
    "\\set x 99999999999999999999 + $\n",
    "\\set x\n",
    "\\set x    \n",
    "\\if\n",
    "\\set x abs(1, 2)\n",
    "\\set x pi(1)\n",
    "\\set x RANDOM(1)\n",
    "\\set x Foo(1)\n",
    "\\set x .e5\n",
    "\\set x 1.2.3\n",
    "\\set x 9223372036854775808 + 1\n",
    "\\set x --9223372036854775808 +\n",
    "\\set x 1 +\r\n",
    "SELECT 1;\n\n  \\set x 5 5\n",
    "\\set x 1 + \\\n 2 +\n",
    "\\SET x 1 +\n",
    "\\IF 1 +\n",
    "\\set x true is 1\n",
    "\\set x null isnull isnull +\n",
    "\\set x debug(1) debug(2)\n",
    "\\set x least(,)\n",
    "\\set x case when 1 then 2 else 3 end end\n",
    "\\set x 1 and or 2\n",
    "\\set x ~\n",
    "\\set x 1 ~ 2\n",
    "\\set x 1 = = 2\n",
    "\\set x 1 # # 2\n",
    "\\setshell\n",
    "SELECT 1;\n\\startpipeline\n\\aset a b\n",
    "\\startpipeline\n\\gset\n",
    "\\if 1\n\\if 2\n\\endif\n",
    "\\if 1\n\\endif\n\\endif\n",
    "\\if 1\n\\elif 2\n\\else\n\\else\n\\endif\n",
    "\\\n",
];

fn run_oracle(which: Which, idx: usize, text: &str) -> testkit::Output {
    let name = format!("bad_{idx}.sql");
    let path = write_script(&name, text);
    let pgb = oracle::require(which);
    let mut cmd = pgb.command();
    cmd.current_dir(tmpdir());
    cmd.env("PGHOST", "/nonexistent-pgrush-socket-dir");
    cmd.args(["-n", "-t", "1", "-f"])
        .arg(path.file_name().expect("name"));
    testkit::run(&mut cmd)
}

fn expected_from(stderr: &str, prog: &str) -> String {
    stderr.replace(&format!("{prog}: error: "), "error: ")
}

#[test]
fn load_errors_match_pgbench18() {
    let mut checked = 0;
    for (i, text) in BAD.iter().enumerate() {
        let name = format!("bad_{i}.sql");
        let out = run_oracle(Which::Pgbench18, i, text);
        assert_eq!(
            out.code, 1,
            "script {text:?} should fail to load: {}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("could not create connection"),
            "{text:?} loads in pgbench"
        );
        let err = load_script(&name, text, 1).expect_err(text);
        let mine = format!("error: {err}\n");
        assert_eq!(
            expected_from(&out.stderr, "pgbench"),
            mine,
            "script {text:?}"
        );
        checked += 1;
    }
    assert!(checked >= 100);
}

#[test]
fn load_errors_match_pgbench15_where_they_agree() {
    for (i, text) in BAD.iter().enumerate() {
        if text.contains("syncpipeline") {
            continue; // 15 does not know \syncpipeline
        }
        let name = format!("bad_{i}.sql");
        let out = run_oracle(Which::Pgbench15, i, text);
        let err = load_script(&name, text, 1).expect_err(text);
        assert_eq!(
            expected_from(&out.stderr, "pgbench"),
            format!("error: {err}\n"),
            "script {text:?}"
        );
    }
}

/// Scripts that load: compare pgbench's acceptance (it then fails to connect).
#[test]
fn accepted_scripts_are_accepted() {
    let good = [
        "\\set x 1 is null is null\n",
        "\\set x greatest(,1)\n",
        "\\ set x 1\n",
        "\\set x 1 + \\\n  2\n",
        "SELECT 1 AS a;\n\\gset\nSELECT :a;\n",
        "SELECT 1 \\aset\n",
        "\\set\tx\t5\n\\set  y   :x  +  1\nSELECT :y;\n",
        "\\sleep 0\n\\sleep 1 us\n\\sleep 1ms\n\\sleep :i us\n",
        "\\syncpipeline\n",
        "\\if 1\n\\elif 2\n\\else\n\\endif\n",
        "SELECT $$a;b$$; SELECT 'x;y'; SELECT \"q;q\";\n",
        "\\set x -9223372036854775808\n",
        "\\sleep -\n",
        "\\sleep :\n",
    ];
    for (i, text) in good.iter().enumerate() {
        let name = format!("good_{i}.sql");
        let path = write_script(&name, text);
        let pgb = oracle::require(Which::Pgbench18);
        let mut cmd = pgb.command();
        cmd.current_dir(tmpdir());
        cmd.env("PGHOST", "/nonexistent-pgrush-socket-dir");
        cmd.args(["-n", "-t", "1", "-f"])
            .arg(path.file_name().expect("name"));
        let out = testkit::run(&mut cmd);
        assert!(
            out.stderr.contains("could not create connection for setup"),
            "{text:?}: {}",
            out.stderr
        );
        assert!(load_script(&name, text, 1).is_ok(), "{text:?}");
    }
}

/// More than 255 variable references fail in extended/prepared mode only.
#[test]
fn too_many_parameters_match_pgbench18() {
    for (n, tail) in [(255usize, ";\n"), (256, ";\n"), (300, "\n")] {
        let text = format!(
            "SELECT 1;\nSELECT {}{tail}",
            (0..n)
                .map(|i| format!(":v{i}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let name = format!("params_{n}.sql");
        let path = write_script(&name, &text);
        let script = load_script(&name, &text, 1).expect("loads in any mode");
        for mode in ["simple", "extended", "prepared"] {
            let pgb = oracle::require(Which::Pgbench18);
            let mut cmd = pgb.command();
            cmd.current_dir(tmpdir());
            cmd.env("PGHOST", "/nonexistent-pgrush-socket-dir");
            cmd.args(["-n", "-t", "1", "-M", mode, "-f"])
                .arg(path.file_name().expect("name"));
            let out = testkit::run(&mut cmd);
            let mine = if mode == "simple" {
                Ok(())
            } else {
                script.check_parameters()
            };
            match mine {
                Ok(()) => assert!(
                    out.stderr.contains("could not create connection"),
                    "{n} {mode}: {}",
                    out.stderr
                ),
                Err(e) => assert_eq!(out.stderr, format!("pgbench: error: {e}\n"), "{n} {mode}"),
            }
        }
    }
}
