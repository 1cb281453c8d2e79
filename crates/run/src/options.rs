//! The parsed command line of `pgrush` in pgbench mode.
//!
//! `Options` holds every pgbench 18 option after getopt_long-compatible parsing and
//! pgbench's validation. The parser is the binary's (`pgrush-cli`'s `parse`); a run
//! reads the options through its [`RunPlan`](crate::RunPlan), initialization (the
//! binary's `init_cmd.rs`) reads them directly.

/// How a script was named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptSource {
    /// `-b NAME` (already resolved to the full builtin name, e.g. `select-only`).
    Builtin(String),
    /// `-f FILE` (the path's bytes as given); `-` means standard input.
    File(Vec<u8>),
}

/// One `-b`/`-f`/`-S`/`-N` with its weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSpec {
    /// Where the script text comes from.
    pub source: ScriptSource,
    /// The weight after `@` (1 when absent).
    pub weight: u32,
    /// The file's text when it was already read while parsing the options (as
    /// pgbench does), as bytes; `None` for standard input, pipes and devices. For a
    /// builtin, a text that replaces the builtin's own (the TPC-C-like scripts with
    /// `--tpcc-think`), else `None`.
    pub text: Option<Vec<u8>>,
}

/// One `--target SCRIPT=CONNINFO`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptTarget {
    /// The script as the report names it: a file path as given, or a builtin's
    /// full name (`select-only`).
    pub script: Vec<u8>,
    /// Connection settings (a conninfo string or URI); what it leaves out comes from
    /// the run's own (`-h`, `-p`, `-U`, `-d`, the environment).
    pub conninfo: String,
}

/// What the command line asks pgrush to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run a benchmark (pgbench's default mode).
    Bench,
    /// `-i`: initialize the tables.
    Init,
    /// `--help`/`-?`: print help and exit 0.
    Help,
    /// `-V`/`--version`: print the version and exit 0.
    Version,
    /// `-b list`: print the builtin list on stderr and exit 0.
    ListBuiltins,
    /// `--show-script=NAME`: print a builtin script on stderr and exit 0.
    ShowScript(String),
}

/// Partitioning of pgbench_accounts (`--partition-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionMethod {
    /// `range` (default when `--partitions` > 0).
    Range,
    /// `hash`.
    Hash,
}

/// Which database and transactions `-i` and a run use (`--workload`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Workload {
    /// pgbench's tables and scripts (the default).
    #[default]
    Pgbench,
    /// A TPC-C-like order-entry database and its five transactions.
    Tpcc,
}

impl Workload {
    /// The workload named `name` (`pgbench`, `tpcc`).
    pub fn from_name(name: &str) -> Option<Workload> {
        match name {
            "pgbench" => Some(Workload::Pgbench),
            "tpcc" => Some(Workload::Tpcc),
            _ => None,
        }
    }
}

/// How `--workload tpcc` sends its transactions (`--tpcc-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TpccMode {
    /// One call of a server-side function per transaction, as HammerDB does (the default).
    #[default]
    Procedures,
    /// The transactions' statements, one round trip each, as an application sends them.
    Client,
}

impl TpccMode {
    /// The mode named `name` (`client`, `procedures`).
    pub fn from_name(name: &str) -> Option<TpccMode> {
        match name {
            "procedures" => Some(TpccMode::Procedures),
            "client" => Some(TpccMode::Client),
            _ => None,
        }
    }

    /// The five scripts of the mode, in New-Order, Payment, Order-Status, Delivery,
    /// Stock-Level order.
    pub fn scripts(self) -> &'static [pgrush_script::Builtin; 5] {
        match self {
            TpccMode::Procedures => &pgrush_script::TPCC_SCRIPTS,
            TpccMode::Client => &pgrush_script::TPCC_CLIENT_SCRIPTS,
        }
    }
}

/// Where pgbench's random seed comes from (`--random-seed` / `PGBENCH_RANDOM_SEED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedChoice {
    /// `time` (also the default when nothing is given).
    Time,
    /// `rand`: a strong random value.
    Rand,
    /// An explicit unsigned integer.
    Value(u64),
}

