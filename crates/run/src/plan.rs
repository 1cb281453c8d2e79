//! The plan of one benchmark run, resolved once from the parsed [`Options`]: every
//! default pgbench applies (the tpcb-like script, ten transactions a client, the
//! `pgbench_log` prefix, threads no more than clients), this process's share of a
//! sharded run, and which outputs beyond pgbench's the run produces. The run reads
//! the plan; the options inside it are the values that need no resolving.

use std::time::Duration;

use pgrush_stats::RunLimit;
use pgrush_stats::stages::Stage;

use crate::options::{DEFAULT_TRANSACTIONS, Options, ScriptSource, ScriptSpec, Workload};

/// `-l`'s file prefix when `--log-prefix` is not given.
pub const DEFAULT_LOG_PREFIX: &str = "pgbench_log";

/// What one run does, resolved from its options.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    /// The parsed options (connection, flags and values used as given).
    pub options: Options,
    /// The scripts to run: those given, or the builtin tpcb-like script.
    pub scripts: Vec<ScriptSpec>,
    /// A builtin script is among them (then the scale is read from the tables).
    pub builtin_used: bool,
    /// The builtin tpcb-like script is among them (autovacuum is watched then).
    pub tpcb_like: bool,
    /// `-T` seconds, or `-t` transactions a client (10 when neither is given).
    pub limit: RunLimit,
    /// `-s` (1 when not given); builtin scripts read the scale from the tables instead.
    pub scale: i64,
    /// Worker threads: `-j`, no more than the clients, at least 1.
    pub threads: u32,
    /// `-R` of this process (transactions/s, 0 without `-R`): a shard's share of the
    /// total rate.
    pub rate: f64,
    /// `--stage`/`--stages` resolved against `-c` and `-R` (rates are this process's
    /// share, as [`RunPlan::rate`]); empty without stages.
    pub stages: Vec<Stage>,
    /// `-l`'s file prefix.
    pub log_prefix: String,
    /// This process vacuums before the run: not `-n`, and shard 0 of a sharded run.
    pub vacuums: bool,
    /// The outputs beyond pgbench's text report.
    pub outputs: OutputPlan,
}

/// Which outputs beyond pgbench's a run produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputPlan {
    /// Any output beyond pgbench's was asked for (`--percentiles`, `--json`, `--html`,
    /// `--dashboard`, `--assert`, `--server-stats`): server facts are read and warnings printed only
    /// then (by default pgrush's output is exactly pgbench's). Per-command histograms
    /// are kept only then.
    pub extras: bool,
    /// The run ends with a run document (`--json`, `--html`, `--assert`, server
    /// sampling): only then are per-interval statistics kept.
    pub document: bool,
    /// The server is sampled: `--server-stats`, or implied by `--json`/`--html`, unless
    /// `--no-server-stats`.
    pub server_sampling: bool,
    /// The text output (banner, report, percentile lines) goes to stderr because stdout
    /// carries the JSON document (`--json=-`).
    pub text_to_stderr: bool,
    /// How often the server is sampled: `--server-stats`'s interval, 1 s by default.
    pub server_interval: Duration,
}

/// The server sampling interval when `--server-stats` gives none.
pub const DEFAULT_SERVER_INTERVAL: Duration = Duration::from_secs(1);

impl OutputPlan {
    /// The outputs `opts` ask for.
    pub fn resolve(opts: &Options) -> OutputPlan {
        // `--dashboard` ends with the `--html` page: it implies what `--html` does.
        let html = opts.html.is_some() || opts.dashboard.is_some();
        let server_sampling =
            !opts.no_server_stats && (opts.server_stats.is_some() || opts.json.is_some() || html);
        OutputPlan {
            extras: opts.percentiles.is_some()
                || opts.json.is_some()
                || html
                || !opts.assertions.is_empty()
                || opts.server_stats.is_some(),
            document: opts.json.is_some() || html || !opts.assertions.is_empty() || server_sampling,
            server_sampling,
            text_to_stderr: opts.json.as_deref() == Some("-"),
            server_interval: opts.server_stats.unwrap_or(DEFAULT_SERVER_INTERVAL),
        }
    }
}

