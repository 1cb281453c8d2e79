//! `-P` progress lines (stderr), as pgbench prints them. The formatting lives in
//! [`pgrush_stats::progress`] (the engine prints these lines while running and must not
//! depend on this crate); it is re-exported here beside the other formats.

pub use pgrush_stats::progress::{
    ProgressOptions, ProgressTime, format_progress_line, push_progress_line,
};
