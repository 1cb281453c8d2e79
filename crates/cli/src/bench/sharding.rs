//! A benchmark run as one shard: the seeds it keeps, its rate, the workload digest,
//! the clock offset, the start barrier (or `--start-at`) and the `shard` block of
//! its run document.

use pgrush_engine::{Placement, messages};
use pgrush_report::document::ShardDoc;
use pgrush_script::{SeedSlice, Seeds};
use pgrush_wire::Connection;

use crate::options::{Options, SeedChoice};
use crate::shard::clock_offset::{self, ClockOffset};
use crate::shard::workload::{WorkloadDigest, WorkloadKey};
use crate::shard::{ShardIdentity, barrier, start_time};

/// What the shard margin before the start covers: connecting every client.
const START_MARGIN_BASE_US: i64 = 1_000_000;
/// Extra margin per client of the slowest thread (one connection after the other).
const START_MARGIN_PER_CLIENT_US: i64 = 20_000;
/// A shard that starts measuring later than this after the agreed start warns.
const LATE_START_WARNING_US: i64 = 10_000;

/// How the shards agreed on their start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartMethod {
    /// The start barrier through the database.
    Barrier,
    /// `--start-at`.
    StartAt,
}

impl StartMethod {
    fn name(self) -> &'static str {
        match self {
            StartMethod::Barrier => "barrier",
            StartMethod::StartAt => "start_at",
        }
    }
}

/// A shard's agreed start, once the barrier (or `--start-at`) settled it.
#[derive(Debug)]
pub struct ShardStart {
    /// Who this shard is.
    pub identity: ShardIdentity,
    /// The agreed start, server Unix µs.
    pub start_server_us: i64,
    /// This machine's clock against the server's.
    pub offset: ClockOffset,
    /// How it was agreed on.
    pub method: StartMethod,
    /// The benchmark's identity (equal in every shard).
    pub benchmark_id: String,
    /// The setup connection, holding the barrier lock until the run ends.
    pub connection: Connection,
}

impl ShardStart {
    /// The agreed start on this machine's clock, Unix µs.
    pub fn start_local_us(&self) -> i64 {
        self.offset.to_local(self.start_server_us)
    }
}

/// The global id of shard `shard`'s first client with `clients` clients a shard.
pub fn first_client(shard: &ShardIdentity, clients: u32) -> u32 {
    shard.index.saturating_mul(clients)
}

/// The seeds of this run: pgbench's plan; for a shard, its slice of the plan of one
/// run with every shard's clients and threads.
pub fn seeds(opts: &Options, seed: u64, threads: u32, default_seed_defined: bool) -> Seeds {
    let Some(shard) = opts.shard else {
        return Seeds::plan(
            seed,
            opts.clients as usize,
            threads as usize,
            default_seed_defined,
        );
    };
    let (n, index) = (shard.count as usize, shard.index as usize);
    let (clients, threads) = (opts.clients as usize, threads as usize);
    let part = SeedSlice {
        clients_total: clients.saturating_mul(n),
        first_client: index.saturating_mul(clients),
        clients,
        threads_total: threads.saturating_mul(n),
        first_thread: index.saturating_mul(threads),
        threads,
    };
    // The slice is in range: index < count.
    Seeds::plan_slice(seed, &part, default_seed_defined)
        .unwrap_or_else(|| Seeds::plan(seed, clients, threads, default_seed_defined))
}

/// `-R` of this process: the total rate split evenly over the shards.
pub fn rate(opts: &Options) -> f64 {
    match opts.shard {
        Some(shard) if opts.rate > 0.0 => opts.rate / f64::from(shard.count),
        _ => opts.rate,
    }
}

/// The digest of everything every shard must agree on: scripts and weights, the
/// workload options, the shard count, the server's identity and the database.
pub fn workload_key(
    opts: &Options,
    scripts: &[(Vec<u8>, u32, Vec<u8>)],
    con: &mut Connection,
) -> WorkloadKey {
    let mut d = WorkloadDigest::new();
    for (name, weight, text) in scripts {
        d.add("script", name)
            .add("weight", &weight.to_le_bytes())
            .add("text", text);
    }
    let limit = match opts.duration {
        Some(t) => format!("T{t}"),
        None => format!("t{}", opts.transactions.unwrap_or(10)),
    };
    let seed = match (opts.random_seed_explicit, opts.random_seed) {
        (true, SeedChoice::Value(v)) => v.to_string(),
        _ => "time".to_string(),
    };
    d.add("clients", opts.clients.to_string().as_bytes())
        .add("jobs", opts.jobs.to_string().as_bytes())
        .add("limit", limit.as_bytes())
        .add("rate", opts.rate.to_string().as_bytes())
        .add(
            "latency_limit",
            opts.latency_limit_us.to_string().as_bytes(),
        )
        .add("protocol", format!("{:?}", opts.query_mode).as_bytes())
        .add("max_tries", opts.max_tries.to_string().as_bytes())
        .add("random_seed", seed.as_bytes())
        .add("connect", &[u8::from(opts.connect_per_transaction)]);
    for (name, value) in &opts.defines {
        d.add("define", name).add("value", value);
    }
    if let Some(shard) = opts.shard {
        d.add("shards", shard.count.to_string().as_bytes());
    }
    d.add("server", server_identity(con).as_bytes())
        .add("database", con.db().as_bytes());
    d.finish()
}