/// Every pgbench option, parsed and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// What to do.
    pub action: Action,
    /// `--workload`: pgbench's tables and scripts, or the TPC-C-like ones.
    pub workload: Workload,
    /// `--check`: check the TPC-C-like database's consistency after the run.
    pub check: bool,
    /// `--tpcc-mode`: how `--workload tpcc` sends its transactions; `None` when not given.
    pub tpcc_mode: Option<TpccMode>,
    /// `--tpcc-think[=SCALE]`: with `--workload tpcc`, the spec's keying and think times
    /// times SCALE around each transaction; `None` when not given.
    pub tpcc_think: Option<f64>,
    /// Connection: `-h`.
    pub host: Option<String>,
    /// Connection: `-p`.
    pub port: Option<String>,
    /// Connection: `-U`.
    pub user: Option<String>,
    /// Connection: `-d/--dbname` or the first positional argument (may be a conninfo or URI).
    pub dbname: Option<String>,

    // --- benchmark options ---
    /// `-c` (default 1).
    pub clients: u32,
    /// `-j` as given (default 1); the effective thread count is min(jobs, clients).
    pub jobs: u32,
    /// `-t` (default 10 unless `-T`).
    pub transactions: Option<u32>,
    /// `-T` seconds.
    pub duration: Option<u32>,
    /// `-C`.
    pub connect_per_transaction: bool,
    /// `-D name=value`, in order: bytes as given on the command line.
    pub defines: Vec<(Vec<u8>, Vec<u8>)>,
    /// `-l`.
    pub log: bool,
    /// `-L` in microseconds (0 = none).
    pub latency_limit_us: u64,
    /// `-M`.
    pub query_mode: pgrush_stats::QueryMode,
    /// `-n` (skip vacuum; in init mode: no vacuum step).
    pub no_vacuum: bool,
    /// `-P` seconds (0 = off).
    pub progress: u32,
    /// `-r`.
    pub report_per_command: bool,
    /// `-R` transactions per second (0.0 = off).
    pub rate: f64,
    /// `-s` (explicit scale, if given).
    pub scale: Option<u32>,
    /// Scripts from `-b`, `-f`, `-S`, `-N`, in command-line order (empty = tpcb-like).
    pub scripts: Vec<ScriptSpec>,
    /// `-v`.
    pub vacuum_all: bool,
    /// `--aggregate-interval` seconds (0 = off).
    pub aggregate_interval: u32,
    /// `--exit-on-abort`.
    pub exit_on_abort: bool,
    /// `--continue-on-error` (PostgreSQL 19).
    pub continue_on_error: bool,
    /// `--reconnect[=TIMEOUT]` (pgrush's own): seconds a client may stay without a
    /// connection after losing one (`None`: it aborts at once, as in pgbench).
    pub reconnect_timeout_s: Option<u32>,
    /// `--target SCRIPT=CONNINFO` (pgrush's own), in command-line order: the script's
    /// transactions go to that server (see [`crate::targets`]).
    pub targets: Vec<ScriptTarget>,
    /// `--failures-detailed`.
    pub failures_detailed: bool,
    /// `--log-prefix`.
    pub log_prefix: Option<String>,
    /// `--max-tries` (default 1; 0 = unlimited).
    pub max_tries: u32,
    /// `--progress-timestamp`.
    pub progress_timestamp: bool,
    /// `--random-seed` or `PGBENCH_RANDOM_SEED`; `explicit` is true when the user gave one.
    pub random_seed: SeedChoice,
    /// True when the seed was given explicitly (option or environment).
    pub random_seed_explicit: bool,
    /// Every explicit seeding in order (`PGBENCH_RANDOM_SEED`, then each
    /// `--random-seed`), with `time` and `rand` resolved when parsed, as pgbench
    /// does; the parser prints `setting random seed to N` for each.
    pub seed_messages: Vec<u64>,
    /// `--sampling-rate` (0.0 = off).
    pub sampling_rate: f64,
    /// `--verbose-errors`.
    pub verbose_errors: bool,
    /// `--debug`.
    pub debug: bool,

    // --- initialization options ---
    /// `-I` steps after `-n`/`--foreign-keys` adjustments (default `dtgvp`).
    pub init_steps: String,
    /// `-F` (default 100).
    pub fillfactor: u32,
    /// `-q`.
    pub quiet: bool,
    /// `--foreign-keys`.
    pub foreign_keys: bool,
    /// `--index-tablespace`.
    pub index_tablespace: Option<String>,
    /// `--tablespace`.
    pub tablespace: Option<String>,
    /// `--partition-method` (None with partitions > 0 means range).
    pub partition_method: Option<PartitionMethod>,
    /// `--partitions` (default 0).
    pub partitions: u32,
    /// `--unlogged-tables`.
    pub unlogged_tables: bool,

    // --- pgrush extensions ---
    /// The program name to print in messages (basename of argv[0], e.g. `pgrush`).
    pub progname: String,
    /// `--percentiles[=LIST]`: latency percentile lines after the report (None = off).
    pub percentiles: Option<pgrush_report::PercentileList>,
    /// `--json=FILE`: write the run as JSON (`-` = stdout).
    pub json: Option<String>,
    /// `--html=FILE`: write a self-contained HTML report.
    pub html: Option<String>,
    /// `--no-warnings`: do not print the meaningfulness warnings.
    pub no_warnings: bool,
    /// `--assert EXPR`, in command-line order: checked after the run (exit status 3
    /// when one fails).
    pub assertions: Vec<pgrush_report::assertion::Assertion>,
    /// `--junit=FILE`: write the assertions' verdicts as JUnit XML.
    pub junit: Option<String>,
    /// `--warmup` seconds (0 = none): the clients run that long before measuring.
    pub warmup_s: u32,
    /// `--stage SPEC` and the lines of `--stages FILE`, in order (empty: no stages);
    /// their total is the run's `-T`.
    pub stages: Vec<pgrush_stats::stages::StageSpec>,
    /// `--server-stats[=INTERVAL]`: sample the server every INTERVAL (explicitly asked
    /// for: the text summary is printed too).
    pub server_stats: Option<std::time::Duration>,
    /// `--no-server-stats`: no sampling, even with `--json` or `--html`.
    pub no_server_stats: bool,
    /// `--metrics-listen ADDR`: serve `/metrics` (Prometheus, OpenMetrics) there during
    /// the run.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `--metrics-linger SECONDS`: keep serving that long after the report.
    pub metrics_linger_s: u32,
    /// `--dashboard ADDR`: serve a live page of the run there, then its report.
    pub dashboard: Option<std::net::SocketAddr>,
    /// `--dashboard-bind-any`: allow `--dashboard` on an address other than loopback.
    pub dashboard_bind_any: bool,

    // --- sharded runs ---
    /// `--shard INDEX/COUNT` as given.
    pub shard_option: Option<(u32, u32)>,
    /// `--shards N`: the shard count with a Kubernetes Indexed Job's index.
    pub shards_option: Option<u32>,
    /// `--shard-timeout` seconds: how long the start barrier waits (default 60).
    pub shard_timeout_s: u32,
    /// `--start-at TIME`: as given, and in Unix µs (server clock); skips the barrier.
    pub start_at: Option<(String, i64)>,
    /// `--shard-reports`: every shard prints its full report (by default only shard 0
    /// does; the others print one line).
    pub shard_reports: bool,
    /// This run's shard identity (from `--shard` or the launcher's environment);
    /// `None` for a run of its own.
    pub shard: Option<crate::shard::identity::ShardIdentity>,
}

