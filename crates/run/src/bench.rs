//! Wiring of a benchmark run: plan -> setup connection -> engine -> report.
//!
//! The order of what is printed follows pgbench 18's `main`: the random seed
//! message, script loading, the setup connection, the banner (stdout, flushed),
//! the `--debug` connection line, scale and partition detection (builtin
//! scripts only), the vacuum lines, then the run and the final report. What
//! ends the run early is returned as a [`Failure`], printed by the caller.

mod scripts;
mod setup;

use std::io::Write;

use pgrush_engine::{EngineConfig, ErrorPolicy, LogConfig, Output, Pacing, ScriptChoice, messages};
use pgrush_report::document::TpccDoc;
use pgrush_script::{RawMessage, Script, Value, Variables};
use pgrush_stats::{Partitioning, RunConfig, RunLimit, RunSummary, ScriptInfo, StageSummary};
use pgrush_wire::Connection;

use crate::connect::{PasswordPrompt, connect_prompting};
use crate::failure::{Failure, Line};
use crate::metrics_endpoint::MetricsEndpoint;
use crate::options::{Options, SeedChoice, Workload};
use crate::output::{RunExtras, text_out};
use crate::output_file::{check_outputs, stdout_failure};
use crate::plan::RunPlan;
use crate::tpcc_count::{NewOrderCount, OrdersBefore};
use crate::tpcc_home::{self, HomeWarehouses};
use crate::tpcc_rates::ServerReading;
use crate::{gate, shard};

/// Runs the benchmark `plan` describes, asking `prompt` for a password when the server
/// wants one and none was given. Returns the exit status (0; 1 when `-l` lines were
/// lost; 2 after an aborted client with `--exit-on-abort`; 3 when an `--assert` failed),
/// or the failure that ended the run (for the caller to print).
pub fn run(plan: &RunPlan, prompt: PasswordPrompt<'_>) -> Result<i32, Failure> {
    run_counting_new_orders(plan, prompt).0
}

/// [`run`], and with `--workload tpcc --check` the figures of the New-Order count check
/// ([`crate::tpcc_count`]; `None` otherwise, and when the run ended before its clients).
pub fn run_counting_new_orders(
    plan: &RunPlan,
    prompt: PasswordPrompt<'_>,
) -> (Result<i32, Failure>, Option<NewOrderCount>) {
    let mut new_orders = None;
    let status = run_and_count(plan, prompt, &mut new_orders);
    (status, new_orders)
}

