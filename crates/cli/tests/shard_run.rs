//! A run as shards of one benchmark (`--shard INDEX/COUNT`, a launcher's environment):
//! four shards draw exactly what one run with all their clients draws, start
//! together through the barrier even when one is launched late, name the shards
//! that never arrived, pick their identity from Slurm, MPI or Kubernetes variables,
//! write run documents with the `shard` block, and end a `--warmup` together.

mod bench_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bench_common::{DB, Scratch, cluster};
use pgrush_testkit::{self as testkit, Output, finish, spawn};
use serde_json::Value;

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-run.v1.schema.json"
));

/// Draws a random value and shows it with the client id in the query text
/// (`--debug` prints it as sent).
const SCRIPT: (&str, &str) = (
    "draw.sql",
    "\\set r random(1, 1000000000)\nselect :client_id as c, :r as r;\n",
);

/// Every launcher variable the shard detection reads: removed from each child, so
/// that a test run under Slurm or MPI does not shard the runs it starts.
const LAUNCHER_VARIABLES: [&str; 9] = [
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "JOB_COMPLETION_INDEX",
    "PGRUSH_SHARDS",
    "PGBENCH_RANDOM_SEED",
];

/// pgrush in `dir` against the shared cluster's [`DB`], without launcher variables.
fn pgrush(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    cmd.current_dir(dir)
        .envs(cluster().env())
        .env("PGDATABASE", DB)
        .args(args);
    for v in LAUNCHER_VARIABLES {
        cmd.env_remove(v);
    }
    cmd
}

/// The common options of the shards and of the single run (`-t 20` unless `extra`
/// has `-T`); `-D test=NAME` keeps the benchmarks of tests running at once apart
/// (identical workloads share a barrier).
fn workload(test: &str, extra: &[&str]) -> Vec<String> {
    let tag = format!("test={test}");
    let limit = if extra.contains(&"-T") { "-n" } else { "-t20" };
    let mut args: Vec<String> = [
        "-n",
        limit,
        "--random-seed",
        "7",
        "-D",
        &tag,
        "-f",
        SCRIPT.0,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Launches shards `indexes` of `count` (each `-c 2 -j 1`), shard `late` after a
/// pause, and waits for all of them.
fn run_shards(
    test: &str,
    dir: &Path,
    count: u32,
    indexes: &[u32],
    late: Option<u32>,
    extra: &[&str],
) -> Vec<Output> {
    let mut children = Vec::new();
    for &i in indexes {
        if late == Some(i) {
            std::thread::sleep(Duration::from_secs(2));
        }
        let shard = format!("{i}/{count}");
        let mut options = vec!["-c", "2", "-j", "1", "--shard", &shard];
        options.extend_from_slice(extra);
        let args = workload(test, &options);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        children.push(spawn(&mut pgrush(dir, &args)));
    }
    children.into_iter().map(finish).collect()
}

/// `--debug`'s `client N sending ...` lines, per client, in order.
fn sent_by_client(stderr: &str) -> BTreeMap<u32, Vec<String>> {
    let mut out: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for line in stderr.lines() {
        let Some(rest) = line.split("client ").nth(1) else {
            continue;
        };
        let Some((id, what)) = rest.split_once(' ') else {
            continue;
        };
        if let (Ok(id), true) = (id.parse(), what.starts_with("sending ")) {
            out.entry(id).or_default().push(what.to_string());
        }
    }
    out
}

/// A number after `label` in a report (`number of transactions actually processed: 40`).
fn report_number(stdout: &str, label: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.split('/').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no \"{label}\" in:\n{stdout}"))
}

/// The `-l` lines of every file with `prefix` in `dir`: (client id, tx number, when
/// the transaction began in Unix µs: its end minus its latency).
fn logged(dir: &Scratch, prefix: &str) -> Vec<(u32, u32, i64)> {
    let mut out = Vec::new();
    for text in dir.files_with_prefix(prefix).values() {
        for l in text.lines() {
            let f: Vec<&str> = l.split(' ').collect();
            let number = |i: usize| f[i].parse::<i64>().expect("number");
            let began_us = number(4) * 1_000_000 + number(5) - number(2);
            out.push((
                f[0].parse().expect("client"),
                f[1].parse().expect("tx"),
                began_us,
            ));
        }
    }
    out.sort();
    out
}

