//! getopt_long-compatible parsing of pgbench's command line into [`Options`].
//! (Owned by the CLI-options work; this stub only keeps the workspace building.)

use crate::options::Options;
use std::ffi::OsString;

/// Parses and validates `args` (argv including argv[0]). On error the message has
/// already been printed and the exit status is returned.
pub fn parse_args(_args: &[OsString]) -> Result<Options, i32> {
    Ok(Options::default())
}
