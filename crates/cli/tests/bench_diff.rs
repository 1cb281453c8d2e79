//! Differential tests of benchmark runs: pgrush and pgbench 18 on the same
//! sandbox cluster, same options; exit codes, stdout (numbers masked, line by
//! line) and stderr (masked) must match. Runs with `--failures-detailed` are
//! compared with pgbench 19, whose failure report pgrush follows (it always
//! prints `number of other failures`).

mod bench_common;

use StderrMode::{Ordered, Unordered};
use bench_common::{
    DB, EMPTY_DB, Prog, Scratch, StderrMode, compare, compare_in, compare_in_env, compare_with,
    compare19,
};

const ONE: (&str, &str) = ("one.sql", "select 1;\n");
const TWO: (&str, &str) = ("two.sql", "select 2;\nselect 3;\n");

#[test]
fn builtin_scripts_and_query_modes() {
    for args in [
        &["-t", "5"][..],
        &["-n", "-t", "5", "-S"],
        &["-n", "-t", "5", "-N"],
        &["-n", "-t", "5", "-M", "extended", "-S"],
        &["-n", "-t", "5", "-M", "prepared", "-S"],
        &["-n", "-t", "3", "-M", "prepared"],
        &["-n", "-t", "3", "-M", "extended", "-b", "tpcb"],
        &["-v", "-t", "2", "-S"],
    ] {
        compare(&[], args, Ordered);
    }
}

#[test]
fn clients_threads_and_connect() {
    for args in [
        &["-n", "-t", "3", "-c", "2", "-j", "2", "-S"][..],
        &["-n", "-t", "3", "-c", "3", "-j", "2", "-N"],
        &["-n", "-t", "4", "-C", "-S"],
        &["-n", "-t", "2", "-C", "-c", "2", "-M", "prepared", "-S"],
    ] {
        compare(&[], args, Unordered);
    }
}

#[test]
fn per_command_report_and_retries_columns() {
    for args in [
        &["-n", "-t", "10", "-r", "-S"][..],
        &["-n", "-t", "10", "-r", "--max-tries", "2", "-N"],
        // Two scripts: the seed makes both programs choose the same ones.
        &[
            "-n",
            "-t",
            "5",
            "-r",
            "-f",
            "two.sql",
            "-f",
            "one.sql",
            "--random-seed=3",
        ],
    ] {
        compare(&[ONE, TWO], args, Ordered);
    }
    compare19(
        &[],
        &[
            "-n",
            "-t",
            "5",
            "--failures-detailed",
            "--max-tries",
            "3",
            "-S",
        ],
        Ordered,
    );
}

#[test]
fn multiple_scripts_with_seed() {
    compare(
        &[ONE],
        &[
            "-n",
            "-t",
            "30",
            "-b",
            "simple-update@2",
            "-b",
            "select-only@3",
            "-f",
            "one.sql",
            "-r",
            "--random-seed=5",
        ],
        Ordered,
    );
    compare(
        &[ONE, TWO],
        &[
            "-n",
            "-t",
            "12",
            "-c",
            "3",
            "-j",
            "2",
            "--random-seed=777",
            "-f",
            "one.sql@2",
            "-f",
            "two.sql@0",
        ],
        Ordered,
    );
}

#[test]
fn random_seed_messages_in_order() {
    let dir = Scratch::new(&[]);
    let seed_env = [("PGBENCH_RANDOM_SEED", "5")];
    compare_in_env(
        &dir,
        DB,
        &[
            "-n",
            "-t",
            "2",
            "-S",
            "--random-seed=7",
            "--random-seed",
            "-1",
        ],
        &seed_env,
        Ordered,
    );
    // The lines come while the options are read: before a later option error.
    compare_in_env(
        &dir,
        DB,
        &["--random-seed=7", "-c", "0", "--random-seed=8"],
        &seed_env,
        Ordered,
    );
    compare_in_env(
        &dir,
        DB,
        &["--random-seed=7", "--random-seed=bad"],
        &[],
        Ordered,
    );
    compare_in_env(&dir, DB, &["-n", "-t", "1", "-S"], &seed_env, Ordered);
}

