//! Wiring of a benchmark run: options -> setup connection -> engine -> report.
//!
//! The order of what is printed follows pgbench 18's `main`: the random seed
//! message, script loading, the setup connection, the banner (stdout, flushed),
//! the `--debug` connection line, scale and partition detection (builtin
//! scripts only), the vacuum lines, then the run and the final report.

pub(crate) mod gate;
mod setup;
mod sharding;

use std::io::Write;
use std::os::unix::ffi::OsStrExt;

use pgrush_engine::{EngineConfig, ErrorPolicy, LogConfig, Output, Pacing, messages};
use pgrush_script::{RawMessage, Script, Value, Variables};
use pgrush_stats::{Partitioning, RunConfig, RunLimit, RunSummary, ScriptInfo};
use pgrush_wire::Connection;
use pgrush_wire::conninfo::ConnParams;

use crate::options::{Options, ScriptSource, SeedChoice};
use pgrush_stats::QueryMode;

pub(crate) use sharding::align_time_series;

/// Runs the benchmark described by `opts`; returns the exit status.
pub fn run(opts: &Options) -> i32 {
    match run_inner(opts) {
        Ok(code) => code,
        Err(code) => code,
    }
}

/// The base seed as pgbench computes it (`time` = monotonic clock in µs).
fn base_seed(choice: SeedChoice) -> u64 {
    match choice {
        SeedChoice::Value(v) => v,
        SeedChoice::Time => pgrush_engine::clock::monotonic_us(),
        SeedChoice::Rand => pgrush_engine::clock::strong_random_u64(),
    }
}

/// `<what> "<path>": <strerror>` (the path's bytes as given); returns the exit status.
fn file_error(prog: &str, what: &str, path: &[u8], e: &std::io::Error) -> i32 {
    let mut msg = format!("{what} \"").into_bytes();
    msg.extend_from_slice(path);
    msg.extend_from_slice(b"\": ");
    msg.extend_from_slice(pgrush_wire::strerror(e).as_bytes());
    messages::error(prog, &msg);
    1
}

/// A script's name, weight and text (a builtin's text is its name): what the
/// workload digest of a sharded run covers.
type ScriptFacts = (Vec<u8>, u32, Vec<u8>);

fn load_scripts(opts: &Options) -> Result<(Vec<Script>, Vec<ScriptFacts>), i32> {
    let prog = &opts.progname;
    let mut scripts = Vec::new();
    let mut facts = Vec::new();
    let specs: Vec<crate::options::ScriptSpec> = if opts.scripts.is_empty() {
        vec![crate::options::ScriptSpec {
            source: ScriptSource::Builtin("tpcb-like".to_string()),
            weight: 1,
            text: None,
        }]
    } else {
        opts.scripts.clone()
    };
    for spec in &specs {
        let script = match &spec.source {
            ScriptSource::Builtin(name) => {
                let b = match pgrush_script::builtin_by_prefix(name) {
                    Ok(b) => b,
                    Err(e) => {
                        messages::error(prog, &e.to_string());
                        return Err(1);
                    }
                };
                facts.push((name.clone().into_bytes(), spec.weight, Vec::new()));
                b.load(spec.weight)
            }
            ScriptSource::File(path) => {
                let text = if let Some(text) = &spec.text {
                    text.clone()
                } else if path == b"-" {
                    let mut s = Vec::new();
                    match std::io::Read::read_to_end(&mut std::io::stdin(), &mut s) {
                        Ok(_) => s,
                        Err(e) => return Err(file_error(prog, "could not read file", path, &e)),
                    }
                } else {
                    match std::fs::read(std::ffi::OsStr::from_bytes(path)) {
                        Ok(b) => b,
                        Err(e) => return Err(file_error(prog, "could not open file", path, &e)),
                    }
                };
                let script = pgrush_script::load_script(path, &text, spec.weight);
                facts.push((path.clone(), spec.weight, text));
                script
            }
        };
        match script {
            Ok(s) => scripts.push(s),
            Err(e) => {
                messages::error(prog, &e.to_bytes());
                return Err(1);
            }
        }
    }
    if opts.query_mode != QueryMode::Simple {
        for s in &scripts {
            if let Err(e) = s.check_parameters() {
                messages::error(prog, &e.to_bytes());
                return Err(1);
            }
        }
    }
    Ok((scripts, facts))
}