/// [`run_counting_new_orders`]: the count check's figures go to `new_orders`.
fn run_and_count(
    plan: &RunPlan,
    prompt: PasswordPrompt<'_>,
    new_orders: &mut Option<NewOrderCount>,
) -> Result<i32, Failure> {
    let opts = &plan.options;
    let prog = plan.prog();
    // The parser already printed `setting random seed to N` for each explicit seeding.
    let seed = base_seed(opts.random_seed);
    let (scripts, script_facts) = scripts::load(plan)?;
    // The promised files are checked before anything starts (as pgbench's `-l`).
    check_outputs([
        opts.json.as_deref(),
        opts.html.as_deref(),
        opts.junit.as_deref(),
    ])?;
    // `--metrics-listen`, `--dashboard`: bound (or refused) before anything starts, served
    // from here on.
    let metrics = MetricsEndpoint::open(plan, &scripts)?;
    let (params, mut con) =
        connect_prompting(opts, prompt).map_err(|failure| failure.into_failure(prog, "setup"))?;
    print_banner(plan, &con);
    if opts.debug {
        print_debug_connection(plan, &con);
    }
    let (scale, partitioning, home) = detect_scale(plan, &mut con)?;
    // Seeds: client generators, default_seed, then per-thread generators.
    let seeds = shard::seeds(opts, seed, plan.threads, defined(opts, "default_seed"));
    let variables = startup_variables(opts, seed, scale, seeds.default_seed, home)?;
    if plan.vacuums {
        setup::vacuum(&mut con, prog, opts.vacuum_all);
    }
    let targets = crate::targets::resolve_targets(opts, &params).map_err(Failure::error)?;
    let mut extras = RunExtras::before_run(plan, &mut con, &params);
    extras.sample_targets(targets.servers);
    // A shard's reading would count every shard's New-Orders: only a run of its own reads.
    let tpcc_before = (opts.workload == Workload::Tpcc && opts.shard.is_none())
        .then(|| ServerReading::take(&mut con))
        .flatten();
    // `--check`: the districts' next order ids of the home warehouses the scripts use.
    let orders_before = home
        .filter(|_| opts.check)
        .map(|home| OrdersBefore::take(&mut con, &variables, home));
    let shard_start = shard::start_after_setup(plan, &script_facts, con)?;

    let run_config = run_config(plan, scale, partitioning);
    let infos = script_infos(&scripts);
    let limit = run_config.limit;
    let mut summary = RunSummary::empty(run_config, infos);
    summary.targets = targets.infos;
    let mut layout = summary.layout();
    // Per-command histograms serve only per-command percentiles (`--percentiles`, `--json`,
    // `--html`): plain `-r` keeps sums, a few dozen bytes per command.
    layout.command_histograms &= plan.outputs.extras;
    // The time series serves the run document, and `--reconnect`'s outage windows
    // (tps and p99 of the minute before, the window and the minute after).
    layout.time_series = plan.outputs.document || opts.reconnect_timeout_s.is_some();

    let cfg = EngineConfig {
        conn: params,
        scripts,
        clients: opts.clients,
        threads: plan.threads,
        limit,
        query_mode: opts.query_mode,
        connect_per_tx: opts.connect_per_transaction,
        pacing: Pacing {
            rate: plan.rate,
            latency_limit_us: opts.latency_limit_us as i64,
            warmup_us: i64::from(opts.warmup_s) * 1_000_000,
        },
        errors: error_policy(opts),
        output: Output {
            metrics: metrics.as_ref().map(MetricsEndpoint::live),
            ..engine_output(plan)
        },
        variables,
        client_rngs: seeds.clients,
        thread_rngs: seeds.threads,
        handle_signals: true,
        placement: shard::placement(opts, shard_start.as_ref()),
        stages: plan.stages.clone(),
        script_choice: if opts.workload == Workload::Tpcc {
            ScriptChoice::Deck
        } else {
            ScriptChoice::Weighted
        },
        targets: targets.engine,
    };
    if let Some(start) = &shard_start {
        extras.set_shard(
            shard::shard_doc(start, opts.clients),
            start.start_local_us() + cfg.pacing.warmup_us,
        );
    }
    if let Some(endpoint) = &metrics {
        extras.publish_server_to(endpoint.server_slot());
        extras.publish_report_to(endpoint.final_page());
    }
    extras.mark_start(prog, cfg.pacing.warmup_us);
    let outcome = pgrush_engine::run(&cfg, &layout).map_err(|e| Failure::error(e.to_string()))?;
    extras.mark_end();
    extras.set_start_time(outcome.origin_unix_us);
    if let Some(start) = shard_start {
        // Measuring starts at the agreed start plus the warm-up.
        let measured_after_warmup = outcome.measured_start_unix_us - cfg.pacing.warmup_us;
        shard::warn_if_late(prog, &start, measured_after_warmup);
        let _ = start.connection.close();
    }
    if outcome.exited_on_abort {
        // pgbench exits at once with status 2: no report.
        return Ok(2);
    }
    if outcome.interrupted_in_warmup {
        // A report of nothing would only mislead; the status is an interrupted run's.
        extras.abandon();
        return Err(Failure::exit(2).then(Line::Error(INTERRUPTED_IN_WARMUP.as_bytes().to_vec())));
    }
    summary.stats = outcome.stats;
    summary.bench_duration_us = outcome.bench_duration_us;
    summary.initial_connection_us = outcome.initial_connection_us;
    summary.aborted = outcome.aborted;
    summary.interrupted = outcome.interrupted;
    summary.stages = plan
        .stages
        .iter()
        .cloned()
        .zip(outcome.stages)
        .map(|(stage, stats)| StageSummary { stage, stats })
        .collect();
    if opts.workload == Workload::Tpcc {
        let server = tpcc_before.and_then(|before| before.until_now(&cfg.conn));
        extras.set_tpcc(TpccDoc::build(&summary, server));
    }
    if let Some(before) = orders_before {
        // New-Order is the first script.
        let lost = summary.stats.scripts.first();
        let lost = lost.map_or(0, |s| s.tx.counters.connection_failures);
        *new_orders = Some(before.count_after(&cfg.conn, &outcome.client_variables, lost));
    }
    let status = finish_run(plan, &summary, extras);
    if let Some(endpoint) = metrics {
        endpoint.linger();
    }
    let status = status?;
    // Lost `-l` lines (the error was printed) make the run a failure.
    Ok(if outcome.log_write_failed && status == 0 {
        1
    } else {
        status
    })
}