#[test]
fn duration_progress_and_rate() {
    for args in [
        &["-n", "-T", "2", "-P", "1", "-S", "-c", "2", "-j", "2"][..],
        &["-n", "-T", "2", "-P", "1", "--progress-timestamp", "-S"],
        // -R draws each transaction's delay at random: a fixed seed gives both
        // programs the same schedule.
        &["-n", "-t", "20", "-R", "500", "-S", "--random-seed=11"],
        &[
            "-n",
            "-t",
            "20",
            "-R",
            "500",
            "-L",
            "50",
            "-S",
            "--random-seed=11",
        ],
        &[
            "-n",
            "-t",
            "200",
            "-S",
            "-R",
            "20000",
            "-L",
            "1",
            "--random-seed=11",
        ],
        &[
            "-n",
            "-T",
            "2",
            "-P",
            "1",
            "-R",
            "100",
            "--progress-timestamp",
            "-c",
            "3",
            "-j",
            "3",
            "-N",
            "--random-seed=11",
        ],
    ] {
        compare(&[], args, Unordered);
    }
    let detailed = "-n -T 2 -P 1 -R 200 -L 5 --max-tries 3 --failures-detailed -S --random-seed=11";
    compare19(&[], &detailed.split(' ').collect::<Vec<_>>(), Unordered);
}

#[test]
fn custom_scripts_and_variables() {
    let vars = (
        "vars.sql",
        "\\set x :foo\nselect :'foo', :x;\n\\set y debug(:client_id)\n",
    );
    let rnd = (
        "rnd.sql",
        "\\set a random(1, 1000000)\n\\set b debug(:a)\n\\set e debug(random_exponential(1, 1000, 2.5))\n\\set h debug(hash(12345))\n\\set d debug(:default_seed)\n",
    );
    compare(&[ONE], &["-n", "-t", "5", "-f", "one.sql"], Ordered);
    compare(
        &[vars],
        &["-n", "-t", "3", "-D", "foo=bar7", "-f", "vars.sql"],
        Ordered,
    );
    compare(
        &[rnd],
        &[
            "-n",
            "-t",
            "2",
            "-c",
            "2",
            "--random-seed=12345",
            "-f",
            "rnd.sql",
        ],
        Ordered,
    );
}

#[test]
fn conditionals_sleep_and_shell() {
    let ifs = (
        "ifs.sql",
        "\\set i random(1, 3)\n\\if :i = 1\nselect 1;\n\\elif :i = 2\nselect 2;\n\\else\nselect 3;\n\\endif\n\\if false\n\\if true\nselect 9;\n\\endif\n\\endif\n",
    );
    let sleep = (
        "sleep.sql",
        "\\sleep 2 ms\n\\set t 100\n\\sleep :t us\nselect 1;\n",
    );
    let shell = (
        "shell.sql",
        "\\setshell v echo 42\n\\shell true\n\\set w debug(:v)\n",
    );
    compare(
        &[ifs],
        &["-n", "-t", "6", "--random-seed=3", "-r", "-f", "ifs.sql"],
        Ordered,
    );
    compare(&[sleep], &["-n", "-t", "2", "-f", "sleep.sql"], Ordered);
    compare(&[shell], &["-n", "-t", "2", "-f", "shell.sql"], Ordered);
}

#[test]
fn gset_and_aset() {
    let gset = (
        "gset.sql",
        "select 1 as a, 'x' as b \\gset\n\\set c debug(:a)\nselect 5 as n \\gset p_\n\\set d debug(:p_n)\n",
    );
    let aset = (
        "aset.sql",
        "select 7 as q \\; select 8 as r \\aset\n\\set s debug(:q + :r)\n",
    );
    let none = ("none.sql", "select 1 where false \\gset\n");
    compare(&[gset], &["-n", "-t", "2", "-f", "gset.sql"], Ordered);
    compare(
        &[gset],
        &["-n", "-t", "2", "-M", "prepared", "-f", "gset.sql"],
        Ordered,
    );
    compare(&[aset], &["-n", "-t", "2", "-f", "aset.sql"], Ordered);
    compare(&[none], &["-n", "-t", "2", "-f", "none.sql"], Ordered);
    // An `\aset` name that cannot be stored aborts the client at once: the
    // later results are discarded and the next command never runs.
    let badaset = (
        "badaset.sql",
        "select 1 as a \\; select 2 as \"1x\" \\; select 3 as c \\aset\nselect 4 \\gset\n",
    );
    compare(
        &[badaset],
        &["-n", "-t", "2", "-c", "2", "-f", "badaset.sql", "--debug"],
        Unordered,
    );
}

