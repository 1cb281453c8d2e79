//! The benchmark engine of pgrush: worker threads, clients and pgbench's
//! per-client state machine.
//!
//! # Brief overview
//!
//! [`run`] takes an [`EngineConfig`] (scripts from `pgrush-script`, connection
//! parameters from `pgrush-wire`, generators drawn in pgbench's order, a
//! [`RunLimit`]) and runs the benchmark: `threads` worker threads, each one mio
//! event loop (`worker::Worker`: set-up, first connections, event loop, progress,
//! shutdown) over its share of the clients. Each client is a `client::Client`
//! whose `State` enum mirrors pgbench's `CSTATE_*` states; its steps are written
//! against two small traits (`conn::ClientConn`, `conn::Network`) implemented by
//! `pgrush_wire::Connection` in production and by a scripted fake in the unit
//! tests (generics, so the hot path is monomorphic). Statistics are collected per
//! thread without locks in [`pgrush_stats::ThreadStats`] and merged at the end
//! into a [`RunOutcome`]. Progress lines (`-P`) come from thread 0, which reads
//! the other threads' atomic counters and formats them with
//! `pgrush_stats::progress`.
//!
//! The engine prints what pgbench prints while running (client errors, `--debug`
//! lines, progress); errors that stop the run are returned as [`EngineError`]s,
//! whose text is pgbench's. The final report is written by `pgrush-report` from
//! the outcome (the engine does not depend on it). Setup work (scale detection,
//! vacuum, banner) is the CLI's. See `crates/engine/README.md` for the module map,
//! the states and their transitions.
#![deny(missing_docs)]

mod client;
pub mod clock;
mod cond;
mod config;
mod conn;
mod context;
mod error;
pub mod messages;
mod placement;
mod plan;
mod shared;
mod shell;
pub mod signal;
mod stage_run;
mod stage_timeline;
mod txlog;
mod worker;

use std::sync::Arc;

use pgrush_stats::{StatsLayout, ThreadStats};

pub use config::{
    EngineConfig, ErrorPolicy, LogConfig, Output, Pacing, ScriptChoice, Targets, ThreadRngs,
};
pub use error::EngineError;
pub use pgrush_stats::{QueryMode, RunLimit};
pub use placement::Placement;

use crate::client::Client;
use crate::plan::Plan;
use crate::shared::Shared;
use pgrush_script::{CardDeck, Variables};

/// The result of a run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Statistics merged over all threads.
    pub stats: ThreadStats,
    /// From the earliest thread start (after the initial connections) to the end, µs.
    pub bench_duration_us: u64,
    /// Time to establish the initial connections, µs.
    pub initial_connection_us: u64,
    /// Whether some client aborted.
    pub aborted: bool,
    /// Whether the run was stopped by SIGINT/SIGTERM.
    pub interrupted: bool,
    /// Whether SIGINT/SIGTERM came before the end of `--warmup`: nothing was measured.
    pub interrupted_in_warmup: bool,
    /// Whether `--exit-on-abort` stopped the run: the message is printed and every
    /// thread's log flushed; the caller exits with status 2 and no report, as pgbench.
    pub exited_on_abort: bool,
    /// Whether `-l` lines were lost: a write of a log file failed (the error was printed).
    pub log_write_failed: bool,
    /// When the measured interval started (the earliest thread), Unix µs on this
    /// machine's clock: with [`Placement::start_at_unix_us`], that instant or later.
    pub measured_start_unix_us: i64,
    /// Where the time series, the stages and the outages count from (the run start
    /// before the initial connections, the agreed start, or the end of `--warmup`), Unix
    /// µs on this machine's clock.
    pub origin_unix_us: i64,
    /// With stages ([`EngineConfig::stages`]), the statistics of each stage merged over
    /// all threads (a transaction counts in the stage of its scheduled start); empty
    /// without stages.
    pub stages: Vec<ThreadStats>,
    /// The variables each client ended with, in client order: what a script counted
    /// in variables of its own (a warm-up's transactions included).
    pub client_variables: Vec<Variables>,
}

/// Splits `clients` over `threads` as pgbench does (contiguous blocks, the
/// remainder spread over the last threads). Returns the block sizes.
pub fn clients_per_thread(clients: u32, threads: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(threads as usize);
    let mut dealt = 0;
    for i in 0..threads {
        let n = (clients - dealt + threads - i - 1) / (threads - i);
        out.push(n);
        dealt += n;
    }
    out
}

/// Stack of a worker thread: Rust's default for spawned threads plus what evaluating
/// the deepest expression of the scripts needs (pgbench accepts expressions
/// thousands of levels deep, and operator chains of any length).
fn worker_stack_size(scripts: &[pgrush_script::Script]) -> usize {
    const BASE: usize = 2 * 1024 * 1024;
    let eval = scripts
        .iter()
        .map(pgrush_script::Script::eval_stack_bytes)
        .max()
        .unwrap_or(0);
    BASE.saturating_add(eval)
}

