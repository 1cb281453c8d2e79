//! `RunSummary`: everything the final report (text, JSON, HTML) needs about one run.

use crate::thread::{StatsLayout, ThreadStats};
use crate::txlog::LogFormat;
use serde::{Serialize, Serializer};
use std::borrow::Cow;

/// `-M`: the query protocol.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryMode {
    /// Simple query protocol (default).
    #[default]
    Simple,
    /// Extended protocol with unnamed statements.
    Extended,
    /// Extended protocol with named prepared statements.
    Prepared,
}

impl QueryMode {
    /// The name printed on the `query mode:` line.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// Partitioning of `pgbench_accounts` as detected before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionMethod {
    /// `PARTITION BY RANGE`.
    Range,
    /// `PARTITION BY HASH`.
    Hash,
}

impl PartitionMethod {
    /// The name printed on the `partition method:` line.
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionMethod::Range => "range",
            PartitionMethod::Hash => "hash",
        }
    }
}

/// Detected partitioning (printed only when present).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Partitioning {
    /// Partition method.
    pub method: PartitionMethod,
    /// Number of partitions.
    pub count: i32,
}

/// How long the run was asked to last: when the engine stops the clients, and what
/// the report echoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunLimit {
    /// `-t N`: transactions per client.
    Transactions(u32),
    /// `-T N`: duration in seconds.
    Duration(u32),
}

/// The run's configuration as echoed in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunConfig {
    /// Scaling factor (detected from `pgbench_branches`, or `-s`, or 1).
    pub scale: i64,
    /// Detected partitioning of `pgbench_accounts`.
    pub partitioning: Option<Partitioning>,
    /// `-M`.
    pub query_mode: QueryMode,
    /// `-c`.
    pub clients: u32,
    /// Effective number of threads (min(-j, -c)).
    pub threads: u32,
    /// `--max-tries` (0 = unlimited).
    pub max_tries: u32,
    /// `-t` or `-T`.
    pub limit: RunLimit,
    /// `-R` in transactions per second, if given.
    pub rate: Option<f64>,
    /// `-L` in µs, if given.
    pub latency_limit_us: Option<f64>,
    /// `-P` interval in seconds, if given.
    pub progress_s: Option<u32>,
    /// `-C`: a new connection per transaction.
    pub connect_per_tx: bool,
    /// `--failures-detailed`.
    pub failures_detailed: bool,
    /// `-r`: per-command report.
    pub per_command: bool,
    /// `--continue-on-error` (PostgreSQL 19).
    pub continue_on_error: bool,
    /// `--warmup` in seconds, if given: the clients ran the workload this long before
    /// the measured run, and nothing of it is counted (pgrush's own option).
    pub warmup_s: Option<u32>,
    /// `--reconnect` (pgrush's own): clients that lose their connection count the
    /// transaction as a connection failure and reconnect; the report then has the
    /// connection failures' line and the outage windows.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reconnect: bool,
}

impl RunConfig {
    /// Whether latency was measured per transaction (`-R`, `-P` or `-L`): the report then
    /// prints measured average/stddev instead of the duration-derived average.
    pub fn latency_measured(&self) -> bool {
        self.rate.is_some() || self.progress_s.is_some() || self.latency_limit_us.is_some()
    }

    /// The options that shape `-l` and `--aggregate-interval` lines.
    pub fn log_format(&self) -> LogFormat {
        LogFormat {
            throttled: self.rate.is_some(),
            latency_limit: self.latency_limit_us.is_some(),
            max_tries: self.max_tries,
            failures_detailed: self.failures_detailed,
            reconnect: self.reconnect,
        }
    }
}

/// A script as listed in the report.
///
/// The description and command texts are the script's bytes, as pgbench prints them
/// (a Latin-1 file name or SQL line stays Latin-1 in the text report). Serialized
/// (JSON) as strings with invalid UTF-8 replaced by U+FFFD, since a JSON document must
/// be UTF-8; [`ScriptInfo::desc_lossy`] and [`ScriptInfo::commands_lossy`] give the same
/// text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScriptInfo {
    /// Description: `<builtin: ...>` or the file name as given.
    #[serde(serialize_with = "serialize_lossy")]
    pub desc: Vec<u8>,
    /// Weight (`@W`).
    pub weight: u32,
    /// Per-command report texts (first line of SQL, raw meta command), in script order.
    #[serde(serialize_with = "serialize_lossy_list")]
    pub commands: Vec<Vec<u8>>,
}