/// A shard's processed and failed transactions from what it printed: shard 0 prints
/// the banner and pgbench's report headed by a line saying it is one shard of 4; the others print one
/// line (their document, `pgrush merge`) instead of the report.
fn shard_counts(i: usize, stdout: &str) -> (u64, u64) {
    let clients = format!("clients {} to {} of 8", 2 * i, 2 * i + 1);
    let merge = "`pgrush merge` of the 4 shards' documents gives the whole run";
    if i == 0 {
        let heading =
            format!("shard 0 of 4 ({clients}): the report below is this shard's; {merge}\n");
        // After the banner, before the report.
        let body = stdout.split_once('\n').map(|(_, b)| b).unwrap_or_default();
        assert!(body.starts_with(&heading), "{stdout}");
        assert!(stdout.contains("\nnumber of clients: 2\n"), "{stdout}");
        return (
            report_number(stdout, "number of transactions actually processed: "),
            report_number(stdout, "number of failed transactions: "),
        );
    }
    let prefix = format!("shard {i} of 4 ({clients}): ");
    let rest = stdout
        .strip_prefix(&prefix)
        .and_then(|r| {
            r.strip_suffix(&format!(
                "; no document kept (--json FILE keeps it); {merge}\n"
            ))
        })
        .unwrap_or_else(|| panic!("shard {i} printed:\n{stdout}"));
    let (p, f) = rest
        .strip_suffix(" failed")
        .and_then(|r| r.split_once(" transactions processed, "))
        .unwrap_or_else(|| panic!("shard {i} printed:\n{stdout}"));
    (p.parse().expect("processed"), f.parse().expect("failed"))
}

#[test]
fn four_shards_draw_what_one_run_draws() {
    let dir = Scratch::new(&[SCRIPT]);
    let shard_extra = [
        "--debug",
        "-l",
        "--log-prefix",
        "shard{shard}",
        "--shard-timeout",
        "20",
    ];
    let shards = run_shards("draws", &dir.path, 4, &[0, 1, 2, 3], None, &shard_extra);
    let args = workload(
        "draws",
        &[
            "-c",
            "8",
            "-j",
            "4",
            "--debug",
            "-l",
            "--log-prefix",
            "whole",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let whole = testkit::run(&mut pgrush(&dir.path, &args));
    assert_eq!(whole.code, 0, "{}", whole.stderr);

    let mut union = BTreeMap::new();
    let (mut processed, mut failed) = (0, 0);
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s.code, 0, "shard {i}: {}", s.stderr);
        let sent = sent_by_client(&s.stderr);
        let first = 2 * i as u32;
        let line = format!(
            "shard {i} of 4 (option): clients {first} to {} of 8; measuring from ",
            first + 1
        );
        assert!(s.stderr.contains(&line), "{}", s.stderr);
        assert_eq!(
            sent.keys().copied().collect::<Vec<_>>(),
            [first, first + 1],
            "shard {i}"
        );
        union.extend(sent);
        let (p, f) = shard_counts(i, &s.stdout);
        processed += p;
        failed += f;
    }
    let expected = sent_by_client(&whole.stderr);
    assert_eq!(expected.len(), 8);
    assert!(expected.values().all(|v| v.len() == 20));
    assert_eq!(union, expected, "the shards' draws differ from one run's");
    assert_eq!(
        processed,
        report_number(&whole.stdout, "number of transactions actually processed: ")
    );
    assert_eq!(processed, 160);
    assert_eq!(
        failed,
        report_number(&whole.stdout, "number of failed transactions: ")
    );

    let ids = |v: Vec<(u32, u32, i64)>| v.into_iter().map(|(c, t, _)| (c, t)).collect::<Vec<_>>();
    let shard_logs = ids(logged(&dir, "shard"));
    assert_eq!(shard_logs.len(), 160);
    assert_eq!(shard_logs, ids(logged(&dir, "whole")));
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

fn schema_errors(doc: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn a_late_shard_still_starts_with_the_others() {
    let dir = Scratch::new(&[SCRIPT]);
    let extra = [
        "--json",
        "run.json",
        "-l",
        "--log-prefix",
        "s{shard}",
        "--shard-timeout",
        "20",
    ];
    let shards = run_shards("late", &dir.path, 4, &[0, 1, 2, 3], Some(3), &extra);
    let mut starts = Vec::new();
    let mut ids = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s.code, 0, "shard {i}: {}", s.stderr);
        let doc = read_json(&dir.path.join(format!("run.shard{i}.json")));
        assert_eq!(schema_errors(&doc), Vec::<String>::new(), "shard {i}");
        let shard = &doc["shard"];
        assert_eq!(shard["index"], i);
        assert_eq!(shard["count"], 4);
        assert_eq!(shard["source"], "option");
        assert_eq!(shard["first_client"], 2 * i);
        assert_eq!(shard["clients_total"], 8);
        assert_eq!(shard["start_method"], "barrier");
        let start_us = shard["start_unix_us"].as_i64().expect("start");
        let local_start = doc["start_time_unix"].as_f64().expect("start time");
        let offset_ms = shard["clock_offset_ms"].as_f64().expect("offset");
        // Same machine: the document's start is the agreed one within the offset.
        assert!((local_start * 1e6 - start_us as f64 - offset_ms * 1000.0).abs() < 2.0);
        starts.push(start_us);
        ids.push(shard["benchmark_id"].as_str().expect("id").to_string());
        // The measured interval began at the agreed start: first transaction soon after.
        let first = logged(&dir, &format!("s{i}."))
            .iter()
            .map(|t| t.2)
            .min()
            .expect("logged");
        let after_ms = (first as f64 - local_start * 1e6) / 1000.0;
        assert!(
            (0.0..100.0).contains(&after_ms),
            "shard {i}: first transaction {after_ms} ms after the start"
        );
    }
    assert!(starts.iter().all(|&s| s == starts[0]), "{starts:?}");
    assert!(ids.iter().all(|id| id == &ids[0]), "{ids:?}");
}

