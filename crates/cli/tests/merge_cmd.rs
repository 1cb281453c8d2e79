//! `pgrush merge` end to end: four real runs against a throwaway cluster, made into the
//! shards of one benchmark (a consistent `shard` block added to each document), merged;
//! then the refusals (missing shard, mixed benchmarks, a document that is not a shard,
//! unreadable files).

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use pgrush_report::document::RunDocument;
use pgrush_report::percentiles::value_at_percentile;
use pgrush_stats::LatencyHistogram;
use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};
use serde_json::{Value, json};

const DB: &str = "merge_cmd";
const SHARDS: u32 = 4;
const CLIENTS: u32 = 2;
const PER_CLIENT: u32 = 25;
/// The agreed start instant written in every shard (Unix µs).
const START_US: i64 = 1_795_343_086_000_000;
const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-run.v1.schema.json"
));

/// The database, initialized once for both tests.
fn database() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        let c = testkit::shared();
        c.create_database(DB)
            .unwrap_or_else(|e| panic!("create database: {e}"));
        let init = testkit::run(
            oracle::require(Which::Pgbench18)
                .command()
                .args(["-i", "-s", "1", "-q", DB])
                .envs(c.env()),
        );
        assert_eq!(init.code, 0, "pgbench -i failed: {}", init.stderr);
    });
}

