//! `--stage SPEC` / `--stages FILE`: a run in consecutive stages. Checked by
//! arithmetic: the `-R` schedule's expected counts per stage (a Poisson process:
//! the count of a stage varies about its mean by its square root), and the fixed
//! service time of `pg_sleep` bounding what one client can do in a stage.

mod bench_common;

use std::collections::BTreeMap;

use bench_common::{EMPTY_DB, Prog, Scratch, run};
use pgrush_testkit::Output;

const SELECT1: (&str, &str) = ("one.sql", "SELECT 1;\n");

/// Each transaction takes 10 ms at least: one client runs at most 100 a second.
const SLEEP10: (&str, &str) = ("sleep10.sql", "SELECT pg_sleep(0.01);\n");

/// Runs pgrush in `dir` with `args` (split at spaces); it must succeed.
fn run_ok(dir: &Scratch, args: &str) -> Output {
    let args: Vec<&str> = args.split(' ').collect();
    let out = run(Prog::Pgrush, &dir.path, EMPTY_DB, &args);
    assert_eq!(
        out.code, 0,
        "pgrush failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    eprintln!("{}{}", out.stdout, out.stderr);
    out
}

/// The stage blocks of the report: header line, processed count, tps.
fn stage_blocks(out: &Output) -> Vec<(String, u64, f64)> {
    let mut blocks: Vec<(String, u64, f64)> = Vec::new();
    for line in out.stdout.lines() {
        if line.starts_with("stage ") {
            blocks.push((line.to_string(), 0, 0.0));
        } else if let Some(last) = blocks.last_mut() {
            if let Some(n) = line.strip_prefix("number of transactions actually processed: ") {
                last.1 = n.parse().expect("count");
            } else if let Some(tps) = line.strip_prefix("tps = ") {
                last.2 = tps.parse().expect("tps");
            }
        }
    }
    blocks
}

/// The run's processed count (the first in the report) is the sum of the stages'.
fn assert_totals_are_the_stages_sum(out: &Output, blocks: &[(String, u64, f64)]) {
    let total: u64 = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .expect("total")
        .parse()
        .expect("count");
    let sum: u64 = blocks.iter().map(|b| b.1).sum();
    assert_eq!(total, sum, "{}", out.stdout);
}

/// The last column of every line of the log files starting with `prefix`, counted.
fn last_columns(dir: &Scratch, prefix: &str) -> BTreeMap<u64, u64> {
    let mut counts = BTreeMap::new();
    for text in dir.files_with_prefix(prefix).values() {
        for l in text.lines() {
            let last = l.rsplit(' ').next().unwrap().parse().expect("stage column");
            *counts.entry(last).or_default() += 1;
        }
    }
    counts
}

#[test]
fn each_rate_stage_runs_its_expected_count() {
    let dir = Scratch::new(&[SELECT1]);
    let out = run_ok(
        &dir,
        "-n -f one.sql -c 4 -j 2 --random-seed=7 -P 1 -l --log-prefix=st \
         --stage 2s,rate=100 --stage 2s,rate=200,label=double --stage 2s,rate=400",
    );
    let blocks = stage_blocks(&out);
    assert_eq!(blocks.len(), 3, "{}", out.stdout);
    assert_eq!(blocks[0].0, "stage 1: 2 s, clients 4, rate 100 tps");
    assert_eq!(
        blocks[1].0,
        "stage 2 \"double\": 2 s, clients 4, rate 200 tps"
    );
    // A stage of rate R over 2 s expects n = 2R arrivals, Poisson: a standard
    // deviation of sqrt(n) (14, 20 and 28 here). Four of them each way make a false
    // failure about 1 in 16 000 per stage for any seed (with this seed the schedule
    // is fixed, so the counts are too unless the clients fall behind); a rate that
    // did not follow the stages (100 throughout) misses the third by 21 of them.
    for ((_, n, tps), rate) in blocks.iter().zip([100.0, 200.0, 400.0]) {
        let expected: f64 = 2.0 * rate;
        let tolerance = 4.0 * expected.sqrt();
        assert!(
            (*n as f64 - expected).abs() <= tolerance,
            "{n} transactions at {rate} tps (expected {expected} ± {tolerance}):\n{}",
            out.stdout
        );
        assert!(
            (tps - *n as f64 / 2.0).abs() < 1e-6,
            "tps {tps} of {n} in 2 s"
        );
    }
    // The whole run's count is the stages' sum; the log says each line's stage.
    let total: u64 = blocks.iter().map(|b| b.1).sum();
    assert!(
        out.stdout
            .contains(&format!("actually processed: {total}\n"))
    );
    let columns = last_columns(&dir, "st");
    let per_stage: Vec<u64> = blocks.iter().map(|b| b.1).collect();
    assert_eq!(columns.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(columns.values().copied().collect::<Vec<_>>(), per_stage);
    // Progress lines say their stage, in order.
    let stages: Vec<u32> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .map(|l| {
            let (_, n) = l.rsplit_once(" stage ").unwrap_or_else(|| panic!("{l}"));
            n.parse().unwrap()
        })
        .collect();
    assert!(stages.windows(2).all(|w| w[0] <= w[1]), "{stages:?}");
    assert!(stages.contains(&1) && stages.contains(&3), "{stages:?}");
}

#[test]
fn a_stage_runs_only_its_clients() {
    let dir = Scratch::new(&[SLEEP10]);
    let out = run_ok(
        &dir,
        "-n -f sleep10.sql -c 4 -j 2 -l --aggregate-interval=1 --log-prefix=agg \
         --stage 1s,clients=1 --stage 1s,clients=4 --stage 1s,clients=1 \
         --assert=stage1:tps<=101 --assert=stage2:tps>202",
    );
    let blocks = stage_blocks(&out);
    assert_eq!(blocks.len(), 3, "{}", out.stdout);
    assert_totals_are_the_stages_sum(&out, &blocks);
    let (one, four) = (blocks[0].1, blocks[1].1);
    // Back to one client: the three others, once their transaction is done, wait
    // (those transactions are the second stage's).
    assert!(
        blocks[2].1 <= 101,
        "{} transactions back at one client",
        blocks[2].1
    );
    // One client at 10 ms a transaction: at most 100 in the second (and the one
    // it started at its end). Four clients: more than two clients could (202).
    assert!(one <= 101 && one > 0, "{one} transactions with one client");
    assert!(
        four > 202,
        "{four} transactions with four clients, {one} with one"
    );
    eprintln!(
        "tps ratio of 4 clients to 1: {:.2}",
        four as f64 / one as f64
    );
    // The gates measured each stage (the same bounds as above).
    assert!(
        out.stdout.contains("stage1: tps <= 101") && out.stdout.contains("stage2: tps > 202"),
        "{}",
        out.stdout
    );
    // The aggregates say their stage too.
    let columns = last_columns(&dir, "agg");
    assert!(columns.keys().all(|s| [1, 2, 3].contains(s)), "{columns:?}");
}

#[test]
fn a_plain_run_in_stages_totals_its_stages() {
    // No log, gate or document: the run keeps only totals, so each transaction is
    // recorded in its stage alone and the stages are merged into the run's totals.
    let dir = Scratch::new(&[SLEEP10]);
    let out = run_ok(
        &dir,
        "-n -f sleep10.sql -c 2 -j 2 --stage 1s,clients=1 --stage 1s,clients=2",
    );
    let blocks = stage_blocks(&out);
    assert_eq!(blocks.len(), 2, "{}", out.stdout);
    assert!(blocks.iter().all(|b| b.1 > 0), "{}", out.stdout);
    assert_totals_are_the_stages_sum(&out, &blocks);
}

#[test]
fn idle_clients_keep_their_connections() {
    // Every transaction counts the other backends whose last query was this one: in
    // the second stage client 0 runs alone, the two others idle, still connected.
    let script = (
        "count.sql",
        "SELECT count(*) AS n FROM pg_stat_activity \
         WHERE query LIKE '%stages_keep_marker%' AND pid <> pg_backend_pid()\n\\gset\n\
         \\shell echo :n >> counts.txt\n\\sleep 50 ms\n",
    );
    let dir = Scratch::new(&[script]);
    run_ok(
        &dir,
        "-n -f count.sql -c 3 -j 3 --stage 1s,clients=3 --stage 1s,clients=1",
    );
    let counts = std::fs::read_to_string(dir.path.join("counts.txt")).expect("counts");
    let counts: Vec<u32> = counts.lines().map(|l| l.trim().parse().unwrap()).collect();
    // About 20 transactions a client a second; the last ones are the second stage's.
    assert!(counts.len() > 20, "{counts:?}");
    let tail = &counts[counts.len() - 5..];
    assert_eq!(tail, [2, 2, 2, 2, 2], "{counts:?}");
}

#[test]
fn bad_stages_are_refused() {
    let dir = Scratch::new(&[SELECT1]);
    for (args, message) in [
        (
            "--stage 5,speed=3",
            "invalid stage \"5,speed=3\": unknown part \"speed=3\"",
        ),
        (
            "--stage 0s",
            "invalid stage \"0s\": invalid duration \"0s\"",
        ),
        (
            "--stage 1 -T 5",
            "stages (--stage, --stages) set the duration of the run: not with -t or -T",
        ),
        (
            "--stage 1 -t 5",
            "stages (--stage, --stages) set the duration of the run: not with -t or -T",
        ),
        (
            "-c 2 --stage 1,clients=5",
            "invalid stages: 5 clients is more than the number of clients (2)",
        ),
        (
            "--stages missing.txt",
            "could not read stages file \"missing.txt\"",
        ),
        (
            "--stage 1 --assert stage2:tps>1",
            "invalid assertion \"stage2:tps>1\": no stage 2 in this run (1 stages)",
        ),
    ] {
        let mut argv = vec!["-n", "-f", "one.sql"];
        argv.extend(args.split(' '));
        let out = run(Prog::Pgrush, &dir.path, EMPTY_DB, &argv);
        assert_eq!(out.code, 1, "{args}: {}", out.stderr);
        assert!(out.stderr.contains(message), "{args}: {}", out.stderr);
    }
}

/// The `run.json` in `dir`, checked against the schema.
fn checked_document(dir: &Scratch) -> serde_json::Value {
    bench_common::checked_run_document(&dir.path.join("run.json"))
}

#[test]
fn a_rate_ramp_runs_the_area_under_it_and_the_document_has_the_stages() {
    let dir = Scratch::new(&[SELECT1]);
    let out = run_ok(
        &dir,
        "-n -f one.sql -c 4 -j 2 --random-seed=3 --json=run.json --no-server-stats \
         --stage 2s,rate=100,label=flat --stage 2s,rate=300,ramp",
    );
    let blocks = stage_blocks(&out);
    assert_eq!(
        blocks[1].0,
        "stage 2: 2 s, clients 4, rate 100 tps->300 tps"
    );
    // 100 tps for 2 s, then 100 rising to 300 over 2 s: 200 and 400 expected; the
    // tolerance is four standard deviations of a Poisson count, as above (a ramp
    // that held 100 would make 200 in the second stage, 10 deviations off).
    for ((_, n, _), expected) in blocks.iter().zip([200.0f64, 400.0]) {
        let tolerance = 4.0 * expected.sqrt();
        assert!(
            (*n as f64 - expected).abs() <= tolerance,
            "{n} transactions, expected {expected} ± {tolerance}:\n{}",
            out.stdout
        );
    }
    let doc = checked_document(&dir);
    let stages = doc["stages"].as_array().expect("stages");
    assert_eq!(stages.len(), 2);
    assert_eq!(stages[0]["label"], "flat");
    assert_eq!(stages[1]["spec"], "2s,rate=300,ramp");
    assert_eq!(
        (stages[1]["start_s"].as_f64(), stages[1]["end_s"].as_f64()),
        (Some(2.0), Some(4.0))
    );
    assert_eq!(stages[1]["rate_start_tps"].as_f64(), Some(100.0));
    assert_eq!(stages[1]["rate_end_tps"].as_f64(), Some(300.0));
    assert_eq!(stages[1]["clients_end"].as_u64(), Some(4));
    for (stage, (_, n, _)) in stages.iter().zip(&blocks) {
        assert_eq!(stage["transactions"]["processed"].as_u64(), Some(*n));
        assert!(stage["lag"].is_object(), "{stage}");
    }
}

#[test]
fn a_run_without_stages_has_no_stages_anywhere() {
    let dir = Scratch::new(&[SELECT1]);
    let out = run_ok(
        &dir,
        "-n -f one.sql -t 20 -P 1 -l --log-prefix=plain --json=run.json --no-server-stats",
    );
    assert!(!out.stdout.contains("stage"), "{}", out.stdout);
    let doc = checked_document(&dir);
    assert!(doc.get("stages").is_none());
    for text in dir.files_with_prefix("plain").values() {
        // client, number, latency, script, seconds, µs: no seventh column.
        assert!(text.lines().all(|l| l.split(' ').count() == 6), "{text}");
    }
}

#[test]
fn the_warmup_runs_at_the_first_stages_clients() {
    let dir = Scratch::new(&[SLEEP10]);
    let out = run_ok(
        &dir,
        "-n -f sleep10.sql -c 2 -j 2 --warmup 1 -P 1 -l --log-prefix=w \
         --stage 1s,clients=1 --stage 1s,clients=2",
    );
    assert!(out.stdout.contains("duration: 2 s\n"), "{}", out.stdout);
    // The warm-up's progress line: one client, at most 100 transactions a second (and
    // the -P counters see what was in flight at its start).
    let warmup: Vec<f64> = out
        .stderr
        .lines()
        .filter(|l| l.contains("(warm-up)"))
        .map(|l| {
            let tps = l.split(", ").nth(1).and_then(|f| f.strip_suffix(" tps"));
            tps.unwrap_or_else(|| panic!("{l}")).parse().unwrap()
        })
        .collect();
    assert!(!warmup.is_empty(), "{}", out.stderr);
    assert!(warmup.iter().all(|&tps| tps <= 102.0), "{warmup:?}");
    // In the measured first stage only client 0 ran (its log lines say stage 1).
    for text in dir.files_with_prefix("w").values() {
        for l in text.lines() {
            let f: Vec<&str> = l.split(' ').collect();
            if f.last() == Some(&"1") {
                assert_eq!(f[0], "0", "client {} in stage 1: {l}", f[0]);
            }
        }
    }
    let blocks = stage_blocks(&out);
    assert!(blocks[0].1 <= 101 && blocks[1].1 > 101, "{blocks:?}");
}
