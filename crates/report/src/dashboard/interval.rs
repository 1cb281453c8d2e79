//! One interval of the live page: the figures of a second of the run (or of several,
//! once a long run's intervals have been merged), as `data.json` sends them.

use std::collections::BTreeMap;

use pgrush_stats::live::{LiveCell, LiveTotals};
use serde::Serialize;

use crate::machine::MachineIntervalDoc;

/// One closed interval of the live run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveInterval {
    /// End of the interval, seconds since the endpoint started.
    pub t_s: f64,
    /// Length (s).
    pub duration_s: f64,
    /// The stage at its end (0: warm-up, then the stage's number; 1 without stages).
    pub stage: u32,
    /// Clients holding a connection at its end.
    pub clients_connected: u32,
    /// Successful transactions per second.
    pub tps: f64,
    /// Failed transactions per second, by kind (`serialization`, `deadlock`, `other`,
    /// `connection`).
    pub failures_per_s: BTreeMap<&'static str, f64>,
    /// Retries per second.
    pub retries_per_s: f64,
    /// Transactions skipped for being late (`-L`) per second.
    pub skipped_per_s: f64,
    /// Latency of the successful transactions (none without any).
    pub latency_ms: Option<LiveLatency>,
    /// Average latency per script (ms; `None` for a script without transactions).
    pub script_avg_ms: Vec<Option<f64>>,
    /// Successful transactions per script, to weigh the averages when intervals merge
    /// (not sent: the page has their rates).
    #[serde(skip)]
    pub script_transactions: Vec<u64>,
    /// The client machine's load over the interval, where `/proc` could be read.
    pub machine: Option<MachineIntervalDoc>,
    /// The server sampler's latest values (`--server-stats`, `--html`, `--json`,
    /// `--dashboard`), once it read any.
    pub server: Option<LiveServer>,
}

/// Latency over an interval (ms): the average, and the percentiles as the upper bounds
/// of the buckets that hold them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LiveLatency {
    /// Average.
    pub average: f64,
    /// Median (bucket bound).
    pub p50: f64,
    /// 90th percentile (bucket bound).
    pub p90: f64,
    /// 99th percentile (bucket bound).
    pub p99: f64,
    /// The highest (bucket bound).
    pub max: f64,
}

/// The server as its sampler last saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveServer {
    /// The benchmark's backends by wait event (`CPU`: running) in the latest sample.
    pub waits: BTreeMap<String, u64>,
    /// WAL written since the endpoint's first reading (MB).
    pub wal_mb: f64,
    /// Checkpoints started since the endpoint's first reading.
    pub checkpoints: u64,
}

impl LiveInterval {
    /// The interval of `cells` (one interval's deltas) of `duration_s` seconds ending
    /// at `t_s`; the machine, server, stage and clients are left for the caller.
    pub fn from_cells(cells: &LiveTotals, t_s: f64, duration_s: f64) -> LiveInterval {
        let per_s = |n: u64| {
            if duration_s > 0.0 {
                n as f64 / duration_s
            } else {
                0.0
            }
        };
        let all = cells.total();
        let c = &all.counters;
        let failures_per_s = BTreeMap::from([
            ("serialization", per_s(c.serialization_failures)),
            ("deadlock", per_s(c.deadlock_failures)),
            ("other", per_s(c.other_failures)),
            ("connection", per_s(c.connection_failures)),
        ]);
        LiveInterval {
            t_s,
            duration_s,
            stage: 0,
            clients_connected: 0,
            tps: per_s(c.successful),
            failures_per_s,
            retries_per_s: per_s(c.retries),
            skipped_per_s: per_s(c.skipped),
            latency_ms: latency(&all),
            script_avg_ms: (0..cells.shape.scripts)
                .map(|s| {
                    cells
                        .script_total(s)
                        .latency
                        .mean_us()
                        .map(|us| us / 1000.0)
                })
                .collect(),
            script_transactions: (0..cells.shape.scripts)
                .map(|s| cells.script_total(s).counters.successful)
                .collect(),
            machine: None,
            server: None,
        }
    }
}

/// The latency figures of `cell` (ms), none without successful transactions.
fn latency(cell: &LiveCell) -> Option<LiveLatency> {
    let h = &cell.latency;
    let at = |q: f64| h.quantile_upper_us(q).map_or(0.0, |us| us as f64 / 1000.0);
    Some(LiveLatency {
        average: h.mean_us()? / 1000.0,
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        max: at(1.0),
    })
}