impl ScriptInfo {
    /// [`ScriptInfo::desc`] as text, invalid UTF-8 replaced by U+FFFD.
    pub fn desc_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.desc)
    }

    /// [`ScriptInfo::commands`] as text, invalid UTF-8 replaced by U+FFFD.
    pub fn commands_lossy(&self) -> impl Iterator<Item = Cow<'_, str>> {
        self.commands.iter().map(|c| String::from_utf8_lossy(c))
    }
}

fn serialize_lossy<S: Serializer>(bytes: &[u8], ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(&String::from_utf8_lossy(bytes))
}

fn serialize_lossy_list<S: Serializer>(list: &[Vec<u8>], ser: S) -> Result<S::Ok, S::Error> {
    ser.collect_seq(list.iter().map(|b| String::from_utf8_lossy(b)))
}

/// Everything known about a finished run.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// Configuration echo.
    pub config: RunConfig,
    /// The scripts, in order.
    pub scripts: Vec<ScriptInfo>,
    /// Statistics merged over all threads (`stats.scripts[i]` belongs to `scripts[i]`).
    pub stats: ThreadStats,
    /// Benchmark duration in µs (from the earliest thread start after connecting, to the end).
    pub bench_duration_us: u64,
    /// Time to make the initial connections in µs (reported without `-C`).
    pub initial_connection_us: u64,
    /// Whether some client aborted (the report is then followed by an error and exit 2).
    pub aborted: bool,
    /// Whether the run was interrupted (SIGINT/SIGTERM); the text report does not print it,
    /// the engine prints its own line.
    pub interrupted: bool,
    /// With stages (`--stage`, `--stages`): each stage and its statistics; empty without.
    #[serde(skip)]
    pub stages: Vec<StageSummary>,
    /// With `--target`: each server the scripts' transactions went to; empty without.
    #[serde(skip)]
    pub targets: Vec<TargetInfo>,
}

/// `--target`: a server scripts' transactions go to, and which scripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfo {
    /// How the report names it: `default` (the run's connection) or its conninfo
    /// (passwords redacted).
    pub name: String,
    /// Its scripts, by index in [`RunSummary::scripts`].
    pub scripts: Vec<usize>,
}

impl RunSummary {
    /// The merged statistics of `target`'s scripts (a run of one script keeps only
    /// the totals).
    pub fn target_stats(&self, target: &TargetInfo) -> crate::thread::TxStats {
        let mut tx = crate::thread::TxStats::new(self.config.rate.is_some());
        if self.scripts.len() == 1 {
            tx.merge(&self.stats.total);
            return tx;
        }
        for &i in &target.scripts {
            if let Some(st) = self.stats.scripts.get(i) {
                tx.merge(&st.tx);
            }
        }
        tx
    }
}

/// One stage of a run in stages and what ran in it.
#[derive(Debug, Clone)]
pub struct StageSummary {
    /// The stage (spec, offsets, clients and rate).
    pub stage: crate::stages::Stage,
    /// The transactions scheduled in it, merged over all threads.
    pub stats: ThreadStats,
}

impl StageSummary {
    /// The stage's length in µs (its whole planned length; the last one ends with the run).
    pub fn duration_us(&self) -> u64 {
        u64::from(self.stage.spec.duration_s) * 1_000_000
    }

    /// Successful transactions per second over the stage.
    pub fn tps(&self) -> f64 {
        self.stats.total.counters.successful as f64 / (self.duration_us() as f64 / 1e6)
    }
}

/// The statistics layout of `config` and `scripts` (see [`RunSummary::layout`]).
fn layout_for(config: &RunConfig, scripts: &[ScriptInfo]) -> StatsLayout {
    StatsLayout {
        commands_per_script: scripts.iter().map(|s| s.commands.len()).collect(),
        latency_limit_us: config.latency_limit_us,
        throttled: config.rate.is_some(),
        per_command: config.per_command,
        command_histograms: config.per_command,
        time_series: true,
    }
}

