//! State shared by the worker threads of one run.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use pgrush_stats::ProgressCounters;

use crate::clock::Clock;

/// Shared, mostly read-only, run state.
pub(crate) struct Shared {
    /// The common clock (all threads measure on it).
    pub(crate) clock: Clock,
    /// When the run started (before the threads connect).
    pub(crate) run_start: crate::clock::Micros,
    /// The agreed start of the measured interval, if any (after the connections).
    pub(crate) start: Option<crate::clock::Micros>,
    /// The end of `--warmup` (the agreed start, else the run start, plus the warm-up):
    /// one instant for every thread, from which everything is counted.
    pub(crate) warmup_end: Option<crate::clock::Micros>,
    /// All threads created their state ("READY").
    pub(crate) ready: Gate,
    /// All initial connections made ("GO").
    pub(crate) go: Gate,
    /// Per-thread progress counters (thread 0 reads them all).
    pub(crate) progress: Vec<Arc<ProgressCounters>>,
    /// Self-pipe of the Ctrl-C handler, when signals are handled.
    pub(crate) signal_fd: Option<RawFd>,
    /// Whether Ctrl-C stops the run.
    pub(crate) handle_signals: bool,
    /// When a thread first saw Ctrl-C (`i64::MAX`: not interrupted).
    interrupted_at: AtomicI64,
    /// A thread could not set up or connect: the others stop at the next barrier.
    failed: AtomicBool,
    /// `--exit-on-abort` fired: every thread flushes its log and returns at once.
    exit_now: AtomicBool,
    /// Per-thread wakers of the event loops (set by each thread before "READY").
    wakers: Vec<OnceLock<mio::Waker>>,
}

impl Shared {
    /// Shared state for `threads` threads; `start_at_unix_us` is the agreed start of
    /// the run (Unix µs, this machine's clock), if any; `warmup_us` the `--warmup`
    /// (0 = none).
    pub(crate) fn new(
        threads: usize,
        signal_fd: Option<RawFd>,
        start_at_unix_us: Option<i64>,
        warmup_us: i64,
    ) -> Shared {
        let clock = Clock::new();
        let run_start = clock.now();
        let start = start_at_unix_us.map(|t| clock.monotonic_of_epoch_us(t));
        Shared {
            run_start,
            start,
            warmup_end: (warmup_us > 0).then(|| start.unwrap_or(run_start) + warmup_us),
            clock,
            ready: Gate::new(threads),
            go: Gate::new(threads),
            progress: (0..threads)
                .map(|_| Arc::new(ProgressCounters::new()))
                .collect(),
            signal_fd,
            handle_signals: signal_fd.is_some(),
            interrupted_at: AtomicI64::new(i64::MAX),
            failed: AtomicBool::new(false),
            exit_now: AtomicBool::new(false),
            wakers: (0..threads).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Where the measured interval counts from: the end of `--warmup`, else the agreed
    /// start, else the run start (before the initial connections, as pgbench).
    pub(crate) fn measured_origin(&self) -> crate::clock::Micros {
        self.warmup_end
            .unwrap_or_else(|| self.start.unwrap_or(self.run_start))
    }

    /// Notes that a thread saw Ctrl-C at `now`.
    pub(crate) fn set_interrupted(&self, now: crate::clock::Micros) {
        self.interrupted_at.fetch_min(now, Ordering::Relaxed);
    }

    /// Whether the run was interrupted.
    pub(crate) fn interrupted(&self) -> bool {
        self.interrupted_at.load(Ordering::Relaxed) != i64::MAX
    }

    /// Whether the run was interrupted before the end of `--warmup`: no transaction
    /// was measured (none starts after Ctrl-C).
    pub(crate) fn interrupted_in_warmup(&self) -> bool {
        self.warmup_end
            .is_some_and(|edge| self.interrupted_at.load(Ordering::Relaxed) < edge)
    }

    /// Notes that a thread failed before the run (the error is its return value).
    pub(crate) fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
    }

    /// A worker thread could not be started: the others must not wait for it.
    /// Opens both gates; every started thread sees the failure and stops.
    pub(crate) fn abandon(&self) {
        self.fail();
        self.ready.open();
        self.go.open();
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

/// A one-time barrier (READY, GO) that can also be opened without waiting for
/// everyone, when a thread that should arrive was never started.
pub(crate) struct Gate {
    parties: usize,
    /// Threads arrived so far, and whether the gate is open.
    state: Mutex<(usize, bool)>,
    opened: Condvar,
}

impl Gate {
    /// A gate that opens when `parties` threads have arrived.
    pub(crate) fn new(parties: usize) -> Gate {
        Gate {
            parties,
            state: Mutex::new((0, false)),
            opened: Condvar::new(),
        }
    }

    /// Arrives and waits until everyone has (or the gate was opened).
    pub(crate) fn wait(&self) {
        // A poisoned lock only means another thread panicked: its panic is
        // propagated when it is joined; the count is still right.
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0 += 1;
        if state.0 >= self.parties {
            state.1 = true;
            self.opened.notify_all();
        }
        while !state.1 {
            state = self.opened.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Opens the gate for everyone, arrived or not.
    pub(crate) fn open(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.1 = true;
        self.opened.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_opens_when_everyone_arrived_or_when_opened() {
        let gate = Gate::new(3);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| gate.wait());
            }
        });
        // Two of three arrive; opening the gate lets them through.
        let gate = Gate::new(3);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| gate.wait());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            gate.open();
        });
        // Once open, it stays open.
        gate.wait();
    }
}
