//! What a capacity search found ([`CapacityResult`]), as written with `--json` (schema
//! [`SCHEMA`], described in `schema/pgrush-capacity.v1.schema.json`).

use super::slo::SloVerdict;
use serde::{Deserialize, Serialize};

/// The `schema` of `pgrush capacity --json` documents.
pub const SCHEMA: &str = "pgrush-capacity/1";

/// The closed-loop run before the search (each client sends its next transaction as
/// soon as the last one ends): the throughput the clients can push at most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Seconds measured.
    pub duration_s: f64,
    /// Successful transactions per second.
    pub tps: f64,
    /// Mean latency (ms).
    pub latency_average_ms: f64,
}

/// One step of the search: an open-loop run at an offered rate (`-R`), in one or more
/// rounds whose transactions are pooled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step's number, from 1, in running order.
    pub step: usize,
    /// The offered rate (`-R`, transactions per second).
    pub offered_tps: f64,
    /// Rounds run (more than one when an SLO was undecided after the first).
    pub rounds: u32,
    /// Seconds measured, over every round.
    pub duration_s: f64,
    /// Transactions ended (successful and failed), over every round.
    pub transactions: u64,
    /// Transactions ended per second.
    pub delivered_tps: f64,
    /// Mean latency (from each transaction's scheduled start), ms, over every round.
    pub latency_average_ms: Option<f64>,
    /// Mean schedule lag (the wait before a transaction started), ms, over every round:
    /// `latency_average_ms − lag_average_ms` is the mean service time.
    pub lag_average_ms: Option<f64>,
    /// Latency (from each transaction's scheduled start) at the 50th percentile, ms.
    pub p50_ms: Option<f64>,
    /// At the 99th percentile, ms.
    pub p99_ms: Option<f64>,
    /// At the 99.9th percentile, ms.
    pub p99_9_ms: Option<f64>,
    /// How fast the schedule lag grew through the step (ms per second, least squares
    /// over the one-second intervals; the worst round's).
    pub lag_growth_ms_per_s: Option<f64>,
    /// Whether the server kept up with the offered rate.
    pub delivered: bool,
    /// Each SLO's verdict.
    pub slos: Vec<SloVerdict>,
    /// Whether the step held: delivered, and every SLO held.
    pub held: bool,
    /// Why it did not hold.
    pub failure: Option<String>,
}

/// The settings of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchSettings {
    /// The SLOs, written the canonical way.
    pub slos: Vec<String>,
    /// The first rate tried.
    pub start_rate: f64,
    /// The search stops when `(bad − good) / good` is at most this.
    pub precision: f64,
    /// Shortest measured time of a step (s).
    pub step_s: u32,
    /// Longest measured time of a step round (s).
    pub max_step_s: u32,
    /// Discarded warm-up before each round (s).
    pub warmup_s: u32,
    /// The benchmark options every step ran with (secrets redacted).
    pub run_args: Vec<String>,
}

/// What a capacity search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The pgrush version.
    pub pgrush_version: String,
    /// What was asked for.
    pub settings: SearchSettings,
    /// The closed-loop probe, when the start rate was not given.
    pub probe: Option<Probe>,
    /// The sustainable rate: the highest offered rate at which every SLO held.
    pub capacity_tps: Option<f64>,
    /// The lowest offered rate at which an SLO failed or the rate was not delivered:
    /// the capacity lies in `[capacity_tps, first_failing_tps)`.
    pub first_failing_tps: Option<f64>,
    /// What failed at `first_failing_tps`.
    pub first_failure: Option<String>,
    /// `(first_failing_tps − capacity_tps) / capacity_tps`, when both are known.
    pub bracket_width: Option<f64>,
    /// The steps in running order.
    pub steps: Vec<StepRecord>,
    /// True when the search reached its precision (false: interrupted, or no bracket).
    pub complete: bool,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
}

impl CapacityResult {
    /// The result as pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The steps sorted by offered rate (the latency-throughput curve).
    pub fn curve(&self) -> Vec<&StepRecord> {
        let mut steps: Vec<&StepRecord> = self.steps.iter().collect();
        steps.sort_by(|a, b| a.offered_tps.total_cmp(&b.offered_tps));
        steps
    }
}

/// `1600`, `812.5`, `0.25`: a rate with the digits it needs (4 significant ones, as
/// the search rounds its rates).
pub fn rate_text(rate: f64) -> String {
    let magnitude = if rate > 0.0 && rate.is_finite() {
        rate.log10().floor() as i32
    } else {
        0
    };
    let decimals = (3 - magnitude).clamp(0, 4) as usize;
    let text = format!("{rate:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::rate_text;

    #[test]
    fn rates_show_four_significant_digits() {
        assert_eq!(rate_text(1600.0), "1600");
        assert_eq!(rate_text(812.5), "812.5");
        assert_eq!(rate_text(81.25), "81.25");
        assert_eq!(rate_text(0.25), "0.25");
        assert_eq!(rate_text(1_234_567.0), "1234567");
        assert_eq!(rate_text(0.0), "0");
    }
}