/// Runs the benchmark described by `cfg`, collecting statistics shaped by `layout`.
pub fn run(cfg: &EngineConfig, layout: &StatsLayout) -> Result<RunOutcome, EngineError> {
    let threads = cfg.threads.max(1).min(cfg.clients.max(1));
    if cfg.client_rngs.len() < cfg.clients as usize {
        return Err(EngineError::Config(format!(
            "{} client generators for {} clients",
            cfg.client_rngs.len(),
            cfg.clients
        )));
    }
    if cfg.thread_rngs.len() < threads as usize {
        return Err(EngineError::Config(format!(
            "{} thread generator sets for {} threads",
            cfg.thread_rngs.len(),
            threads
        )));
    }
    if cfg.scripts.is_empty() {
        return Err(EngineError::Config("no script to run".to_string()));
    }
    let targets = &cfg.targets;
    if !(targets.of_script.is_empty() || targets.of_script.len() == cfg.scripts.len())
        || targets.of_script.iter().any(|&t| t > targets.servers.len())
    {
        return Err(EngineError::Config(format!(
            "script targets {:?} for {} scripts and {} servers",
            targets.of_script,
            cfg.scripts.len(),
            targets.servers.len()
        )));
    }
    let signal_fd = if cfg.handle_signals {
        let fd = signal::install().map_err(EngineError::Signal)?;
        signal::expect_workers(threads as usize);
        Some(fd)
    } else {
        None
    };
    let plan = Plan::new(cfg);
    let shared = Shared::new(
        threads as usize,
        signal_fd,
        cfg.placement.start_at_unix_us,
        cfg.pacing.warmup_us,
    );
    let results = deal_clients(cfg, layout, &plan, &shared, threads)
        .and_then(|blocks| run_threads(cfg, &plan, &shared, blocks));
    let end = shared.clock.now();
    if cfg.handle_signals && signal::ending_at_once() {
        // Every log is flushed: the signal's default action ends the process.
        signal::await_end();
    }
    if cfg.handle_signals {
        signal::uninstall();
    }
    let mut results = results?;
    let start_time = shared.run_start;
    let bench_start = results
        .iter()
        .map(|r| r.bench_start)
        .min()
        .unwrap_or(start_time);
    // Waiting for an agreed start or the end of a warm-up is not connecting: then the
    // connections are done when the last thread has made its own.
    let connected = match shared.start.or(shared.warmup_end) {
        Some(_) => results.iter().map(|r| r.connected).max(),
        None => None,
    }
    .unwrap_or(bench_start);
    let mut stats = ThreadStats::new(layout);
    for r in &results {
        stats.merge(&r.stats);
    }
    // Outages from the engine clock to µs from the measured start (the time series').
    let origin = shared.measured_origin();
    for o in &mut stats.outages {
        o.start_us -= origin;
        o.end_us = o.end_us.map(|t| t - origin);
    }
    stats.outages.sort_by_key(|o| (o.start_us, o.client));
    let mut stages: Vec<ThreadStats> = cfg
        .stages
        .iter()
        .map(|_| ThreadStats::new(layout))
        .collect();
    for r in &results {
        for (merged, thread) in stages.iter_mut().zip(&r.stages) {
            merged.merge(thread);
        }
    }
    let client_variables = results
        .iter_mut()
        .flat_map(|r| std::mem::take(&mut r.variables))
        .collect();
    Ok(RunOutcome {
        client_variables,
        stats,
        bench_duration_us: (end - bench_start).max(0) as u64,
        initial_connection_us: (connected - start_time).max(0) as u64,
        measured_start_unix_us: shared.clock.epoch_us(bench_start),
        origin_unix_us: shared.clock.epoch_us(shared.measured_origin()),
        aborted: results.iter().any(|r| r.aborted),
        interrupted: shared.interrupted(),
        interrupted_in_warmup: shared.interrupted_in_warmup(),
        exited_on_abort: shared.exit_requested(),
        log_write_failed: results.iter().any(|r| r.log_failed),
        stages,
    })
}

/// What one worker thread starts with: its clients, generators and statistics.
type ThreadBlock = (
    Vec<Client<pgrush_wire::Connection>>,
    ThreadRngs,
    worker::Recorders,
);

