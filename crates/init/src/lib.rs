//! `pgrush -i`: pgbench 18's initialization steps (`-I dtgGvpf`), byte-identical
//! statements on one connection, and parallel loading with `-j N`.
//!
//! The crate is written against the [`session::Session`] trait; [`wire_session`]
//! implements it for `pgrush_wire::Connection`.

#![deny(missing_docs)]

mod config;
mod console;
mod ddl;
mod error;
mod parallel;
mod progress;
mod rows;
mod runner;
mod session;
mod split;
mod steps;
pub mod tpcc;
pub mod wire_session;

#[cfg(test)]
mod fake;

pub use config::{InitConfig, Partitioning, Step, parse_steps};
pub use console::Console;
pub use error::InitError;
pub use runner::{StepTime, done_line, run_init};
pub use session::{Connector, CopyFailure, CopySink, DbFailure, Session};
