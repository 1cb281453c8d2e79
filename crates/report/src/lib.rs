//! pgrush's output formats: pgbench 18's final text report ([`text`]) and progress lines
//! ([`progress`]), built from [`pgrush_stats::RunSummary`] and progress snapshots.
//! JSON and HTML reports (issue 8) will live here too.
#![deny(missing_docs)]

pub mod progress;
pub mod text;

/// C `printf`-compatible number formatting (`%f`, `%.3f`, `%.1f`, `%.0f`, `%.15g`, widths),
/// printing NaN and infinities as PostgreSQL does (`NaN`, `Infinity`, `-Infinity`).
pub use pgrush_stats::cfmt as num;