impl RunPlan {
    /// Resolves the plan of a run with these options.
    pub fn resolve(options: Options) -> RunPlan {
        let scripts = options.scripts_to_run();
        let builtin_used = scripts
            .iter()
            .any(|s| matches!(s.source, ScriptSource::Builtin(_)));
        let tpcb_like = scripts.iter().any(
            |s| matches!(&s.source, ScriptSource::Builtin(n) if n == crate::options::DEFAULT_BUILTIN),
        );
        let limit = match options.duration {
            Some(d) => RunLimit::Duration(d),
            None => RunLimit::Transactions(options.transactions.unwrap_or(DEFAULT_TRANSACTIONS)),
        };
        let rate = match options.shard {
            Some(shard) if options.rate > 0.0 => options.rate / f64::from(shard.count),
            _ => options.rate,
        };
        let share = match options.shard {
            Some(shard) => 1.0 / f64::from(shard.count),
            None => 1.0,
        };
        // The options were checked: the stages resolve (else none).
        let mut stages =
            pgrush_stats::stages::resolve(&options.stages, options.clients, options.rate)
                .unwrap_or_default();
        for st in &mut stages {
            st.rate = (st.rate.0 * share, st.rate.1 * share);
        }
        RunPlan {
            stages,
            scripts,
            builtin_used,
            tpcb_like,
            limit,
            scale: i64::from(options.scale.unwrap_or(1)),
            threads: options.jobs.min(options.clients).max(1),
            rate,
            log_prefix: options
                .log_prefix
                .clone()
                .unwrap_or_else(|| DEFAULT_LOG_PREFIX.to_string()),
            // pgbench's vacuum is of pgbench's tables.
            vacuums: !options.no_vacuum
                && options.workload == Workload::Pgbench
                && options.shard.is_none_or(|s| s.index == 0),
            outputs: OutputPlan::resolve(&options),
            options,
        }
    }

    /// The `-R` of this process, or with stages and without `-R` the highest stage
    /// rate (0: not throttled at all): the run records schedule lag when it is above 0.
    pub fn throttle_rate(&self) -> f64 {
        if self.rate > 0.0 {
            return self.rate;
        }
        self.stages
            .iter()
            .map(|s| s.rate.0.max(s.rate.1))
            .fold(0.0, f64::max)
    }

    /// The program's name as pgbench's messages show it.
    pub fn prog(&self) -> &str {
        &self.options.progname
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::ShardIdentity;
    use crate::shard::identity::ShardSource;

    #[test]
    fn defaults_are_applied_once() {
        let plan = RunPlan::resolve(Options {
            clients: 2,
            jobs: 8,
            ..Options::default()
        });
        assert_eq!(plan.limit, RunLimit::Transactions(10));
        assert_eq!(plan.scale, 1);
        assert_eq!(plan.outputs.server_interval, Duration::from_secs(1));
        assert_eq!(plan.threads, 2);
        assert_eq!(plan.log_prefix, "pgbench_log");
        assert!(plan.builtin_used && plan.tpcb_like && plan.vacuums);
        assert_eq!(
            plan.scripts[0].source,
            ScriptSource::Builtin("tpcb-like".into())
        );
        assert!(!plan.outputs.extras && !plan.outputs.document);
        let file = ScriptSpec {
            source: ScriptSource::File(b"x.sql".to_vec()),
            weight: 1,
            text: None,
        };
        let plan = RunPlan::resolve(Options {
            duration: Some(5),
            scripts: vec![file],
            json: Some("-".into()),
            ..Options::default()
        });
        assert_eq!(plan.limit, RunLimit::Duration(5));
        assert!(!plan.builtin_used && !plan.tpcb_like);
        assert!(plan.outputs.text_to_stderr && plan.outputs.server_sampling);
    }

    #[test]
    fn a_shard_takes_its_share_of_the_rate_and_only_shard_0_vacuums() {
        let shard = |index| Options {
            rate: 100.0,
            shard: Some(ShardIdentity {
                index,
                count: 4,
                source: ShardSource::Option,
            }),
            ..Options::default()
        };
        let first = RunPlan::resolve(shard(0));
        assert_eq!(first.rate, 25.0);
        assert!(first.vacuums);
        assert!(!RunPlan::resolve(shard(2)).vacuums);
        let alone = Options {
            rate: 100.0,
            no_vacuum: true,
            ..Options::default()
        };
        let plan = RunPlan::resolve(alone);
        assert_eq!(plan.rate, 100.0);
        assert!(!plan.vacuums);
    }
}
