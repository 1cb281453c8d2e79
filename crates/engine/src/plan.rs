//! Things computed once per run from the configuration: prepared statement
//! names and their Bind heads, script weights, log and progress formats, and the
//! express script.

use pgrush_script::{CommandKind, Expr, FastExpr, SqlCommand, VarRef};
use pgrush_stats::progress::ProgressOptions;
use pgrush_stats::{LogFormat, QueryMode};
use pgrush_wire::{BindHead, EncodeRefusal};

use crate::config::EngineConfig;

/// Per-run constants shared (read-only) by every thread.
#[derive(Debug, Clone)]
pub(crate) struct Plan<'a> {
    /// `P_<k>` names, by global statement index.
    pub(crate) stmt_names: Vec<String>,
    /// The Bind head of each statement, by global statement index: its `P_<k>`
    /// name in prepared mode, the unnamed statement otherwise (used in extended
    /// mode); the refusal of a statement with more parameters than the protocol
    /// counts, reported when it is sent.
    pub(crate) bind_heads: Vec<Result<BindHead, EncodeRefusal>>,
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
    /// Whether the order in which clients start their transactions draws nothing
    /// from the threads' generators: one script (no script choice), no `-R` (no
    /// throttle schedule), no `-C`. Then a client that read its result may go on
    /// into its next transaction at once, instead of yielding to the other clients
    /// first as pgbench does, without any observable difference but the timing.
    pub(crate) chain: bool,
    /// The script's commands for the express lane, when the run has one.
    pub(crate) express: Option<ExpressScript<'a>>,
    /// The target (`--target`) of each script, in script order (0: the run's connection).
    pub(crate) script_target: Vec<usize>,
    /// The targets the scripts use, ascending: a client opens one connection to each.
    pub(crate) targets_used: Vec<usize>,
    /// Whether the scripts use more than one target: a client then switches
    /// connections when a transaction's target is not its last one's
    /// (`Client::switch_target`); otherwise it holds one connection, as pgbench.
    pub(crate) switching: bool,
}

impl<'a> Plan<'a> {
    /// Builds the plan: every SQL command of every script, in script order then
    /// command order, gets the next `P_<k>` name (pgbench's global counter).
    pub(crate) fn new(cfg: &'a EngineConfig) -> Plan<'a> {
        let mut stmt_names = Vec::new();
        let mut bind_heads = Vec::new();
        let mut stmt_index = Vec::with_capacity(cfg.scripts.len());
        let mut stmt_origin = Vec::new();
        for (s, script) in cfg.scripts.iter().enumerate() {
            let mut idx = Vec::with_capacity(script.commands.len());
            for (c, cmd) in script.commands.iter().enumerate() {
                if let CommandKind::Sql(sql) = &cmd.kind {
                    idx.push(stmt_names.len());
                    stmt_origin.push((s, c));
                    let name = format!("P_{}", stmt_names.len());
                    let bound = match cfg.query_mode {
                        QueryMode::Prepared => name.as_str(),
                        QueryMode::Simple | QueryMode::Extended => "",
                    };
                    bind_heads.push(BindHead::new(bound, sql.params().len()));
                    stmt_names.push(name);
                } else {
                    idx.push(usize::MAX);
                }
            }
            stmt_index.push(idx);
        }
        let chain = cfg.scripts.len() == 1 && cfg.throttle_delay_us() <= 0.0 && !cfg.connect_per_tx;
        // With stages the express lane hands a client over to `ChooseScript` when the
        // stage segment it was active in may have ended (`Client::active_until`).
        let express = chain
            .then(|| ExpressScript::for_run(cfg, &stmt_index))
            .flatten();
        let script_target: Vec<usize> = (0..cfg.scripts.len()).map(|s| cfg.targets.of(s)).collect();
        let mut targets_used = script_target.clone();
        targets_used.sort_unstable();
        targets_used.dedup();
        Plan {
            chain,
            express,
            switching: targets_used.len() > 1,
            script_target,
            targets_used,
            stmt_names,
            bind_heads,
            stmt_index,
            stmt_origin,
            weights: cfg.scripts.iter().map(|s| s.weight).collect(),
            log_format: LogFormat {
                throttled: cfg.pacing.rate > 0.0,
                latency_limit: cfg.pacing.latency_limit_us > 0,
                max_tries: cfg.errors.max_tries,
                failures_detailed: cfg.output.failures_detailed,
                reconnect: cfg.errors.reconnect_timeout_us.is_some(),
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

impl Plan<'_> {
    /// Whether global statement `stmt` is sent to target `target` (its script's).
    pub(crate) fn stmt_on_target(&self, stmt: usize, target: usize) -> bool {
        self.script_target[self.stmt_origin[stmt].0] == target
    }
}

/// One command of the express script.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ExpressStep<'a> {
    /// `\set var expr`, with the expression compiled when it could be.
    Set {
        /// The variable.
        var: &'a VarRef,
        /// The expression.
        expr: &'a Expr,
        /// The expression compiled ([`Expr::compile_fast`]).
        fast: Option<&'a FastExpr>,
    },
    /// An SQL command without `\gset`/`\aset`, global statement index `stmt`.
    Sql {
        /// The command.
        sql: &'a SqlCommand,
        /// Its global prepared-statement index.
        stmt: usize,
    },
}

/// The one script of a run whose transactions the express lane can run
/// (`Client::express_turn`): the commands in order, each with what it needs at
/// hand, so that a transaction neither dispatches on states nor looks its commands
/// up through the configuration.
///
/// A run has one when nothing in it needs the general machine between two SQL
/// results: its transactions chain ([`Plan::chain`]), no `--debug`, no `-r`, and
/// its commands are only SQL commands without `\gset`/`\aset` and `\set`.
#[derive(Debug, Clone)]
pub(crate) struct ExpressScript<'a> {
    /// The script's commands, in order.
    pub(crate) steps: Vec<ExpressStep<'a>>,
}

impl<'a> ExpressScript<'a> {
    /// The express script of `cfg`, a run whose transactions chain, if it has
    /// one; `stmt_index` is [`Plan::stmt_index`].
    fn for_run(cfg: &'a EngineConfig, stmt_index: &[Vec<usize>]) -> Option<ExpressScript<'a>> {
        if cfg.output.debug || cfg.output.report_per_command {
            return None;
        }
        let steps = cfg.scripts[0]
            .commands
            .iter()
            .zip(&stmt_index[0])
            .map(|(command, &stmt)| match &command.kind {
                CommandKind::Set { var, expr, fast } => Some(ExpressStep::Set {
                    var,
                    expr,
                    fast: fast.as_ref(),
                }),
                CommandKind::Sql(sql) if sql.gset.is_none() => Some(ExpressStep::Sql { sql, stmt }),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let has_sql = steps.iter().any(|s| matches!(s, ExpressStep::Sql { .. }));
        has_sql.then_some(ExpressScript { steps })
    }
}
