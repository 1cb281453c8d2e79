//! Synthetic runs shared by the report tests (no server needed).
#![allow(dead_code)]

use pgrush_report::document::{ClientInfo, RunContext, RunDocument, ServerInfo};
use pgrush_report::percentiles::PercentileList;
use pgrush_stats::{
    QueryMode, RunConfig, RunLimit, RunSummary, ScriptInfo, ThreadStats, TxOutcome, TxRecord,
};
use std::collections::BTreeMap;

/// Shape of a synthetic run.
#[derive(Debug, Clone)]
pub struct Shape {
    pub scripts: usize,
    pub per_command: bool,
    pub rate: Option<f64>,
    pub connect_per_tx: bool,
    pub failures: bool,
    pub transactions: u64,
    pub latency_scale: f64,
    pub clients: u32,
    pub threads: u32,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            scripts: 1,
            per_command: true,
            rate: None,
            connect_per_tx: false,
            failures: false,
            transactions: 1000,
            latency_scale: 1.0,
            clients: 4,
            threads: 2,
        }
    }
}

pub fn config(shape: &Shape) -> RunConfig {
    RunConfig {
        scale: 1,
        partitioning: None,
        query_mode: QueryMode::Prepared,
        clients: shape.clients,
        threads: shape.threads,
        max_tries: if shape.failures { 3 } else { 1 },
        limit: RunLimit::Duration(3),
        rate: shape.rate,
        latency_limit_us: None,
        progress_s: None,
        connect_per_tx: shape.connect_per_tx,
        failures_detailed: shape.failures,
        per_command: shape.per_command,
        continue_on_error: false,
        warmup_s: None,
        reconnect: false,
    }
}

/// A run of `shape.transactions` transactions over 3 s, latency i µs·scale for the i-th,
/// split over two threads; commands get 1/3 and 2/3 of each latency.
pub fn summary(shape: &Shape) -> RunSummary {
    let scripts: Vec<ScriptInfo> = (0..shape.scripts)
        .map(|i| ScriptInfo {
            desc: if i == 0 {
                b"<builtin: TPC-B (sort of)>".to_vec()
            } else {
                format!("custom{i}.sql").into_bytes()
            },
            weight: 1,
            commands: vec![
                b"\\set aid random(1, 100000 * :scale)".to_vec(),
                format!("SELECT abalance FROM pgbench_accounts WHERE aid = :aid; -- {i}")
                    .into_bytes(),
            ],
        })
        .collect();
    let mut sum = RunSummary::empty(config(shape), scripts);
    let layout = sum.layout();
    let n = shape.transactions;
    let threads: Vec<ThreadStats> = (0..2)
        .map(|t| {
            let mut st = ThreadStats::new(&layout).with_series(0, 1_000_000);
            for i in (1..=n).filter(|i| i % 2 == t) {
                let script = (i as usize) % shape.scripts;
                let latency = i as f64 * shape.latency_scale;
                let outcome = if shape.failures && i % 10 == 0 {
                    TxOutcome::SerializationFailure
                } else {
                    TxOutcome::Success
                };
                let rec = TxRecord {
                    script,
                    outcome,
                    latency_us: latency,
                    lag_us: (i % 7) as f64,
                    tries: if shape.failures && i % 5 == 0 { 2 } else { 1 },
                };
                // Spread the ends over 3 s (2.5 intervals: the last one is partial).
                let end = (i as f64 / n as f64 * 2_500_000.0) as i64;
                st.record_tx_at(&rec, end);
                st.record_command(script, 0, latency / 3.0);
                st.record_command(script, 1, latency * 2.0 / 3.0);
                if outcome != TxOutcome::Success {
                    st.record_command_failure(script, 1);
                }
            }
            st.add_conn_time_us(1000);
            st
        })
        .collect();
    for t in &threads {
        sum.absorb(t);
    }
    sum.bench_duration_us = 2_500_000;
    sum.initial_connection_us = 1_234;
    sum
}

pub fn context(percentiles: PercentileList) -> RunContext {
    let mut settings = BTreeMap::new();
    settings.insert("shared_buffers".to_string(), "128MB".to_string());
    settings.insert("fsync".to_string(), "on".to_string());
    settings.insert("jit".to_string(), "off".to_string());
    RunContext {
        command_line: vec!["pgrush".into(), "-T".into(), "3".into(), "-r".into()],
        start_time_unix_us: 1_795_343_086_006_123,
        server: Some(ServerInfo {
            version: "18.1".to_string(),
            version_num: 180_001,
            settings,
        }),
        client: ClientInfo {
            os: "linux".into(),
            os_description: Some("Test OS".into()),
            arch: "x86_64".into(),
            cpus: 2,
            hostname: Some("bench-host".into()),
        },
        percentiles,
        warnings: vec!["the run lasted only 2.5 s; <test>".to_string()],
    }
}

pub fn document(shape: &Shape) -> RunDocument {
    RunDocument::build(&summary(shape), &context(PercentileList::default()))
}
