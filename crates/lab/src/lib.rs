//! pgrush's workflows of many runs, built on the benchmark itself.
//!
//! - [`ops`]: `pgrush ops`, how long the operations around a database take at each
//!   scale (load, dump, restore, reindex, base backup, crash recovery, PITR).
//! - [`sweep`]: `pgrush sweep`, configurations compared over repeats with bootstrap
//!   confidence intervals, each run a child `pgrush` whose run document is collected.
//! - [`ticker`]: the progress line both draw on standard error.
#![deny(missing_docs)]

pub mod ops;
pub mod sweep;
pub mod ticker;
