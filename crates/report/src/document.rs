//! The JSON model of one run ([`RunDocument`], schema `schema/pgrush-run.v1.schema.json`):
//! everything the text report says, plus percentiles, a time series, HDR histograms, the
//! command line, versions, start time, server settings and client facts.
//!
//! It is both what `--json` writes and what `pgrush report` reads back (HTML rendering,
//! comparisons), so every field is plain data. Values that C would print as NaN are `null`.

use crate::hdr;
use crate::percentiles::{PercentileError, PercentileList, sparse_percentiles_ms};
use pgrush_stats::server::ServerTimeline;
use pgrush_stats::{CommandStats, IntervalStats, RunLimit, RunSummary, TxStats};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::document_distribution::Distribution;
use crate::document_distribution::finite;
pub use crate::document_figures::{Counts, PercentileValue, RawSums};
pub use crate::document_parts::{IntervalCommandDoc, IntervalLatencyDoc, IntervalScriptDoc};
pub use crate::document_stages::StageDoc;
pub use crate::document_targets::TargetDoc;
pub use crate::document_tpcc::{TpccDoc, TpccServerDoc};
pub use crate::utc_time::rfc3339_utc;

/// The `format` field of every document.
pub const FORMAT: &str = "pgrush-run";
/// The `format_version` written (the schema's major version).
pub const FORMAT_VERSION: u32 = 1;
/// The server settings recorded (those that shape benchmark results).
pub const SERVER_SETTINGS: [&str; 11] = [
    "shared_buffers",
    "max_connections",
    "synchronous_commit",
    "fsync",
    "wal_level",
    "full_page_writes",
    "checkpoint_timeout",
    "max_wal_size",
    "autovacuum",
    "default_transaction_isolation",
    "jit",
];

/// The query that reads [`SERVER_SETTINGS`]: one row per setting, `name` and the value as
/// `SHOW` prints it (with its unit).
pub fn server_settings_query() -> String {
    let names: Vec<String> = SERVER_SETTINGS.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "SELECT name, current_setting(name) FROM pg_catalog.pg_settings WHERE name IN ({}) ORDER BY name",
        names.join(", ")
    )
}

/// The client machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientInfo {
    /// `std::env::consts::OS` (`linux`, `macos`, …).
    pub os: String,
    /// A longer OS description when known (`/etc/os-release` `PRETTY_NAME`, kernel release).
    pub os_description: Option<String>,
    /// CPU architecture.
    pub arch: String,
    /// Number of CPUs available to pgrush.
    pub cpus: u32,
    /// Host name, when known.
    pub hostname: Option<String>,
}

impl ClientInfo {
    /// Facts about this machine.
    pub fn detect() -> Self {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let pretty = read("/etc/os-release").and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        });
        let kernel = read("/proc/sys/kernel/osrelease");
        let os_description = match (pretty, kernel) {
            (Some(p), Some(k)) => Some(format!("{p}, kernel {k}")),
            (p, k) => p.or(k),
        };
        ClientInfo {
            os: std::env::consts::OS.to_string(),
            os_description,
            arch: std::env::consts::ARCH.to_string(),
            cpus: std::thread::available_parallelism()
                .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
                .unwrap_or(1),
            hostname: read("/proc/sys/kernel/hostname").or_else(|| read("/etc/hostname")),
        }
    }
}

/// The server, as seen from the setup connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `server_version`.
    pub version: String,
    /// `server_version_num`.
    pub version_num: u32,
    /// [`SERVER_SETTINGS`] that could be read, by name.
    pub settings: BTreeMap<String, String>,
}

/// What the run itself does not know: supplied by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct RunContext {
    /// The command line, `argv[0]` included.
    pub command_line: Vec<String>,
    /// Start of the run, Unix time in µs.
    pub start_time_unix_us: i64,
    /// The server, if its facts could be read.
    pub server: Option<ServerInfo>,
    /// The client machine.
    pub client: ClientInfo,
    /// The percentiles to report.
    pub percentiles: PercentileList,
    /// Warnings about the run's meaningfulness (see [`crate::warnings`]).
    pub warnings: Vec<String>,
}