#[test]
fn a_duration_ends_the_shards_together_and_the_rate_is_split() {
    let dir = Scratch::new(&[SCRIPT]);
    let extra = [
        "-T",
        "2",
        "-R",
        "200",
        "--json",
        "t-{shard}.json",
        "--shard-timeout",
        "20",
    ];
    let shards = run_shards("duration", &dir.path, 2, &[0, 1], Some(1), &extra);
    let mut ends = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s.code, 0, "shard {i}: {}", s.stderr);
        let doc = read_json(&dir.path.join(format!("t-{i}.json")));
        assert_eq!(schema_errors(&doc), Vec::<String>::new(), "shard {i}");
        assert_eq!(
            doc["config"]["rate_tps"], 100.0,
            "shard {i}: -R is the total"
        );
        let duration = doc["results"]["duration_s"].as_f64().expect("duration");
        assert!((1.9..2.5).contains(&duration), "shard {i}: {duration} s");
        if i == 1 {
            let processed = &doc["results"]["transactions"]["processed"];
            assert_eq!(
                s.stdout,
                format!(
                    "shard 1 of 2 (clients 2 to 3 of 4): {processed} transactions processed, \
                     0 failed; its document: t-1.json; `pgrush merge` of the 2 shards' \
                     documents gives the whole run\n"
                )
            );
        }
        // The server's intervals start with the series, at the agreed start (shard 0
        // waited at the barrier for shard 1 before it) and end with the run.
        let server = doc["server_stats"]["intervals"].as_array().expect("server");
        let last = server.last().expect("server intervals");
        let end =
            last["start_s"].as_f64().unwrap_or(0.0) + last["duration_s"].as_f64().unwrap_or(0.0);
        assert_eq!(server[0]["start_s"], 0.0, "shard {i}");
        assert!(
            (end - duration).abs() < 0.5,
            "shard {i}: the server's intervals end at {end} s, the run at {duration} s"
        );
        let start = doc["start_time_unix"].as_f64().expect("start");
        ends.push(start + duration);
        // The time series starts at the agreed start and covers every transaction.
        let series = doc["time_series"]["intervals"].as_array().expect("series");
        assert_eq!(series[0]["start_s"], 0.0);
        let summed: u64 = series
            .iter()
            .map(|iv| iv["transactions"]["processed"].as_u64().expect("count"))
            .sum();
        assert_eq!(
            summed,
            doc["results"]["transactions"]["processed"]
                .as_u64()
                .expect("total")
        );
        assert!(summed > 0);
    }
    assert!((ends[0] - ends[1]).abs() < 0.3, "ends {ends:?}");
}

