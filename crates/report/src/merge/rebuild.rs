//! A shard's document back into the statistics model (`RunConfig`, `ScriptInfo`,
//! `ThreadStats`), so that shards merge with the same code that merges threads.

use crate::document::{CommandDoc, ConfigDoc, Counts, Distribution, IntervalDoc, RunDocument};
use crate::hdr;
use pgrush_stats::{
    CommandStats, GrowingHistogram, IntervalStats, LatencyHistogram, PartitionMethod, Partitioning,
    QueryMode, RunConfig, RunLimit, ScriptInfo, SimpleStats, SparseHistogram, StatsLayout,
    TargetInfo, ThreadStats, TimeSeries, TxCounters, TxStats,
};

/// The configuration of the whole run: one shard's, with the clients, threads and rate
/// of all `shards` (each shard's document records its own share).
pub(crate) fn run_config(cfg: &ConfigDoc, shards: u32) -> Result<RunConfig, String> {
    let query_mode = match cfg.query_mode.as_str() {
        "simple" => QueryMode::Simple,
        "extended" => QueryMode::Extended,
        "prepared" => QueryMode::Prepared,
        other => return Err(format!("unknown query mode \"{other}\"")),
    };
    let partitioning = match (cfg.partition_method.as_deref(), cfg.partitions) {
        (Some("range"), Some(count)) => Some(Partitioning {
            method: PartitionMethod::Range,
            count,
        }),
        (Some("hash"), Some(count)) => Some(Partitioning {
            method: PartitionMethod::Hash,
            count,
        }),
        (None, _) => None,
        (Some(other), _) => return Err(format!("unknown partition method \"{other}\"")),
    };
    let limit = match (cfg.transactions_per_client, cfg.duration_s) {
        (Some(t), _) => RunLimit::Transactions(t),
        (None, Some(d)) => RunLimit::Duration(d),
        (None, None) => return Err("neither -t nor -T in the configuration".to_string()),
    };
    Ok(RunConfig {
        scale: cfg.scale,
        partitioning,
        query_mode,
        clients: cfg.clients.saturating_mul(shards),
        threads: cfg.threads.saturating_mul(shards),
        max_tries: cfg.max_tries,
        limit,
        rate: cfg.rate_tps.map(|r| r * f64::from(shards)),
        latency_limit_us: cfg.latency_limit_ms.map(|ms| ms * 1000.0),
        progress_s: cfg.progress_s,
        connect_per_tx: cfg.connect_per_transaction,
        failures_detailed: cfg.failures_detailed,
        per_command: cfg.per_command,
        continue_on_error: cfg.continue_on_error,
        warmup_s: cfg.warmup_s,
        reconnect: cfg.reconnect,
    })
}

/// The scripts as the report lists them.
pub(crate) fn script_infos(doc: &RunDocument) -> Vec<ScriptInfo> {
    doc.scripts
        .iter()
        .map(|s| ScriptInfo {
            desc: s.description.clone().into_bytes(),
            weight: s.weight,
            commands: s
                .commands
                .iter()
                .map(|c| c.text.clone().into_bytes())
                .collect(),
        })
        .collect()
}

/// The run's `--target` servers as the shard's document names them (the shards
/// agree on them: see the checks): each target's figures are then worked out again
/// from the merged per-script statistics, as a single run's are.
pub(crate) fn target_infos(doc: &RunDocument) -> Vec<TargetInfo> {
    doc.targets
        .iter()
        .flatten()
        .map(|t| TargetInfo {
            name: t.name.clone(),
            scripts: t.scripts.iter().map(|k| k.saturating_sub(1)).collect(),
        })
        .collect()
}

fn counters(c: &Counts) -> TxCounters {
    TxCounters {
        successful: c.processed,
        skipped: c.skipped,
        serialization_failures: c.serialization_failures,
        deadlock_failures: c.deadlock_failures,
        other_failures: c.other_failures,
        connection_failures: c.connection_failures,
        retried: c.retried,
        retries: c.retries,
    }
}

/// The distribution's histogram; an empty one is accepted (per-command distributions of
/// runs that kept no per-command histograms), one of another count is not.
fn histogram(d: &Distribution) -> Result<LatencyHistogram, String> {
    let h = hdr::decode(&d.hdr_histogram).map_err(|e| e.to_string())?;
    if !h.is_empty() && h.len() != d.count {
        return Err(format!(
            "a histogram holds {} values where the distribution counts {}",
            h.len(),
            d.count
        ));
    }
    Ok(h)
}

