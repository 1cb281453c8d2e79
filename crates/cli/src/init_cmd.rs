//! Wiring of `-i`: options -> `pgrush_init`.
//!
//! Builds the [`InitConfig`] from the parsed options, connects as pgbench does
//! (host/port/user/dbname plus `fallback_application_name`), runs the steps and maps
//! failures to pgbench's messages and exit status 1 (a [`Failure`], printed by the caller).

use pgrush_init::tpcc::{Layout, TpccConfig, run_tpcc_init};
use pgrush_init::wire_session::{Interrupt, WireConnector};
use pgrush_init::{Console, InitConfig, InitError, Partitioning, parse_steps, run_init};
use pgrush_run::connect::{PasswordPrompt, connect_prompting};
use pgrush_run::options::{Options, PartitionMethod, SeedChoice, Workload};
use pgrush_run::{Failure, Line};
use std::io::Write;
use std::sync::Arc;

/// The initialization settings described by `opts`.
pub fn config(opts: &Options) -> Result<InitConfig, InitError> {
    let partitioning = match (opts.partitions, opts.partition_method) {
        (0, _) => Partitioning::None,
        (n, Some(PartitionMethod::Hash)) => Partitioning::Hash(n),
        (n, _) => Partitioning::Range(n),
    };
    Ok(InitConfig {
        steps: parse_steps(&opts.init_steps)?,
        scale: i64::from(opts.scale.unwrap_or(1)),
        fillfactor: opts.fillfactor,
        quiet: opts.quiet,
        tablespace: opts.tablespace.clone(),
        index_tablespace: opts.index_tablespace.clone(),
        partitioning,
        unlogged: opts.unlogged_tables,
        jobs: opts.jobs.max(1),
    })
}

/// The settings of `-i --workload tpcc`: `-s` warehouses, the data seed from
/// `--random-seed` (or the clock, as a run's seed), pgbench's table options.
pub fn tpcc_config(opts: &Options) -> Result<TpccConfig, InitError> {
    let seed = match opts.random_seed {
        SeedChoice::Value(v) => v,
        SeedChoice::Time => pgrush_engine::clock::monotonic_us(),
        SeedChoice::Rand => pgrush_engine::clock::strong_random_u64(),
    };
    Ok(TpccConfig {
        steps: parse_steps(&opts.init_steps)?,
        warehouses: i64::from(opts.scale.unwrap_or(1)),
        jobs: opts.jobs.max(1),
        seed,
        quiet: opts.quiet,
        layout: Layout {
            unlogged: opts.unlogged_tables,
            tablespace: opts.tablespace.clone(),
            index_tablespace: opts.index_tablespace.clone(),
            fillfactor: opts.fillfactor,
        },
    })
}

/// Runs the initialization steps described by `opts`, asking `prompt` for a password
/// when the server wants one and none was given.
pub fn run(opts: &Options, prompt: PasswordPrompt<'_>) -> Result<(), Failure> {
    let console = Console::stderr();
    run_with(opts, prompt, &console).map_err(|e| e.into_failure(&opts.progname))
}

/// An initialization failure, with the terminal-only `pgrush demo` hint when the
/// first connection found no server.
struct InitFailure {
    error: InitError,
    no_server_hint: Option<String>,
}

impl From<InitError> for InitFailure {
    fn from(error: InitError) -> Self {
        InitFailure {
            error,
            no_server_hint: None,
        }
    }
}

impl InitFailure {
    /// pgbench's lines (rendered with `progname`), then the hint; exit status 1.
    fn into_failure(self, progname: &str) -> Failure {
        let failure = Failure::exit(1).then(Line::Verbatim(self.error.render(progname)));
        match self.no_server_hint {
            Some(hint) => failure.then(Line::Verbatim(hint.into_bytes())),
            None => failure,
        }
    }
}

fn run_with(
    opts: &Options,
    prompt: PasswordPrompt<'_>,
    console: &Console,
) -> Result<(), InitFailure> {
    let tpcc = match opts.workload {
        Workload::Tpcc => Some(tpcc_config(opts)?),
        Workload::Pgbench => None,
    };
    let cfg = config(opts)?;
    let (params, first) = connect_prompting(opts, prompt).map_err(|failure| InitFailure {
        no_server_hint: failure.terminal_hint(&opts.progname),
        error: InitError::Connect(failure.message),
    })?;
    let connector = WireConnector::with_connection(params, first);
    let interrupt = connector.interrupt();
    let watching = watch_ctrl_c(Arc::clone(&interrupt));
    let result = match &tpcc {
        Some(t) => run_tpcc_init(t, &connector, console),
        None => run_init(&cfg, &connector, console),
    }
    .map(|_| ())
    .map_err(InitFailure::from);
    if watching {
        pgrush_engine::signal::uninstall();
    }
    interrupt.settle();
    result
}

/// Turns Ctrl-C (and SIGTERM) during `-i` into cancel requests, as pgbench does: a
/// thread waits for the signal, cancels every connection's running statement and
/// prints `Cancel request sent`; the failing statement then ends the initialization
/// with exit status 1. A second signal (or SIGHUP, SIGQUIT) ends the process at once:
/// it dies of that signal, as during a run. Returns false when the handler could not
/// be installed (then Ctrl-C keeps its default effect).
fn watch_ctrl_c(interrupt: Arc<Interrupt>) -> bool {
    let Ok(fd) = pgrush_engine::signal::install() else {
        return false;
    };
    let spawned = std::thread::Builder::new()
        .name("ctrl-c".into())
        .spawn(move || {
            while pgrush_engine::signal::wait(fd).is_ok() {
                interrupt.request(|failure| {
                    let text = match failure {
                        None => "Cancel request sent\n".to_string(),
                        Some(e) => format!("Could not send cancel request: {e}\n"),
                    };
                    let _ = std::io::stderr().write_all(text.as_bytes());
                });
            }
        });
    if spawned.is_err() {
        pgrush_engine::signal::uninstall();
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_map_to_config() {
        let opts = Options {
            init_steps: "dt gvp".into(),
            scale: Some(7),
            fillfactor: 80,
            partitions: 3,
            partition_method: Some(PartitionMethod::Hash),
            unlogged_tables: true,
            jobs: 4,
            ..Options::default()
        };
        let cfg = config(&opts).unwrap();
        assert_eq!(cfg.steps.len(), 5);
        assert_eq!(cfg.scale, 7);
        assert_eq!(cfg.partitioning, Partitioning::Hash(3));
        assert!(cfg.unlogged);
        assert_eq!(cfg.jobs, 4);
        let range = Options {
            partitions: 2,
            ..Options::default()
        };
        assert_eq!(config(&range).unwrap().partitioning, Partitioning::Range(2));
        assert_eq!(config(&Options::default()).unwrap().scale, 1);
        assert_eq!(
            Options::default()
                .connect_request()
                .fallback_application_name
                .as_deref(),
            Some("pgrush")
        );
    }
}
