//! pgrush's output formats: pgbench 18's final text report ([`text`]) and progress lines
//! ([`progress`]), built from [`pgrush_stats::RunSummary`] and progress snapshots; and
//! pgrush's opt-in extras: latency [`percentiles`], the JSON run [`document`]
//! (`--json`), the self-contained [`html`] report with SVG charts (`svg.rs`), run
//! [`compare`]isons (`pgrush report`), meaningfulness [`warnings`] and the exact
//! [`merge`] of a sharded run's documents (`pgrush merge`); and CI gates:
//! [`assertion`]s on a run's results (`--assert`) with their verdicts as [`junit`] XML.
#![deny(missing_docs)]

pub mod assertion;
pub mod compare;
pub mod dashboard;
pub mod document;
mod document_distribution;
mod document_figures;
mod document_parts;
mod document_read;
mod document_stages;
mod document_targets;
mod document_tpcc;
pub mod hdr;
pub mod html;
pub mod junit;
pub mod machine;
pub mod machine_findings;
pub mod merge;
pub mod metrics_text;
pub mod outage;
pub mod outage_html;
pub mod page;
pub mod palette;
pub mod percentiles;
pub mod progress;
pub mod server;
pub mod statement_chart;
pub mod svg;
pub mod text;
mod textbuf;
pub mod utc_time;
pub mod warnings;

pub use document::{ClientInfo, RunContext, RunDocument, ServerInfo};
pub use percentiles::PercentileList;

/// C `printf`-compatible number formatting (`%f`, `%.3f`, `%.1f`, `%.0f`, `%.15g`, widths),
/// printing NaN and infinities as PostgreSQL does (`NaN`, `Infinity`, `-Infinity`).
pub use pgrush_stats::cfmt as num;
