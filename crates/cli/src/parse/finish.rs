//! The checks pgbench makes after the option loop, in its order.

use super::apply::State;
use super::diag::{Diag, cat};
use super::values::text;
use pgrush_run::options::{Action, Options, PartitionMethod, Workload};

/// Default `-t` when neither `-t` nor `-T` is given.
pub const DEFAULT_TRANSACTIONS: u32 = 10;

/// Default `-I` steps.
pub const DEFAULT_INIT_STEPS: &str = "dtgvp";

/// Validates the option combination and fills in derived values.
pub fn finish(state: State, positional: &[&[u8]], diag: &mut Diag<'_>) -> Result<Options, i32> {
    let State {
        mut opts,
        benchmarking_option_set,
        initialization_option_set,
        seed_option_set,
        init_mode,
        init_steps,
        total_weight,
        launcher,
        ..
    } = state;

    // No scripts means the default tpcb-like script with weight 1.
    if !init_mode && !opts.scripts.is_empty() && total_weight == 0 {
        return fatal(diag, b"total script weight must not be zero");
    }

    let mut rest = positional.iter();
    if opts.dbname.is_none() {
        opts.dbname = rest.next().map(|db| text(db));
    }
    if let Some(extra) = rest.next() {
        diag.error(&cat(&[
            b"too many command-line arguments (first is \"",
            extra,
            b"\")",
        ]));
        diag.try_help();
        return Err(1);
    }

    let tpcc = opts.workload == Workload::Tpcc;
    if init_mode {
        if benchmarking_option_set || (seed_option_set && !tpcc) {
            return fatal(
                diag,
                b"some of the specified options cannot be used in initialization (-i) mode",
            );
        }
        if opts.partitions == 0 && opts.partition_method.is_some() {
            return fatal(
                diag,
                b"--partition-method requires greater than zero --partitions",
            );
        }
        if tpcc && opts.partitions > 0 {
            return fatal(diag, b"--partitions cannot be used with --workload tpcc");
        }
        if opts.partitions > 0 && opts.partition_method.is_none() {
            opts.partition_method = Some(PartitionMethod::Range);
        }
        opts.init_steps = init_steps_for(init_steps, opts.no_vacuum, opts.foreign_keys);
        opts.action = Action::Init;
        return Ok(opts);
    }
    if let Some(steps) = init_steps {
        opts.init_steps = text(&steps);
    }
    if opts.check && !tpcc {
        return fatal(diag, b"--check is allowed only with --workload tpcc");
    }
    if opts.tpcc_mode.is_some() && !tpcc {
        return fatal(diag, b"--tpcc-mode is allowed only with --workload tpcc");
    }
    if opts.tpcc_think.is_some() && !tpcc {
        return fatal(diag, b"--tpcc-think is allowed only with --workload tpcc");
    }
    if tpcc && !opts.scripts.is_empty() {
        return fatal(
            diag,
            b"-b, -f, -N and -S cannot be used with --workload tpcc (it runs its own five transactions)",
        );
    }
    if initialization_option_set {
        return fatal(
            diag,
            b"some of the specified options cannot be used in benchmarking mode",
        );
    }
    if let Some(msg) = pgrush_run::targets::usage_error(&opts) {
        diag.error(&msg);
        diag.try_help();
        return Err(1);
    }
    check_stages(&mut opts, diag)?;
    check_benchmark(&opts, diag)?;
    check_assertions(&opts, diag)?;
    super::shard_options::settle(&mut opts, &launcher, diag)?;
    if opts.transactions.is_none() && opts.duration.is_none() {
        opts.transactions = Some(DEFAULT_TRANSACTIONS);
    }
    Ok(opts)
}

