//! `--help` and `--version` texts. (Stub; owned by the CLI-options work.)

/// Prints pgbench 18's `--help` text adapted to `progname`; returns 0.
pub fn print_help(_progname: &str) -> i32 {
    0
}

/// Prints the version line; returns 0.
pub fn print_version(progname: &str) -> i32 {
    println!("{progname} (pgrush) {}", env!("CARGO_PKG_VERSION"));
    0
}
