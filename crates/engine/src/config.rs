//! What the engine runs: the fully resolved benchmark configuration.

pub use pgrush_script::ThreadRngs;
use pgrush_script::{Prng, Script, Variables};
use pgrush_stats::live::LiveMetrics;
use pgrush_stats::stages::Stage;
use pgrush_stats::{QueryMode, RunLimit};
use pgrush_wire::conninfo::ConnParams;
use std::sync::Arc;

/// Transaction logging (`-l`, `--aggregate-interval`, `--sampling-rate`, `--log-prefix`).
#[derive(Debug, Clone, PartialEq)]
pub struct LogConfig {
    /// File name prefix (`pgbench_log` by default).
    pub prefix: String,
    /// Process id used in file names.
    pub pid: u32,
    /// Fraction of transactions written (0 = all).
    pub sampling_rate: f64,
    /// Aggregation interval in seconds (0 = one line per transaction).
    pub aggregate_interval: u32,
}

/// `-R`, `-L` and `--warmup`: when transactions are scheduled, when they are too
/// late, and when they start to count.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pacing {
    /// `-R` target rate in transactions per second (0 = no throttling).
    pub rate: f64,
    /// `-L` in µs (0 = none).
    pub latency_limit_us: i64,
    /// `--warmup` in µs (0 = none): the clients run the workload this long from the
    /// run start (a shard's agreed start) before anything is counted; a transaction
    /// counts when it was scheduled (without `-R`: started) at or after that edge.
    pub warmup_us: i64,
}

/// What a client does after an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorPolicy {
    /// `--max-tries` (0 = unlimited): tries of a transaction that hit a
    /// serialization or deadlock error.
    pub max_tries: u32,
    /// `--continue-on-error` (PostgreSQL 19): other SQL errors fail the transaction
    /// instead of aborting the client.
    pub continue_on_error: bool,
    /// `--exit-on-abort`: the first aborted client stops the run (exit status 2, no report).
    pub exit_on_abort: bool,
    /// `--verbose-errors`: a message for every error, retry and failure.
    pub verbose_errors: bool,
    /// `--reconnect[=TIMEOUT]` (pgrush's own), in µs: a client whose connection is
    /// lost counts the transaction as a connection failure and reconnects (backoff
    /// from 10 ms to 1 s), aborting after this long without a connection. `None`:
    /// the client aborts at once, as in pgbench.
    pub reconnect_timeout_us: Option<i64>,
}

impl Default for ErrorPolicy {
    /// pgbench's defaults: one try, abort the client on other errors.
    fn default() -> Self {
        ErrorPolicy {
            max_tries: 1,
            continue_on_error: false,
            exit_on_abort: false,
            verbose_errors: false,
            reconnect_timeout_us: None,
        }
    }
}

/// What the run prints and records while it runs.
#[derive(Debug, Clone)]
pub struct Output {
    /// Program name for messages (`pgrush`).
    pub progname: String,
    /// `--debug`.
    pub debug: bool,
    /// `-P` interval in seconds (0 = off).
    pub progress: u32,
    /// `--progress-timestamp`.
    pub progress_timestamp: bool,
    /// `-r`: per-command latencies.
    pub report_per_command: bool,
    /// `-l` settings (None = no log).
    pub log: Option<LogConfig>,
    /// `--failures-detailed` (the log's failure columns).
    pub failures_detailed: bool,
    /// `--metrics-listen`: the live figures the threads publish for the endpoint.
    pub metrics: Option<Arc<LiveMetrics>>,
}

impl Output {
    /// Prints under `progname`; no progress, log, debug or per-command latencies.
    pub fn new(progname: impl Into<String>) -> Self {
        Output {
            progname: progname.into(),
            debug: false,
            progress: 0,
            progress_timestamp: false,
            report_per_command: false,
            log: None,
            failures_detailed: false,
            metrics: None,
        }
    }
}

/// Everything one benchmark run needs.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Connection parameters for every client connection.
    pub conn: ConnParams,
    /// The scripts, in command-line order (weights inside).
    pub scripts: Vec<Script>,
    /// Number of clients (`-c`).
    pub clients: u32,
    /// Number of worker threads (already `min(-j, -c)`).
    pub threads: u32,
    /// `-t` or `-T`: when the run ends.
    pub limit: RunLimit,
    /// `-M`.
    pub query_mode: QueryMode,
    /// `-C`: reconnect for every transaction.
    pub connect_per_tx: bool,
    /// `-R`, `-L`.
    pub pacing: Pacing,
    /// `--max-tries`, `--continue-on-error`, `--exit-on-abort`, `--verbose-errors`.
    pub errors: ErrorPolicy,
    /// Messages, progress, `-r`, `-l`.
    pub output: Output,
    /// Variables every client starts with (`-D`, `scale`, `default_seed`, `random_seed`);
    /// the engine adds `client_id`.
    pub variables: Variables,
    /// One generator per client (expression random functions), in client order.
    pub client_rngs: Vec<Prng>,
    /// One set per thread.
    pub thread_rngs: Vec<ThreadRngs>,
    /// React to SIGINT/SIGTERM: stop, report what ran, exit 2.
    pub handle_signals: bool,
    /// Global client ids and the agreed start (sharded runs); the default for a run
    /// of its own.
    pub placement: crate::Placement,
    /// `--stage`/`--stages`, resolved (empty: none). The run's `-T` is their total;
    /// see `crates/engine/README.md` ("Stages").
    pub stages: Vec<Stage>,
    /// How each transaction's script is chosen.
    pub script_choice: ScriptChoice,
    /// `--target`: the server each script's transactions go to (default: `conn` for all).
    pub targets: Targets,
}

/// `--target SCRIPT=CONNINFO`: scripts whose transactions go to servers of their own.
/// Each client holds one connection per target its scripts use, opened at its start
/// (per transaction with `-C`); with `--reconnect` each reconnects on its own.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    /// Connection parameters of the targets other than the run's own: target `k`
    /// (from 1) is `servers[k - 1]`; target 0 is [`EngineConfig::conn`].
    pub servers: Vec<ConnParams>,
    /// The target of each script, in script order; empty: every script uses target 0.
    pub of_script: Vec<usize>,
}

impl Targets {
    /// The target of script `script` (0 when none was given).
    pub fn of(&self, script: usize) -> usize {
        self.of_script.get(script).copied().unwrap_or(0)
    }

    /// The parameters of target `target` (`main` for 0).
    pub fn params<'a>(&'a self, main: &'a ConnParams, target: usize) -> &'a ConnParams {
        match target {
            0 => main,
            k => &self.servers[k - 1],
        }
    }
}

/// How each transaction's script is chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ScriptChoice {
    /// pgbench's: a draw by weight from the thread's generator, with replacement.
    #[default]
    Weighted,
    /// A deck of cards per client, one card per unit of weight, dealt in a new random
    /// order each pass (TPC-C §5.2.4.2); its generator is derived from the client's.
    Deck,
}

impl EngineConfig {
    /// Mean delay between two transactions of one thread under `-R`, in µs (0 = off).
    /// With stages, that of the highest stage rate (when `-R` is not given): the
    /// schedule then follows the stages, the value only says that the run is throttled.
    pub fn throttle_delay_us(&self) -> f64 {
        let rate = if self.pacing.rate > 0.0 {
            self.pacing.rate
        } else {
            self.stages
                .iter()
                .map(|s| s.rate.0.max(s.rate.1))
                .fold(0.0, f64::max)
        };
        if rate > 0.0 {
            1_000_000.0 / rate * f64::from(self.threads)
        } else {
            0.0
        }
    }
}
