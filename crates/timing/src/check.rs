//! The clock-overhead check as `pgrush timing` runs it, without its option
//! parsing and printing: the measurement settings for a duration, opening
//! every clock for `--all-clocks`, measuring the ones that opened, the
//! connection for the EXPLAIN ANALYZE experiment, and what the results say
//! (backwards steps, the clock cost shown beside the experiment, the `--json`
//! document).
//!
//! The command prints between the steps (the `Testing timing overhead` line
//! before a measurement, the table after it), so the steps are separate calls.

use crate::clock::ClockKind;
use crate::explain::ExplainResult;
use crate::measure::MeasureConfig;
use crate::report::{ClockReport, JsonClock, JsonReport, JsonUnavailable, measure_system};
use crate::system::SystemClock;
use pgrush_wire::conninfo::{ConnectRequest, ConninfoError, resolve};
use pgrush_wire::{ConnectError, Connection};

impl MeasureConfig {
    /// The settings for `duration_s` seconds per clock. With `pgrush_behaviour`
    /// the nanosecond detail is collected and backwards steps are counted;
    /// without it the loop is pg_test_timing 18's, stopping at the first
    /// whole-microsecond backwards step.
    pub fn for_seconds(duration_s: u32, pgrush_behaviour: bool) -> MeasureConfig {
        MeasureConfig {
            duration_ns: i64::from(duration_s) * 1_000_000_000,
            detail: pgrush_behaviour,
            stop_on_backwards: !pgrush_behaviour,
        }
    }
}

/// Every clock of [`ClockKind::ALL`], opened: the available ones in that
/// order, and the others with the reason.
#[derive(Debug, Clone)]
pub struct ClockSet {
    /// The clocks that opened.
    available: Vec<(ClockKind, SystemClock)>,
    /// The clocks that did not, with the reason.
    pub unavailable: Vec<JsonUnavailable>,
}

impl ClockSet {
    /// Opens every clock (calibrating the TSC when the CPU has an invariant one).
    pub fn open_all() -> ClockSet {
        let mut set = ClockSet {
            available: Vec::new(),
            unavailable: Vec::new(),
        };
        for kind in ClockKind::ALL {
            match SystemClock::open(kind) {
                Ok(c) => set.available.push((kind, c)),
                Err(e) => set.unavailable.push(JsonUnavailable {
                    clock: kind.name(),
                    reason: e.to_string(),
                }),
            }
        }
        set
    }

    /// How many clocks opened.
    pub fn available_count(&self) -> usize {
        self.available.len()
    }

    /// Measures each available clock in turn, in [`ClockKind::ALL`] order.
    pub fn measure(&self, cfg: &MeasureConfig) -> Vec<ClockReport> {
        self.available
            .iter()
            .map(|&(kind, clock)| measure_system(kind, clock, cfg))
            .collect()
    }
}

/// What a check found: the command prints these and exits by them.
#[derive(Debug, Clone)]
pub struct CheckResults {
    /// Seconds each clock was measured for.
    pub duration_s: u32,
    /// One report per measured clock.
    pub reports: Vec<ClockReport>,
    /// Clocks `--all-clocks` could not open.
    pub unavailable: Vec<JsonUnavailable>,
    /// The EXPLAIN ANALYZE experiment, when it ran.
    pub explain: Option<ExplainResult>,
}

impl CheckResults {
    /// The reports of the clocks that went backwards at least once.
    pub fn went_backwards(&self) -> impl Iterator<Item = &ClockReport> {
        self.reports
            .iter()
            .filter(|r| r.measurement.backwards.count > 0)
    }

    /// True when any clock went backwards (the exit status is then 1).
    pub fn backwards_detected(&self) -> bool {
        self.went_backwards().next().is_some()
    }

    /// The cost of one clock reading shown beside the EXPLAIN ANALYZE
    /// overhead: `CLOCK_MONOTONIC`'s (the clock PostgreSQL's instrumentation
    /// reads) when it was measured, else the first measured clock's.
    pub fn clock_cost_ns(&self) -> Option<f64> {
        self.reports
            .iter()
            .find(|r| r.clock == ClockKind::Monotonic)
            .or(self.reports.first())
            .and_then(|r| r.measurement.per_loop_ns())
    }

