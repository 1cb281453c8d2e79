//! One benchmark run of pgrush, between the command line (`pgrush-cli`) and the engine.
//!
//! [`Failure`] is how every part of the binary ends unsuccessfully: a value carrying
//! the lines to print and the exit status, printed once by `main`.

pub mod failure;

pub use failure::{Failure, Line};
