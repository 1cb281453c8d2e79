//! Wait sampling: what the benchmark's backends, the checkpointer and the autovacuum
//! workers were doing at one instant, counted into shares per interval, and turned
//! into events (a checkpoint or an autovacuum run is a stretch of samples in which
//! it was seen working).

use std::collections::BTreeMap;

use pgrush_stats::server::{EventKind, ServerEvent};
use pgrush_wire::QueryResult;

/// What one wait sample saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WaitSample {
    /// One label per benchmark backend: `Type:Event`, or `CPU` when active without a wait.
    pub backends: Vec<String>,
    /// Whether the checkpointer was working (not waiting in its main loop); `None`
    /// when it is not visible.
    pub checkpointer_busy: Option<bool>,
    /// Tables being vacuumed or analyzed by autovacuum workers.
    pub autovacuum: Vec<(EventKind, String)>,
    /// Waiting lock requests: `locktype` or `locktype:relation`, and how many.
    pub locks: Vec<(String, u64)>,
}

/// The label of a backend's state: its wait, `CPU` when active and not waiting,
/// `None` for an idle backend that reports no wait (not part of the run's time).
fn backend_label(state: &str, wait_type: &str, wait: &str) -> Option<String> {
    if !wait_type.is_empty() {
        Some(format!("{wait_type}:{wait}"))
    } else if state == "active" {
        Some("CPU".to_string())
    } else {
        None
    }
}

/// The table and kind in an autovacuum worker's `query` (`autovacuum: VACUUM
/// ANALYZE public.pgbench_accounts`, `... (to prevent wraparound)`).
fn autovacuum_target(query: &str) -> Option<(EventKind, String)> {
    let rest = query.strip_prefix("autovacuum: ")?;
    let (kind, rest) = if let Some(r) = rest.strip_prefix("VACUUM ANALYZE ") {
        (EventKind::Autovacuum, r)
    } else if let Some(r) = rest.strip_prefix("VACUUM ") {
        (EventKind::Autovacuum, r)
    } else if let Some(r) = rest.strip_prefix("ANALYZE ") {
        (EventKind::Autoanalyze, r)
    } else {
        return None;
    };
    let name = rest.split_whitespace().next()?;
    let table = name.rsplit('.').next().unwrap_or(name);
    Some((kind, table.to_string()))
}

impl WaitSample {
    /// Reads the results of [`crate::catalog::Capabilities::waits_query`].
    pub fn parse(results: &[QueryResult]) -> WaitSample {
        let mut s = WaitSample::default();
        if let Some(r) = results.first() {
            for row in 0..r.rows().len() {
                let col = |c| r.get(row, c).unwrap_or_default();
                match col(0) {
                    "client backend" => s.backends.extend(backend_label(col(1), col(2), col(3))),
                    "checkpointer" if !col(2).is_empty() || !col(1).is_empty() => {
                        s.checkpointer_busy = Some(col(3) != "CheckpointerMain");
                    }
                    "checkpointer" => s.checkpointer_busy = Some(true),
                    "autovacuum worker" => s.autovacuum.extend(autovacuum_target(col(4))),
                    _ => {}
                }
            }
        }
        if let Some(r) = results.get(1) {
            for row in 0..r.rows().len() {
                let kind = r.get(row, 0).unwrap_or_default();
                let rel = r.get(row, 1).unwrap_or_default();
                let key = if rel.is_empty() {
                    kind.to_string()
                } else {
                    format!("{kind}:{rel}")
                };
                let n = r.get(row, 2).and_then(|v| v.parse().ok()).unwrap_or(0);
                s.locks.push((key, n));
            }
        }
        s
    }
}

/// Wait samples counted over one interval.
#[derive(Debug, Clone, Default)]
pub struct WaitCounts {
    /// Backend samples per label.
    pub by_label: BTreeMap<String, u64>,
    /// Waiting lock requests per key.
    pub locks: BTreeMap<String, u64>,
}

impl WaitCounts {
    /// Adds one sample.
    pub fn add(&mut self, s: &WaitSample) {
        for b in &s.backends {
            *self.by_label.entry(b.clone()).or_default() += 1;
        }
        for (k, n) in &s.locks {
            *self.locks.entry(k.clone()).or_default() += n;
        }
    }