/// Creates the clients (each with the startup variables plus `client_id`) and
/// deals them to the threads.
fn deal_clients(
    cfg: &EngineConfig,
    layout: &StatsLayout,
    plan: &Plan,
    shared: &Shared,
    threads: u32,
) -> Result<Vec<ThreadBlock>, EngineError> {
    let mut blocks = Vec::with_capacity(threads as usize);
    let mut next_local = 0u32;
    let sizes = clients_per_thread(cfg.clients, threads);
    for (tid, &n) in sizes.iter().enumerate() {
        let mut clients = Vec::with_capacity(n as usize);
        for local in next_local..next_local + n {
            let id = cfg.placement.global_client_id(local).ok_or_else(|| {
                EngineError::Config(format!(
                    "client {local} after first client {} is past the last id",
                    cfg.placement.first_client
                ))
            })?;
            let mut vars = cfg.variables.clone();
            if !vars.is_defined("client_id") {
                vars.put_value(
                    "startup",
                    "client_id",
                    pgrush_script::Value::Int(i64::from(id)),
                )
                .map_err(|e| EngineError::Config(e.to_string()))?;
            }
            let rng = cfg.client_rngs[local as usize];
            let mut client = Client::new(id, vars, rng, plan.stmt_names.len());
            client.set_target(plan.targets_used.first().copied().unwrap_or(0));
            if cfg.script_choice == config::ScriptChoice::Deck {
                // A generator of its own, so that the deck leaves the client's draws alone.
                client.set_deck(CardDeck::new(&plan.weights, { rng }.derive()));
            }
            clients.push(client);
        }
        next_local += n;
        // Per-interval statistics (HDR histogram per interval), when the layout asks for
        // them: each `-P` interval, else each second, from the run start (or the agreed
        // start, or the end of the warm-up); merged interval by interval after the run.
        let interval_us = u64::from(cfg.output.progress.max(1)) * 1_000_000;
        let mut stats = ThreadStats::new(layout);
        // Only thread 0's `-P` reporter reads the published counters.
        if cfg.output.progress > 0 {
            stats = stats.with_progress(Arc::clone(&shared.progress[tid]));
        }
        if layout.time_series {
            stats = stats.with_series(shared.measured_origin(), interval_us);
        }
        let stages = (!cfg.stages.is_empty()).then(|| {
            let timeline =
                stage_timeline::Timeline::new(&cfg.stages, shared.measured_origin(), threads, tid);
            let first_id = clients.first().map_or(0, |c| c.id());
            let ranks = stage_run::activation_ranks(&sizes, tid);
            Box::new(stage_run::StageRun::new(
                timeline,
                ranks,
                first_id,
                cfg.stages.len(),
                layout,
            ))
        });
        let live = cfg
            .output
            .metrics
            .as_ref()
            .map(|m| Box::new(pgrush_stats::live::LiveRecorder::new(Arc::clone(m), tid)));
        blocks.push((
            clients,
            cfg.thread_rngs[tid],
            worker::Recorders {
                stats,
                stages,
                live,
            },
        ));
    }
    Ok(blocks)
}

/// Runs one worker thread per block and waits for all of them. The first thread
/// error (in thread order) is the run's.
fn run_threads(
    cfg: &EngineConfig,
    plan: &Plan,
    shared: &Shared,
    blocks: Vec<ThreadBlock>,
) -> Result<Vec<worker::ThreadResult>, EngineError> {
    let stack_size = worker_stack_size(&cfg.scripts);
    let outcomes = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(blocks.len());
        for (tid, (clients, rngs, recorders)) in blocks.into_iter().enumerate() {
            let h = std::thread::Builder::new()
                .name(format!("pgrush-worker-{tid}"))
                .stack_size(stack_size)
                .spawn_scoped(scope, move || {
                    worker::run_thread(tid, cfg, plan, clients, shared, rngs, recorders)
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The threads already started would wait for this one at
                    // READY: let them through; they see the failure and stop.
                    shared.abandon();
                    for h in handles {
                        if let Err(p) = h.join() {
                            std::panic::resume_unwind(p);
                        }
                    }
                    return Err(EngineError::Thread(e));
                }
            }
        }
        let mut outcomes = Vec::with_capacity(handles.len());
        for h in handles {
            match h.join() {
                Ok(r) => outcomes.push(r),
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        Ok::<_, EngineError>(outcomes)
    })?;
    let mut results = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        // `None`: the thread stopped because another one failed (its error follows).
        if let Some(result) = outcome? {
            results.push(result);
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_dealt_like_pgbench() {
        assert_eq!(clients_per_thread(10, 3), vec![4, 3, 3]);
        assert_eq!(clients_per_thread(4, 2), vec![2, 2]);
        assert_eq!(clients_per_thread(1, 1), vec![1]);
        assert_eq!(clients_per_thread(5, 4), vec![2, 1, 1, 1]);
    }

    #[test]
    fn worker_stacks_grow_with_the_deepest_expression() {
        let load = |text: &str| pgrush_script::load_script("s.sql", text, 1).expect("loads");
        let shallow = load("\\set x 1 + 2\nSELECT 1;\n");
        let base = worker_stack_size(std::slice::from_ref(&shallow));
        assert_eq!(base, 2 * 1024 * 1024 + pgrush_script::eval_stack_bytes(2));
        let chain = load(&format!("\\set x 1{}\n", "+1".repeat(5000)));
        let deep = worker_stack_size(&[shallow, chain]);
        assert_eq!(deep - base, pgrush_script::eval_stack_bytes(5001 - 2));
    }
}
