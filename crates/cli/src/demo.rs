//! `pgrush demo`: the no-setup benchmark on a throwaway cluster. (Stub; owned by the sandbox work.)

use std::ffi::OsString;

/// Runs the demo; returns the exit status.
pub fn run(_args: &[OsString]) -> i32 {
    eprintln!("pgrush: error: demo is not built yet");
    1
}
