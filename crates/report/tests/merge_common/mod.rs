//! Synthetic sharded runs for the merge tests (no server needed): one list of
//! transactions, recorded once as a single run of every client and once split by client
//! into shards, as `pgrush --shard i/n` would run them.
#![allow(dead_code)]

use pgrush_report::document::{ClientInfo, RunContext, RunDocument, ShardDoc};
use pgrush_report::percentiles::PercentileList;
use pgrush_stats::{
    QueryMode, RunConfig, RunLimit, RunSummary, ScriptInfo, TargetInfo, ThreadStats, TxOutcome,
    TxRecord,
};

/// Clients per shard.
pub const CLIENTS_PER_SHARD: u32 = 4;
/// Transactions per client.
pub const PER_CLIENT: u32 = 150;
/// Total `-R` rate of the run.
pub const RATE: f64 = 400.0;
/// The agreed start instant (server clock, Unix µs).
pub const START_US: i64 = 1_795_343_086_006_123;
/// The benchmark identity written in every shard.
pub const BENCHMARK_ID: &str = "5e1f00d";

/// One finished transaction of the synthetic workload.
#[derive(Debug, Clone, Copy)]
pub struct Tx {
    pub client: u32,
    pub rec: TxRecord,
    /// End instant, µs after the start.
    pub end_us: i64,
}

/// A deterministic workload for `clients` clients: integral latencies (their sums are
/// exact in doubles whatever the order), some failures, retries and skipped ones.
pub fn transactions(clients: u32) -> Vec<Tx> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::new();
    for client in 0..clients {
        for k in 0..PER_CLIENT {
            let r = next();
            let outcome = match r % 23 {
                0 => TxOutcome::SerializationFailure,
                1 => TxOutcome::DeadlockFailure,
                2 => TxOutcome::Skipped,
                _ => TxOutcome::Success,
            };
            // Latencies from 50 µs to ~80 ms, with a long tail.
            let latency = 50 + (r >> 8) % 2_000 + if r % 17 == 0 { (r >> 20) % 80_000 } else { 0 };
            out.push(Tx {
                client,
                rec: TxRecord {
                    script: usize::from(r % 4 != 0),
                    outcome,
                    latency_us: latency as f64,
                    lag_us: ((r >> 32) % 500) as f64,
                    tries: 1 + u32::from(r % 11 == 0) + u32::from(r % 33 == 0),
                },
                end_us: i64::from(k) * 19_000 + i64::from(client) * 101 + (r % 7_000) as i64,
            });
        }
    }
    out
}

/// The run's configuration for `clients` clients, `threads` threads and rate `rate`.
pub fn config(clients: u32, threads: u32, rate: f64) -> RunConfig {
    RunConfig {
        scale: 1,
        partitioning: None,
        query_mode: QueryMode::Simple,
        clients,
        threads,
        max_tries: 3,
        limit: RunLimit::Transactions(PER_CLIENT),
        rate: Some(rate),
        latency_limit_us: Some(20_000.0),
        progress_s: None,
        connect_per_tx: false,
        failures_detailed: true,
        per_command: true,
        continue_on_error: false,
        warmup_s: None,
        reconnect: false,
    }
}

fn scripts() -> Vec<ScriptInfo> {
    ["a.sql", "b.sql"]
        .iter()
        .enumerate()
        .map(|(i, name)| ScriptInfo {
            desc: name.as_bytes().to_vec(),
            weight: 1 + 2 * i as u32,
            commands: vec![
                b"\\set x random(1, 10)".to_vec(),
                format!("SELECT {i};").into_bytes(),
            ],
        })
        .collect()
}

