//! Wiring of `-i`: options -> `pgrush_init`. (Stub; owned by the init work.)

use crate::options::Options;

/// Runs the initialization steps described by `opts`; returns the exit status.
pub fn run(_opts: &Options) -> i32 {
    eprintln!("pgrush: error: initialization is not built yet");
    1
}
