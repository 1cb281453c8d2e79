//! `pgrush merge`'s arithmetic: one synthetic run of 16 clients, split by client into 4
//! shards, merges back into exactly the single run (counts, sums, histograms,
//! percentiles, per script, per command, time series, the whole text report).

mod merge_common;

use merge_common::*;
use pgrush_report::document::RunDocument;
use pgrush_report::merge::{merge, merged_text};
use pgrush_report::percentiles::{PercentileList, render_text};
use pgrush_report::text::render_report;
use pgrush_stats::server::ServerTimeline;
use pgrush_stats::{RunSummary, TxStats};

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-run.v1.schema.json"
));

fn single_run() -> RunSummary {
    let clients = CLIENTS_PER_SHARD * 4;
    summary(&transactions(clients), 0, clients, 4, RATE)
}

fn assert_same_tx(merged: &TxStats, single: &TxStats, what: &str) {
    assert_eq!(merged.counters, single.counters, "{what}: counters");
    assert_eq!(merged.latency, single.latency, "{what}: latency sums");
    assert_eq!(
        merged.latency_hist.len(),
        single.latency_hist.len(),
        "{what}"
    );
    for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
        assert_eq!(
            merged.latency_hist.value_at_quantile(q),
            single.latency_hist.value_at_quantile(q),
            "{what}: quantile {q}"
        );
    }
}

#[test]
fn four_shards_merge_into_exactly_the_single_run() {
    let single = single_run();
    let merged = merge(&shards(4)).unwrap_or_else(|e| panic!("merge: {e}"));
    let m = &merged.summary;
    assert!(single.stats.total.counters.failed() > 0 && single.stats.total.counters.skipped > 0);
    assert!(single.stats.total.counters.retries > 0 && single.stats.total.late > 0);
    assert_eq!(m.config, single.config);
    assert_eq!(m.scripts, single.scripts);
    assert_same_tx(&m.stats.total, &single.stats.total, "total");
    assert_eq!(m.stats.total.lag, single.stats.total.lag, "lag sums");
    // Late transactions are counted for the whole run only (no report shows them per script).
    assert_eq!(m.stats.total.late, single.stats.total.late, "late");
    let (ml, sl) = (
        m.stats.total.lag_hist.as_ref(),
        single.stats.total.lag_hist.as_ref(),
    );
    assert_eq!(
        ml.map(|h| h.value_at_quantile(0.99)),
        sl.map(|h| h.value_at_quantile(0.99))
    );
    for (i, (ms, ss)) in m
        .stats
        .scripts
        .iter()
        .zip(&single.stats.scripts)
        .enumerate()
    {
        assert_same_tx(&ms.tx, &ss.tx, &format!("script {i}"));
        for (j, (mc, sc)) in ms.commands.iter().zip(&ss.commands).enumerate() {
            assert_eq!(mc.latency, sc.latency, "script {i} command {j}");
            assert_eq!((mc.failures, mc.retries), (sc.failures, sc.retries));
            let (mh, sh) = (
                mc.latency_hist.to_histogram(),
                sc.latency_hist.to_histogram(),
            );
            assert_eq!(mh.value_at_quantile(0.95), sh.value_at_quantile(0.95));
            assert_eq!(mh.len(), sh.len());
        }
    }
    assert_eq!(m.bench_duration_us, single.bench_duration_us);
    assert_eq!(m.initial_connection_us, single.initial_connection_us);
    // The whole text report and the percentile lines, byte for byte.
    assert_eq!(
        String::from_utf8_lossy(&render_report(m)),
        String::from_utf8_lossy(&render_report(&single))
    );
    let list = PercentileList::default();
    assert_eq!(render_text(m, &list), render_text(&single, &list));
}