/// `--shard-timeout`'s default, seconds.
pub const DEFAULT_SHARD_TIMEOUT_S: u32 = 60;

impl Default for Options {
    fn default() -> Self {
        Options {
            action: Action::Bench,
            workload: Workload::Pgbench,
            check: false,
            tpcc_mode: None,
            tpcc_think: None,
            host: None,
            port: None,
            user: None,
            dbname: None,
            clients: 1,
            jobs: 1,
            transactions: None,
            duration: None,
            connect_per_transaction: false,
            defines: Vec::new(),
            log: false,
            latency_limit_us: 0,
            query_mode: pgrush_stats::QueryMode::Simple,
            no_vacuum: false,
            progress: 0,
            report_per_command: false,
            rate: 0.0,
            scale: None,
            scripts: Vec::new(),
            vacuum_all: false,
            aggregate_interval: 0,
            exit_on_abort: false,
            continue_on_error: false,
            reconnect_timeout_s: None,
            targets: Vec::new(),
            failures_detailed: false,
            log_prefix: None,
            max_tries: 1,
            progress_timestamp: false,
            random_seed: SeedChoice::Time,
            random_seed_explicit: false,
            seed_messages: Vec::new(),
            sampling_rate: 0.0,
            verbose_errors: false,
            debug: false,
            init_steps: "dtgvp".to_string(),
            fillfactor: 100,
            quiet: false,
            foreign_keys: false,
            index_tablespace: None,
            tablespace: None,
            partition_method: None,
            partitions: 0,
            unlogged_tables: false,
            progname: "pgrush".to_string(),
            percentiles: None,
            json: None,
            html: None,
            no_warnings: false,
            assertions: Vec::new(),
            junit: None,
            warmup_s: 0,
            stages: Vec::new(),
            server_stats: None,
            no_server_stats: false,
            metrics_listen: None,
            metrics_linger_s: 0,
            dashboard: None,
            dashboard_bind_any: false,
            shard_option: None,
            shards_option: None,
            shard_timeout_s: DEFAULT_SHARD_TIMEOUT_S,
            start_at: None,
            shard_reports: false,
            shard: None,
        }
    }
}