/// `-I` after `-n` (every `v` becomes a space) and `--foreign-keys` (`f`
/// appended when missing).
fn init_steps_for(given: Option<Vec<u8>>, no_vacuum: bool, foreign_keys: bool) -> String {
    let mut steps = given.unwrap_or_else(|| DEFAULT_INIT_STEPS.as_bytes().to_vec());
    if no_vacuum {
        for c in steps.iter_mut().filter(|c| **c == b'v') {
            *c = b' ';
        }
    }
    if foreign_keys && !steps.contains(&b'f') {
        steps.push(b'f');
    }
    text(&steps)
}

/// Stages set the run's duration (their total): not with `-t` or `-T`, and no stage
/// with more clients than `-c`.
fn check_stages(o: &mut Options, diag: &mut Diag<'_>) -> Result<(), i32> {
    if o.stages.is_empty() {
        return Ok(());
    }
    if o.transactions.is_some() || o.duration.is_some() {
        return fatal(
            diag,
            b"stages (--stage, --stages) set the duration of the run: not with -t or -T",
        );
    }
    match pgrush_stats::stages::resolve(&o.stages, o.clients, o.rate) {
        Ok(stages) => {
            o.duration = Some(pgrush_stats::stages::total_duration_s(&stages));
            Ok(())
        }
        Err(e) => fatal(diag, format!("invalid stages: {e}").as_bytes()),
    }
}

/// Benchmark-mode combination checks, in pgbench's order.
fn check_benchmark(o: &Options, diag: &mut Diag<'_>) -> Result<(), i32> {
    let duration = o.duration.unwrap_or(0);
    if o.transactions.is_some() && duration > 0 {
        return fatal(
            diag,
            b"specify either a number of transactions (-t) or a duration (-T), not both",
        );
    }
    let sampling = o.sampling_rate > 0.0 || o.sampling_rate.is_nan();
    if sampling && !o.log {
        return fatal(
            diag,
            b"log sampling (--sampling-rate) is allowed only when logging transactions (-l)",
        );
    }
    if sampling && o.aggregate_interval > 0 {
        return fatal(
            diag,
            b"log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time",
        );
    }
    if o.aggregate_interval > 0 && !o.log {
        return fatal(
            diag,
            b"log aggregation is allowed only when actually logging transactions",
        );
    }
    if !o.log && o.log_prefix.is_some() {
        return fatal(
            diag,
            b"log file prefix (--log-prefix) is allowed only when logging transactions (-l)",
        );
    }
    let agg = o.aggregate_interval;
    if duration > 0 && agg > duration {
        return fatal(
            diag,
            format!(
                "number of seconds for aggregation ({agg}) must not be higher than test duration ({duration})"
            )
            .as_bytes(),
        );
    }
    if duration > 0 && duration.checked_rem(agg).is_some_and(|r| r != 0) {
        return fatal(
            diag,
            format!("duration ({duration}) must be a multiple of aggregation interval ({agg})")
                .as_bytes(),
        );
    }
    if o.progress_timestamp && o.progress == 0 {
        return fatal(
            diag,
            b"--progress-timestamp is allowed only under --progress",
        );
    }
    if o.max_tries == 0 && o.latency_limit_us == 0 && duration == 0 {
        return fatal(
            diag,
            b"an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)",
        );
    }
    Ok(())
}

/// `--assert` expressions whose metric or script the run cannot produce (lag without
/// `-R`, late without `-L`, an unknown script, `baseline`), and `--junit` without them.
fn check_assertions(o: &Options, diag: &mut Diag<'_>) -> Result<(), i32> {
    if o.junit.is_some() && o.assertions.is_empty() {
        diag.error(b"--junit is allowed only with --assert");
        diag.try_help();
        return Err(1);
    }
    let facts = pgrush_run::gate::run_facts(o);
    if let Err(msg) = pgrush_run::gate::resolve(&o.assertions, &facts) {
        diag.error(msg.as_bytes());
        diag.try_help();
        return Err(1);
    }
    Ok(())
}

fn fatal<T>(diag: &mut Diag<'_>, msg: &[u8]) -> Result<T, i32> {
    diag.error(msg);
    Err(1)
}
