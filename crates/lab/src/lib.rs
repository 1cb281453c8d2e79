//! pgrush's workflows: sequences of initializations and runs, driven as child
//! `pgrush` processes, whose run documents are collected and compared.
//!
//! - [`sweep`]: `pgrush sweep`, configurations compared over repeats with
//!   bootstrap confidence intervals.
#![deny(missing_docs)]

pub mod sweep;