    /// Adds all of `other`.
    pub fn merge(&mut self, other: &WaitCounts) {
        for (k, n) in &other.by_label {
            *self.by_label.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &other.locks {
            *self.locks.entry(k.clone()).or_default() += n;
        }
    }

    /// Each label's share of all backend samples.
    pub fn shares(&self) -> BTreeMap<String, f64> {
        let total: u64 = self.by_label.values().sum();
        self.by_label
            .iter()
            .map(|(k, &n)| (k.clone(), n as f64 / total.max(1) as f64))
            .collect()
    }
}

/// Turns the samples' sightings into events: consecutive sightings of the same
/// activity form one event, from the first sighting to one sample period after the last.
#[derive(Debug, Default)]
pub struct EventTracker {
    open: Vec<(EventKind, Option<String>, f64, f64)>,
    /// Events that have ended.
    pub done: Vec<ServerEvent>,
}

impl EventTracker {
    /// Records the sample taken at `t` (s from the run's start); `period` is the
    /// sampling period.
    pub fn observe(&mut self, t: f64, period: f64, s: &WaitSample) {
        let mut seen: Vec<(EventKind, Option<String>)> = s
            .autovacuum
            .iter()
            .map(|(k, r)| (*k, Some(r.clone())))
            .collect();
        if s.checkpointer_busy == Some(true) {
            seen.push((EventKind::Checkpoint, None));
        }
        let (still, ended): (Vec<_>, Vec<_>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|(k, r, _, _)| seen.iter().any(|(sk, sr)| sk == k && sr == r));
        for (kind, relation, start_s, end_s) in ended {
            self.done.push(ServerEvent {
                kind,
                relation,
                start_s,
                end_s,
            });
        }
        self.open = still;
        for (kind, relation) in seen {
            match self
                .open
                .iter_mut()
                .find(|(k, r, _, _)| *k == kind && *r == relation)
            {
                Some(open) => open.3 = t + period,
                None => self.open.push((kind, relation, t, t + period)),
            }
        }
    }

    /// Ends the events still open and returns all, in start order.
    pub fn finish(mut self) -> Vec<ServerEvent> {
        for (kind, relation, start_s, end_s) in self.open.drain(..) {
            self.done.push(ServerEvent {
                kind,
                relation,
                start_s,
                end_s,
            });
        }
        self.done.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(backend_label("active", "", ""), Some("CPU".into()));
        assert_eq!(
            backend_label("active", "Lock", "transactionid"),
            Some("Lock:transactionid".into())
        );
        assert_eq!(
            backend_label("idle", "Client", "ClientRead"),
            Some("Client:ClientRead".into())
        );
        assert_eq!(backend_label("idle", "", ""), None);
    }

    #[test]
    fn autovacuum_queries() {
        assert_eq!(
            autovacuum_target("autovacuum: VACUUM ANALYZE public.pgbench_accounts"),
            Some((EventKind::Autovacuum, "pgbench_accounts".into()))
        );
        assert_eq!(
            autovacuum_target("autovacuum: ANALYZE public.pgbench_history"),
            Some((EventKind::Autoanalyze, "pgbench_history".into()))
        );
        assert_eq!(
            autovacuum_target("autovacuum: VACUUM public.t (to prevent wraparound)"),
            Some((EventKind::Autovacuum, "t".into()))
        );
        assert_eq!(autovacuum_target("<insufficient privilege>"), None);
    }

    #[test]
    fn consecutive_sightings_make_one_event() {
        let busy = WaitSample {
            checkpointer_busy: Some(true),
            ..WaitSample::default()
        };
        let idle = WaitSample {
            checkpointer_busy: Some(false),
            ..WaitSample::default()
        };
        let mut t = EventTracker::default();
        for (i, s) in [&idle, &busy, &busy, &idle, &busy].iter().enumerate() {
            t.observe(i as f64 * 0.1, 0.1, s);
        }
        let events = t.finish();
        assert_eq!(events.len(), 2);
        assert!((events[0].start_s - 0.1).abs() < 1e-9);
        assert!((events[0].end_s - 0.3).abs() < 1e-9);
        assert!((events[1].start_s - 0.4).abs() < 1e-9);
    }

    #[test]
    fn shares_sum_to_one() {
        let mut c = WaitCounts::default();
        c.add(&WaitSample {
            backends: vec![
                "CPU".into(),
                "CPU".into(),
                "Lock:tuple".into(),
                "CPU".into(),
            ],
            ..WaitSample::default()
        });
        let s = c.shares();
        assert!((s["CPU"] - 0.75).abs() < 1e-9);
        assert!((s.values().sum::<f64>() - 1.0).abs() < 1e-9);
    }
}
