//! What the launcher tests share: a small workload that needs no tables, reading the
//! shards' run documents back and checking that they are the shards of one benchmark,
//! and merging them with `pgrush merge`.

#![allow(dead_code)] // each test binary uses a part

use std::path::{Path, PathBuf};
use std::process::Command;

use pgrush_report::document::{RunDocument, ShardDoc};
use pgrush_testkit::{self as testkit, Output};

/// Shards in every launcher test.
pub const SHARDS: u32 = 4;
/// Clients per shard (`-c`).
pub const CLIENTS: u32 = 2;
/// Threads per shard (`-j`).
pub const THREADS: u32 = 1;
/// Seconds each run measures (`-T`).
pub const DURATION_S: &str = "3";
/// How far apart the shards' start instants may be, on one machine whose clocks agree:
/// the agreed instant converted by each shard's offset estimate, whose uncertainty is
/// half a round trip (measured: under 0.2 ms for 4 shards, 1.1 ms for 32 shards on a
/// loaded two-core machine).
pub const START_SPREAD_LIMIT_S: f64 = 0.010;

/// The pgrush binary under test.
pub fn pgrush_bin() -> &'static str {
    env!("CARGO_BIN_EXE_pgrush")
}

/// A pgrush command with neither `PG*` nor launcher variables from this process.
pub fn pgrush() -> Command {
    let mut cmd = Command::new(pgrush_bin());
    testkit::clear_pg_env(&mut cmd);
    testkit::clear_launcher_env(&mut cmd);
    cmd
}

/// Writes the workload (no tables needed: every transaction reads its client id and a
/// random number back) to `dir/shard.sql` and returns its path.
pub fn write_script(dir: &Path) -> PathBuf {
    let path = dir.join("shard.sql");
    std::fs::write(
        &path,
        "\\set r random(1, 1000000)\nSELECT :client_id, :r;\n",
    )
    .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    path
}

