//! State shared by the worker threads of one run.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

use pgrush_stats::ProgressCounters;

use crate::clock::Clock;

/// Shared, mostly read-only, run state.
pub struct Shared {
    /// The common clock (all threads measure on it).
    pub clock: Clock,
    /// When the run started (before the threads connect).
    pub run_start: crate::clock::Micros,
    /// All threads created their state ("READY").
    pub ready: Barrier,
    /// All initial connections made ("GO").
    pub go: Barrier,
    /// Per-thread progress counters (thread 0 reads them all).
    pub progress: Vec<Arc<ProgressCounters>>,
    /// Self-pipe of the Ctrl-C handler, when signals are handled.
    pub signal_fd: Option<RawFd>,
    /// Whether Ctrl-C stops the run.
    pub handle_signals: bool,
    interrupted: AtomicBool,
}

impl Shared {
    /// Shared state for `threads` threads.
    pub fn new(threads: usize, signal_fd: Option<RawFd>) -> Shared {
        let clock = Clock::new();
        Shared {
            run_start: clock.now(),
            clock,
            ready: Barrier::new(threads),
            go: Barrier::new(threads),
            progress: (0..threads)
                .map(|_| Arc::new(ProgressCounters::new()))
                .collect(),
            signal_fd,
            handle_signals: signal_fd.is_some(),
            interrupted: AtomicBool::new(false),
        }
    }

    /// Notes that the run was interrupted.
    pub fn set_interrupted(&self) {
        self.interrupted.store(true, Ordering::Relaxed);
    }

    /// Whether the run was interrupted.
    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }
}
