//! The final text report, line for line as pgbench 18 prints it (stdout), and the banner.
//! Where 18 and 19 differ (`--continue-on-error` and the failure lines) it is pgbench 19's.

use crate::textbuf::TextBuf;
use pgrush_stats::{
    RunConfig, RunLimit, RunSummary, SimpleStats, StageSummary, TxCounters, TxStats,
};
use std::fmt::Write as _;
use std::io::{self, Write};

/// The client version pgrush reports: pgrush reproduces pgbench 18.6, so the banner reads
/// `pgrush (18.6, server …)`, exactly like pgbench 18.6 with the program name replaced.
pub const CLIENT_VERSION: &str = "18.6";
/// [`CLIENT_VERSION`] as a `server_version_num`-style number; the banner omits the server
/// version when the server's number equals it.
pub const CLIENT_VERSION_NUM: u32 = 180_006;
/// The program name printed in the banner.
pub const PROGRAM_NAME: &str = "pgrush";
/// The error printed (after `pgrush: error: `, on stderr) after the report when a client aborted.
pub const ABORTED_MESSAGE: &str = "Run was aborted; the above results are incomplete.";

/// The banner line, without newline: `pgrush (18.6)` when the server's version number equals
/// ours, else `pgrush (18.6, server <server_version>)`. An empty `server_version` is replaced
/// by the number formatted as `major.minor` (≥ 10) or `major.minor.patch` (older).
pub fn banner(server_version_num: u32, server_version: &str) -> String {
    if server_version_num == CLIENT_VERSION_NUM {
        return format!("{PROGRAM_NAME} ({CLIENT_VERSION})");
    }
    let version = if server_version.is_empty() {
        format_version_number(server_version_num)
    } else {
        server_version.to_string()
    };
    format!("{PROGRAM_NAME} ({CLIENT_VERSION}, server {version})")
}

fn format_version_number(num: u32) -> String {
    if num >= 100_000 {
        format!("{}.{}", num / 10_000, num % 10_000)
    } else {
        format!("{}.{}.{}", num / 10_000, num / 100 % 100, num % 100)
    }
}

/// Writes the whole report (from `transaction type:` on), as bytes: script names and
/// command texts are printed raw, as pgbench prints them.
pub fn write_report(summary: &RunSummary, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(&render_report(summary))
}

/// pgrush's own line after pgbench's report when the run had a `--warmup` (pgbench has
/// no such option, so its report stays byte for byte without one).
pub fn warmup_line(config: &RunConfig) -> Option<String> {
    config
        .warmup_s
        .map(|w| format!("warm-up: {w} s before the measured duration, not counted\n"))
}

/// Returns the report's bytes (see [`write_report`]).
pub fn render_report(summary: &RunSummary) -> Vec<u8> {
    let mut r = TextBuf::default();
    push_report(&mut r, summary);
    r.out
}

/// The report as text, bytes that are not UTF-8 (in script names or command texts)
/// replaced by U+FFFD: for documents that must be UTF-8 (JSON, HTML).
pub fn render_report_lossy(summary: &RunSummary) -> String {
    crate::textbuf::into_lossy(render_report(summary))
}

/// `100 * part / whole` as C computes it with doubles (NaN when both are 0).
pub(crate) fn pct(part: u64, whole: u64) -> f64 {
    100.0 * part as f64 / whole as f64
}

pub(crate) fn push_count_pct(s: &mut TextBuf, label: &str, count: u64, whole: u64) {
    let _ = write!(s, "{label}: {count} (");
    s.fixed(pct(count, whole), 3);
    s.str("%)\n");
}

/// pgbench's `printSimpleStats`: average and stddev in ms, only when something was recorded.
pub(crate) fn push_simple_stats(s: &mut TextBuf, prefix: &str, st: &SimpleStats) {
    if st.count == 0 {
        return;
    }
    let _ = write!(s, "{prefix} average = ");
    s.fixed(0.001 * st.mean(), 3);
    let _ = write!(s, " ms\n{prefix} stddev = ");
    s.fixed(0.001 * st.stddev(), 3);
    s.str(" ms\n");
}