/// The run's configuration (the report's header lines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigDoc {
    /// `transaction type:` (invalid UTF-8 replaced by U+FFFD).
    pub transaction_type: String,
    /// `scaling factor:`.
    pub scale: i64,
    /// `partition method:` (`range`/`hash`), when partitioned.
    pub partition_method: Option<String>,
    /// `partitions:`, when partitioned.
    pub partitions: Option<i32>,
    /// `query mode:`.
    pub query_mode: String,
    /// `number of clients:`.
    pub clients: u32,
    /// `number of threads:`.
    pub threads: u32,
    /// `maximum number of tries:` (0 = unlimited).
    pub max_tries: u32,
    /// `-t`.
    pub transactions_per_client: Option<u32>,
    /// `-T`.
    pub duration_s: Option<u32>,
    /// `-R` (tps).
    pub rate_tps: Option<f64>,
    /// `-L` (ms).
    pub latency_limit_ms: Option<f64>,
    /// `-P` (s).
    pub progress_s: Option<u32>,
    /// `-C`.
    pub connect_per_transaction: bool,
    /// `--failures-detailed`.
    pub failures_detailed: bool,
    /// `-r`.
    pub per_command: bool,
    /// `--continue-on-error` (PostgreSQL 19; written only when set).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continue_on_error: bool,
    /// `--warmup` (s): the clients ran the workload this long before the measured run
    /// (which `start_time` and the time series start after), nothing of it counted
    /// (written only when given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<u32>,
    /// `--reconnect` (written only when given): lost connections are connection
    /// failures and the clients reconnect.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reconnect: bool,
}

/// The report's result lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsDoc {
    /// Transaction counts.
    pub transactions: Counts,
    /// `-t` × clients, the denominator of `actually processed` with `-t`.
    pub expected_transactions: Option<i64>,
    /// Successful transactions above the `-L` limit.
    pub late: u64,
    /// Benchmark duration (s).
    pub duration_s: f64,
    /// `tps =`.
    pub tps: Option<f64>,
    /// `latency average =` (ms).
    pub latency_average_ms: Option<f64>,
    /// `latency stddev =` (ms), printed only when latency is measured per transaction.
    pub latency_stddev_ms: Option<f64>,
    /// The average includes failures (`(including failures)`).
    pub latency_average_includes_failures: bool,
    /// `rate limit schedule lag: avg` (ms).
    pub lag_average_ms: Option<f64>,
    /// `rate limit schedule lag: (max …)` (ms).
    pub lag_max_ms: Option<f64>,
    /// `initial connection time =` (ms; without `-C`).
    pub initial_connection_time_ms: Option<f64>,
    /// `average connection time =` (ms; with `-C`).
    pub average_connection_time_ms: Option<f64>,
    /// A client aborted.
    pub aborted: bool,
    /// Interrupted by a signal.
    pub interrupted: bool,
    /// Time spent connecting with `-C`, summed over every connection (µs): what
    /// `average_connection_time_ms` divides, kept for exact merging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_time_total_us: Option<u64>,
}

/// Per-command statistics (`-r`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandDoc {
    /// Command text as in the `-r` report (the script's bytes as UTF-8, invalid bytes
    /// replaced by U+FFFD: the document is UTF-8 JSON).
    pub text: String,
    /// Completed executions.
    pub executions: u64,
    /// Average latency (ms; 0 when never executed, as the report prints).
    pub average_ms: f64,
    /// Failures attributed to the command.
    pub failures: u64,
    /// Retries attributed to the command.
    pub retries: u64,
    /// Latency distribution.
    pub latency: Option<Distribution>,
}

/// Per-script statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptDoc {
    /// Description (`<builtin: …>` or file name; invalid UTF-8 replaced by U+FFFD).
    pub description: String,
    /// Weight.
    pub weight: u32,
    /// Transaction counts.
    pub transactions: Counts,
    /// Successful transactions per second.
    pub tps: Option<f64>,
    /// Latency of successful transactions.
    pub latency: Option<Distribution>,
    /// Commands (with statistics only when `per_command`).
    pub commands: Vec<CommandDoc>,
}

