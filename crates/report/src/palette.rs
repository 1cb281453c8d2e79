//! One colour per series name on every page: the common series (tps, the percentiles,
//! the usual waits) have fixed colours, every other name takes a colour from a fixed
//! palette indexed by a stable hash of the name, so two pages (two runs, a run and a
//! sweep) draw a series of the same name in the same colour.

/// Fixed colours of the series every page has.
const FIXED: &[(&str, &str)] = &[
    ("tps", "#1f77b4"),
    ("failures/s", "#d62728"),
    ("average", "#222222"),
    ("p50", "#2ca02c"),
    ("p90", "#ff7f0e"),
    ("p95", "#bcbd22"),
    ("p99", "#d62728"),
    ("p99.9", "#9467bd"),
    ("p99.99", "#8c564b"),
    ("p99.999", "#e377c2"),
    ("max", "#7f7f7f"),
    ("all transactions", "#1f77b4"),
    ("other", "#b0b0b0"),
    ("CPU", "#2ca02c"),
    ("Client:ClientRead", "#1f77b4"),
    ("Lock:transactionid", "#d62728"),
    ("Lock:tuple", "#ff7f0e"),
    ("LWLock:LockManager", "#9467bd"),
    ("LWLock:WALWrite", "#8c564b"),
    ("LWLock:BufferContent", "#393b79"),
    ("IO:WALSync", "#e377c2"),
    ("IO:WALWrite", "#17becf"),
    ("IO:DataFileRead", "#bcbd22"),
    ("Lock:relation", "#7b4173"),
    ("Lock:extend", "#8c6d31"),
    ("LWLock:WALInsert", "#637939"),
    ("Timeout:SpinDelay", "#7f7f7f"),
    ("WAL MB/s", "#8c564b"),
    ("hit ratio", "#17becf"),
    ("load", "#1f77b4"),
    ("dump", "#ff7f0e"),
    ("restore", "#2ca02c"),
    ("reindex", "#d62728"),
    ("reindex concurrently", "#9467bd"),
    ("basebackup", "#8c564b"),
    ("crash-recovery", "#e377c2"),
    ("pitr", "#17becf"),
    ("user", "#1f77b4"),
    ("system", "#ff7f0e"),
    ("steal", "#d62728"),
    ("iowait", "#9467bd"),
    ("run queue", "#2ca02c"),
    ("cores", "#7f7f7f"),
];

/// The colours of the other names: distinct from each other, dark enough for a 2 px line
/// on white.
const HASHED: [&str; 13] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#393b79", "#637939", "#8c6d31", "#7b4173",
];

/// FNV-1a: a hash that is the same in every build and on every machine.
fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The colour of the series called `name`, the same on every page.
pub fn series_colour(name: &str) -> &'static str {
    FIXED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| *c)
        .unwrap_or_else(|| HASHED[(stable_hash(name) % HASHED.len() as u64) as usize])
}

/// The dash pattern of the series called `name`: the average is dashed so that it
/// never looks like a percentile.
pub fn series_dash(name: &str) -> Option<&'static str> {
    (name == "average").then_some("7 4")
}

/// The dash pattern that tells apart a series whose colour an earlier series of the
/// same chart already has.
pub const REPEATED_COLOUR_DASH: &str = "2 3";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_fixed_or_hashed_stably() {
        assert_eq!(series_colour("Client:ClientRead"), "#1f77b4");
        assert_eq!(series_colour("p99"), "#d62728");
        assert_ne!(series_colour("p90"), series_colour("average"));
        assert_eq!(series_colour("load"), series_colour("load"));
        // The hash is FNV-1a: pinned so that it never changes between releases.
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(series_dash("average"), Some("7 4"));
        assert_eq!(series_dash("p90"), None);
    }
}