#[test]
fn a_missing_shard_is_named() {
    let dir = Scratch::new(&[SCRIPT]);
    // Shards 1 and 2 first (a busy machine may take seconds to start a process), then
    // shard 0, which waits 3 s for shard 3.
    let early = std::thread::scope(|s| {
        let early = s.spawn(|| {
            run_shards(
                "missing",
                &dir.path,
                4,
                &[1, 2],
                None,
                &["--shard-timeout", "8"],
            )
        });
        std::thread::sleep(Duration::from_millis(1500));
        let leader = run_shards(
            "missing",
            &dir.path,
            4,
            &[0],
            None,
            &["--shard-timeout", "3"],
        );
        (leader, early.join().expect("early shards"))
    });
    let (leader, followers) = early;
    assert_eq!(leader[0].code, 1, "{}", leader[0].stderr);
    assert!(
        leader[0]
            .stderr
            .contains("error: shards never arrived: 3 (waited 3 s)"),
        "{}",
        leader[0].stderr
    );
    assert!(
        leader[0]
            .stderr
            .contains("hint: Every shard must run the same scripts"),
        "{}",
        leader[0].stderr
    );
    for s in &followers {
        assert_eq!(s.code, 1, "{}", s.stderr);
        assert!(
            s.stderr
                .contains("error: shard 0 never published the start (waited 8 s)"),
            "{}",
            s.stderr
        );
    }
}

#[test]
fn a_shard_index_runs_once() {
    let dir = Scratch::new(&[SCRIPT]);
    let twice = run_shards(
        "twice",
        &dir.path,
        2,
        &[1, 1],
        None,
        &["--shard-timeout", "2"],
    );
    let refused: Vec<&Output> = twice
        .iter()
        .filter(|s| {
            s.stderr
                .contains("error: shard 1 of this benchmark is already running")
        })
        .collect();
    assert_eq!(
        refused.len(),
        1,
        "{:?}",
        twice.iter().map(|s| &s.stderr).collect::<Vec<_>>()
    );
    for s in &twice {
        assert_eq!(s.code, 1, "{}", s.stderr);
    }
}

/// Unix seconds `ahead` from now, with microseconds.
fn unix_in(ahead: Duration) -> String {
    let t = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock") + ahead;
    format!("{}.{:06}", t.as_secs(), t.subsec_micros())
}

/// A launcher's variables, extra options, and the (index, count, source) expected.
type LauncherCase = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
    (u32, u32, &'static str),
);

/// Options, variables and the message they must give.
type RefusedCase = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    &'static str,
);