/// A directory holding `shardI.json` (the shards, from real runs) and `plain.json` (a
/// run that is no shard).
fn shard_dir() -> tempfile::TempDir {
    database();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for i in 0..SHARDS {
        let name = format!("run{i}.json");
        let (t, c) = (PER_CLIENT.to_string(), CLIENTS.to_string());
        let args = [
            "-n", "-r", "-t", &t, "-c", &c, "-j", "1", "--json", &name, DB,
        ];
        let out = pgrush(&args, dir.path());
        assert_eq!(out.code, 0, "pgrush run {i}: {}", out.stderr);
        let mut doc = read_json(&dir.path().join(&name));
        make_shard(&mut doc, i);
        write_json(&dir.path().join(format!("shard{i}.json")), &doc);
    }
    std::fs::copy(dir.path().join("run0.json"), dir.path().join("plain.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// Turns a run document into shard `index` of one benchmark that started at `START_US`.
fn make_shard(doc: &mut Value, index: u32) {
    doc["shard"] = json!({
        "index": index,
        "count": SHARDS,
        "source": "option",
        "first_client": index * CLIENTS,
        "clients_total": SHARDS * CLIENTS,
        "benchmark_id": "0123456789abcdef",
        "start_unix_us": START_US,
        "clock_offset_ms": 0.0,
        "clock_offset_uncertainty_ms": 0.1,
        "start_method": "start_at",
    });
    doc["start_time_unix"] = json!(START_US as f64 / 1e6);
    doc["client"]["hostname"] = json!(format!("host{index}"));
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write_json(path: &Path, v: &Value) {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn pgrush(args: &[&str], dir: &Path) -> Output {
    testkit::run(
        Command::new(env!("CARGO_BIN_EXE_pgrush"))
            .args(args)
            .envs(testkit::shared().env())
            .current_dir(dir),
    )
}

fn shard_files() -> Vec<String> {
    (0..SHARDS).map(|i| format!("shard{i}.json")).collect()
}

fn merge(dir: &Path, files: &[String], extra: &[&str]) -> Output {
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(extra);
    pgrush(&args, dir)
}

/// p50 of the four shards' latency histograms added up, in ms.
fn merged_p50_ms(dir: &Path) -> f64 {
    let mut h = LatencyHistogram::new();
    for i in 0..SHARDS {
        let text = std::fs::read_to_string(dir.join(format!("shard{i}.json"))).unwrap_or_default();
        let doc = RunDocument::from_json(&text).unwrap_or_else(|e| panic!("{e}"));
        h.merge(&doc.latency.map(|d| d.histogram()).unwrap_or_default());
    }
    assert_eq!(h.len(), u64::from(SHARDS * CLIENTS * PER_CLIENT));
    value_at_percentile(&h, 50.0).unwrap_or_default() as f64 / 1000.0
}

#[test]
fn four_real_shards_merge_into_one_report() {
    let tmp = shard_dir();
    let dir = tmp.path();
    let out = merge(
        dir,
        &shard_files(),
        &["--json", "merged.json", "--html", "merged.html"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let total = SHARDS * CLIENTS * PER_CLIENT;
    for line in [
        format!("number of clients: {}\n", SHARDS * CLIENTS),
        format!("number of threads: {SHARDS}\n"),
        format!("number of transactions per client: {PER_CLIENT}\n"),
        format!("number of transactions actually processed: {total}/{total}\n"),
        "statement latencies in milliseconds and failures:\n".to_string(),
    ] {
        assert!(out.stdout.contains(&line), "{line}: {}", out.stdout);
    }
    let p50 = format!("latency percentiles: p50 = {:.3} ms,", merged_p50_ms(dir));
    assert!(out.stdout.contains(&p50), "{p50}: {}", out.stdout);
    assert!(
        out.stderr
            .starts_with("merged from 4 shards (benchmark 0123456789abcdef, start: start_at):\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("  shard 3: host host3, clients 6-7, clock offset +0.000 ± 0.100 ms"),
        "{}",
        out.stderr
    );
    // The merged document: valid, the sum of the shards, read back by `pgrush report`.
    let merged = read_json(&dir.join("merged.json"));
    let schema: Value = serde_json::from_str(SCHEMA).unwrap_or_default();
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("schema: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&merged)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(merged["results"]["transactions"]["processed"], json!(total));
    assert_eq!(merged["merged"]["shard_count"], json!(SHARDS));
    assert!(merged.get("shard").is_none());
    one_server_timeline_and_the_whole_runs_warnings(dir, &merged);
    assert!(
        std::fs::read_to_string(dir.join("merged.html"))
            .unwrap_or_default()
            .contains("</html>")
    );
    let html = pgrush(&["report", "merged.json", "--html", "again.html"], dir);
    assert_eq!(html.code, 0, "{}", html.stderr);
    let page = std::fs::read_to_string(dir.join("again.html")).unwrap_or_default();
    assert!(page.contains("</html>") && page.contains(&total.to_string()));
    assert!(page.contains("<td>host3</td>"), "the page lists the shards");
    let table = pgrush(&["report", "merged.json", "shard0.json"], dir);
    assert_eq!(table.code, 0, "{}", table.stderr);
    // --json -: the document on stdout, the report on stderr.
    let piped = merge(dir, &shard_files(), &["--json", "-"]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    let doc: Value = serde_json::from_str(&piped.stdout).unwrap_or_default();
    assert_eq!(doc["results"]["transactions"]["processed"], json!(total));
    assert!(
        piped.stderr.contains("number of clients: 8\n"),
        "{}",
        piped.stderr
    );
    // A shard whose run was aborted: the report, then pgbench's error and exit status 2.
    let mut aborted = read_json(&dir.join("shard1.json"));
    aborted["results"]["aborted"] = json!(true);
    write_json(&dir.join("shard1.json"), &aborted);
    let out = merge(dir, &shard_files(), &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("number of transactions actually processed")
    );
    assert!(
        out.stderr
            .ends_with("pgrush: error: Run was aborted; the above results are incomplete.\n"),
        "{}",
        out.stderr
    );
}

/// The shards sampled the same server: the merged document keeps the timeline of the
/// shard that covers most of the merged run (the longest, as they all start together;
/// the lowest index on ties), and its warnings are the whole run's, each once.
fn one_server_timeline_and_the_whole_runs_warnings(dir: &Path, merged: &Value) {
    let shards: Vec<Value> = (0..SHARDS)
        .map(|i| read_json(&dir.join(format!("shard{i}.json"))))
        .collect();
    let longest = shards.iter().fold(&shards[0], |best, s| {
        if s["results"]["duration_s"].as_f64() > best["results"]["duration_s"].as_f64() {
            s
        } else {
            best
        }
    });
    let server = &merged["server_stats"];
    assert!(server.is_object(), "no server statistics: {server}");
    assert_eq!(server["intervals"], longest["server_stats"]["intervals"]);
    assert_eq!(server["events"], longest["server_stats"]["events"]);
    let warnings: Vec<&str> = merged["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let duration = merged["results"]["duration_s"].as_f64().unwrap_or_default();
    let lasted: Vec<&&str> = warnings
        .iter()
        .filter(|w| w.starts_with("the run lasted only"))
        .collect();
    assert_eq!(
        lasted,
        [&format!(
            "the run lasted only {duration:.1} s; results of runs of a few seconds are not \
             meaningful (use -T or -t to run for at least a few minutes)"
        )
        .as_str()],
        "{warnings:?}"
    );
    let clients = SHARDS * CLIENTS;
    assert!(
        warnings.iter().any(|w| w.starts_with(&format!(
            "tpcb-like with more clients ({clients}) than the scale factor (1)"
        ))),
        "{warnings:?}"
    );
    assert!(
        !warnings
            .iter()
            .any(|w| w.contains(&format!("more clients ({CLIENTS})"))),
        "{warnings:?}"
    );
}

fn assert_refused(out: &Output, message: &str) {
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(out.stderr.contains(message), "{message}: {}", out.stderr);
}

#[test]
fn what_is_not_one_benchmark_is_refused() {
    let tmp = shard_dir();
    let dir = tmp.path();
    let files = shard_files();
    assert_refused(
        &merge(dir, &files[..3], &[]),
        "pgrush: error: missing shards: 3 of 4\n",
    );
    assert_refused(
        &merge(dir, &files[1..3], &[]),
        "missing shards: 0, 3 of 4\n",
    );
    let mut other = read_json(&dir.join("shard2.json"));
    other["shard"]["benchmark_id"] = json!("fedcba");
    write_json(&dir.join("other2.json"), &other);
    let mixed: Vec<String> = ["shard0.json", "shard1.json", "other2.json", "shard3.json"]
        .map(String::from)
        .to_vec();
    assert_refused(
        &merge(dir, &mixed, &[]),
        "\"other2.json\" is a shard of another benchmark than \"shard0.json\": benchmark_id differs",
    );
    let plain = ["plain.json".to_string()];
    assert_refused(&merge(dir, &plain, &[]), "\"plain.json\" is not a shard");
    assert_refused(
        &merge(dir, &["missing.json".to_string()], &[]),
        "could not open file \"missing.json\"",
    );
    std::fs::write(dir.join("garbage.json"), "{\"format\": 1").unwrap_or_else(|e| panic!("{e}"));
    assert_refused(
        &merge(dir, &["garbage.json".to_string()], &[]),
        "\"garbage.json\": not a pgrush run",
    );
    let dup: Vec<String> = ["shard0.json", "shard1.json", "shard1.json", "shard3.json"]
        .map(String::from)
        .to_vec();
    assert_refused(&merge(dir, &dup, &[]), "are both shard 1");
}
