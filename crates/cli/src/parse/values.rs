//! Option values shared by the option loop and the checks after it: arguments kept as
//! text without loss, and pgbench's random seed (`--random-seed`, `PGBENCH_RANDOM_SEED`).

use super::diag::{Diag, cat};
use pgrush_run::options::{Options, SeedChoice};
use pgrush_script::SeedSpec;

/// `--random-seed`/`PGBENCH_RANDOM_SEED` values: `time`, `rand` or an unsigned
/// integer. Prints the complaint and returns `None` when invalid.
pub fn parse_seed(value: &[u8], diag: &mut Diag<'_>) -> Option<SeedChoice> {
    // Invalid UTF-8 is never a valid seed, and the lossy copy keeps it invalid.
    match pgrush_script::parse_seed_spec(&String::from_utf8_lossy(value)) {
        Ok(SeedSpec::Time) => Some(SeedChoice::Time),
        Ok(SeedSpec::Rand) => Some(SeedChoice::Rand),
        Ok(SeedSpec::Value(v)) => Some(SeedChoice::Value(v)),
        Err(_) => {
            diag.error(&cat(&[b"unrecognized random seed option \"", value, b"\""]));
            diag.detail(b"Expecting an unsigned integer, \"time\" or \"rand\".");
            None
        }
    }
}

/// Records an explicit seeding as pgbench's `set_random_seed` does: `time` and
/// `rand` are resolved now, and `setting random seed to N` is printed at once
/// (so several seedings print several lines, in order, before later errors).
pub fn seeded(opts: &mut Options, choice: SeedChoice, diag: &mut Diag<'_>) {
    let seed = match choice {
        SeedChoice::Value(v) => v,
        SeedChoice::Time => pgrush_engine::clock::monotonic_us(),
        SeedChoice::Rand => pgrush_engine::clock::strong_random_u64(),
    };
    opts.random_seed = SeedChoice::Value(seed);
    opts.random_seed_explicit = true;
    opts.seed_messages.push(seed);
    diag.info(format!("setting random seed to {seed}").as_bytes());
}

/// An argument for storage in [`Options`], bytes that are not UTF-8 escaped
/// without loss ([`pgrush_wire::lossless`]): connection parameters are bytes.
pub fn text(bytes: &[u8]) -> String {
    pgrush_wire::lossless::from_bytes(bytes)
}