/// The server's `system_identifier`; where `pg_control_system()` is not allowed, its
/// start time (both are the same whichever address a shard connects to).
fn server_identity(con: &mut Connection) -> String {
    const QUERIES: [&str; 2] = [
        "select 'system ' || system_identifier from pg_catalog.pg_control_system()",
        "select 'started ' || pg_catalog.pg_postmaster_start_time()",
    ];
    QUERIES
        .iter()
        .find_map(|sql| {
            let results = con.simple_query(sql).ok()?;
            results.first()?.get(0, 0).map(str::to_string)
        })
        .unwrap_or_default()
}

/// The margin between publishing the start and the start: connecting the clients.
fn start_margin_us(opts: &Options, threads: u32) -> i64 {
    let per_thread = i64::from(opts.clients.div_ceil(threads.max(1)));
    START_MARGIN_BASE_US + START_MARGIN_PER_CLIENT_US * per_thread
}

/// Settles the agreed start of shard `identity` on the setup connection `con`:
/// estimates the clock offset, then `--start-at` or the barrier. Errors are printed;
/// the exit status is 1.
pub fn agree_on_start(
    opts: &Options,
    identity: ShardIdentity,
    key: &WorkloadKey,
    threads: u32,
    mut con: Connection,
) -> Result<ShardStart, i32> {
    let prog = opts.progname.as_str();
    let fail = |msg: &str| {
        messages::error(prog, msg);
        1
    };
    let offset = clock_offset::estimate(&mut con)
        .map_err(|e| fail(&format!("could not read the server's clock: {e}")))?;
    let (start_server_us, method) = match &opts.start_at {
        Some((given, start_us)) => {
            let now = offset.to_server(clock_offset::local_now_us());
            start_time::check_ahead(given, *start_us, now).map_err(|e| fail(&e.to_string()))?;
            (*start_us, StartMethod::StartAt)
        }
        None => {
            let bkey = key.barrier_key();
            let timeout = opts.shard_timeout_s;
            barrier::arrive(&mut con, bkey, identity.index).map_err(|e| fail(&e.to_string()))?;
            let start = if identity.index == 0 {
                barrier::lead(
                    &mut con,
                    bkey,
                    identity.count,
                    timeout,
                    start_margin_us(opts, threads),
                )
            } else {
                barrier::follow(&mut con, bkey, timeout)
            };
            (
                start.map_err(|e| barrier_failed(prog, &e))?,
                StartMethod::Barrier,
            )
        }
    };
    Ok(ShardStart {
        identity,
        start_server_us,
        offset,
        method,
        benchmark_id: key.benchmark_id(start_server_us),
        connection: con,
    })
}

/// After the setup connection's work: for a shard, the agreed start (the connection
/// then holds the barrier lock until the run ends); otherwise the connection is closed.
pub fn start_after_setup(
    opts: &Options,
    script_facts: &[(Vec<u8>, u32, Vec<u8>)],
    threads: u32,
    mut con: Connection,
) -> Result<Option<ShardStart>, i32> {
    match opts.shard {
        Some(identity) => {
            let key = workload_key(opts, script_facts, &mut con);
            let start = agree_on_start(opts, identity, &key, threads, con)?;
            messages::info(&opts.progname, &describe(&start, opts.clients));
            Ok(Some(start))
        }
        None => {
            let _ = con.close();
            Ok(None)
        }
    }
}