/// The builtin script a run executes when no `-b`, `-f`, `-N` or `-S` names one.
pub const DEFAULT_BUILTIN: &str = "tpcb-like";

/// `-t`'s default when neither `-t` nor `-T` is given.
pub const DEFAULT_TRANSACTIONS: u32 = 10;

impl Options {
    /// The scripts a run executes: those given, or the builtin tpcb-like script when
    /// none was (the five TPC-C-like transactions of the `--tpcc-mode` with `--workload
    /// tpcc`, with their keying and think times under `--tpcc-think`).
    pub fn scripts_to_run(&self) -> Vec<ScriptSpec> {
        if self.scripts.is_empty() && self.workload == Workload::Tpcc {
            return self
                .tpcc_mode
                .unwrap_or_default()
                .scripts()
                .iter()
                .zip(pgrush_script::TPCC_WEIGHTS)
                .enumerate()
                .map(|(i, (b, weight))| ScriptSpec {
                    source: ScriptSource::Builtin(b.name.to_string()),
                    weight,
                    text: self.tpcc_think.map(|scale| {
                        pgrush_script::with_keying_and_think(i, b.text, scale).into_bytes()
                    }),
                })
                .collect();
        }
        if self.scripts.is_empty() {
            return vec![ScriptSpec {
                source: ScriptSource::Builtin(DEFAULT_BUILTIN.to_string()),
                weight: 1,
                text: None,
            }];
        }
        self.scripts.clone()
    }

    /// The connection request pgbench builds from the options: `-h`, `-p`, `-U`, the
    /// database name (which may be a conninfo string or URI) and the program name as
    /// `fallback_application_name`.
    pub fn connect_request(&self) -> pgrush_wire::conninfo::ConnectRequest {
        pgrush_wire::conninfo::ConnectRequest {
            dbname: self.dbname.clone(),
            host: self.host.clone(),
            port: self.port.clone(),
            user: self.user.clone(),
            password: None,
            fallback_application_name: Some(self.progname.clone()),
            extra: Vec::new(),
        }
    }
}