#[test]
fn time_series_add_up_per_interval() {
    let single = single_run();
    let merged = merge(&shards(4)).unwrap_or_else(|e| panic!("merge: {e}"));
    let (Some(ms), Some(ss)) = (&merged.summary.stats.series, &single.stats.series) else {
        panic!("both runs have a time series");
    };
    let (mi, si) = (ms.intervals(), ss.intervals());
    assert!(si.len() >= 3, "{}", si.len());
    // Per-script and per-command figures too, exactly.
    assert!(si.iter().all(|iv| iv.scripts.len() == 2), "{si:?}");
    assert!(si.iter().all(|iv| iv.commands.len() == 4), "{si:?}");
    assert!(
        si.iter()
            .any(|iv| iv.commands.iter().any(|c| c.failures > 0))
    );
    assert_eq!(mi, si);
    let doc = &merged.document;
    let ts = doc
        .time_series
        .as_ref()
        .map(|t| t.intervals.clone())
        .unwrap_or_default();
    let total: u64 = ts.iter().map(|iv| iv.transactions.processed).sum();
    assert_eq!(total, single.stats.total.counters.successful);
    for iv in &ts {
        let by_script: u64 = iv.scripts.iter().map(|s| s.transactions.total()).sum();
        assert_eq!(by_script, iv.transactions.total());
    }
    let executions: u64 = ts
        .iter()
        .flat_map(|iv| &iv.commands)
        .map(|c| c.executions)
        .sum();
    let in_report: u64 = doc
        .scripts
        .iter()
        .flat_map(|s| &s.commands)
        .map(|c| c.executions)
        .sum();
    assert_eq!(executions, in_report);
    // The merged series starts with the measured interval: its first interval is whole.
    assert_eq!(ts.first().map(|iv| iv.duration_s), Some(1.0));
}