/// The whole final report: the run's settings, then (when some transaction ended) the
/// failure and retry counts, latency, connection time and tps, then the per-script blocks.
fn push_report(s: &mut TextBuf, sum: &RunSummary) {
    push_settings(s, sum);
    // pgbench 18: nothing more when no transaction ended at all.
    let total_cnt = sum.stats.total.counters.total();
    if total_cnt == 0 {
        return;
    }
    push_failure_counts(s, &sum.config, &sum.stats.total, total_cnt);
    let latency = Latency {
        measured: sum.config.latency_measured(),
        duration_us: sum.bench_duration_us,
    };
    push_latency(s, &sum.config, &sum.stats.total, latency, total_cnt);
    push_connection_time_and_tps(s, sum);
    push_script_blocks(s, sum, total_cnt, sum.bench_duration_s());
    push_target_blocks(s, sum, total_cnt);
    for (i, stage) in sum.stages.iter().enumerate() {
        push_stage(s, &sum.config, i + 1, stage);
    }
    crate::outage::push_outages(s, sum);
}

/// A stage of a run in stages: its header, then the report's lines for the
/// transactions scheduled in it (counts, failures, latency, lag, tps).
fn push_stage(s: &mut TextBuf, cfg: &RunConfig, number: usize, stage: &StageSummary) {
    s.str(&stage.stage.header(number));
    s.str("\n");
    let total = &stage.stats.total;
    let _ = writeln!(
        s,
        "number of transactions actually processed: {}",
        total.counters.successful
    );
    let total_cnt = total.counters.total();
    if total_cnt == 0 {
        return;
    }
    // A closed-loop stage of a throttled run has no schedule, so no lag line.
    let unthrottled;
    let cfg = if stage.stage.closed_loop() {
        unthrottled = RunConfig {
            rate: None,
            ..cfg.clone()
        };
        &unthrottled
    } else {
        cfg
    };
    push_failure_counts(s, cfg, total, total_cnt);
    // The engine measures every latency; a stage's clients vary, so the average
    // derived from the duration and `-c` would not be its.
    let latency = Latency {
        measured: true,
        duration_us: stage.duration_us(),
    };
    push_latency(s, cfg, total, latency, total_cnt);
    s.str("tps = ");
    s.fixed(stage.tps(), 6);
    s.str("\n");
}

/// The header lines: transaction type, scale, partitioning, query mode, clients, threads,
/// maximum tries, the run limit and the number of transactions actually processed.
fn push_settings(s: &mut TextBuf, sum: &RunSummary) {
    let cfg = &sum.config;
    let c = &sum.stats.total.counters;
    s.str("transaction type: ");
    match sum.scripts.as_slice() {
        [only] => s.bytes(&only.desc),
        _ => s.str("multiple scripts"),
    }
    s.str("\n");
    let _ = writeln!(s, "scaling factor: {}", cfg.scale);
    if let Some(p) = &cfg.partitioning {
        let _ = writeln!(
            s,
            "partition method: {}\npartitions: {}",
            p.method.as_str(),
            p.count
        );
    }
    let _ = writeln!(s, "query mode: {}", cfg.query_mode.as_str());
    let _ = writeln!(s, "number of clients: {}", cfg.clients);
    let _ = writeln!(s, "number of threads: {}", cfg.threads);
    if cfg.max_tries != 0 {
        let _ = writeln!(s, "maximum number of tries: {}", cfg.max_tries);
    }
    match cfg.limit {
        RunLimit::Transactions(per_client) => {
            let _ = writeln!(s, "number of transactions per client: {per_client}");
            let expected = i64::from(per_client) * i64::from(cfg.clients);
            let _ = writeln!(
                s,
                "number of transactions actually processed: {}/{expected}",
                c.successful
            );
        }
        RunLimit::Duration(secs) => {
            let _ = writeln!(s, "duration: {secs} s");
            let _ = writeln!(
                s,
                "number of transactions actually processed: {}",
                c.successful
            );
        }
    }
}

/// The failed transactions (with their kinds when `--failures-detailed`), retries, skipped
/// transactions and those above the latency limit, out of `total_cnt` ended transactions.
fn push_failure_counts(s: &mut TextBuf, cfg: &RunConfig, total: &TxStats, total_cnt: u64) {
    let c = &total.counters;
    push_count_pct(s, "number of failed transactions", c.failed(), total_cnt);
    if cfg.failures_detailed {
        push_failure_kinds(s, "", total, total_cnt);
    }
    push_connection_failures(s, "", cfg, c, total_cnt);
    if cfg.max_tries != 1 {
        push_count_pct(s, "number of transactions retried", c.retried, total_cnt);
        let _ = writeln!(s, "total number of retries: {}", c.retries);
    }
    if cfg.rate.is_some() && cfg.latency_limit_us.is_some() {
        push_count_pct(s, "number of transactions skipped", c.skipped, total_cnt);
    }
    if let Some(limit_us) = cfg.latency_limit_us {
        s.str("number of transactions above the ");
        s.fixed(limit_us / 1000.0, 1);
        let _ = write!(s, " ms latency limit: {}/{} (", total.late, c.successful);
        let p = if c.successful > 0 {
            pct(total.late, c.successful)
        } else {
            0.0
        };
        s.fixed(p, 3);
        s.str("%)\n");
    }
}

