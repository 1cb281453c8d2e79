//! Progress of the steps on standard error, drawn by the lab's [`Ticker`]. On a
//! terminal: `pgrush ops: scale 10: dump: 12 s` (with what the step is doing and the
//! time left where known, `crash-recovery (workload): 4 s, about 6 s left`), redrawn
//! every second once a step has run for one, and erased when the step ends. Elsewhere
//! (a log, a pipe): one line as each step starts, `pgrush ops: scale 10: dump`, so that
//! a log shows where a run was when it stopped.

use std::io::Write;

use crate::ops::config::StepKind;
use crate::ops::text::size_text;
use crate::ticker::{Announce, Ticker};

/// The prefix of every progress line.
pub const PREFIX: &str = "pgrush ops";

/// Starts the progress line of `step` at `scale`. The load is not drawn over: it shows
/// `-i`'s own progress.
pub fn step_started(scale: u32, step: StepKind) -> Ticker {
    Ticker::start(
        PREFIX,
        format!("scale {scale}: {step}"),
        None,
        Announce::Line,
        step != StepKind::Load,
    )
}

/// Says, before the first scale, what each scale is estimated to need on disk and what
/// is free: `pgrush ops: disk space: scale 1 needs about 420.0 MB, scale 10 about
/// 1.80 GB; 45.20 GB free in /tmp`.
pub fn disk_estimate(estimates: &[(u32, u64)], free_bytes: u64, dir: &std::path::Path) {
    let parts: Vec<String> = estimates
        .iter()
        .enumerate()
        .map(|(i, &(scale, bytes))| {
            let verb = if i == 0 { "needs about" } else { "about" };
            format!("scale {scale} {verb} {}", size_text(bytes))
        })
        .collect();
    let _ = writeln!(
        std::io::stderr(),
        "{PREFIX}: disk space: {}; {} free in {}",
        parts.join(", "),
        size_text(free_bytes),
        dir.display()
    );
}
