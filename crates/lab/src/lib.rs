//! pgrush's workflows of many runs, built on the benchmark itself.
//!
//! - [`capacity`]: `pgrush capacity`, the highest rate a server sustains while every SLO
//!   holds, found by open-loop steps (`-R`) that double, then bisect.
//! - [`ops`]: `pgrush ops`, how long the operations around a database take at each
//!   scale (load, dump, restore, reindex, base backup, crash recovery, PITR).
//! - [`sweep`]: `pgrush sweep`, configurations compared over repeats with bootstrap
//!   confidence intervals, each run a child `pgrush` whose run document is collected.
//! - [`child`]: the child `pgrush` processes the workflows run, and Ctrl-C.
//! - [`ticker`]: the progress line they draw on standard error.
//! - [`table`]: tables of text cells as aligned text, Markdown or CSV.
#![deny(missing_docs)]

pub mod capacity;
pub mod child;
pub mod ops;
pub mod sweep;
pub mod table;
pub mod ticker;