/// One interval of the time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalDoc {
    /// Start, seconds from the run's start (before the initial connections, as `-P`).
    pub start_s: f64,
    /// Benchmark time in the interval (s): the first one excludes the initial connection
    /// time, the last one ends with the run.
    pub duration_s: f64,
    /// Transactions by outcome.
    pub transactions: Counts,
    /// Successful transactions per second.
    pub tps: f64,
    /// Average latency (ms).
    pub latency_average_ms: Option<f64>,
    /// Latency stddev (ms).
    pub latency_stddev_ms: Option<f64>,
    /// Latency percentiles, at 2 significant digits (per-interval histograms are kept
    /// compact); empty without successful transactions.
    pub latency_percentiles: Vec<PercentileValue>,
    /// Average schedule lag (ms; `-R`).
    pub lag_average_ms: Option<f64>,
    /// Maximum schedule lag (ms; `-R`).
    pub lag_max_ms: Option<f64>,
    /// Raw latency figures of the successful transactions, for exact merging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_sums: Option<RawSums>,
    /// Raw schedule lag figures (`-R`), for exact merging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_sums: Option<RawSums>,
    /// The interval's latency histogram at 2 significant digits (HDR V2 compressed,
    /// base64, µs), for exact merging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<String>,
    /// Per script, by script index: the scripts that ended a transaction in the interval
    /// (absent in documents of older pgrush versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<IntervalScriptDoc>,
    /// Per command (`-r`), by script and command index: the commands that ran or failed
    /// in the interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<IntervalCommandDoc>,
}

/// The time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeSeriesDoc {
    /// Interval length (s).
    pub interval_s: f64,
    /// Intervals from the start.
    pub intervals: Vec<IntervalDoc>,
}

impl IntervalDoc {
    /// Where a chart places the interval: its middle (s).
    pub fn mid_s(&self) -> f64 {
        self.start_s + self.duration_s / 2.0
    }
}

impl TimeSeriesDoc {
    /// The intervals worth charting: a last interval of a few milliseconds gives a
    /// meaningless rate, so only those covering at least half their length (all of them
    /// if none does).
    pub fn chartable(&self) -> Vec<&IntervalDoc> {
        let full = |i: &&IntervalDoc| i.duration_s >= self.interval_s / 2.0;
        if self.intervals.iter().any(|i| full(&i)) {
            self.intervals.iter().filter(full).collect()
        } else {
            self.intervals.iter().collect()
        }
    }
}

/// One run, as `--json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// pgrush's version.
    pub pgrush_version: String,
    /// The pgbench version whose behaviour pgrush reproduces.
    pub pgbench_compatible_version: String,
    /// The command line.
    pub command_line: Vec<String>,
    /// Start time, RFC 3339 (UTC).
    pub start_time: String,
    /// Start time, Unix seconds.
    pub start_time_unix: f64,
    /// The client machine.
    pub client: ClientInfo,
    /// The server.
    pub server: Option<ServerInfo>,
    /// Configuration.
    pub config: ConfigDoc,
    /// Results.
    pub results: ResultsDoc,
    /// The percentiles reported.
    pub percentiles: Vec<f64>,
    /// Latency of successful transactions.
    pub latency: Option<Distribution>,
    /// Schedule lag (`-R`).
    pub lag: Option<Distribution>,
    /// Per script.
    pub scripts: Vec<ScriptDoc>,
    /// Per interval.
    pub time_series: Option<TimeSeriesDoc>,
    /// Warnings about the meaningfulness of the numbers.
    pub warnings: Vec<String>,
    /// pgbench's text report as printed (from `transaction type:` on); script names and
    /// command texts that are not UTF-8 have their invalid bytes replaced by U+FFFD.
    pub report_text: String,
    /// What the server was doing (`--server-stats`; absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats: Option<ServerTimeline>,
    /// The client machine's own load per interval (absent without a time series, in a
    /// merged run, or where `/proc` cannot be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::machine::MachineDoc>,
    /// The verdicts of `--assert`, in command-line order (absent without `--assert`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertions: Option<Vec<crate::assertion::Verdict>>,
    /// This run's place in a sharded benchmark (absent when the run is not a shard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardDoc>,
    /// The shards this run was merged from (`pgrush merge`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<crate::merge::MergedDoc>,
    /// A run in stages (`--stage`, `--stages`): each stage and its summary (absent
    /// without stages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageDoc>>,
    /// `--workload tpcc`: NOPM and TPM, the clients' and the server's (written only for
    /// such a run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<TpccDoc>,
    /// `--reconnect`'s outage windows and client outages (absent without the option
    /// or when no connection was lost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outages: Option<crate::outage::OutagesDoc>,
    /// `--target`: the transactions of each server the scripts went to (absent
    /// without the option).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<TargetDoc>>,
}

