//! A run as one shard of a benchmark spread over several processes or machines
//! (`--shard INDEX/COUNT`, or a launcher's environment): who this shard is
//! ([`identity`]), its file names ([`paths`]), `--start-at` ([`start_time`]), the
//! workload digest ([`workload`]), the clock offset ([`clock_offset`]), the start
//! barrier ([`barrier`]), the agreed start ([`start`]) and what a shard prints about its
//! report ([`report_note`]); here, the wiring into a
//! run: the seeds a shard keeps, its placement and the `shard` block of its document.

pub mod barrier;
pub mod clock_offset;
pub mod identity;
pub mod paths;
pub mod report_note;
pub mod start;
pub mod start_time;
pub mod workload;

pub use identity::{LauncherEnv, ShardIdentity};

use pgrush_engine::{Placement, messages};
use pgrush_report::document::ShardDoc;
use pgrush_script::{SeedSlice, Seeds};
use pgrush_wire::Connection;

use crate::failure::Failure;
use crate::options::Options;
use crate::plan::RunPlan;

pub use start::{ShardStart, warn_if_late};
use start::{agree_on_start, describe};
use workload::workload_key;

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

/// After the setup connection's work: for a shard, the agreed start (the connection
/// then holds the barrier lock until the run ends); otherwise the connection is closed.
pub fn start_after_setup(
    plan: &RunPlan,
    script_facts: &[(Vec<u8>, u32, Vec<u8>)],
    mut con: Connection,
) -> Result<Option<ShardStart>, Failure> {
    let opts = &plan.options;
    match opts.shard {
        Some(identity) => {
            let key = workload_key(plan, script_facts, &mut con);
            let start = agree_on_start(plan, identity, &key, con)?;
            messages::info(&opts.progname, &describe(&start, opts.clients));
            Ok(Some(start))
        }
        None => {
            let _ = con.close();
            Ok(None)
        }
    }
}

/// The engine's placement: global client ids and the agreed start of a shard.
pub fn placement(opts: &Options, start: Option<&ShardStart>) -> Placement {
    Placement {
        first_client: opts.shard.map_or(0, |s| s.first_client(opts.clients)),
        start_at_unix_us: start.map(ShardStart::start_local_us),
    }
}

/// The run document's `shard` block.
pub fn shard_doc(start: &ShardStart, clients: u32) -> ShardDoc {
    let id = start.identity;
    ShardDoc {
        index: id.index,
        count: id.count,
        source: id.source.name().to_string(),
        first_client: id.first_client(clients),
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
        assert_eq!(RunPlan::resolve(opts.clone()).rate, 25.0);
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
        assert_eq!(RunPlan::resolve(alone.clone()).rate, 100.0);
        assert_eq!(placement(&alone, None), Placement::default());
        assert_eq!(seeds(&alone, 9, 2, false), Seeds::plan(9, 3, 2, false));
    }
}
