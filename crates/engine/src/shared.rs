//! State shared by the worker threads of one run.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, OnceLock};

use pgrush_stats::ProgressCounters;

use crate::clock::Clock;

/// Shared, mostly read-only, run state.
pub(crate) struct Shared {
    /// The common clock (all threads measure on it).
    pub(crate) clock: Clock,
    /// When the run started (before the threads connect).
    pub(crate) run_start: crate::clock::Micros,
    /// All threads created their state ("READY").
    pub(crate) ready: Barrier,
    /// All initial connections made ("GO").
    pub(crate) go: Barrier,
    /// Per-thread progress counters (thread 0 reads them all).
    pub(crate) progress: Vec<Arc<ProgressCounters>>,
    /// Self-pipe of the Ctrl-C handler, when signals are handled.
    pub(crate) signal_fd: Option<RawFd>,
    /// Whether Ctrl-C stops the run.
    pub(crate) handle_signals: bool,
    interrupted: AtomicBool,
    /// A thread could not set up or connect: the others stop at the next barrier.
    failed: AtomicBool,
    /// `--exit-on-abort` fired: every thread flushes its log and returns at once.
    exit_now: AtomicBool,
    /// Per-thread wakers of the event loops (set by each thread before "READY").
    wakers: Vec<OnceLock<mio::Waker>>,
}

impl Shared {
    /// Shared state for `threads` threads.
    pub(crate) fn new(threads: usize, signal_fd: Option<RawFd>) -> Shared {
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
            failed: AtomicBool::new(false),
            exit_now: AtomicBool::new(false),
            wakers: (0..threads).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Notes that the run was interrupted.
    pub(crate) fn set_interrupted(&self) {
        self.interrupted.store(true, Ordering::Relaxed);
    }

    /// Whether the run was interrupted.
    pub(crate) fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    /// Notes that a thread failed before the run (the error is its return value).
    pub(crate) fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
    }

    /// Whether some thread failed before the run.
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// Installs the waker of thread `tid`'s event loop.
    pub(crate) fn set_waker(&self, tid: usize, waker: mio::Waker) {
        // Each thread sets its own slot once; a second waker would be the same loop's.
        if let Some(slot) = self.wakers.get(tid)
            && slot.set(waker).is_err()
        {
            debug_assert!(false, "waker of thread {tid} set twice");
        }
    }

    /// Asks every thread to stop at once (`--exit-on-abort`) and wakes their
    /// event loops. Returns true for the first caller only.
    pub(crate) fn request_exit(&self) -> bool {
        let first = !self.exit_now.swap(true, Ordering::SeqCst);
        for w in self.wakers.iter().filter_map(OnceLock::get) {
            // A loop that cannot be woken still sees the flag at its next turn.
            let _ignored = w.wake();
        }
        first
    }

    /// Whether `--exit-on-abort` stopped the run (one relaxed load: cheap enough
    /// for every turn of the event loops).
    pub(crate) fn exit_requested(&self) -> bool {
        self.exit_now.load(Ordering::Relaxed)
    }
}