/// One shard of a benchmark run as several pgrush processes (`--shard INDEX/COUNT` or a
/// launcher's environment): what `pgrush merge` needs to check that shards belong together
/// and to place them on one time line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardDoc {
    /// This shard's index, `0..count`.
    pub index: u32,
    /// The number of shards.
    pub count: u32,
    /// Where the index came from: `option`, `slurm`, `mpi` or `kubernetes`.
    pub source: String,
    /// The global id of this shard's first client (`index × clients`).
    pub first_client: u32,
    /// Clients in the whole benchmark (`count × clients`).
    pub clients_total: u32,
    /// Identity of the benchmark, equal in every shard of one run: a hex digest of the
    /// workload (scripts and their weights, the options that shape the workload, the
    /// server's identity) and of the agreed start instant.
    pub benchmark_id: String,
    /// The agreed start instant of the measured interval (Unix µs, server clock).
    pub start_unix_us: i64,
    /// This client's clock minus the server's (ms), estimated from round trips.
    pub clock_offset_ms: f64,
    /// Half the round trip of the best offset probe (ms): the offset's uncertainty.
    pub clock_offset_uncertainty_ms: f64,
    /// How the shards were started together: `barrier` (through the database) or `start_at`.
    pub start_method: String,
}

impl RunDocument {
    /// Builds the document of a finished run.
    pub fn build(sum: &RunSummary, ctx: &RunContext) -> Self {
        let list = &ctx.percentiles;
        let total = &sum.stats.total;
        let start = ctx.start_time_unix_us;
        RunDocument {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            pgrush_version: env!("CARGO_PKG_VERSION").to_string(),
            pgbench_compatible_version: crate::text::CLIENT_VERSION.to_string(),
            command_line: ctx.command_line.clone(),
            start_time: rfc3339_utc(start),
            start_time_unix: start as f64 / 1e6,
            client: ctx.client.clone(),
            server: ctx.server.clone(),
            config: config_doc(sum),
            results: results_doc(sum),
            percentiles: list.values().to_vec(),
            latency: Distribution::build(&total.latency, &total.latency_hist, list),
            lag: total
                .lag_hist
                .as_ref()
                .and_then(|h| Distribution::build(&total.lag, h, list)),
            scripts: script_docs(sum, list),
            time_series: time_series_doc(sum, list),
            warnings: ctx.warnings.clone(),
            report_text: crate::text::render_report_lossy(sum),
            server_stats: None,
            machine: None,
            assertions: None,
            shard: None,
            merged: None,
            stages: crate::document_stages::stage_docs(sum, list),
            tpcc: None,
            outages: crate::outage::outages_doc(sum),
            targets: crate::document_targets::target_docs(sum, list),
        }
    }

    /// Pretty-printed JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string());
        s.push('\n');
        s
    }
}

/// A document that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// Not JSON of the expected shape.
    #[error("not a pgrush run: {0}")]
    Json(String),
    /// Another `format`.
    #[error("not a pgrush run: format is \"{0}\"")]
    Format(String),
    /// An unknown `format_version`.
    #[error("unsupported pgrush run format version {0}")]
    Version(u32),
    /// A percentile out of range in the named field.
    #[error("\"{0}\": {1}")]
    Percentile(&'static str, PercentileError),
    /// A histogram that cannot be read back (`field` is its JSON path).
    #[error("latency histogram \"{field}\": {error}")]
    Histogram {
        /// Where it is, e.g. `scripts[0].latency.hdr_histogram`.
        field: String,
        /// Why it cannot be read.
        error: hdr::HdrError,
    },
}

