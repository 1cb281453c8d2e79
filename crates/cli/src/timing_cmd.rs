//! Wiring of `pgrush timing` / `pg_test_timing`. (Stub; owned by the timing work.)

use std::ffi::OsString;

/// Runs the clock-overhead check; `compat_name` is true when started as `pg_test_timing`.
pub fn run(_argv0: &str, _args: &[OsString], _compat_name: bool) -> i32 {
    eprintln!("pgrush: error: timing is not built yet");
    1
}
