//! Runs the `-I` steps in order and prints pgbench's `done in ...` summary.

use crate::config::{InitConfig, Step};
use crate::console::Console;
use crate::error::InitError;
use crate::parallel;
use crate::session::Connector;
use crate::steps;
use std::time::Instant;

/// The time one step took.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTime {
    /// pgbench's name for the step (`drop tables`, ...).
    pub op: &'static str,
    /// Seconds.
    pub seconds: f64,
}

/// `done in %.2f s (<op> %.2f s, ...).` — the total is the sum of the step times.
pub fn done_line(times: &[StepTime]) -> String {
    let total: f64 = times.iter().map(|t| t.seconds).sum();
    let list: Vec<String> = times
        .iter()
        .map(|t| format!("{} {:.2} s", t.op, t.seconds))
        .collect();
    format!("done in {total:.2} s ({}).", list.join(", "))
}

/// Runs every step of `cfg` (on one connection when `cfg.jobs` is 1, exactly as pgbench
/// 18; otherwise loading, vacuum and primary keys use `cfg.jobs` connections), printing
/// pgbench's messages on `console`. Returns the step times after printing `done in`.
pub fn run_init<C: Connector>(
    cfg: &InitConfig,
    connector: &C,
    console: &Console,
) -> Result<Vec<StepTime>, InitError> {
    let mut main = connector.connect().map_err(InitError::Connect)?;
    let parallel = cfg.jobs > 1;
    let mut times = Vec::new();
    for &step in &cfg.steps {
        let start = Instant::now();
        match step {
            Step::Drop => steps::drop_tables(&mut main, console)?,
            Step::CreateTables => steps::create_tables(&mut main, cfg, console)?,
            Step::ClientGenerate if parallel => {
                parallel::client_generate(connector, &mut main, cfg, console)?
            }
            Step::ClientGenerate => steps::client_generate(&mut main, cfg, console)?,
            Step::ServerGenerate if parallel => {
                parallel::server_generate(connector, &mut main, cfg, console)?
            }
            Step::ServerGenerate => steps::server_generate(&mut main, cfg, console)?,
            Step::Vacuum if parallel => parallel::vacuum(connector, &mut main, cfg, console)?,
            Step::Vacuum => steps::vacuum(&mut main, console)?,
            Step::PrimaryKeys if parallel => {
                parallel::primary_keys(connector, &mut main, cfg, console)?
            }
            Step::PrimaryKeys => steps::primary_keys(&mut main, cfg, console)?,
            Step::ForeignKeys => steps::foreign_keys(&mut main, console)?,
        }
        times.push(StepTime {
            op: step.op_name(),
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    console.line(&done_line(&times));
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_line_format() {
        let times = [
            StepTime {
                op: "drop tables",
                seconds: 0.004,
            },
            StepTime {
                op: "client-side generate",
                seconds: 0.156,
            },
        ];
        assert_eq!(
            done_line(&times),
            "done in 0.16 s (drop tables 0.00 s, client-side generate 0.16 s)."
        );
        assert_eq!(done_line(&[]), "done in 0.00 s ().");
    }
}
