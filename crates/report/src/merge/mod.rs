//! `pgrush merge`: the shards of one benchmark (run documents with a `shard` block, see
//! [`crate::document::ShardDoc`]) merged into the result of one run with all their clients.
//!
//! Each shard's document is read back into the statistics model ([`pgrush_stats`]) as if
//! the shard were one thread, and the shards are merged with the code that merges threads:
//! counts add up, latency average and standard deviation come from the summed raw sums,
//! minimum and maximum are kept, HDR histograms add (so percentiles are exact), and the
//! time series add up interval by interval on the server's clock. The text report and the
//! merged document are then made by the same renderers as a single run's.
//!
//! Definitions (also in the crate's README, "Merging shards"):
//! - the measured interval runs from the earliest shard start to the latest shard end on
//!   the server's clock (a shard's start is its `start_time_unix` minus its clock offset,
//!   its end that plus its `duration_s`); tps divides by it;
//! - the initial connection time is pgbench 18's (from the run's start to the earliest
//!   thread ready to benchmark) over all shards' threads: the smallest shard's;
//! - clients, threads and the `-R` rate of the merged run are the shards' sums;
//! - the warnings are worked out again for the whole run (its duration, clients and
//!   scale; threads against CPUs on each client machine; autovacuum if any shard saw it);
//! - `--target`: the shards must name the same targets; each target's counts and
//!   latency distribution are worked out again from the merged per-script statistics
//!   (as a single run's are), so they add up exactly;
//! - the server statistics are one shard's timeline (see [`server`]);
//! - `--workload tpcc`: NOPM and TPM are the clients', from the merged New-Order and
//!   total counts over the measured interval (no server counts: a shard reads none).

mod check;
mod display;
mod merged_doc;
mod rebuild;
mod server;
mod timeline;

pub use check::MergeError;
pub use display::{html_section, merged_text};
pub use merged_doc::{MergedDoc, MergedShardDoc};

use crate::document::{RunContext, RunDocument, TpccDoc, time_series_doc_from};
use crate::percentiles::PercentileList;
use crate::warnings::{
    AUTOVACUUM_WARNING, TPCB_LIKE_DESCRIPTION, WarningInputs, is_machine_warning,
    warnings_on_machines,
};
use check::Shard;
use pgrush_stats::{RunSummary, StatsLayout, ThreadStats};
use timeline::Timeline;

/// The result of a merge.
#[derive(Debug, Clone)]
pub struct MergedRun {
    /// The whole run's statistics (what the text report renders).
    pub summary: RunSummary,
    /// The whole run's document (`shard` absent, `merged` present).
    pub document: RunDocument,
    /// The percentiles reported (the first shard's list).
    pub percentiles: PercentileList,
}

/// Merges the shard documents (`(file name, document)`, in any order).
pub fn merge(docs: &[(String, RunDocument)]) -> Result<MergedRun, MergeError> {
    let shards = check::check_shards(docs)?;
    let first = shards[0];
    let count = first.shard.count;
    let config =
        rebuild::run_config(&first.doc.config, count).map_err(|p| unreadable(&first, p))?;
    let mut summary = RunSummary::empty(config, rebuild::script_infos(first.doc));
    summary.targets = rebuild::target_infos(first.doc);
    let timeline = Timeline::of(&shards);
    let statistics = all_shards_stats(&shards, &summary.layout(), &timeline)?;
    summary.absorb(&statistics);
    for s in &shards {
        summary.aborted |= s.doc.results.aborted;
        summary.interrupted |= s.doc.results.interrupted;
    }
    summary.bench_duration_us = timeline.duration_us();
    summary.initial_connection_us = timeline::initial_connection_us(&shards);
    let percentiles =
        PercentileList::from_values(first.doc.percentiles.clone()).unwrap_or_default();
    let document = merged_document(&summary, &shards, &timeline, &percentiles);
    Ok(MergedRun {
        summary,
        document,
        percentiles,
    })
}

fn unreadable(s: &Shard<'_>, problem: String) -> MergeError {
    MergeError::Unreadable {
        file: s.file.to_string(),
        problem,
    }
}

