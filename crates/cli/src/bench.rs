//! Wiring of a benchmark run: options -> engine -> report. (Stub; owned by the engine work.)

use crate::options::Options;

/// Runs the benchmark described by `opts`; returns the exit status.
pub fn run(_opts: &Options) -> i32 {
    eprintln!("pgrush: error: benchmark mode is not built yet");
    1
}