/// Why a run interrupted before the end of `--warmup` has no report.
pub const INTERRUPTED_IN_WARMUP: &str =
    "Run was interrupted by a signal during the warm-up; nothing was measured.";

/// The scale (pgbench's `GetTableInfo` for builtin scripts, the warehouses with
/// `--workload tpcc`, else `-s`), the partitioning of pgbench's tables, and with
/// `--workload tpcc` the clients' home warehouses (a shard's range said on stderr).
fn detect_scale(
    plan: &RunPlan,
    con: &mut Connection,
) -> Result<(i64, Option<Partitioning>, Option<HomeWarehouses>), Failure> {
    let opts = &plan.options;
    let prog = plan.prog();
    if opts.workload == Workload::Tpcc {
        let warehouses =
            setup::count_rows(con, prog, "warehouse", "warehouses", opts.scale.is_some())?;
        let home = HomeWarehouses::of(prog, opts.shard, warehouses)?;
        if let Some(shard) = opts.shard {
            messages::info(&opts.progname, &home.describe(shard, warehouses));
        }
        return Ok((warehouses, None, Some(home)));
    }
    if plan.builtin_used {
        let info = setup::table_info(con, prog, opts.scale.is_some())?;
        return Ok((info.scale, info.partitioning, None));
    }
    Ok((plan.scale, None, None))
}

/// The base seed as pgbench computes it (`time` = monotonic clock in µs).
fn base_seed(choice: SeedChoice) -> u64 {
    match choice {
        SeedChoice::Value(v) => v,
        SeedChoice::Time => pgrush_engine::clock::monotonic_us(),
        SeedChoice::Rand => pgrush_engine::clock::strong_random_u64(),
    }
}

/// What the report says about each script.
fn script_infos(scripts: &[Script]) -> Vec<ScriptInfo> {
    scripts
        .iter()
        .map(|s| ScriptInfo {
            desc: s.desc.clone(),
            weight: s.weight,
            commands: s.commands.iter().map(|c| c.first_line.clone()).collect(),
        })
        .collect()
}

/// The report's first line (`pgrush (18.6, server ...)`); not for shards other than 0.
fn print_banner(plan: &RunPlan, con: &Connection) {
    if !shard::report_note::prints_full_report(&plan.options) {
        return;
    }
    let mut out = text_out(plan);
    let _ = writeln!(
        out,
        "{}",
        pgrush_report::text::banner(con.server_version_num(), con.server_version())
    );
    let _ = out.flush();
}

/// `--debug`'s connection line, as pgbench prints it.
fn print_debug_connection(plan: &RunPlan, con: &Connection) {
    let opts = &plan.options;
    let (what, n) = match plan.limit {
        RunLimit::Duration(d) => ("duration", d),
        RunLimit::Transactions(n) => ("nxacts", n),
    };
    messages::debug(
        &opts.progname,
        &format!(
            "pghost: {} pgport: {} nclients: {} {}: {} dbName: {}",
            con.host(),
            con.port(),
            opts.clients,
            what,
            n,
            con.db()
        ),
    );
}

/// Whether `-D` defined the variable `name`.
fn defined(opts: &Options, name: &str) -> bool {
    opts.defines.iter().any(|(n, _)| n == name.as_bytes())
}

/// The variables every client starts with: `-D` values, then `scale`, `default_seed`
/// and `random_seed` unless `-D` set them; with `--workload tpcc` the home warehouses'
/// range (`w_first`, `w_count`: [`crate::tpcc_home`]) and the New-Orders' commit counters
/// at 0 ([`crate::tpcc_count`]) unless `-D` set them.
fn startup_variables(
    opts: &Options,
    seed: u64,
    scale: i64,
    default_seed: Option<i64>,
    home: Option<HomeWarehouses>,
) -> Result<Variables, Failure> {
    let mut variables = Variables::new();
    for (name, value) in &opts.defines {
        variables
            .put_text("option", name, value)
            .map_err(|e| Failure::error(e.to_bytes()))?;
    }
    if !defined(opts, "scale") {
        let _ = variables.put_value("startup", "scale", Value::Int(scale));
    }
    if let Some(ds) = default_seed {
        let _ = variables.put_value("startup", "default_seed", Value::Int(ds));
    }
    if !defined(opts, "random_seed") {
        let _ = variables.put_value("startup", "random_seed", Value::Int(seed as i64));
    }
    if let Some(home) = home {
        for (name, value) in [
            (tpcc_home::FIRST_VARIABLE, home.first),
            (tpcc_home::COUNT_VARIABLE, home.count),
            (pgrush_script::NEW_ORDER_COMMITS_SENT, 0),
            (pgrush_script::NEW_ORDER_COMMITS, 0),
        ] {
            if !defined(opts, name) {
                let _ = variables.put_value("startup", name, Value::Int(value));
            }
        }
    }
    Ok(variables)
}

