//! What `pgrush report` was asked to do, as its option table reads it.

use pgrush_report::compare::Format;

/// What `pgrush report` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ReportArgs {
    /// The saved results, in order (runs, one sweep directory or ops results).
    pub(super) files: Vec<String>,
    /// `--html=FILE`: the page of one run, or of the comparison.
    pub(super) html: Option<String>,
    /// The table's format (`--markdown`, `--csv`; text by default).
    pub(super) format: Format,
    /// `--baseline=FILE`: the saved run `…*baseline` thresholds read.
    pub(super) baseline: Option<String>,
    /// `--assert=EXPR`, in order, as given: parsed once the kind of results is known
    /// (runs and sweeps take run metrics, `pgrush ops` results take step names).
    pub(super) expressions: Vec<String>,
    /// `--junit=FILE`.
    pub(super) junit: Option<String>,
}