/// Transaction statistics from their counts and distributions.
fn tx_stats(
    counts: &Counts,
    latency: Option<&Distribution>,
    lag: Option<&Distribution>,
    late: u64,
    throttled: bool,
) -> Result<TxStats, String> {
    let mut tx = TxStats::new(throttled);
    tx.counters = counters(counts);
    tx.late = late;
    if let Some(d) = latency {
        tx.latency = d.raw_stats();
        tx.latency_hist = histogram(d)?;
    }
    if let (Some(d), true) = (lag, throttled) {
        tx.lag = d.raw_stats();
        tx.lag_hist = Some(histogram(d)?);
    }
    Ok(tx)
}

fn command_stats(c: &CommandDoc) -> Result<CommandStats, String> {
    let mut out = CommandStats {
        failures: c.failures,
        retries: c.retries,
        ..CommandStats::default()
    };
    match &c.latency {
        Some(d) => {
            out.latency = d.raw_stats();
            let mut g = GrowingHistogram::new();
            for v in histogram(d)?.inner().iter_recorded() {
                g.record_u64_n(v.value_iterated_to(), v.count_at_value());
            }
            out.latency_hist = g;
        }
        None => {
            let n = c.executions as f64;
            out.latency = SimpleStats {
                count: c.executions,
                sum: c.average_ms * 1000.0 * n,
                ..SimpleStats::default()
            };
        }
    }
    Ok(out)
}

/// Statistics of a series kept as raw sums, else rebuilt from rounded figures.
fn interval_simple(
    sums: Option<&crate::document::RawSums>,
    count: u64,
    avg_ms: Option<f64>,
    max_ms: Option<f64>,
) -> SimpleStats {
    if let Some(s) = sums {
        return s.to_stats();
    }
    let avg_us = avg_ms.unwrap_or(0.0) * 1000.0;
    SimpleStats {
        count,
        min: 0.0,
        max: max_ms.unwrap_or(0.0) * 1000.0,
        sum: avg_us * count as f64,
        sum2: avg_us * avg_us * count as f64,
    }
}

fn interval_stats(
    iv: &IntervalDoc,
    throttled: bool,
    several_scripts: bool,
) -> Result<IntervalStats, String> {
    let n = iv.transactions.processed;
    let lag = if throttled {
        interval_simple(iv.lag_sums.as_ref(), n, iv.lag_average_ms, iv.lag_max_ms)
    } else {
        SimpleStats::default()
    };
    let latency_hist = match &iv.latency_histogram {
        Some(text) => hdr::decode_sparse(text).map_err(|e| format!("time series: {e}"))?,
        None => SparseHistogram::default(),
    };
    let (scripts, commands) =
        crate::document_parts::parts_back(&iv.scripts, &iv.commands, several_scripts, counters)?;
    Ok(IntervalStats {
        counters: counters(&iv.transactions),
        latency: interval_simple(iv.latency_sums.as_ref(), n, iv.latency_average_ms, None),
        lag,
        latency_hist,
        scripts,
        commands,
    })
}

/// The longest merged time series (intervals): 48 days of 1 s intervals.
const MAX_SERIES_INTERVALS: usize = 1 << 22;

/// One shard's statistics as if it were one thread of the merged run; its time series
/// (if any) starts `series_offset` intervals after the merged run's.
pub(crate) fn thread_stats(
    doc: &RunDocument,
    layout: &StatsLayout,
    series_offset: usize,
) -> Result<ThreadStats, String> {
    let throttled = layout.throttled;
    let mut st = ThreadStats::new(layout);
    st.total = tx_stats(
        &doc.results.transactions,
        doc.latency.as_ref(),
        doc.lag.as_ref(),
        doc.results.late,
        throttled,
    )?;
    for (mine, s) in st.scripts.iter_mut().zip(&doc.scripts) {
        mine.tx = tx_stats(&s.transactions, s.latency.as_ref(), None, 0, throttled)?;
        for (c, cdoc) in mine.commands.iter_mut().zip(&s.commands) {
            *c = command_stats(cdoc)?;
        }
    }
    st.conn_time_us = doc.results.connection_time_total_us.unwrap_or_else(|| {
        let n = (doc.results.transactions.processed + doc.results.transactions.failed) as f64;
        let avg = doc.results.average_connection_time_ms.unwrap_or(0.0);
        (avg * 1000.0 * n).round() as u64
    });
    if let Some(ts) = &doc.time_series {
        if series_offset.saturating_add(ts.intervals.len()) > MAX_SERIES_INTERVALS {
            return Err(format!(
                "its time series would end {series_offset} + {} intervals after the earliest shard's start: too far apart to be one run",
                ts.intervals.len()
            ));
        }
        let interval_us = (ts.interval_s * 1e6).round().max(1.0) as u64;
        let mut intervals = vec![IntervalStats::default(); series_offset];
        for iv in &ts.intervals {
            intervals.push(interval_stats(iv, throttled, doc.scripts.len() > 1)?);
        }
        st.series = Some(TimeSeries::from_intervals(
            0,
            interval_us,
            throttled,
            intervals,
        ));
    }
    Ok(st)
}
