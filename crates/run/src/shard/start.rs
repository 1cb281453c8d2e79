//! A shard's agreed start: the clock offset, then `--start-at` or the start barrier,
//! and what the shard says about it.

use pgrush_engine::messages;
use pgrush_wire::Connection;

use super::{barrier, start_time};
use crate::failure::Failure;
use crate::plan::RunPlan;
use crate::shard::clock_offset::{self, ClockOffset};
use crate::shard::identity::ShardIdentity;
use crate::shard::workload::WorkloadKey;

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
    /// The name recorded in the run document (`barrier`, `start_at`).
    pub fn name(self) -> &'static str {
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

/// The margin between publishing the start and the start: connecting the clients.
fn start_margin_us(clients: u32, threads: u32) -> i64 {
    let per_thread = i64::from(clients.div_ceil(threads.max(1)));
    START_MARGIN_BASE_US + START_MARGIN_PER_CLIENT_US * per_thread
}

/// Settles the agreed start of shard `identity` on the setup connection `con`:
/// estimates the clock offset, then `--start-at` or the barrier.
pub fn agree_on_start(
    plan: &RunPlan,
    identity: ShardIdentity,
    key: &WorkloadKey,
    mut con: Connection,
) -> Result<ShardStart, Failure> {
    let opts = &plan.options;
    let offset = clock_offset::estimate(&mut con)
        .map_err(|e| Failure::error(format!("could not read the server's clock: {e}")))?;
    let (start_server_us, method) = match &opts.start_at {
        Some((given, start_us)) => {
            let now = offset.to_server(pgrush_stats::wall_clock::unix_time_us());
            start_time::check_ahead(given, *start_us, now)
                .map_err(|e| Failure::error(e.to_string()))?;
            (*start_us, StartMethod::StartAt)
        }
        None => {
            let bkey = key.barrier_key();
            let timeout = opts.shard_timeout_s;
            barrier::arrive(&mut con, bkey, identity.index)
                .map_err(|e| Failure::error(e.to_string()))?;
            let start = if identity.index == 0 {
                barrier::lead(
                    &mut con,
                    bkey,
                    identity.count,
                    timeout,
                    start_margin_us(opts.clients, plan.threads),
                )
            } else {
                barrier::follow(&mut con, bkey, timeout)
            };
            (start.map_err(|e| barrier_failed(&e))?, StartMethod::Barrier)
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

/// The line a shard prints once its start is agreed on.
pub fn describe(start: &ShardStart, clients: u32) -> String {
    let id = start.identity;
    let first = id.first_client(clients);
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

/// Why the barrier failed (with a hint when shards never arrived).
fn barrier_failed(e: &barrier::BarrierError) -> Failure {
    let failure = Failure::error(e.to_string());
    if matches!(e, barrier::BarrierError::NeverArrived { .. }) {
        return failure.hint(
            "Every shard must run the same scripts and options (-c, -j, -t/-T, -R, -D, --random-seed, ...) against the same database.",
        );
    }
    failure
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_grows_with_the_clients_of_a_thread() {
        assert_eq!(start_margin_us(3, 1), 1_060_000);
        assert_eq!(start_margin_us(3, 3), 1_020_000);
    }
}