/// What the report says about the run's configuration.
fn run_config(plan: &RunPlan, scale: i64, partitioning: Option<Partitioning>) -> RunConfig {
    let opts = &plan.options;
    RunConfig {
        scale,
        partitioning,
        query_mode: opts.query_mode,
        clients: opts.clients,
        threads: plan.threads,
        max_tries: opts.max_tries,
        limit: plan.limit,
        rate: (plan.throttle_rate() > 0.0).then_some(plan.throttle_rate()),
        latency_limit_us: (opts.latency_limit_us > 0).then_some(opts.latency_limit_us as f64),
        progress_s: (opts.progress > 0).then_some(opts.progress),
        connect_per_tx: opts.connect_per_transaction,
        failures_detailed: opts.failures_detailed,
        per_command: opts.report_per_command,
        continue_on_error: opts.continue_on_error,
        warmup_s: (opts.warmup_s > 0).then_some(opts.warmup_s),
        reconnect: opts.reconnect_timeout_s.is_some(),
    }
}

/// `--max-tries`, `--continue-on-error`, `--exit-on-abort`, `--verbose-errors`, `--reconnect`.
fn error_policy(opts: &Options) -> ErrorPolicy {
    ErrorPolicy {
        max_tries: opts.max_tries,
        continue_on_error: opts.continue_on_error,
        exit_on_abort: opts.exit_on_abort,
        verbose_errors: opts.verbose_errors,
        reconnect_timeout_us: opts.reconnect_timeout_s.map(|s| i64::from(s) * 1_000_000),
    }
}

/// What the engine prints while it runs: messages, `-P`, `-r`, `-l`.
fn engine_output(plan: &RunPlan) -> Output {
    let opts = &plan.options;
    Output {
        progname: opts.progname.clone(),
        debug: opts.debug,
        progress: opts.progress,
        progress_timestamp: opts.progress_timestamp,
        report_per_command: opts.report_per_command,
        log: opts.log.then(|| LogConfig {
            prefix: plan.log_prefix.clone(),
            pid: std::process::id(),
            sampling_rate: opts.sampling_rate,
            aggregate_interval: opts.aggregate_interval,
        }),
        failures_detailed: opts.failures_detailed,
        metrics: None,
    }
}

/// The report, the extras (percentiles, assertion verdicts, JSON, HTML, JUnit) and the
/// exit status: 2 after an interrupt or an aborted client, as pgbench; 3 when an
/// `--assert` failed in a run that was otherwise fine.
fn finish_run(plan: &RunPlan, summary: &RunSummary, mut extras: RunExtras) -> Result<i32, Failure> {
    {
        let mut out = text_out(plan);
        let mut written = extras.write_text_report(plan, summary, &mut out);
        if let Some(tpcc) = extras.tpcc()
            && shard::report_note::prints_full_report(&plan.options)
        {
            written = written.and_then(|()| out.write_all(tpcc.text_lines().as_bytes()));
        }
        if let Err(e) = written.and_then(|_| out.flush())
            && !plan.outputs.text_to_stderr
        {
            return Err(stdout_failure(&e));
        }
    }
    let extras_status = extras.after_run(plan, summary);
    let incomplete = if summary.interrupted {
        Some("Run was interrupted by a signal; the above results are incomplete.")
    } else if summary.aborted {
        Some(pgrush_report::text::ABORTED_MESSAGE)
    } else {
        None
    };
    if let Some(why) = incomplete {
        // A file that could not be written is said first; the status is 2 either way.
        let failure = extras_status.err().unwrap_or_else(|| Failure::exit(1));
        return Err(failure
            .then(Line::Error(why.as_bytes().to_vec()))
            .with_status(2));
    }
    extras_status.map(|passed| if passed { 0 } else { gate::ASSERTION_FAILED })
}