/// The latency lines: measured average and stddev, or the average derived from the run's
/// duration when latencies were not measured; then the rate limit schedule lag.
fn push_latency(
    s: &mut TextBuf,
    cfg: &RunConfig,
    total: &TxStats,
    Latency {
        measured,
        duration_us,
    }: Latency,
    total_cnt: u64,
) {
    let c = &total.counters;
    if measured {
        push_simple_stats(s, "latency", &total.latency);
    } else {
        s.str("latency average = ");
        let avg = 0.001 * duration_us as f64 * f64::from(cfg.clients) / total_cnt as f64;
        s.fixed(avg, 3);
        s.str(" ms");
        if c.failed() > 0 {
            s.str(" (including failures)");
        }
        s.str("\n");
    }
    if cfg.rate.is_some() {
        s.str("rate limit schedule lag: avg ");
        s.fixed(0.001 * total.lag.sum / c.successful as f64, 3);
        s.str(" (max ");
        s.fixed(0.001 * total.lag.max, 3);
        s.str(") ms\n");
    }
}

/// How the latency lines are made: from measured latencies, or derived from the
/// duration (µs) of what is reported.
#[derive(Clone, Copy)]
struct Latency {
    measured: bool,
    duration_us: u64,
}

/// The average (per-transaction) or initial connection time, then tps.
fn push_connection_time_and_tps(s: &mut TextBuf, sum: &RunSummary) {
    let c = &sum.stats.total.counters;
    let tps = c.successful as f64 / sum.bench_duration_s();
    if sum.config.connect_per_tx {
        s.str("average connection time = ");
        let denom = (c.successful + c.failed()) as f64;
        s.fixed(0.001 * sum.stats.conn_time_us as f64 / denom, 3);
        s.str(" ms\ntps = ");
        s.fixed(tps, 6);
        s.str(" (including reconnection times)\n");
    } else {
        s.str("initial connection time = ");
        s.fixed(0.001 * sum.initial_connection_us as f64, 3);
        s.str(" ms\ntps = ");
        s.fixed(tps, 6);
        s.str(" (without initial connection time)\n");
    }
}

/// pgrush's own line with `--reconnect` (whatever `--failures-detailed` says): the
/// transactions that lost their connection, out of `whole`.
fn push_connection_failures(
    s: &mut TextBuf,
    prefix: &str,
    cfg: &RunConfig,
    c: &TxCounters,
    whole: u64,
) {
    if cfg.reconnect {
        let label = format!("{prefix}number of connection failures");
        push_count_pct(s, &label, c.connection_failures, whole);
    }
}

/// The `--failures-detailed` lines, out of `whole` ended transactions: serialization,
/// deadlock and other failures. pgbench 19 always prints the third (other failures come
/// with `--continue-on-error`); pgbench 18 has no such line.
fn push_failure_kinds(s: &mut TextBuf, prefix: &str, st: &TxStats, whole: u64) {
    let c = &st.counters;
    let mut label = String::with_capacity(48);
    for (name, count) in [
        ("serialization", c.serialization_failures),
        ("deadlock", c.deadlock_failures),
        ("other", c.other_failures),
    ] {
        label.clear();
        let _ = write!(label, "{prefix}number of {name} failures");
        push_count_pct(s, &label, count, whole);
    }
}