#[test]
fn merged_document_is_valid_and_reads_back() {
    let single = single_run();
    let merged = merge(&shards(4)).unwrap_or_else(|e| panic!("merge: {e}"));
    let doc = &merged.document;
    assert!(doc.shard.is_none());
    let block = doc
        .merged
        .as_ref()
        .unwrap_or_else(|| panic!("merged block"));
    assert_eq!(block.shard_count, 4);
    assert_eq!(block.start_spread_ms, 0.0);
    let hosts: Vec<_> = block
        .shards
        .iter()
        .map(|s| s.host.clone().unwrap_or_default())
        .collect();
    assert_eq!(hosts, ["node0", "node1", "node2", "node3"]);
    assert_eq!(block.shards[3].clock_offset_ms, 40.0);
    assert_eq!(block.shards[2].first_client, 8);
    // Every shard started at the agreed instant on the server's clock.
    assert_eq!((doc.start_time_unix * 1e6).round() as i64, START_US);
    let reference = RunDocument::build(&single, &context(START_US, "node0"));
    assert_eq!(doc.latency, reference.latency);
    assert_eq!(doc.results.tps, reference.results.tps);
    assert_eq!(doc.scripts, reference.scripts);
    let json: serde_json::Value = serde_json::from_str(&doc.to_json()).unwrap_or_default();
    let schema: serde_json::Value = serde_json::from_str(SCHEMA).unwrap_or_default();
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("schema: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(RunDocument::from_json(&doc.to_json()).as_ref(), Ok(doc));
    let text = merged_text(block, doc.results.duration_s);
    assert!(
        text.starts_with("merged from 4 shards (benchmark 5e1f00d, start: barrier):\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "  shard 1: host node1, clients 4-7, clock offset +12.500 ± 0.050 ms, start +0.000 ms"
        ),
        "{text}"
    );
    assert!(
        text.contains("start spread: 0.000 ms; measured interval: 3.000000 s"),
        "{text}"
    );
}

#[test]
fn a_late_shard_widens_the_interval_and_shifts_its_series() {
    let mut docs = shards(4);
    // Shard 3 started 2 s late (client clock and server clock alike).
    docs[3].1.start_time_unix += 2.0;
    let merged = merge(&docs).unwrap_or_else(|e| panic!("merge: {e}"));
    assert_eq!(merged.summary.bench_duration_us, 5_000_000);
    let block = merged.document.merged.as_ref().map(|b| b.start_spread_ms);
    assert_eq!(block, Some(2000.0));
    let on_time = merge(&shards(4)).unwrap_or_else(|e| panic!("merge: {e}"));
    let late_series = merged
        .summary
        .stats
        .series
        .as_ref()
        .map(|s| s.intervals())
        .unwrap_or_default();
    let series = on_time
        .summary
        .stats
        .series
        .as_ref()
        .map(|s| s.intervals())
        .unwrap_or_default();
    assert_eq!(late_series.len(), series.len() + 2);
    let count = |v: &[pgrush_stats::IntervalStats]| -> u64 {
        v.iter().map(|i| i.counters.successful).sum()
    };
    assert_eq!(count(&late_series), count(&series));
    // Shard 3's first interval landed two intervals later.
    let shard3 = &docs[3]
        .1
        .time_series
        .as_ref()
        .map(|t| t.intervals[0].transactions.processed);
    let others: u64 = (0..3)
        .filter_map(|i| {
            docs[i]
                .1
                .time_series
                .as_ref()
                .and_then(|t| t.intervals.get(2))
        })
        .map(|iv| iv.transactions.processed)
        .sum();
    assert_eq!(
        Some(late_series[2].counters.successful),
        shard3.map(|n| n + others)
    );
}

#[test]
fn initial_connection_time_is_the_earliest_thread_ready() {
    let mut docs = shards(4);
    for (d, ms) in docs.iter_mut().zip([5.0, 1.234, 2.0, 3.0]) {
        d.1.results.initial_connection_time_ms = Some(ms);
    }
    let merged = merge(&docs).unwrap_or_else(|e| panic!("merge: {e}"));
    assert_eq!(merged.summary.initial_connection_us, 1_234);
    let text = String::from_utf8_lossy(&render_report(&merged.summary)).into_owned();
    assert!(
        text.contains("initial connection time = 1.234 ms\n"),
        "{text}"
    );
}

/// Each shard ran on its own machine: a warning about one shard's busy client machine
/// stays in the merged run's warnings (once), and the merged run has no machine series.
#[test]
fn a_shards_busy_machine_stays_warned_about() {
    let busy = "the client machine's CPU was 97% busy from 1 s to 2 s (above 90%); \
                the client may be the bottleneck";
    let mut docs = shards(4);
    docs[1].1.warnings.push(busy.to_string());
    docs[2].1.warnings.push(busy.to_string());
    docs[3]
        .1
        .warnings
        .push("a shard's own duration warning".to_string());
    let merged = merge(&docs).unwrap_or_else(|e| panic!("merge: {e}"));
    let doc = &merged.document;
    assert_eq!(doc.warnings.iter().filter(|w| *w == busy).count(), 1);
    assert!(!doc.warnings.iter().any(|w| w.starts_with("a shard's own")));
    assert!(doc.machine.is_none());
}

#[test]
fn targets_merge_exactly_and_must_agree() {
    let targets = two_targets();
    let docs = shards_with_targets(2, &targets);
    let merged = merge(&docs).unwrap_or_else(|e| panic!("merge: {e}"));
    let clients = CLIENTS_PER_SHARD * 2;
    let mut single = summary(&transactions(clients), 0, clients, 2, RATE);
    single.targets = targets;
    let reference = RunDocument::build(&single, &context(START_US, "node0"));
    let (got, want) = (merged.document.targets.as_ref(), reference.targets.as_ref());
    assert!(want.is_some_and(|t| t.len() == 2 && t[1].transactions.processed > 0));
    // Counts, tps and latency distributions (histograms, percentiles) as the single run's.
    assert_eq!(got, want);
    let standby = |d: &RunDocument| {
        d.targets
            .as_ref()
            .map_or(0, |t| t[1].transactions.processed)
    };
    let shard_sum: u64 = docs.iter().map(|(_, d)| standby(d)).sum();
    assert_eq!(standby(&merged.document), shard_sum);
    // The `per target:` block of the text report, byte for byte.
    assert_eq!(
        String::from_utf8_lossy(&render_report(&merged.summary)),
        String::from_utf8_lossy(&render_report(&single))
    );
    // A target's server statistics are one shard's timeline; its summary is on the page.
    let mut sampled = docs.clone();
    for (_, d) in &mut sampled {
        if let Some(t) = d.targets.as_mut() {
            t[1].server_stats = Some(ServerTimeline {
                interval_s: 1.0,
                ..ServerTimeline::default()
            });
            t[1].server_in_recovery = Some(true);
        }
    }
    let m = merge(&sampled).unwrap_or_else(|e| panic!("merge: {e}"));
    let t = m.document.targets.as_ref().map_or(&[][..], Vec::as_slice);
    assert!(t[0].server_stats.is_none() && t[1].server_stats.is_some());
    assert_eq!(t[1].server_in_recovery, Some(true));
    let page = pgrush_report::html::render(&m.document);
    assert!(
        page.contains("server statistics of target 2: host=standby port=5433, in recovery"),
        "no target server summary on the page"
    );
    let refused = |docs: &[(String, RunDocument)]| merge(docs).err().map(|e| e.to_string());
    let expected = Some(
        "\"shard1.json\" is a shard of another benchmark than \"shard0.json\": targets (--target) differs"
            .to_string(),
    );
    let mut other = docs.clone();
    if let Some(t) = other[1].1.targets.as_mut() {
        t[1].name = "host=other".to_string();
    }
    assert_eq!(refused(&other), expected);
    let mut other = docs;
    other[1].1.targets = None;
    assert_eq!(refused(&other), expected);
}
