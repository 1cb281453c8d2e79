//! Things computed once per run from the configuration: prepared statement
//! names, script weights, log and progress formats.

use pgrush_script::CommandKind;
use pgrush_stats::LogFormat;
use pgrush_stats::progress::ProgressOptions;

use crate::config::EngineConfig;

/// Per-run constants shared (read-only) by every thread.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// `P_<k>` names, by global statement index.
    pub(crate) stmt_names: Vec<String>,
    /// Global statement index of each command (`usize::MAX` for meta commands).
    pub(crate) stmt_index: Vec<Vec<usize>>,
    /// (script, command) of each global statement.
    pub(crate) stmt_origin: Vec<(usize, usize)>,
    /// Script weights, in order.
    pub(crate) weights: Vec<u32>,
    /// Log line format.
    pub(crate) log_format: LogFormat,
    /// Progress line format.
    pub(crate) progress_opts: ProgressOptions,
}

impl Plan {
    /// Builds the plan: every SQL command of every script, in script order then
    /// command order, gets the next `P_<k>` name (pgbench's global counter).
    pub(crate) fn new(cfg: &EngineConfig) -> Plan {
        let mut stmt_names = Vec::new();
        let mut stmt_index = Vec::with_capacity(cfg.scripts.len());
        let mut stmt_origin = Vec::new();
        for (s, script) in cfg.scripts.iter().enumerate() {
            let mut idx = Vec::with_capacity(script.commands.len());
            for (c, cmd) in script.commands.iter().enumerate() {
                if matches!(cmd.kind, CommandKind::Sql(_)) {
                    idx.push(stmt_names.len());
                    stmt_origin.push((s, c));
                    stmt_names.push(format!("P_{}", stmt_names.len()));
                } else {
                    idx.push(usize::MAX);
                }
            }
            stmt_index.push(idx);
        }
        Plan {
            stmt_names,
            stmt_index,
            stmt_origin,
            weights: cfg.scripts.iter().map(|s| s.weight).collect(),
            log_format: LogFormat {
                throttled: cfg.pacing.rate > 0.0,
                latency_limit: cfg.pacing.latency_limit_us > 0,
                max_tries: cfg.errors.max_tries,
                failures_detailed: cfg.output.failures_detailed,
                continue_on_error: cfg.errors.continue_on_error,
            },
            progress_opts: ProgressOptions {
                timestamp: cfg.output.progress_timestamp,
                throttled: cfg.pacing.rate > 0.0,
                latency_limit: cfg.pacing.latency_limit_us > 0,
                max_tries: cfg.errors.max_tries,
            },
        }
    }
}
