//! The shards on one time line (the server's clock): the common measured interval, where
//! each shard's time series starts in it, and the initial connection time of all threads.

use super::check::Shard;

/// Where each shard's measurement lies on the server's clock (µs since the Unix epoch).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timeline {
    /// Each shard's start, in shard order.
    pub starts_us: Vec<f64>,
    /// The earliest start.
    pub start_us: f64,
    /// The latest end.
    pub end_us: f64,
}

/// A shard's start on the server's clock: its `start_time_unix` (client clock) minus its
/// clock offset (client minus server), to the µs (the document's instants are whole µs; the
/// rounding removes the noise of the seconds' binary form).
fn start_on_server_us(s: &Shard<'_>) -> f64 {
    (s.doc.start_time_unix * 1e6 - s.shard.clock_offset_ms * 1000.0).round()
}

impl Timeline {
    /// The time line of `shards` (at least one).
    pub fn of(shards: &[Shard<'_>]) -> Self {
        let starts_us: Vec<f64> = shards.iter().map(start_on_server_us).collect();
        let ends = shards
            .iter()
            .zip(&starts_us)
            .map(|(s, start)| start + s.doc.results.duration_s * 1e6);
        let start_us = starts_us.iter().copied().fold(f64::INFINITY, f64::min);
        let end_us = ends.fold(f64::NEG_INFINITY, f64::max);
        Timeline {
            starts_us,
            start_us,
            end_us,
        }
    }

    /// The common measured interval: from the earliest start to the latest end (µs).
    pub fn duration_us(&self) -> u64 {
        (self.end_us - self.start_us).round().max(0.0) as u64
    }

    /// How far apart the shards started (ms).
    pub fn start_spread_ms(&self) -> f64 {
        let latest = self.starts_us.iter().copied().fold(self.start_us, f64::max);
        (latest - self.start_us) / 1000.0
    }

    /// How many whole intervals of `interval_us` shard `i` started after the earliest one
    /// (rounded to the nearest: shards that start together share interval boundaries).
    pub fn series_offset(&self, i: usize, interval_us: u64) -> usize {
        let after = self.starts_us.get(i).copied().unwrap_or(self.start_us) - self.start_us;
        (after / interval_us.max(1) as f64).round().max(0.0) as usize
    }
}

/// pgbench 18's initial connection time for the whole run: from the run's start to the
/// earliest instant a thread had connected and began benchmarking (not an average). A
/// shard's figure is that for its threads (any wait for the agreed start excluded); with
/// every shard's threads started together, the whole run's is the smallest (µs).
pub(crate) fn initial_connection_us(shards: &[Shard<'_>]) -> u64 {
    shards
        .iter()
        .map(|s| s.doc.results.initial_connection_time_ms.unwrap_or(0.0) * 1000.0)
        .fold(f64::INFINITY, f64::min)
        .round()
        .clamp(0.0, u64::MAX as f64) as u64
}