fn run_inner(opts: &Options) -> Result<i32, i32> {
    let prog = opts.progname.as_str();
    // The parser already printed `setting random seed to N` for each explicit seeding.
    let seed = base_seed(opts.random_seed);
    let (scripts, script_facts) = load_scripts(opts)?;
    // The promised files are checked before anything starts (as pgbench's `-l`).
    let outputs = [
        opts.json.as_deref(),
        opts.html.as_deref(),
        opts.junit.as_deref(),
    ];
    crate::output_file::check_outputs(prog, outputs)?;
    let builtin_used = opts.scripts.is_empty()
        || opts
            .scripts
            .iter()
            .any(|s| matches!(s.source, ScriptSource::Builtin(_)));

    let (params, mut con) = open_setup_connection(opts)?;
    print_banner(opts, &con);
    let threads = opts.jobs.min(opts.clients).max(1);
    if opts.debug {
        print_debug_connection(opts, &con);
    }
    let mut scale = i64::from(opts.scale.unwrap_or(1));
    let mut partitioning = None;
    if builtin_used {
        let info = setup::table_info(&mut con, prog, opts.scale.is_some())?;
        scale = info.scale;
        partitioning = info.partitioning;
    }

    // Seeds: client generators, default_seed, then per-thread generators.
    let seeds = sharding::seeds(opts, seed, threads, defined(opts, "default_seed"));
    let variables = startup_variables(opts, seed, scale, seeds.default_seed)?;

    // Shard 0 vacuums for all shards.
    if !opts.no_vacuum && opts.shard.is_none_or(|s| s.index == 0) {
        setup::vacuum(&mut con, prog, opts.vacuum_all);
    }
    let mut extras = crate::report_cmd::RunExtras::before_run(opts, &mut con, &params);
    let shard_start = sharding::start_after_setup(opts, &script_facts, threads, con)?;

    let run_config = run_config(opts, scale, partitioning, threads);
    let infos = script_infos(&scripts);
    let limit = run_config.limit;
    let mut summary = RunSummary::empty(run_config, infos);
    let mut layout = summary.layout();
    // Per-command histograms serve only per-command percentiles (`--percentiles`, `--json`,
    // `--html`): plain `-r` keeps sums, a few dozen bytes per command.
    layout.command_histograms &= crate::report_cmd::extras_enabled(opts);
    // The time series serves only the run document.
    layout.time_series = crate::report_cmd::builds_document(opts);

    let cfg = EngineConfig {
        conn: params,
        scripts,
        clients: opts.clients,
        threads,
        limit,
        query_mode: opts.query_mode,
        connect_per_tx: opts.connect_per_transaction,
        pacing: Pacing {
            rate: sharding::rate(opts),
            latency_limit_us: opts.latency_limit_us as i64,
        },
        errors: error_policy(opts),
        output: engine_output(opts),
        variables,
        client_rngs: seeds.clients,
        thread_rngs: seeds.threads,
        handle_signals: true,
        placement: sharding::placement(opts, shard_start.as_ref()),
    };
    extras.mark_start(prog);
    if let Some(start) = &shard_start {
        extras.set_shard(
            sharding::shard_doc(start, opts.clients),
            start.start_local_us(),
        );
    }
    let outcome = match pgrush_engine::run(&cfg, &layout) {
        Ok(o) => o,
        Err(e) => {
            messages::error(prog, &e.to_string());
            return Err(1);
        }
    };
    if let Some(start) = shard_start {
        sharding::warn_if_late(prog, &start, outcome.measured_start_unix_us);
        let _ = start.connection.close();
    }
    if outcome.exited_on_abort {
        // pgbench exits at once with status 2: no report.
        return Ok(2);
    }
    summary.stats = outcome.stats;
    summary.bench_duration_us = outcome.bench_duration_us;
    summary.initial_connection_us = outcome.initial_connection_us;
    summary.aborted = outcome.aborted;
    summary.interrupted = outcome.interrupted;
    let status = finish_run(opts, &summary, extras)?;
    // Lost `-l` lines (the error was printed) make the run a failure.
    Ok(if outcome.log_write_failed && status == 0 {
        1
    } else {
        status
    })
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

/// The setup connection; as pgbench, asks for a password once if the server wants one
/// and none was given (the clients then reuse it). On failure prints pgbench's lines
/// (and, at a terminal, the `pgrush demo` hint).
fn open_setup_connection(opts: &Options) -> Result<(ConnParams, Connection), i32> {
    let prog = opts.progname.as_str();
    crate::connect::connect_prompting(opts).map_err(|failure| {
        messages::error(prog, &pgrush_wire::lossless::to_bytes(&failure.message));
        messages::error(prog, "could not create connection for setup");
        if let Some(hint) = failure.terminal_hint(prog) {
            eprint!("{hint}");
        }
        1
    })
}

/// The report's first line (`pgrush (18.6, server ...)`).
fn print_banner(opts: &Options, con: &Connection) {
    let mut out = crate::report_cmd::text_out(opts);
    let _ = writeln!(
        out,
        "{}",
        pgrush_report::text::banner(con.server_version_num(), con.server_version())
    );
    let _ = out.flush();
}

/// `--debug`'s connection line, as pgbench prints it.
fn print_debug_connection(opts: &Options, con: &Connection) {
    let (what, n) = match opts.duration {
        Some(d) => ("duration", d),
        None => ("nxacts", opts.transactions.unwrap_or(10)),
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
/// and `random_seed` unless `-D` set them.
fn startup_variables(
    opts: &Options,
    seed: u64,
    scale: i64,
    default_seed: Option<i64>,
) -> Result<Variables, i32> {
    let mut variables = Variables::new();
    for (name, value) in &opts.defines {
        if let Err(e) = variables.put_text("option", name, value) {
            messages::error(&opts.progname, &e.to_bytes());
            return Err(1);
        }
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
    Ok(variables)
}

/// What the report says about the run's configuration.
fn run_config(
    opts: &Options,
    scale: i64,
    partitioning: Option<Partitioning>,
    threads: u32,
) -> RunConfig {
    let limit = match opts.duration {
        Some(d) => RunLimit::Duration(d),
        None => RunLimit::Transactions(opts.transactions.unwrap_or(10)),
    };
    RunConfig {
        scale,
        partitioning,
        query_mode: opts.query_mode,
        clients: opts.clients,
        threads,
        max_tries: opts.max_tries,
        limit,
        rate: (opts.rate > 0.0).then_some(sharding::rate(opts)),
        latency_limit_us: (opts.latency_limit_us > 0).then_some(opts.latency_limit_us as f64),
        progress_s: (opts.progress > 0).then_some(opts.progress),
        connect_per_tx: opts.connect_per_transaction,
        failures_detailed: opts.failures_detailed,
        per_command: opts.report_per_command,
        continue_on_error: opts.continue_on_error,
    }
}

/// `--max-tries`, `--continue-on-error`, `--exit-on-abort`, `--verbose-errors`.
fn error_policy(opts: &Options) -> ErrorPolicy {
    ErrorPolicy {
        max_tries: opts.max_tries,
        continue_on_error: opts.continue_on_error,
        exit_on_abort: opts.exit_on_abort,
        verbose_errors: opts.verbose_errors,
    }
}

/// What the engine prints while it runs: messages, `-P`, `-r`, `-l`.
fn engine_output(opts: &Options) -> Output {
    Output {
        progname: opts.progname.clone(),
        debug: opts.debug,
        progress: opts.progress,
        progress_timestamp: opts.progress_timestamp,
        report_per_command: opts.report_per_command,
        log: opts.log.then(|| LogConfig {
            prefix: opts
                .log_prefix
                .clone()
                .unwrap_or_else(|| "pgbench_log".to_string()),
            pid: std::process::id(),
            sampling_rate: opts.sampling_rate,
            aggregate_interval: opts.aggregate_interval,
        }),
        failures_detailed: opts.failures_detailed,
    }
}

/// The report, the extras (percentiles, assertion verdicts, JSON, HTML, JUnit) and the
/// exit status: 2 after an interrupt or an aborted client, as pgbench; 3 when an
/// `--assert` failed in a run that was otherwise fine.
fn finish_run(
    opts: &Options,
    summary: &RunSummary,
    mut extras: crate::report_cmd::RunExtras,
) -> Result<i32, i32> {
    {
        let mut out = crate::report_cmd::text_out(opts);
        let written = pgrush_report::text::write_report(summary, &mut out);
        if let Err(e) = written.and_then(|_| out.flush())
            && !crate::report_cmd::text_to_stderr(opts)
        {
            return Err(crate::output_file::stdout_failed(&opts.progname, &e));
        }
    }
    let extras_status = extras.after_run(opts, summary);
    if summary.interrupted {
        messages::error(
            &opts.progname,
            "Run was interrupted by a signal; the above results are incomplete.",
        );
        return Ok(2);
    }
    if summary.aborted {
        messages::error(&opts.progname, pgrush_report::text::ABORTED_MESSAGE);
        return Ok(2);
    }
    extras_status.map(|passed| if passed { 0 } else { gate::ASSERTION_FAILED })
}
