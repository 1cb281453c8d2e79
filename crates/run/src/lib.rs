//! One benchmark run of pgrush, between the command line (`pgrush-cli`) and the engine.
//!
//! The binary parses pgbench's command line into [`Options`], resolves them once into a
//! [`RunPlan`] (every default applied there) and hands the plan to [`run`]: script
//! loading, the setup connection (scale detection, vacuum, the shard barrier), the
//! engine, the text report and the outputs beyond pgbench's (percentiles, warnings,
//! server statistics, the client machine's load, `--assert` gates, JSON, HTML, JUnit).
//!
//! [`Failure`] is how every part of the binary ends unsuccessfully: a value carrying
//! the lines to print and the exit status, printed once by `main`.

mod bench;
pub mod connect;
pub mod failure;
pub mod gate;
pub mod machine_load;
pub mod metrics_endpoint;
pub mod options;
pub mod output;
pub mod output_file;
pub mod plan;
pub mod server_stats;
pub mod shard;
pub mod targets;
pub mod tpcc_count;
mod tpcc_home;
mod tpcc_rates;

pub use bench::{run, run_counting_new_orders};
pub use connect::PasswordPrompt;
pub use failure::{Failure, Line, exit_status};
pub use options::Options;
pub use plan::RunPlan;