#[test]
fn pipelines() {
    let pipe = (
        "pipe.sql",
        "\\startpipeline\nselect 1;\nselect :client_id;\n\\endpipeline\n",
    );
    let sync = (
        "sync.sql",
        "\\startpipeline\nselect 1;\n\\syncpipeline\nselect 2;\n\\endpipeline\n",
    );
    compare(
        &[pipe],
        &["-n", "-t", "3", "-M", "extended", "-f", "pipe.sql"],
        Ordered,
    );
    compare(
        &[pipe],
        &["-n", "-t", "3", "-M", "prepared", "-f", "pipe.sql"],
        Ordered,
    );
    compare(&[pipe], &["-n", "-t", "1", "-f", "pipe.sql"], Ordered);
    // `--debug` reports each pipeline sync; an error stops the reading (its query
    // number counts the syncs since the previous query).
    let syncs = (
        "syncs.sql",
        "\\startpipeline\nselect 1;\n\\syncpipeline\n\\syncpipeline\nselect 1/(:client_id - 1);\nselect 2;\n\\syncpipeline\nselect 3;\n\\endpipeline\n",
    );
    for mode in ["extended", "prepared"] {
        compare(
            &[sync, syncs],
            &["-n", "-t", "2", "-M", mode, "-f", "sync.sql", "--debug"],
            Ordered,
        );
        compare(
            &[syncs],
            &[
                "-n",
                "-t",
                "2",
                "-c",
                "2",
                "-M",
                mode,
                "-f",
                "syncs.sql",
                "--debug",
            ],
            Unordered,
        );
    }
    let open = ("open.sql", "\\startpipeline\nselect 1;\n");
    compare(
        &[open],
        &["-n", "-t", "2", "-M", "extended", "-f", "open.sql"],
        Ordered,
    );
    let nested = (
        "nested.sql",
        "\\startpipeline\n\\startpipeline\n\\endpipeline\n",
    );
    compare(
        &[nested],
        &["-n", "-t", "1", "-M", "extended", "-f", "nested.sql"],
        Ordered,
    );
    let pgset = (
        "pgset.sql",
        "\\startpipeline\nselect 1 as a \\gset\n\\endpipeline\n",
    );
    compare(
        &[pgset],
        &["-n", "-t", "1", "-M", "extended", "-f", "pgset.sql"],
        Ordered,
    );
    let endonly = ("end.sql", "\\endpipeline\n");
    compare(
        &[endonly],
        &["-n", "-t", "1", "-M", "prepared", "-f", "end.sql"],
        Ordered,
    );
    compare(
        &[sync],
        &[
            "-n", "-t", "3", "-c", "2", "-M", "extended", "-f", "sync.sql",
        ],
        Unordered,
    );
}