/// The line a shard prints once its start is agreed on.
fn describe(start: &ShardStart, clients: u32) -> String {
    let id = start.identity;
    let first = first_client(&id, clients);
    format!(
        "shard {} of {} ({}): clients {} to {} of {}; measuring from {:.6} (server clock, {}); this clock is {:+.3} ms off (± {:.3} ms)",
        id.index,
        id.count,
        id.source.name(),
        first,
        first + clients.saturating_sub(1),
        id.count.saturating_mul(clients),
        start.start_server_us as f64 / 1e6,
        start.method.name(),
        start.offset.offset_us as f64 / 1000.0,
        start.offset.uncertainty_us as f64 / 1000.0,
    )
}

/// The engine's placement: global client ids and the agreed start of a shard.
pub fn placement(opts: &Options, start: Option<&ShardStart>) -> Placement {
    Placement {
        first_client: opts.shard.map_or(0, |s| first_client(&s, opts.clients)),
        start_at_unix_us: start.map(ShardStart::start_local_us),
    }
}

/// Prints why the barrier failed (with a hint when shards never arrived); status 1.
fn barrier_failed(prog: &str, e: &barrier::BarrierError) -> i32 {
    messages::error(prog, &e.to_string());
    if matches!(e, barrier::BarrierError::NeverArrived { .. }) {
        messages::hint(
            prog,
            "Every shard must run the same scripts and options (-c, -j, -t/-T, -R, -D, --random-seed, ...) against the same database.",
        );
    }
    1
}

/// Warns when this shard started measuring noticeably after the agreed start.
pub fn warn_if_late(prog: &str, start: &ShardStart, measured_start_unix_us: i64) {
    let late_us = measured_start_unix_us - start.start_local_us();
    if late_us > LATE_START_WARNING_US {
        messages::warning(
            prog,
            &format!(
                "shard {} started measuring {:.1} ms after the agreed start (connecting took longer than the start margin)",
                start.identity.index,
                late_us as f64 / 1000.0
            ),
        );
    }
}

/// The run document's `shard` block.
pub fn shard_doc(start: &ShardStart, clients: u32) -> ShardDoc {
    let id = start.identity;
    ShardDoc {
        index: id.index,
        count: id.count,
        source: id.source.name().to_string(),
        first_client: first_client(&id, clients),
        clients_total: id.count.saturating_mul(clients),
        benchmark_id: start.benchmark_id.clone(),
        start_unix_us: start.start_server_us,
        clock_offset_ms: start.offset.offset_us as f64 / 1000.0,
        clock_offset_uncertainty_ms: start.offset.uncertainty_us as f64 / 1000.0,
        start_method: start.method.name().to_string(),
    }
}

/// A shard's time series starts at the agreed start, where its measured interval
/// starts too (the document's builder assumes it starts before the connections):
/// the interval lengths and rates over `[0, bench_duration_s]`.
pub fn align_time_series(doc: &mut pgrush_report::document::RunDocument, bench_duration_s: f64) {
    let Some(series) = doc.time_series.as_mut() else {
        return;
    };
    let interval_s = series.interval_s;
    for iv in &mut series.intervals {
        let from = iv.start_s.max(0.0);
        let to = (iv.start_s + interval_s).min(bench_duration_s);
        iv.duration_s = if to > from { to - from } else { interval_s };
        iv.tps = if iv.duration_s > 0.0 {
            iv.transactions.processed as f64 / iv.duration_s
        } else {
            0.0
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::identity::ShardSource;

    fn shard(index: u32, count: u32) -> Options {
        Options {
            clients: 3,
            rate: 100.0,
            shard: Some(ShardIdentity {
                index,
                count,
                source: ShardSource::Option,
            }),
            ..Options::default()
        }
    }

    #[test]
    fn a_shard_takes_its_clients_seeds_and_share_of_the_rate() {
        let opts = shard(2, 4);
        assert_eq!(rate(&opts), 25.0);
        assert_eq!(placement(&opts, None).first_client, 6);
        let whole = Seeds::plan(9, 12, 8, false);
        let mine = seeds(&opts, 9, 2, false);
        assert_eq!(mine.clients, whole.clients[6..9]);
        assert_eq!(mine.threads, whole.threads[4..6]);
        let alone = Options {
            clients: 3,
            rate: 100.0,
            ..Options::default()
        };
        assert_eq!(rate(&alone), 100.0);
        assert_eq!(placement(&alone, None), Placement::default());
        assert_eq!(seeds(&alone, 9, 2, false), Seeds::plan(9, 3, 2, false));
    }

    #[test]
    fn the_margin_grows_with_the_clients_of_a_thread() {
        let opts = shard(0, 2);
        assert_eq!(start_margin_us(&opts, 1), 1_060_000);
        assert_eq!(start_margin_us(&opts, 3), 1_020_000);
    }
}