impl RunSummary {
    /// A summary with empty statistics shaped after `scripts`, to be filled by merging.
    pub fn empty(config: RunConfig, scripts: Vec<ScriptInfo>) -> Self {
        let layout = layout_for(&config, &scripts);
        RunSummary {
            stats: ThreadStats::new(&layout),
            config,
            scripts,
            bench_duration_us: 0,
            initial_connection_us: 0,
            aborted: false,
            interrupted: false,
            stages: Vec::new(),
            targets: Vec::new(),
        }
    }

    /// The layout threads should use for this configuration. With `-r` it keeps a
    /// histogram per command; a caller that reports no per-command percentiles clears
    /// [`StatsLayout::command_histograms`] (plain `-r` needs only sums).
    pub fn layout(&self) -> StatsLayout {
        layout_for(&self.config, &self.scripts)
    }

    /// Benchmark duration in seconds.
    pub fn bench_duration_s(&self) -> f64 {
        self.bench_duration_us as f64 / 1_000_000.0
    }

    /// Successful transactions per second over the benchmark duration.
    pub fn tps(&self) -> f64 {
        self.stats.total.counters.successful as f64 / self.bench_duration_s()
    }

    /// Adds one thread's statistics (call once per thread after the run).
    pub fn absorb(&mut self, thread: &ThreadStats) {
        self.stats.merge(thread);
    }

    /// Sum of the script weights.
    pub fn total_weight(&self) -> u64 {
        self.scripts.iter().map(|s| u64::from(s.weight)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::{TxOutcome, TxRecord};

    fn cfg() -> RunConfig {
        RunConfig {
            scale: 1,
            partitioning: None,
            query_mode: QueryMode::Extended,
            clients: 2,
            threads: 2,
            max_tries: 1,
            limit: RunLimit::Duration(5),
            rate: Some(50.0),
            latency_limit_us: None,
            progress_s: None,
            connect_per_tx: false,
            failures_detailed: true,
            per_command: true,
            continue_on_error: false,
            warmup_s: None,
            reconnect: false,
        }
    }

    #[test]
    fn layout_merge_and_json() {
        let scripts = vec![ScriptInfo {
            desc: b"x\xe9.sql".to_vec(),
            weight: 1,
            commands: vec![b"SELECT '\xe9';".to_vec(), b"\\sleep 1".to_vec()],
        }];
        let mut s = RunSummary::empty(cfg(), scripts);
        let layout = s.layout();
        assert_eq!(layout.commands_per_script, vec![2]);
        assert!(layout.throttled);
        assert!(s.config.latency_measured());
        let lf = s.config.log_format();
        assert!(lf.throttled && lf.failures_detailed && !lf.latency_limit);
        assert_eq!(lf.max_tries, 1);
        let mut t1 = ThreadStats::new(&layout);
        let mut t2 = ThreadStats::new(&layout);
        let rec = TxRecord {
            script: 0,
            outcome: TxOutcome::Success,
            latency_us: 1000.0,
            lag_us: 10.0,
            tries: 1,
        };
        t1.record_tx(&rec);
        t2.record_tx(&rec);
        t2.record_command(0, 1, 1_000_000.0);
        s.absorb(&t1);
        s.absorb(&t2);
        s.bench_duration_us = 2_000_000;
        assert_eq!(s.tps(), 1.0);
        assert_eq!(s.total_weight(), 1);
        assert_eq!(s.stats.scripts[0].commands[1].latency.count, 1);
        let json = serde_json::to_value(&s).unwrap_or_default();
        assert_eq!(json["config"]["query_mode"], "extended");
        assert_eq!(json["config"]["limit"]["duration"], 5);
        assert_eq!(json["stats"]["total"]["counters"]["successful"], 2);
        assert_eq!(json["stats"]["total"]["latency_hist"]["count"], 2);
        assert_eq!(json["scripts"][0]["commands"][1], "\\sleep 1");
        // Bytes that are not UTF-8 are replaced in JSON, as in the lossy accessors.
        assert_eq!(json["scripts"][0]["desc"], "x\u{fffd}.sql");
        assert_eq!(json["scripts"][0]["commands"][0], "SELECT '\u{fffd}';");
        assert_eq!(s.scripts[0].desc_lossy(), "x\u{fffd}.sql");
        let cmds: Vec<_> = s.scripts[0].commands_lossy().collect();
        assert_eq!(cmds, ["SELECT '\u{fffd}';", "\\sleep 1"]);
        assert_eq!(json["bench_duration_us"], 2_000_000);
    }
}