/// The per-shard benchmark options of the launcher tests, then `extra`: `-n -f SCRIPT
/// -c 2 -j 1 -T 3 --shard-timeout 30 --json DIR/run.json`.
pub fn shard_args(dir: &Path, script: &Path) -> Vec<String> {
    let json = dir.join("run.json");
    [
        "--shard-timeout",
        "30",
        "-n",
        "-f",
        &script.display().to_string(),
        "-c",
        &CLIENTS.to_string(),
        "-j",
        &THREADS.to_string(),
        "-T",
        DURATION_S,
        "--json",
        &json.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The shard documents `dir/run.shardI.json`, `I` in `0..SHARDS` (what `--json
/// DIR/run.json` becomes in a shard).
pub fn shard_files(dir: &Path) -> Vec<PathBuf> {
    (0..SHARDS)
        .map(|i| dir.join(format!("run.shard{i}.json")))
        .collect()
}

/// Reads a run document; panics with the file's name when it is missing or invalid.
pub fn read_document(path: &Path) -> RunDocument {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    RunDocument::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The shard block of a document, or a panic naming the file.
fn shard_block<'a>(doc: &'a RunDocument, path: &Path) -> &'a ShardDoc {
    doc.shard
        .as_ref()
        .unwrap_or_else(|| panic!("{} has no shard block", path.display()))
}

/// Reads `files` and checks that they are the shards `0..SHARDS` of one benchmark, told
/// their place by `source`, started together by the barrier: each with its own clients,
/// the same benchmark id and agreed instant, starts within [`START_SPREAD_LIMIT_S`],
/// and transactions done. Returns the documents in index order.
pub fn check_shards(files: &[PathBuf], source: &str) -> Vec<RunDocument> {
    let docs: Vec<RunDocument> = files.iter().map(|f| read_document(f)).collect();
    let first = shard_block(&docs[0], &files[0]).clone();
    assert!(!first.benchmark_id.is_empty(), "empty benchmark id");
    for (i, (doc, path)) in docs.iter().zip(files).enumerate() {
        let shard = shard_block(doc, path);
        let i = u32::try_from(i).expect("a few shards");
        assert_eq!(
            (shard.index, shard.count, shard.source.as_str()),
            (i, SHARDS, source),
            "{}",
            path.display()
        );
        assert_eq!(
            (shard.first_client, shard.clients_total),
            (i * CLIENTS, SHARDS * CLIENTS),
            "{}",
            path.display()
        );
        assert_eq!(shard.benchmark_id, first.benchmark_id, "{}", path.display());
        assert_eq!(
            shard.start_unix_us,
            first.start_unix_us,
            "{}",
            path.display()
        );
        assert_eq!(shard.start_method, "barrier", "{}", path.display());
        assert!(
            doc.results.transactions.processed > 0,
            "{} did no transaction",
            path.display()
        );
    }
    let starts: Vec<f64> = docs.iter().map(|d| d.start_time_unix).collect();
    let spread = starts.iter().cloned().fold(f64::MIN, f64::max)
        - starts.iter().cloned().fold(f64::MAX, f64::min);
    assert!(
        spread < START_SPREAD_LIMIT_S,
        "shards started {spread} s apart: {starts:?}"
    );
    docs
}

/// `pgrush merge FILES --json DIR/merged.json`: checks that it succeeds and that the
/// merged run is the sum of the shards (transactions, clients, threads, the merged
/// block), and returns its output and document.
pub fn merge_and_check(
    dir: &Path,
    files: &[PathBuf],
    shards: &[RunDocument],
) -> (Output, RunDocument) {
    let merged_path = dir.join("merged.json");
    let out = testkit::run(
        pgrush()
            .arg("merge")
            .args(files)
            .arg("--json")
            .arg(&merged_path),
    );
    assert_eq!(out.code, 0, "pgrush merge: {}{}", out.stdout, out.stderr);
    let merged = read_document(&merged_path);
    check_merged(&out, &merged, shards);
    (out, merged)
}

/// Checks a merged run against its shards: the document (transactions and failures add
/// up, every shard's clients and threads counted, every shard listed in the merged
/// block), the report on standard output, and the shards' block on standard error.
pub fn check_merged(out: &Output, merged: &RunDocument, shards: &[RunDocument]) {
    check_merged_document(merged, shards);
    check_merged_report(&out.stdout, shards);
    let id = &shards[0].shard.as_ref().expect("shard").benchmark_id;
    assert!(
        out.stderr
            .starts_with(&format!("merged from {SHARDS} shards (benchmark {id}")),
        "{}",
        out.stderr
    );
}

/// Checks a merged run's document against its shards.
pub fn check_merged_document(merged: &RunDocument, shards: &[RunDocument]) {
    let processed: u64 = shards
        .iter()
        .map(|d| d.results.transactions.processed)
        .sum();
    let failed: u64 = shards.iter().map(|d| d.results.transactions.failed).sum();
    assert_eq!(merged.results.transactions.processed, processed);
    assert_eq!(merged.results.transactions.failed, failed);
    assert_eq!(merged.config.clients, SHARDS * CLIENTS);
    assert_eq!(merged.config.threads, SHARDS * THREADS);
    let block = merged.merged.as_ref().expect("a merged block");
    assert_eq!(block.shard_count, SHARDS);
    let id = &shards[0].shard.as_ref().expect("shard").benchmark_id;
    assert_eq!(&block.benchmark_id, id);
    let indexes: Vec<u32> = block.shards.iter().map(|s| s.index).collect();
    assert_eq!(indexes, (0..SHARDS).collect::<Vec<_>>());
}

/// Checks the text report of a merged run: pgbench's lines for all the shards' clients,
/// threads and transactions.
pub fn check_merged_report(report: &str, shards: &[RunDocument]) {
    let processed: u64 = shards
        .iter()
        .map(|d| d.results.transactions.processed)
        .sum();
    for line in [
        format!("number of clients: {}\n", SHARDS * CLIENTS),
        format!("number of threads: {}\n", SHARDS * THREADS),
        format!("number of transactions actually processed: {processed}\n"),
    ] {
        assert!(report.contains(&line), "{line:?} in {report}");
    }
}

/// The sources recorded in a merged run's block, one per shard.
pub fn merged_sources(merged: &RunDocument) -> Vec<String> {
    let block = merged.merged.as_ref().expect("a merged block");
    block.shards.iter().map(|s| s.source.clone()).collect()
}
