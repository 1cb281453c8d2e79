//! The sampler's latest values, for a live view of the server during the run
//! (`--metrics-listen`): the sampling thread copies them into a [`LatestSlot`] after
//! each sample when it was given one; nothing else changes in how it samples.

use std::sync::{Arc, Mutex};

use crate::snapshot::Snapshot;
use crate::waits::WaitSample;

/// Where the sampler puts its latest values.
pub type LatestSlot = Arc<Mutex<ServerLatest>>;

/// The latest values the sampler read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerLatest {
    /// The benchmark's backends by state in the latest wait sample (`Type:Event`, or
    /// `CPU`), sorted by label.
    pub waits: Vec<(String, u64)>,
    /// WAL bytes written (cumulative, `pg_stat_wal`).
    pub wal_bytes: u64,
    /// Checkpoints started (cumulative).
    pub checkpoints: u64,
    /// The database's buffer hits and reads (cumulative, `pg_stat_database`).
    pub blocks_hit: u64,
    /// See `blocks_hit`.
    pub blocks_read: u64,
    /// Whether the counters above were read at least once.
    pub counters_read: bool,
}

impl ServerLatest {
    /// The share of buffer accesses found in shared buffers (`None` before any).
    pub fn hit_ratio(&self) -> Option<f64> {
        let all = self.blocks_hit + self.blocks_read;
        (all > 0).then(|| self.blocks_hit as f64 / all as f64)
    }

    /// Takes the backends' states of a wait sample.
    pub(crate) fn set_waits(&mut self, sample: &WaitSample) {
        let mut waits: Vec<(String, u64)> = Vec::new();
        for label in &sample.backends {
            match waits.iter_mut().find(|(l, _)| l == label) {
                Some((_, n)) => *n += 1,
                None => waits.push((label.clone(), 1)),
            }
        }
        waits.sort();
        self.waits = waits;
    }

    /// Takes the counters of a snapshot.
    pub(crate) fn set_counters(&mut self, s: &Snapshot) {
        self.wal_bytes = s.wal[2];
        self.checkpoints = s.checkpoints[0];
        self.blocks_hit = s.database.blocks_hit;
        self.blocks_read = s.database.blocks_read;
        self.counters_read = true;
    }
}

/// Updates the slot, if there is one (a poisoned lock is still updated).
pub(crate) fn publish(slot: Option<&LatestSlot>, update: impl FnOnce(&mut ServerLatest)) {
    if let Some(slot) = slot {
        update(&mut slot.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_sample_becomes_counts_per_state() {
        let sample = WaitSample {
            backends: vec!["CPU".into(), "Lock:tuple".into(), "CPU".into()],
            ..WaitSample::default()
        };
        let mut latest = ServerLatest::default();
        latest.set_waits(&sample);
        assert_eq!(
            latest.waits,
            vec![("CPU".to_string(), 2), ("Lock:tuple".to_string(), 1)]
        );
        assert_eq!(latest.hit_ratio(), None);
        latest.blocks_hit = 3;
        latest.blocks_read = 1;
        assert_eq!(latest.hit_ratio(), Some(0.75));
    }
}
