//! A run as one shard of a benchmark spread over several processes or machines
//! (`--shard INDEX/COUNT`, or a launcher's environment): who this shard is, its
//! file names, the start barrier, the clock offset and the benchmark's identity.
//! The wiring into a run is in `bench/sharding.rs`.

pub mod barrier;
pub mod clock_offset;
pub mod identity;
pub mod paths;
pub mod start_time;
pub mod workload;

pub use identity::{LauncherEnv, ShardIdentity};