#[test]
fn sql_errors_abort_clients() {
    let bad = ("bad.sql", "select nosuchcol;\n");
    for mode in ["simple", "extended", "prepared"] {
        compare(
            &[bad],
            &["-n", "-t", "1", "-M", mode, "-f", "bad.sql"],
            Ordered,
        );
    }
    let ab = (
        "ab.sql",
        "\\if :client_id = 1\nselect 1/0;\n\\endif\nselect 1;\n",
    );
    compare(
        &[ab],
        &["-n", "-t", "5", "-c", "3", "-f", "ab.sql"],
        Unordered,
    );
    compare(
        &[ab],
        &[
            "-n",
            "-t",
            "5",
            "-c",
            "1",
            "--exit-on-abort",
            "-f",
            "ab.sql",
        ],
        Unordered,
    );
    // Client 1 aborts: message, no report, exit 2 (also with several threads).
    for threads in ["1", "3"] {
        compare(
            &[ab],
            &[
                "-n",
                "-t",
                "5",
                "-c",
                "3",
                "-j",
                threads,
                "--exit-on-abort",
                "-f",
                "ab.sql",
            ],
            Unordered,
        );
    }
    let notx = ("notx.sql", "begin;\nselect 1;\n");
    compare(&[notx], &["-n", "-t", "2", "-f", "notx.sql"], Ordered);
    let metaerr = (
        "meta.sql",
        "\\if :client_id = 0\n\\sleep :nosuch ms\n\\elif :client_id = 1\n\\setshell v echo :nosuch\n\\else\n\\setshell v echo abc\n\\endif\n",
    );
    compare(
        &[metaerr],
        &["-n", "-t", "2", "-c", "3", "-f", "meta.sql"],
        Unordered,
    );
    let evalerr = ("eval.sql", "\\set x 1 / 0\n");
    compare(&[evalerr], &["-n", "-t", "2", "-f", "eval.sql"], Ordered);
}

#[test]
fn serialization_failures_and_retries() {
    let f = (
        "f40001.sql",
        "DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40001'; END $$;\n",
    );
    compare(&[f], &["-n", "-t", "3", "-f", "f40001.sql"], Ordered);
    compare(&[f], &["-n", "-t", "3", "-r", "-f", "f40001.sql"], Ordered);
    compare19(
        &[f],
        &[
            "-n",
            "-t",
            "3",
            "--max-tries",
            "2",
            "--failures-detailed",
            "-r",
            "-f",
            "f40001.sql",
        ],
        Ordered,
    );
    compare(
        &[f],
        &[
            "-n",
            "-t",
            "2",
            "--max-tries",
            "3",
            "--verbose-errors",
            "-f",
            "f40001.sql",
        ],
        Ordered,
    );
    compare(
        &[f],
        &[
            "-n",
            "-t",
            "3",
            "--max-tries",
            "2",
            "-R",
            "1000",
            "-L",
            "100",
            "-r",
            "-f",
            "f40001.sql",
            "--random-seed=11",
        ],
        Ordered,
    );
    compare19(
        &[f],
        &[
            "-n",
            "-t",
            "3",
            "--max-tries",
            "2",
            "-P",
            "1",
            "--failures-detailed",
            "-f",
            "f40001.sql",
        ],
        Ordered,
    );
}

#[test]
fn setup_errors_and_messages() {
    let dir = Scratch::new(&[ONE]);
    compare_in(&dir, EMPTY_DB, &["-t", "1", "-S"], Ordered);
    compare_in(&dir, EMPTY_DB, &["-t", "1", "-f", "one.sql"], Ordered);
    compare_in(
        &dir,
        bench_common::DB,
        &["-n", "-t", "1", "-S", "-s", "5"],
        Ordered,
    );
    compare_in(
        &dir,
        bench_common::DB,
        &["-n", "-t", "1", "-S", "--random-seed=9"],
        Ordered,
    );
    compare_in(
        &dir,
        bench_common::DB,
        &["-n", "-t", "1", "-f", "missing.sql"],
        Ordered,
    );
    compare_in(&dir, "nosuchdb", &["-n", "-t", "1", "-S"], Ordered);
}

#[test]
fn partitioned_accounts_are_reported() {
    use pgrush_testkit::oracle::{self, Which};
    let c = bench_common::cluster();
    c.create_database("parts").expect("create db");
    let init = pgrush_testkit::run(
        oracle::require(Which::Pgbench18)
            .command()
            .args([
                "-i",
                "-s",
                "1",
                "-q",
                "--partitions=3",
                "--partition-method=hash",
                "parts",
            ])
            .envs(c.env()),
    );
    assert_eq!(init.code, 0, "{}", init.stderr);
    let dir = Scratch::new(&[]);
    compare_in(&dir, "parts", &["-n", "-t", "2", "-S"], Ordered);
    compare_in(&dir, "parts", &["-t", "2", "-N", "-M", "prepared"], Ordered);
}