/// The report's result lines: counts, tps, latency average and stddev (or the average
/// derived from the duration when latency is not measured), schedule lag, connection time.
fn results_doc(sum: &RunSummary) -> ResultsDoc {
    let cfg = &sum.config;
    let total = &sum.stats.total;
    let c = &total.counters;
    let duration_s = sum.bench_duration_s();
    let measured = cfg.latency_measured();
    let (avg, stddev) = if measured {
        (
            finite(total.latency.mean() / 1000.0),
            finite(total.latency.stddev() / 1000.0),
        )
    } else {
        let avg = 0.001 * sum.bench_duration_us as f64 * f64::from(cfg.clients) / c.total() as f64;
        (finite(avg), None)
    };
    let lag_on = cfg.rate.is_some();
    ResultsDoc {
        transactions: Counts::of(c),
        expected_transactions: match cfg.limit {
            RunLimit::Transactions(t) => Some(i64::from(t) * i64::from(cfg.clients)),
            RunLimit::Duration(_) => None,
        },
        late: total.late,
        duration_s,
        tps: finite(c.successful as f64 / duration_s),
        latency_average_ms: avg,
        latency_stddev_ms: stddev,
        latency_average_includes_failures: !measured && c.failed() > 0,
        lag_average_ms: lag_on
            .then(|| finite(0.001 * total.lag.sum / c.successful as f64))
            .flatten(),
        lag_max_ms: lag_on.then_some(0.001 * total.lag.max),
        initial_connection_time_ms: (!cfg.connect_per_tx)
            .then_some(0.001 * sum.initial_connection_us as f64),
        average_connection_time_ms: cfg
            .connect_per_tx
            .then(|| {
                finite(0.001 * sum.stats.conn_time_us as f64 / (c.successful + c.failed()) as f64)
            })
            .flatten(),
        aborted: sum.aborted,
        interrupted: sum.interrupted,
        connection_time_total_us: cfg.connect_per_tx.then_some(sum.stats.conn_time_us),
    }
}

/// One document per script: its counts, tps, latency distribution and commands (with
/// statistics only under `-r`); a script without statistics counts nothing.
fn script_docs(sum: &RunSummary, list: &PercentileList) -> Vec<ScriptDoc> {
    let per_command = sum.config.per_command;
    let duration_s = sum.bench_duration_s();
    sum.scripts
        .iter()
        .enumerate()
        .map(|(i, info)| {
            let st = sum.stats.scripts.get(i);
            let empty_tx;
            let tx: &TxStats = match st {
                Some(s) => &s.tx,
                None => {
                    empty_tx = TxStats::new(false);
                    &empty_tx
                }
            };
            let commands = info
                .commands_lossy()
                .enumerate()
                .map(|(j, text)| {
                    let cs = st.and_then(|s| s.commands.get(j));
                    command_doc(&text, cs, per_command, list)
                })
                .collect();
            ScriptDoc {
                description: info.desc_lossy().into_owned(),
                weight: info.weight,
                transactions: Counts::of(&tx.counters),
                tps: finite(tx.counters.successful as f64 / duration_s),
                latency: Distribution::build(&tx.latency, &tx.latency_hist, list),
                commands,
            }
        })
        .collect()
}

fn command_doc(
    text: &str,
    cs: Option<&CommandStats>,
    per_command: bool,
    list: &PercentileList,
) -> CommandDoc {
    match cs {
        Some(c) if per_command => CommandDoc {
            text: text.to_string(),
            executions: c.latency.count,
            average_ms: c.average_ms(),
            failures: c.failures,
            retries: c.retries,
            latency: Distribution::build(&c.latency, &c.latency_hist.to_histogram(), list),
        },
        _ => CommandDoc {
            text: text.to_string(),
            executions: 0,
            average_ms: 0.0,
            failures: 0,
            retries: 0,
            latency: None,
        },
    }
}