/// Every shard's statistics read back and merged, the shards shared out among the CPUs
/// (decoding the histograms is most of a merge's work); each worker keeps one running
/// sum, so memory does not grow with the number of shards.
fn all_shards_stats(
    shards: &[Shard<'_>],
    layout: &StatsLayout,
    timeline: &Timeline,
) -> Result<ThreadStats, MergeError> {
    let interval_us = shards[0]
        .doc
        .time_series
        .as_ref()
        .map_or(1, |t| (t.interval_s * 1e6).round().max(1.0) as u64);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = shards.len().div_ceil(workers.clamp(1, shards.len()));
    let partial = |first: usize, part: &[Shard<'_>]| -> Result<ThreadStats, MergeError> {
        let mut acc = ThreadStats::new(layout);
        for (k, s) in part.iter().enumerate() {
            let offset = timeline.series_offset(first + k, interval_us);
            let st = rebuild::thread_stats(s.doc, layout, offset).map_err(|p| unreadable(s, p))?;
            acc.merge(&st);
        }
        Ok(acc)
    };
    let partials: Vec<Result<ThreadStats, MergeError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = shards
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| scope.spawn(move || partial(c * chunk, part)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut total = ThreadStats::new(layout);
    for p in partials {
        total.merge(&p?);
    }
    Ok(total)
}

/// The document of the whole run: built as a single run's, with the time series starting
/// at the measured interval, every shard's warnings and the `merged` block.
fn merged_document(
    summary: &RunSummary,
    shards: &[Shard<'_>],
    timeline: &Timeline,
    percentiles: &PercentileList,
) -> RunDocument {
    let first = shards[0].doc;
    let warnings = merged_warnings(summary, shards);
    let ctx = RunContext {
        command_line: first.command_line.clone(),
        start_time_unix_us: timeline.start_us.round() as i64,
        server: first.server.clone(),
        client: first.client.clone(),
        percentiles: percentiles.clone(),
        warnings,
    };
    let mut doc = RunDocument::build(summary, &ctx);
    doc.time_series = time_series_doc_from(summary, percentiles, 0.0);
    doc.merged = Some(merged_block(shards, timeline));
    doc.server_stats = server::server_timeline(shards, timeline);
    for (i, t) in doc.targets.iter_mut().flatten().enumerate() {
        t.server_stats = server::target_timeline(shards, timeline, i);
        t.server_in_recovery = shards
            .iter()
            .find_map(|s| s.doc.targets.as_ref()?.get(i)?.server_in_recovery);
    }
    // `--workload tpcc`: NOPM and TPM of the merged counts over the common interval (the
    // shards read no server counts: they would count every shard's).
    doc.tpcc = first.tpcc.as_ref().map(|_| TpccDoc::build(summary, None));
    doc
}

/// The warnings of the whole run, worked out again from its figures (duration, clients,
/// scale); autovacuum as any shard saw it; threads against CPUs on each client machine.
fn merged_warnings(summary: &RunSummary, shards: &[Shard<'_>]) -> Vec<String> {
    let first = shards[0].doc;
    let machines: Vec<(u32, u32)> = shards
        .iter()
        .map(|s| (s.doc.config.threads, s.doc.client.cpus))
        .collect();
    let whole = WarningInputs {
        tpcb_like: first
            .scripts
            .iter()
            .any(|s| s.description == TPCB_LIKE_DESCRIPTION),
        autovacuum_during_run: Some(
            shards
                .iter()
                .any(|s| s.doc.warnings.iter().any(|w| w == AUTOVACUUM_WARNING)),
        ),
        ..WarningInputs::from_summary(summary)
    };
    let mut out = warnings_on_machines(&whole, &machines);
    for w in shards.iter().flat_map(|s| &s.doc.warnings) {
        if is_machine_warning(w) && !out.contains(w) {
            out.push(w.clone());
        }
    }
    out
}

fn merged_block(shards: &[Shard<'_>], timeline: &Timeline) -> MergedDoc {
    let first = shards[0].shard;
    MergedDoc {
        shard_count: first.count,
        benchmark_id: first.benchmark_id.clone(),
        start_method: first.start_method.clone(),
        start_spread_ms: timeline.start_spread_ms(),
        shards: shards
            .iter()
            .zip(&timeline.starts_us)
            .map(|(s, &start_us)| MergedShardDoc {
                index: s.shard.index,
                source: s.shard.source.clone(),
                host: s.doc.client.hostname.clone(),
                first_client: s.shard.first_client,
                clients: s.doc.config.clients,
                threads: s.doc.config.threads,
                start_time_unix: start_us / 1e6,
                duration_s: s.doc.results.duration_s,
                clock_offset_ms: s.shard.clock_offset_ms,
                clock_offset_uncertainty_ms: s.shard.clock_offset_uncertainty_ms,
                processed: s.doc.results.transactions.processed,
            })
            .collect(),
    }
}