fn push_script_blocks(s: &mut TextBuf, sum: &RunSummary, total_cnt: u64, bench_duration: f64) {
    let cfg = &sum.config;
    let per_script = sum.scripts.len() > 1;
    if !per_script && !cfg.per_command {
        return;
    }
    let total_weight = sum.total_weight();
    for (i, info) in sum.scripts.iter().enumerate() {
        let st = sum.stats.scripts.get(i);
        if per_script {
            let empty;
            let tx = match st {
                Some(st) => &st.tx,
                None => {
                    empty = TxStats::new(false);
                    &empty
                }
            };
            let c = &tx.counters;
            let script_total = c.total();
            let _ = write!(s, "SQL script {}: ", i + 1);
            s.bytes(&info.desc);
            s.str("\n");
            let _ = write!(s, " - weight: {} (targets ", info.weight);
            s.fixed(pct(u64::from(info.weight), total_weight), 1);
            s.str("% of total)\n");
            if push_share_of_total(s, " - ", c, total_cnt, bench_duration) {
                if cfg.failures_detailed {
                    push_failure_kinds(s, " - ", tx, script_total);
                }
                push_connection_failures(s, " - ", cfg, c, script_total);
                if cfg.max_tries != 1 {
                    push_count_pct(
                        s,
                        " - number of transactions retried",
                        c.retried,
                        script_total,
                    );
                    let _ = writeln!(s, " - total number of retries: {}", c.retries);
                }
                if cfg.rate.is_some() && cfg.latency_limit_us.is_some() {
                    push_count_pct(
                        s,
                        " - number of transactions skipped",
                        c.skipped,
                        script_total,
                    );
                }
            }
            push_simple_stats(s, " - latency", &tx.latency);
        }
        if cfg.per_command {
            push_command_block(s, sum, i, per_script);
        }
    }
}

fn push_command_block(s: &mut TextBuf, sum: &RunSummary, script: usize, per_script: bool) {
    let max_tries = sum.config.max_tries;
    let _ = writeln!(
        s,
        "{}statement latencies in milliseconds{}:",
        if per_script { " - " } else { "" },
        if max_tries == 1 {
            " and failures"
        } else {
            ", failures and retries"
        }
    );
    let Some(info) = sum.scripts.get(script) else {
        return;
    };
    let stats = sum.stats.scripts.get(script);
    for (j, text) in info.commands.iter().enumerate() {
        let cmd = stats.and_then(|st| st.commands.get(j));
        let (avg, failures, retries) = match cmd {
            Some(c) => (c.average_ms(), c.failures, c.retries),
            None => (0.0, 0, 0),
        };
        s.str("   ");
        s.fixed_width(avg, 11, 3);
        s.str("  ");
        s.int_width(i64::try_from(failures).unwrap_or(i64::MAX), 10);
        if max_tries != 1 {
            s.str(" ");
            s.int_width(i64::try_from(retries).unwrap_or(i64::MAX), 10);
        }
        s.str(" ");
        s.bytes(text);
        s.str("\n");
    }
}

/// The lines of a part of the run (a script, a target), each after `indent`: its
/// transactions and their share of the run's `total_cnt`, then, when it has any, those
/// processed with their tps over `duration_s` and the failed ones. Returns whether it
/// had any.
fn push_share_of_total(
    s: &mut TextBuf,
    indent: &str,
    c: &TxCounters,
    total_cnt: u64,
    duration_s: f64,
) -> bool {
    let total = c.total();
    let _ = write!(s, "{indent}{total} transactions (");
    s.fixed(pct(total, total_cnt), 1);
    s.str("% of total)\n");
    if total == 0 {
        return false;
    }
    let _ = write!(
        s,
        "{indent}number of transactions actually processed: {} (tps = ",
        c.successful
    );
    s.fixed(c.successful as f64 / duration_s, 6);
    s.str(")\n");
    push_count_pct(
        s,
        &format!("{indent}number of failed transactions"),
        c.failed(),
        total,
    );
    true
}

/// The text report's `per target:` block (nothing without targets).
pub(crate) fn push_target_blocks(s: &mut TextBuf, sum: &RunSummary, total_cnt: u64) {
    if sum.targets.is_empty() {
        return;
    }
    let duration_s = sum.bench_duration_s();
    s.str("per target:\n");
    for (i, target) in sum.targets.iter().enumerate() {
        let tx = sum.target_stats(target);
        let c = &tx.counters;
        let scripts: Vec<String> = target.scripts.iter().map(|k| (k + 1).to_string()).collect();
        let _ = writeln!(
            s,
            " - target {}: {} (SQL script {})",
            i + 1,
            target.name,
            scripts.join(", ")
        );
        if !push_share_of_total(s, "   - ", c, total_cnt, duration_s) {
            continue;
        }
        push_simple_stats(s, "   - latency", &tx.latency);
    }
}