fn config_doc(sum: &RunSummary) -> ConfigDoc {
    let cfg = &sum.config;
    ConfigDoc {
        transaction_type: match sum.scripts.as_slice() {
            [only] => only.desc_lossy().into_owned(),
            _ => "multiple scripts".to_string(),
        },
        scale: cfg.scale,
        partition_method: cfg.partitioning.map(|p| p.method.as_str().to_string()),
        partitions: cfg.partitioning.map(|p| p.count),
        query_mode: cfg.query_mode.as_str().to_string(),
        clients: cfg.clients,
        threads: cfg.threads,
        max_tries: cfg.max_tries,
        transactions_per_client: match cfg.limit {
            RunLimit::Transactions(t) => Some(t),
            RunLimit::Duration(_) => None,
        },
        duration_s: match cfg.limit {
            RunLimit::Duration(d) => Some(d),
            RunLimit::Transactions(_) => None,
        },
        rate_tps: cfg.rate,
        latency_limit_ms: cfg.latency_limit_us.map(|us| us / 1000.0),
        progress_s: cfg.progress_s,
        connect_per_transaction: cfg.connect_per_tx,
        failures_detailed: cfg.failures_detailed,
        per_command: cfg.per_command,
        continue_on_error: cfg.continue_on_error,
        warmup_s: cfg.warmup_s,
        reconnect: cfg.reconnect,
    }
}

/// Where an interval lies and what its series records.
#[derive(Clone, Copy)]
struct IntervalPlace {
    start_s: f64,
    duration_s: f64,
    throttled: bool,
    scripts: usize,
}

fn interval_doc(iv: &IntervalStats, place: &IntervalPlace, list: &PercentileList) -> IntervalDoc {
    let IntervalPlace {
        start_s,
        duration_s,
        throttled,
        scripts,
    } = *place;
    let pct =
        sparse_percentiles_ms(&iv.latency_hist, list, Some(iv.latency.max)).unwrap_or_default();
    let has = iv.latency.count > 0;
    IntervalDoc {
        start_s,
        duration_s,
        transactions: Counts::of(&iv.counters),
        tps: if duration_s > 0.0 {
            iv.counters.successful as f64 / duration_s
        } else {
            0.0
        },
        latency_average_ms: has.then(|| iv.latency.mean() / 1000.0),
        latency_stddev_ms: has.then(|| finite(iv.latency.stddev() / 1000.0)).flatten(),
        latency_percentiles: list
            .values()
            .iter()
            .zip(pct)
            .map(|(&p, ms)| PercentileValue { p, ms })
            .collect(),
        lag_average_ms: (throttled && has).then(|| iv.lag.mean() / 1000.0),
        lag_max_ms: (throttled && has).then(|| iv.lag.max / 1000.0),
        latency_sums: Some(RawSums::of(&iv.latency)),
        lag_sums: throttled.then(|| RawSums::of(&iv.lag)),
        latency_histogram: has.then(|| hdr::encode_sparse(&iv.latency_hist)),
        scripts: crate::document_parts::script_docs(iv, scripts, duration_s, list),
        commands: crate::document_parts::command_docs(iv, list),
    }
}

fn time_series_doc(sum: &RunSummary, list: &PercentileList) -> Option<TimeSeriesDoc> {
    // The series starts with the run (before the initial connections); the benchmark
    // proper covers [initial connection time, initial connection time + duration].
    let bench_start_s = if sum.config.connect_per_tx {
        0.0
    } else {
        sum.initial_connection_us as f64 / 1e6
    };
    time_series_doc_from(sum, list, bench_start_s)
}

/// The time series of `sum`, whose benchmark proper starts `bench_start_s` after the
/// series' origin (0 for a merged run: its series starts with the measured interval).
pub(crate) fn time_series_doc_from(
    sum: &RunSummary,
    list: &PercentileList,
    bench_start_s: f64,
) -> Option<TimeSeriesDoc> {
    let series = sum.stats.series.as_ref()?;
    let interval_s = series.interval_us as f64 / 1e6;
    let end_s = bench_start_s + sum.bench_duration_s();
    let docs = series
        .intervals()
        .iter()
        .enumerate()
        .map(|(i, iv)| {
            let start = i as f64 * interval_s;
            let from = start.max(bench_start_s);
            let to = (start + interval_s).min(end_s);
            let place = IntervalPlace {
                start_s: start,
                duration_s: if to > from { to - from } else { interval_s },
                throttled: series.throttled,
                scripts: sum.scripts.len(),
            };
            interval_doc(iv, &place, list)
        })
        .collect();
    Some(TimeSeriesDoc {
        interval_s,
        intervals: docs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_query_names_every_setting() {
        let q = server_settings_query();
        for s in SERVER_SETTINGS {
            assert!(q.contains(&format!("'{s}'")), "{s}");
        }
    }
}