#[test]
fn the_launcher_environment_picks_the_shard() {
    let dir = Scratch::new(&[SCRIPT]);
    // Far enough ahead for six processes to start on a busy machine.
    let start = unix_in(Duration::from_secs(5));
    let cases: [LauncherCase; 6] = [
        (
            "slurm",
            &[
                ("SLURM_PROCID", "2"),
                ("SLURM_NTASKS", "4"),
                ("PMI_RANK", "1"),
                ("PMI_SIZE", "4"),
            ],
            &[],
            (2, 4, "slurm"),
        ),
        (
            "ompi",
            &[("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "3")],
            &[],
            (1, 3, "mpi"),
        ),
        (
            "pmi",
            &[("PMI_RANK", "3"), ("PMI_SIZE", "5")],
            &[],
            (3, 5, "mpi"),
        ),
        (
            "k8s",
            &[("JOB_COMPLETION_INDEX", "1"), ("PGRUSH_SHARDS", "2")],
            &[],
            (1, 2, "kubernetes"),
        ),
        (
            "k8s-option",
            &[("JOB_COMPLETION_INDEX", "5"), ("PGRUSH_SHARDS", "2")],
            &["--shards", "6"],
            (5, 6, "kubernetes"),
        ),
        (
            "override",
            &[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4")],
            &["--shard", "1/2"],
            (1, 2, "option"),
        ),
    ];
    let children: Vec<_> = cases
        .iter()
        .map(|(name, env, extra, _)| {
            let json = format!("{name}.json");
            let mut args = workload(
                name,
                &["-c", "2", "-t", "2", "--start-at", &start, "--json", &json],
            );
            args.extend(extra.iter().map(|s| s.to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut cmd = pgrush(&dir.path, &args);
            cmd.envs(env.iter().copied());
            spawn(&mut cmd)
        })
        .collect();
    for ((name, _, _, (index, count, source)), child) in cases.iter().zip(children) {
        let out = finish(child);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let doc = read_json(&dir.path.join(format!("{name}.shard{index}.json")));
        assert_eq!(schema_errors(&doc), Vec::<String>::new(), "{name}");
        let shard = &doc["shard"];
        assert_eq!(
            (&shard["index"], &shard["count"]),
            (&Value::from(*index), &Value::from(*count)),
            "{name}"
        );
        assert_eq!(shard["source"], *source, "{name}");
        assert_eq!(shard["start_method"], "start_at", "{name}");
        assert_eq!(shard["first_client"], 2 * index, "{name}");
    }
}

#[test]
fn bad_shard_settings_are_refused_clearly() {
    let dir = Scratch::new(&[SCRIPT]);
    let cases: [RefusedCase; 9] = [
        (
            &["--shard", "4/4"],
            &[],
            "invalid shard \"4/4\": the index must be below the count (0 to 3)",
        ),
        (
            &["--shard", "x"],
            &[],
            "invalid shard \"x\" (expecting INDEX/COUNT",
        ),
        (
            &["--shards", "0"],
            &[],
            "invalid number of shards (--shards): \"0\"",
        ),
        (
            &[],
            &[("JOB_COMPLETION_INDEX", "2")],
            "JOB_COMPLETION_INDEX is set but the number of shards is unknown",
        ),
        (
            &[],
            &[("SLURM_PROCID", "4"), ("SLURM_NTASKS", "4")],
            "SLURM_PROCID=4 is not below SLURM_NTASKS=4",
        ),
        (
            &["--shard", "0/2", "--start-at", "1000000000"],
            &[],
            "in the past on the server's clock",
        ),
        (
            &["--shard", "0/2", "--start-at", "2999-01-01T00:00:00Z"],
            &[],
            "more than 24 hours ahead",
        ),
        (
            &["--shard", "0/2", "--start-at", "soon"],
            &[],
            "invalid start time \"soon\"",
        ),
        (
            &["--start-at", "2999-01-01T00:00:00Z"],
            &[],
            "--start-at is allowed only in a sharded run",
        ),
    ];
    for (args, env, message) in cases {
        let mut all = workload("bad", &[]);
        all.extend(args.iter().map(|s| s.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let mut cmd = pgrush(&dir.path, &all);
        cmd.envs(env.iter().copied());
        let out = testkit::run(&mut cmd);
        assert_eq!(out.code, 1, "{args:?} {env:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(message),
            "{args:?} {env:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

#[test]
fn the_shards_end_the_warmup_together() {
    let dir = Scratch::new(&[SCRIPT]);
    cluster();
    let launched_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_micros() as i64;
    let extra = [
        "-T",
        "1",
        "-R",
        "100",
        "--warmup",
        "1",
        "-l",
        "--log-prefix=wlog",
        "--json",
        "doc-{shard}.json",
        "--shard-timeout",
        "20",
    ];
    let shards = run_shards("warmup", &dir.path, 2, &[0, 1], None, &extra);
    let mut starts_us = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s.code, 0, "shard {i}: {}", s.stderr);
        assert!(
            !s.stderr.contains("started measuring"),
            "shard {i}: {}",
            s.stderr
        );
        let doc = read_json(&dir.path.join(format!("doc-{i}.json")));
        assert_eq!(schema_errors(&doc), Vec::<String>::new(), "shard {i}");
        let duration = doc["results"]["duration_s"].as_f64().expect("duration");
        assert!((0.9..1.5).contains(&duration), "shard {i}: {duration} s");
        starts_us.push((doc["start_time_unix"].as_f64().expect("start") * 1e6) as i64);
    }
    // Each shard's measured interval starts at the agreed start plus the warm-up: the
    // same instant, at least a second after the launch.
    let (first, last) = (
        starts_us[0].min(starts_us[1]),
        starts_us[0].max(starts_us[1]),
    );
    assert!(last - first < 50_000, "measured starts {starts_us:?}");
    assert!(
        first >= launched_us + 1_000_000,
        "{first} vs launch {launched_us}"
    );
    // No logged transaction was scheduled before it (under -R a line's end minus its
    // latency is its scheduled start).
    let lines = logged(&dir, "wlog");
    assert!(lines.len() >= 50, "{} logged", lines.len());
    for (client, tx, began_us) in lines {
        assert!(
            began_us >= last - 2_000,
            "client {client} tx {tx} scheduled {} µs before the measured start",
            last - began_us
        );
    }
}
