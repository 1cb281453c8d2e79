//! Ctrl-C (and SIGTERM) during `pgrush ops`: a flag the steps check, plus the
//! statement now running, which a watcher thread cancels.
//!
//! Programs started by a step (`pg_dump`, `pg_restore`, `pg_basebackup`, the workload)
//! lead process groups of their own, so a signal, from a terminal or sent to pgrush
//! alone (`kill`, `timeout`, a CI cancellation), reaches pgrush only; the step's
//! program runner ends the program's whole group and reports
//! [`crate::ops::OpsError::Interrupted`]. Further signals only set the flag again, so
//! the hand back of a `--pgdata` cluster is never cut short.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pgrush_init::wire_session::Interrupt;
use pgrush_wire::CancelToken;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static RUNNING: Mutex<Option<CancelToken>> = Mutex::new(None);
static INIT: Mutex<Option<Arc<Interrupt>>> = Mutex::new(None);

extern "C" fn on_signal(_: libc::c_int) {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether Ctrl-C was pressed.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Marks the run as interrupted (what the signal handler does).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Installs the handler for `SIGINT` and `SIGTERM` and starts the watcher thread that
/// cancels the running statement or initialization once the flag is set.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
    let _ = std::thread::Builder::new()
        .name("ops-ctrl-c".into())
        .spawn(|| {
            while !requested() {
                std::thread::sleep(Duration::from_millis(50));
            }
            if let Some(token) = lock(&RUNNING).take() {
                let _ = token.cancel();
            }
            if let Some(init) = lock(&INIT).take() {
                init.request(|_| {});
            }
        });
}

/// Registers the statement about to run (its connection's cancel token); `None` after.
pub fn set_running(token: Option<CancelToken>) {
    *lock(&RUNNING) = token;
}

/// Registers the initialization's interrupt while `-i` runs; `None` after.
pub fn set_init(interrupt: Option<Arc<Interrupt>>) {
    *lock(&INIT) = interrupt;
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