/// Records `txs` into a run of `clients` clients on `threads` threads (client `c` on thread
/// `(c - first) / (clients / threads)`), 3 s long, 1 s intervals.
pub fn summary(txs: &[Tx], first: u32, clients: u32, threads: u32, rate: f64) -> RunSummary {
    let mut sum = RunSummary::empty(config(clients, threads, rate), scripts());
    let layout = sum.layout();
    let per_thread = clients / threads;
    let mut stats: Vec<ThreadStats> = (0..threads)
        .map(|_| ThreadStats::new(&layout).with_series(0, 1_000_000))
        .collect();
    for tx in txs
        .iter()
        .filter(|t| (first..first + clients).contains(&t.client))
    {
        let st = &mut stats[((tx.client - first) / per_thread) as usize];
        st.record_tx_at(&tx.rec, tx.end_us);
        if tx.rec.outcome == TxOutcome::Skipped {
            continue;
        }
        let first_part = (tx.rec.latency_us / 3.0).floor();
        let first_end = tx.end_us - (tx.rec.latency_us - first_part) as i64;
        st.record_command_at(tx.rec.script, 0, first_part, first_end);
        for _ in 1..tx.rec.tries {
            st.record_command_retry(tx.rec.script, 1);
        }
        if tx.rec.outcome.is_failure() {
            st.record_command_failure_at(tx.rec.script, 1, tx.end_us);
        } else {
            st.record_command_at(tx.rec.script, 1, tx.rec.latency_us - first_part, tx.end_us);
        }
    }
    for st in &stats {
        sum.absorb(st);
    }
    sum.bench_duration_us = 3_000_000;
    sum.initial_connection_us = 1_234;
    sum
}

/// The context of a run that started at `start_us` (client clock) on `host`.
pub fn context(start_us: i64, host: &str) -> RunContext {
    RunContext {
        command_line: vec!["pgrush".into(), "-t".into(), PER_CLIENT.to_string()],
        start_time_unix_us: start_us,
        server: None,
        client: ClientInfo {
            os: "linux".into(),
            os_description: None,
            arch: "x86_64".into(),
            cpus: 2,
            hostname: Some(host.to_string()),
        },
        percentiles: PercentileList::default(),
        warnings: Vec::new(),
    }
}

/// The clock offsets of the synthetic shards (ms, client minus server).
pub const OFFSETS_MS: [f64; 4] = [0.0, 12.5, -3.25, 40.0];

/// Shard `index` of `count` of `txs` as its `--json` document (read back from its JSON).
pub fn shard_document(txs: &[Tx], index: u32, count: u32) -> RunDocument {
    shard_document_with_targets(txs, index, count, &[])
}

/// The run's `--target` servers in the targeted synthetic runs: script 1 on the run's
/// own connection, script 2 on a standby.
pub fn two_targets() -> Vec<TargetInfo> {
    vec![
        TargetInfo {
            name: "default".to_string(),
            scripts: vec![0],
        },
        TargetInfo {
            name: "host=standby port=5433".to_string(),
            scripts: vec![1],
        },
    ]
}

/// [`shard_document`] of a run whose scripts went to `targets`.
pub fn shard_document_with_targets(
    txs: &[Tx],
    index: u32,
    count: u32,
    targets: &[TargetInfo],
) -> RunDocument {
    let first = index * CLIENTS_PER_SHARD;
    let mut sum = summary(txs, first, CLIENTS_PER_SHARD, 1, RATE / f64::from(count));
    sum.targets = targets.to_vec();
    let offset_ms = OFFSETS_MS[index as usize % OFFSETS_MS.len()];
    let start_client_clock = START_US + (offset_ms * 1000.0) as i64;
    let mut doc = RunDocument::build(&sum, &context(start_client_clock, &format!("node{index}")));
    doc.shard = Some(ShardDoc {
        index,
        count,
        source: "option".to_string(),
        first_client: first,
        clients_total: CLIENTS_PER_SHARD * count,
        benchmark_id: BENCHMARK_ID.to_string(),
        start_unix_us: START_US,
        clock_offset_ms: offset_ms,
        clock_offset_uncertainty_ms: 0.05,
        start_method: "barrier".to_string(),
    });
    RunDocument::from_json(&doc.to_json()).unwrap_or_else(|e| panic!("document read back: {e}"))
}

/// All `count` shards, named `shardI.json`.
pub fn shards(count: u32) -> Vec<(String, RunDocument)> {
    shards_with_targets(count, &[])
}

/// All `count` shards of a run whose scripts went to `targets`.
pub fn shards_with_targets(count: u32, targets: &[TargetInfo]) -> Vec<(String, RunDocument)> {
    let txs = transactions(CLIENTS_PER_SHARD * count);
    (0..count)
        .map(|i| {
            let doc = shard_document_with_targets(&txs, i, count, targets);
            (format!("shard{i}.json"), doc)
        })
        .collect()
}
