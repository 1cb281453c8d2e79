//! When pgbench polls and reports, where that is deterministic: the `--debug`
//! `receiving` lines of a pipeline with `\syncpipeline` and of a command that
//! fails (against pgbench 18 and 19), and the `-P` lines of a `-T` run (against
//! the arithmetic of the intervals, and pgbench 19).

mod bench_common;

use bench_common::{DB, Prog, Scratch, rename, run};

/// `lines` with each run of `receiving` lines cut to one. How many pgbench prints
/// before the first result depends on whether the result is in at its first look,
/// right after sending (under load it may be); the lines after it do not.
fn one_receiving_per_run(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in lines {
        let repeated = l.ends_with(" receiving") && out.last() == Some(l);
        if !repeated {
            out.push(l.clone());
        }
    }
    out
}

/// The `--debug` lines of client 0 about reading results, sending and pipelines.
fn polling_lines(stderr: &str) -> Vec<String> {
    rename(stderr)
        .lines()
        .filter(|l| {
            l.starts_with("pgrush: client 0 ")
                && (l.ends_with(" receiving")
                    || l.contains(" pipeline ending")
                    || l.contains(" executing script")
                    || l.contains(" sending "))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn debug_pipeline_reads_as_pgbench() {
    let dir = Scratch::new(&[(
        "pipe.sql",
        "\\startpipeline\nselect 1;\n\\syncpipeline\nselect 2;\n\\endpipeline\n",
    )]);
    let args = [
        "-n", "-t", "3", "-M", "extended", "--debug", "-f", "pipe.sql",
    ];
    let ours = polling_lines(&run(Prog::Pgrush, &dir.path, DB, &args).stderr);
    // One transaction: a `receiving` after sending, one when the results come, one
    // when the first query's result is read (a sync's is still to come), then the
    // sync's result and the second query's in one go, and the last sync's.
    let per_tx = [
        "receiving",
        "receiving",
        "receiving",
        "pipeline ending, ongoing syncs: 2",
        "receiving",
        "pipeline ending, ongoing syncs: 1",
    ];
    let reading: Vec<&str> = ours
        .iter()
        .filter_map(|l| l.strip_prefix("pgrush: client 0 "))
        .filter(|l| *l == "receiving" || l.starts_with("pipeline"))
        .collect();
    assert_eq!(reading, per_tx.repeat(3), "{ours:#?}");
    for oracle in [Prog::Pgbench, Prog::Pgbench19] {
        let theirs = polling_lines(&run(oracle, &dir.path, DB, &args).stderr);
        assert_eq!(
            one_receiving_per_run(&ours),
            one_receiving_per_run(&theirs),
            "{oracle:?}"
        );
    }
}

#[test]
fn debug_failed_command_reads_once() {
    // The error and the ReadyForQuery after it may come in two reads; pgbench
    // reads on to the end once the error is in: two `receiving` lines, always.
    let dir = Scratch::new(&[("fail.sql", "select 1/0;\n")]);
    for mode in ["simple", "extended"] {
        let args = ["-n", "-t", "1", "-M", mode, "--debug", "-f", "fail.sql"];
        let ours = polling_lines(&run(Prog::Pgrush, &dir.path, DB, &args).stderr);
        let receiving = ours.iter().filter(|l| l.ends_with(" receiving")).count();
        assert_eq!(receiving, 2, "{mode}: {ours:#?}");
        let theirs = polling_lines(&run(Prog::Pgbench19, &dir.path, DB, &args).stderr);
        assert_eq!(
            one_receiving_per_run(&ours),
            one_receiving_per_run(&theirs),
            "{mode}"
        );
    }
}

/// The whole seconds of the `-P` lines of `prog` with `args` (a line is printed
/// when its time has come, so `2.0 s` may read `2.1 s` on a loaded machine).
fn progress_times(prog: Prog, dir: &Scratch, args: &[&str]) -> Vec<u64> {
    let out = run(prog, &dir.path, DB, args);
    assert_eq!(out.code, 0, "{prog:?}: {}", out.stderr);
    out.stderr
        .lines()
        .filter_map(|l| l.strip_prefix("progress: "))
        .map(|l| {
            let time = l.split(" s,").next().unwrap_or("");
            let secs: f64 = time.parse().unwrap_or_else(|_| panic!("{prog:?}: {l}"));
            secs.floor() as u64
        })
        .collect()
}

#[test]
fn progress_lines_fall_on_every_interval_up_to_the_end() {
    // pgbench counts `-T` and `-P` from the same start: with `-T` a multiple of `-P`,
    // the last line falls on the end and is printed; a line past the end is not.
    // A busy client (no `-R`) is still running at the end.
    let dir = Scratch::new(&[("one.sql", "select 1;\n")]);
    let cases: [(Prog, &[&str], &[u64]); 3] = [
        (Prog::Pgrush, &["-T", "2", "-P", "1"], &[1, 2]),
        (Prog::Pgrush, &["-T", "3", "-P", "2"], &[2]),
        (Prog::Pgbench19, &["-T", "2", "-P", "1"], &[1, 2]),
    ];
    // The runs at once: each takes its -T.
    std::thread::scope(|s| {
        let runs: Vec<_> = cases
            .iter()
            .map(|&(prog, limits, expected)| {
                let dir = &dir;
                s.spawn(move || {
                    let mut args = vec!["-n", "-f", "one.sql"];
                    args.extend_from_slice(limits);
                    let times = progress_times(prog, dir, &args);
                    (prog, args, expected, times)
                })
            })
            .collect();
        for handle in runs {
            let (prog, args, expected, times) = handle.join().expect("a run");
            assert_eq!(times, expected, "{prog:?} {args:?}");
        }
    });
}