    /// The `--json` document.
    pub fn json(&self) -> JsonReport {
        JsonReport {
            duration_s: self.duration_s,
            clocks: self.reports.iter().map(JsonClock::from_report).collect(),
            unavailable: self.unavailable.clone(),
            backwards_detected: self.backwards_detected(),
            explain_analyze: self.explain.clone(),
        }
    }
}

/// Why the connection for the EXPLAIN ANALYZE experiment failed (the
/// messages are the connection library's own).
#[derive(Debug, thiserror::Error)]
pub enum ServerUnreachable {
    /// The options and environment do not make a valid connection string.
    #[error(transparent)]
    Conninfo(#[from] ConninfoError),
    /// The server could not be reached or refused the connection.
    #[error(transparent)]
    Connect(#[from] ConnectError),
}

/// Connects for the EXPLAIN ANALYZE experiment: `request` completed from the
/// environment (`PGHOST`, …) as every pgrush command does.
pub fn connect(request: &ConnectRequest) -> Result<Connection, ServerUnreachable> {
    let params = resolve(request)?;
    Ok(Connection::connect(&params)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Backwards, Measurement, US_BUCKETS};

    fn report(clock: ClockKind, loops: u64, backwards: u64) -> ClockReport {
        ClockReport {
            clock,
            resolution_ns: Some(1.0),
            measurement: Measurement {
                loops,
                elapsed_ns: 1000,
                us_histogram: [0; US_BUCKETS],
                detail: None,
                backwards: Backwards {
                    count: backwards,
                    largest_ns: if backwards > 0 { 1500 } else { 0 },
                },
                warp_us: None,
            },
        }
    }

    fn results(reports: Vec<ClockReport>) -> CheckResults {
        CheckResults {
            duration_s: 1,
            reports,
            unavailable: Vec::new(),
            explain: None,
        }
    }

    #[test]
    fn config_for_seconds() {
        let c = MeasureConfig::for_seconds(3, false);
        assert_eq!(c.duration_ns, 3_000_000_000);
        assert!(!c.detail && c.stop_on_backwards);
        let c = MeasureConfig::for_seconds(u32::MAX, true);
        assert_eq!(c.duration_ns, i64::from(u32::MAX) * 1_000_000_000);
        assert!(c.detail && !c.stop_on_backwards);
    }

    #[test]
    fn clock_cost_prefers_monotonic() {
        let r = results(vec![
            report(ClockKind::Realtime, 10, 0),
            report(ClockKind::Monotonic, 100, 0),
        ]);
        assert_eq!(r.clock_cost_ns(), Some(10.0));
        let r = results(vec![report(ClockKind::Realtime, 10, 0)]);
        assert_eq!(r.clock_cost_ns(), Some(100.0));
        assert_eq!(results(Vec::new()).clock_cost_ns(), None);
    }

    #[test]
    fn backwards_steps_are_found() {
        let r = results(vec![
            report(ClockKind::Monotonic, 10, 0),
            report(ClockKind::Realtime, 10, 2),
        ]);
        assert!(r.backwards_detected());
        let clocks: Vec<ClockKind> = r.went_backwards().map(|r| r.clock).collect();
        assert_eq!(clocks, [ClockKind::Realtime]);
        assert!(r.json().backwards_detected);
        assert!(!results(vec![report(ClockKind::Monotonic, 10, 0)]).backwards_detected());
    }

    #[test]
    fn every_clock_is_opened_or_explained() {
        let set = ClockSet::open_all();
        assert_eq!(
            set.available_count() + set.unavailable.len(),
            ClockKind::ALL.len()
        );
        let cfg = MeasureConfig {
            duration_ns: 1_000_000,
            detail: true,
            stop_on_backwards: false,
        };
        let reports = set.measure(&cfg);
        assert_eq!(reports.len(), set.available_count());
        assert_eq!(reports[0].clock, ClockKind::Monotonic);
        assert!(reports.iter().all(|r| r.measurement.loops > 0));
    }
}
