//! The per-script and per-command figures of each interval of the run document's time
//! series (`time_series.intervals[i].scripts` and `.commands`), and their way back into
//! the statistics model (`pgrush merge`).
//!
//! Each entry carries the raw sums and the interval's histogram at two significant digits,
//! so shards merge exactly, as the interval's own figures do.

use crate::document_figures::{Counts, PercentileValue, RawSums};
use crate::hdr;
use crate::percentiles::{PercentileList, sparse_percentiles_ms};
use pgrush_stats::{
    CommandInterval, IntervalStats, ScriptInterval, SimpleStats, SparseHistogram, TxCounters,
};
use serde::{Deserialize, Serialize};

/// The latency of one script's transactions or of one command in one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalLatencyDoc {
    /// Average (ms; `null` without a value).
    pub latency_average_ms: Option<f64>,
    /// Maximum (ms; `null` without a value).
    pub latency_max_ms: Option<f64>,
    /// Percentiles at 2 significant digits; empty without a value.
    pub latency_percentiles: Vec<PercentileValue>,
    /// Raw figures, for exact merging.
    pub latency_sums: RawSums,
    /// The histogram at 2 significant digits (HDR V2 compressed, base64, µs); absent
    /// without a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<String>,
}

impl IntervalLatencyDoc {
    fn build(st: &SimpleStats, hist: &SparseHistogram, list: &PercentileList) -> Self {
        let has = st.count > 0;
        let pct = if has {
            sparse_percentiles_ms(hist, list, Some(st.max)).unwrap_or_default()
        } else {
            Vec::new()
        };
        IntervalLatencyDoc {
            latency_average_ms: has.then(|| st.mean() / 1000.0),
            latency_max_ms: has.then(|| st.max / 1000.0),
            latency_percentiles: list
                .values()
                .iter()
                .zip(pct)
                .map(|(&p, ms)| PercentileValue { p, ms })
                .collect(),
            latency_sums: RawSums::of(st),
            latency_histogram: (has && !hist.is_empty()).then(|| hdr::encode_sparse(hist)),
        }
    }

    /// The value (ms) at percentile `p`, when stored.
    pub fn percentile_ms(&self, p: f64) -> Option<f64> {
        self.latency_percentiles
            .iter()
            .find(|v| v.p == p)
            .map(|v| v.ms)
    }

    fn histogram(&self) -> Result<SparseHistogram, String> {
        match &self.latency_histogram {
            Some(text) => hdr::decode_sparse(text).map_err(|e| format!("time series: {e}")),
            None => Ok(SparseHistogram::default()),
        }
    }
}

/// One script's transactions in one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalScriptDoc {
    /// Index of the script in `scripts` (0-based).
    pub script: u32,
    /// Its transactions that ended in the interval.
    pub transactions: Counts,
    /// Its successful transactions per second of the interval.
    pub tps: f64,
    /// Latency of the successful ones.
    #[serde(flatten)]
    pub latency: IntervalLatencyDoc,
}

/// One command's executions in one interval (`-r`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalCommandDoc {
    /// Index of the script in `scripts` (0-based).
    pub script: u32,
    /// Index of the command in the script's `commands` (0-based).
    pub command: u32,
    /// Executions that completed in the interval.
    pub executions: u64,
    /// Transaction failures attributed to the command in the interval.
    pub failures: u64,
    /// Latency of the executions.
    #[serde(flatten)]
    pub latency: IntervalLatencyDoc,
}

/// The per-script entries of an interval: its own figures for a single script.
pub(crate) fn script_docs(
    iv: &IntervalStats,
    scripts: usize,
    duration_s: f64,
    list: &PercentileList,
) -> Vec<IntervalScriptDoc> {
    let per_second = |n: u64| {
        if duration_s > 0.0 {
            n as f64 / duration_s
        } else {
            0.0
        }
    };
    let doc = |script: u32, counters: &TxCounters, st: &SimpleStats, h: &SparseHistogram| {
        IntervalScriptDoc {
            script,
            transactions: Counts::of(counters),
            tps: per_second(counters.successful),
            latency: IntervalLatencyDoc::build(st, h, list),
        }
    };
    if scripts == 1 && iv.scripts.is_empty() {
        if iv.counters.total() == 0 {
            return Vec::new();
        }
        return vec![doc(0, &iv.counters, &iv.latency, &iv.latency_hist)];
    }
    iv.scripts
        .iter()
        .map(|s| doc(s.script, &s.counters, &s.latency, &s.latency_hist))
        .collect()
}

/// The per-command entries of an interval.
pub(crate) fn command_docs(iv: &IntervalStats, list: &PercentileList) -> Vec<IntervalCommandDoc> {
    iv.commands
        .iter()
        .map(|c| IntervalCommandDoc {
            script: c.script,
            command: c.command,
            executions: c.latency.count,
            failures: c.failures,
            latency: IntervalLatencyDoc::build(&c.latency, &c.latency_hist, list),
        })
        .collect()
}

/// The per-script and per-command figures of an interval document back, for `pgrush
/// merge`; per-script ones only for a run of several scripts (the model keeps none for
/// a single script, whose figures are the interval's).
pub(crate) fn parts_back(
    scripts: &[IntervalScriptDoc],
    commands: &[IntervalCommandDoc],
    several_scripts: bool,
    counters: impl Fn(&Counts) -> TxCounters,
) -> Result<(Vec<ScriptInterval>, Vec<CommandInterval>), String> {
    let mut s_out = Vec::new();
    if several_scripts {
        for s in scripts {
            s_out.push(ScriptInterval {
                script: s.script,
                counters: counters(&s.transactions),
                latency: s.latency.latency_sums.to_stats(),
                latency_hist: s.latency.histogram()?,
            });
        }
    }
    let mut c_out = Vec::with_capacity(commands.len());
    for c in commands {
        c_out.push(CommandInterval {
            script: c.script,
            command: c.command,
            latency: c.latency.latency_sums.to_stats(),
            failures: c.failures,
            latency_hist: c.latency.histogram()?,
        });
    }
    // The model's lists are sorted by index.
    s_out.sort_by_key(|s| s.script);
    c_out.sort_by_key(|c| (c.script, c.command));
    Ok((s_out, c_out))
}
