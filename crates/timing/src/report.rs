//! Measuring a named system clock, and the JSON form of the results.

use crate::clock::{ClockKind, ClockUnavailable};
use crate::explain::ExplainResult;
use crate::measure::{MeasureConfig, Measurement, NsDetail, Percentiles, measure};
use crate::system::SystemClock;
use serde::Serialize;

/// One clock's measurement with what is known about the clock.
#[derive(Debug, Clone)]
pub struct ClockReport {
    /// Which clock.
    pub clock: ClockKind,
    /// Its resolution (`clock_getres`, or one TSC tick), in ns.
    pub resolution_ns: Option<f64>,
    /// What the loop saw.
    pub measurement: Measurement,
}

/// Opens `kind` and measures it.
pub fn measure_clock(
    kind: ClockKind,
    cfg: &MeasureConfig,
) -> Result<ClockReport, ClockUnavailable> {
    Ok(measure_system(kind, SystemClock::open(kind)?, cfg))
}

/// Measures an already opened clock of kind `kind`.
pub fn measure_system(kind: ClockKind, clock: SystemClock, cfg: &MeasureConfig) -> ClockReport {
    let resolution_ns = clock.resolution_ns();
    let measurement = match clock {
        SystemClock::Posix(mut c) => measure(&mut c, cfg),
        SystemClock::Tsc(mut c) => measure(&mut c, cfg),
    };
    ClockReport {
        clock: kind,
        resolution_ns,
        measurement,
    }
}

/// The whole `--json` document.
#[derive(Debug, Clone, Serialize)]
pub struct JsonReport {
    /// Seconds each clock was measured for (`-d`).
    pub duration_s: u32,
    /// One entry per measured clock.
    pub clocks: Vec<JsonClock>,
    /// Clocks that `--all-clocks` skipped, with the reason.
    pub unavailable: Vec<JsonUnavailable>,
    /// True when any clock went backwards (the exit status is then 1).
    pub backwards_detected: bool,
    /// The `--explain-analyze` experiment, when run.
    pub explain_analyze: Option<ExplainResult>,
}

/// A clock that could not be measured.
#[derive(Debug, Clone, Serialize)]
pub struct JsonUnavailable {
    /// Clock name.
    pub clock: &'static str,
    /// Why.
    pub reason: String,
}

/// One histogram bucket.
#[derive(Debug, Clone, Serialize)]
pub struct JsonBucket {
    /// Exclusive upper bound of the bucket (µs or ns, see the field name).
    pub upper: u128,
    /// Share of all iterations, in percent.
    pub percent: f64,
    /// Iterations in the bucket.
    pub count: u64,
}

/// Backwards steps of one clock.
#[derive(Debug, Clone, Serialize)]
pub struct JsonBackwards {
    /// How many readings were smaller than the one before.
    pub count: u64,
    /// The largest backwards step, in ns (0 when none).
    pub largest_step_ns: i64,
}

/// One clock's results.
#[derive(Debug, Clone, Serialize)]
pub struct JsonClock {
    /// Clock name (`monotonic`, …).
    pub clock: &'static str,
    /// Iterations of the loop.
    pub loops: u64,
    /// Nanoseconds the loop ran.
    pub elapsed_ns: i64,
    /// Cost per reading, loop overhead included (pg_test_timing's "per loop time").
    pub per_loop_ns: Option<f64>,
    /// Resolution reported by the system, in ns.
    pub resolution_ns: Option<f64>,
    /// Smallest non-zero difference between consecutive readings.
    pub min_step_ns: Option<u64>,
    /// pg_test_timing's histogram (`upper` in µs), buckets 0 to the highest non-empty one.
    pub histogram_us: Vec<JsonBucket>,
    /// Power-of-two histogram of the differences in ns, lowest to highest non-empty bucket.
    pub histogram_ns: Vec<JsonBucket>,
    /// Percentiles of the differences, in ns.
    pub percentiles_ns: Percentiles,
    /// Backwards steps.
    pub backwards: JsonBackwards,
}

impl JsonReport {
    /// The document as pretty-printed JSON, with a final newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }
}

impl JsonClock {
    /// Builds the JSON view of a report.
    pub fn from_report(r: &ClockReport) -> JsonClock {
        let m = &r.measurement;
        let pct = |c: u64| c as f64 * 100.0 / m.loops.max(1) as f64;
        let histogram_us = m.us_histogram[..=m.max_us_bucket()]
            .iter()
            .enumerate()
            .map(|(i, &count)| JsonBucket {
                upper: 1u128 << i,
                percent: pct(count),
                count,
            })
            .collect();
        let histogram_ns = m
            .detail
            .as_ref()
            .map(|d| {
                let first = d.pow2.iter().position(|&c| c != 0).unwrap_or(0);
                let last = d.pow2.iter().rposition(|&c| c != 0).unwrap_or(0);
                (first..=last)
                    .filter(|_| d.samples() > 0)
                    .map(|i| JsonBucket {
                        upper: 1u128 << i,
                        percent: pct(d.pow2[i]),
                        count: d.pow2[i],
                    })
                    .collect()
            })
            .unwrap_or_default();
        JsonClock {
            clock: r.clock.name(),
            loops: m.loops,
            elapsed_ns: m.elapsed_ns,
            per_loop_ns: m.per_loop_ns(),
            resolution_ns: r.resolution_ns,
            min_step_ns: m.detail.as_ref().and_then(NsDetail::min_step_ns),
            histogram_us,
            histogram_ns,
            percentiles_ns: m
                .detail
                .as_ref()
                .map(NsDetail::percentiles)
                .unwrap_or_default(),
            backwards: JsonBackwards {
                count: m.backwards.count,
                largest_step_ns: m.backwards.largest_ns,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_measurement_to_json() {
        let cfg = MeasureConfig {
            duration_ns: 2_000_000,
            detail: true,
            stop_on_backwards: false,
        };
        let r = measure_clock(ClockKind::Monotonic, &cfg).unwrap();
        assert!(r.measurement.loops > 100);
        assert!(r.measurement.elapsed_ns >= 2_000_000);
        let j = serde_json::to_value(JsonClock::from_report(&r)).unwrap();
        assert_eq!(j["clock"], "monotonic");
        assert!(j["per_loop_ns"].as_f64().unwrap() > 0.0);
        let us_total: u64 = j["histogram_us"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["count"].as_u64().unwrap())
            .sum();
        assert_eq!(
            us_total + j["backwards"]["count"].as_u64().unwrap(),
            j["loops"].as_u64().unwrap()
        );
        for key in ["p50", "p90", "p99", "p99.9", "p99.99", "max"] {
            assert!(j["percentiles_ns"][key].is_u64(), "{key}");
        }
        assert!(j["percentiles_ns"]["p50"].as_u64() <= j["percentiles_ns"]["max"].as_u64());
    }
}