#[test]
fn debug_output() {
    compare(&[], &["-n", "-t", "2", "-S", "--debug"], Ordered);
    compare(
        &[],
        &["-n", "-t", "2", "-S", "-M", "prepared", "--debug"],
        Ordered,
    );
    compare(
        &[],
        &["-n", "-t", "2", "-S", "-M", "extended", "-C", "--debug"],
        Ordered,
    );
    let meta = (
        "meta.sql",
        "\\set x 1\n\\sleep 1 ms\n\\if :x = 1\nselect 1;\n\\else\nselect 2;\n\\endif\n\\shell true\n",
    );
    compare(
        &[meta],
        &["-n", "-t", "1", "-f", "meta.sql", "--debug"],
        Ordered,
    );
    // `\setshell` prints the command, its first argument as written ("(null)"
    // without one) and the output line with its newline.
    let setshell = (
        "setshell.sql",
        "\\setshell x echo 5\n\\setshell y echo :x\n\\setshell z echo \"  7  \"\n\\setshell w nproc\n",
    );
    compare(
        &[setshell],
        &["-n", "-t", "1", "-f", "setshell.sql", "--debug"],
        Ordered,
    );
}

/// Options of pgbench's run not exercised elsewhere in a run: connection options
/// (`-d`/`--dbname`, `-h`, `-p`, `-U`), `-C` with `-R`, `-L` without `-R`,
/// `--max-tries 0` with `-T`, `-s` with a custom script, throttled `-r`, `-j` with
/// prepared statements and per-command latencies.
#[test]
fn remaining_options_in_runs() {
    let c = bench_common::cluster();
    let dir = Scratch::new(&[ONE, TWO]);
    let host = c.socket_dir().to_string_lossy().into_owned();
    let port = c.port().to_string();
    let user = c.superuser().to_string();
    for args in [
        &["-n", "-t", "2", "-S", "-d", DB][..],
        &["-n", "-t", "2", "-S", "--dbname=bench"],
        &["-n", "-t", "2", "-S", "bench"],
        &[
            "-n", "-t", "2", "-S", "-h", &host, "-p", &port, "-U", &user, "-d", DB,
        ],
        &["-n", "-t", "2", "-S", "-h", c.tcp_host(), "-p", &port, DB],
    ] {
        // The default database (PGDATABASE) is empty: only `bench` has the tables.
        compare_in(&dir, EMPTY_DB, args, Ordered);
    }
    for args in [
        &["-n", "-t", "5", "-C", "-R", "200", "-S", "--random-seed=11"][..],
        &["-n", "-t", "20", "-L", "1", "-S"],
        &["-n", "-T", "1", "--max-tries", "0", "-S"],
        &["-n", "-t", "3", "-s", "2", "-f", "one.sql"],
        &["-t", "3", "-s", "2", "-S"],
        &[
            "-n",
            "-t",
            "10",
            "-R",
            "1000",
            "-r",
            "-S",
            "--random-seed=11",
        ],
        &[
            "-n", "-t", "4", "-c", "4", "-j", "2", "-M", "prepared", "-r", "-N",
        ],
        &["-n", "-T", "1", "-c", "2", "-j", "2", "-C", "-S"],
        &[
            "-n",
            "-t",
            "5",
            "-c",
            "2",
            "-f",
            "two.sql@3",
            "-b",
            "select@1",
            "-r",
            "--random-seed=3",
        ],
        &["-n", "-T", "1", "-P", "1", "-c", "3", "-j", "2", "-r", "-S"],
        &[
            "-n", "-t", "2", "-M", "extended", "-C", "--debug", "-f", "two.sql",
        ],
    ] {
        compare_in(&dir, DB, args, Unordered);
    }
    let detailed = [
        "-n",
        "-t",
        "3",
        "-c",
        "2",
        "-j",
        "2",
        "--max-tries",
        "2",
        "--failures-detailed",
        "--verbose-errors",
        "-r",
        "-N",
    ];
    compare_with(Prog::Pgbench19, &dir, DB, &detailed, &[], Unordered);
}
