//! The `merged` block of a merged run's document ([`MergedDoc`]): the shards it was
//! merged from.

use serde::{Deserialize, Serialize};

/// The `merged` block of a merged run's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedDoc {
    /// Number of shards merged.
    pub shard_count: u32,
    /// The shards' common benchmark identity.
    pub benchmark_id: String,
    /// How the shards were started together (`barrier` or `start_at`), as shard 0 says.
    pub start_method: String,
    /// Latest shard start minus earliest (ms, server clock).
    pub start_spread_ms: f64,
    /// The shards, by index.
    pub shards: Vec<MergedShardDoc>,
}

/// One shard of a merged run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedShardDoc {
    /// Shard index.
    pub index: u32,
    /// Where the index came from (`option`, `slurm`, `mpi`, `kubernetes`).
    pub source: String,
    /// The client machine's host name, when known.
    pub host: Option<String>,
    /// Global id of the shard's first client.
    pub first_client: u32,
    /// The shard's clients.
    pub clients: u32,
    /// The shard's threads.
    pub threads: u32,
    /// Start of its measured interval, Unix seconds on the server's clock.
    pub start_time_unix: f64,
    /// Its measured duration (s).
    pub duration_s: f64,
    /// Its clock minus the server's (ms).
    pub clock_offset_ms: f64,
    /// The offset's uncertainty (ms).
    pub clock_offset_uncertainty_ms: f64,
    /// Its successful transactions.
    pub processed: u64,
}
