//! What a capacity search is asked to do.

use super::slo::Slo;
use std::path::PathBuf;

/// A capacity search to run.
#[derive(Debug, Clone)]
pub struct CapacityConfig {
    /// The SLOs every step must hold.
    pub slos: Vec<Slo>,
    /// The benchmark options (and connection options) every child runs with, as
    /// `--long=value`; the search adds `--rate`, `--time`, `--warmup` and `--json`.
    pub run_args: Vec<String>,
    /// The first rate (`None`: half the closed-loop probe's tps).
    pub start_rate: Option<f64>,
    /// Stop when `(bad − good) / good` is at most this.
    pub precision: f64,
    /// Shortest measured time of a step round (s).
    pub step_s: u32,
    /// Longest measured time of a step round (s).
    pub max_step_s: u32,
    /// Discarded warm-up before each round (s, 0: none).
    pub warmup_s: u32,
    /// The `pgrush` binary the children run.
    pub exe: PathBuf,
}
