//! Every option of pgrush's pgbench mode, defined once.
//!
//! [`OPTIONS`] is the single source for the option parser (the getopt_long
//! tables are built from it), for `--help` (generated from each entry's
//! [`HelpEntry`]s) and for the shell completions and man page
//! ([`option_docs`]). An entry gives the short letter, the long name, whether
//! a value is taken, the value's name, where the option appears in `--help`
//! and with which lines, which mode it belongs to, and how it updates the
//! parse state ([`Update`]).
//!
//! The table is in pgbench 19's `long_options[]` order (pgbench 18's, then
//! `--continue-on-error`), followed by the extensions: glibc lists the candidates of an ambiguous abbreviation in
//! table order, so this order is observable. `--help` has its own order,
//! given by each help entry's section and rank.

use super::apply::{self, State};
use super::diag::Diag;
use super::getopt::{HasArg, LongOpt, ShortOpt};
use super::shard_options;
use super::values::text;
use pgrush_run::options::{Action, Options};

/// A heading of `--help`: pgbench 18's four sections, then pgrush's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// "Initialization options:" (`-i` mode).
    Initialization,
    /// "Options to select what to run:" (the scripts).
    SelectWhatToRun,
    /// "Benchmarking options:".
    Benchmarking,
    /// "Common options:" (connection, `--debug`, `-V`, `-?`).
    Common,
    /// Options pgbench does not have (pgrush's own).
    Extensions,
}

impl Section {
    /// Every section, in the order `--help` prints them.
    pub const ALL: [Section; 5] = [
        Section::Initialization,
        Section::SelectWhatToRun,
        Section::Benchmarking,
        Section::Common,
        Section::Extensions,
    ];

    /// The section's heading line, without the newline.
    pub fn heading(self) -> &'static str {
        match self {
            Section::Initialization => "Initialization options:",
            Section::SelectWhatToRun => "Options to select what to run:",
            Section::Benchmarking => "Benchmarking options:",
            Section::Common => "Common options:",
            Section::Extensions => "Options beyond pgbench 18 (pgrush):",
        }
    }
}

/// One appearance of an option in `--help` (`-n` and `-s` appear twice, with
/// a different text in each section).
#[derive(Debug, Clone, Copy)]
pub struct HelpEntry {
    /// The section the lines are printed in.
    pub section: Section,
    /// Position inside the section, from 1 (pgbench's `usage()` order is
    /// hand-made, not alphabetical).
    pub rank: u8,
    /// Text printed right after the synopsis on the synopsis' own line, even
    /// when the synopsis is long (only `-I`'s default does this).
    pub beside_synopsis: Option<&'static str>,
    /// The description lines; the first one goes beside the synopsis when it
    /// fits in pgbench's 25 columns.
    pub lines: &'static [&'static str],
}

/// Which mode an option belongs to: pgbench refuses benchmarking options with
/// `-i`, and initialization options without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Accepted in both modes.
    Any,
    /// Only with `-i`.
    Initialization,
    /// Only without `-i`.
    Benchmarking,
}

/// What the first argument alone asks for (`--help`, `--version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyAction {
    /// Print the help text.
    Help,
    /// Print the version line.
    Version,
}

/// A custom update: checks the value and stores it; `Err(status)` after
/// printing the complaint. The value is `None` for options that take none
/// (and for an optional value that was not given).
pub type ApplyFn = fn(&mut State, Option<&[u8]>, &mut Diag<'_>) -> Result<(), i32>;

/// How an option changes the parse state.
#[derive(Clone, Copy)]
pub enum Update {
    /// Recognised only as the whole first argument, as pgbench checks
    /// `--help`/`-?`/`--version`/`-V` before getopt_long; never given to getopt.
    Early(EarlyAction),
    /// Sets a boolean field of [`Options`] to true.
    Flag(fn(&mut Options) -> &mut bool),
    /// Stores the value, unchecked, in a text field of [`Options`].
    Text(fn(&mut Options) -> &mut Option<String>),
    /// Anything else (value checks, scripts, seeds).
    Custom(ApplyFn),
}

/// One option: everything the parser, `--help`, completions and the man page
/// need to know about it.
#[derive(Clone, Copy)]
pub struct OptionDef {
    /// The short letter (`-c`), if there is one.
    pub short: Option<u8>,
    /// The long name without `--`.
    pub long: &'static str,
    /// Whether the option takes a value.
    pub arg: HasArg,
    /// The value's name as `--help` shows it (`NUM`, `simple|extended|prepared`).
    pub value_name: Option<&'static str>,
    /// True for options pgbench (19) does not have: they only match an
    /// abbreviation that matches no pgbench option.
    pub extension: bool,
    /// The mode the option belongs to.
    pub mode: Mode,
    /// Where and how `--help` describes it.
    pub help: &'static [HelpEntry],
    /// How it is applied.
    pub update: Update,
}

impl OptionDef {
    /// Applies this option to the parse state as the entry says; `Err(status)` after
    /// printing the complaint. `value` is `None` for options without one (and for
    /// `--percentiles` alone).
    pub fn apply_to(
        &self,
        state: &mut State,
        value: Option<&[u8]>,
        diag: &mut Diag<'_>,
    ) -> Result<(), i32> {
        match self.mode {
            // The data seed of `-i --workload tpcc`; refused with pgbench's `-i`.
            Mode::Benchmarking if self.long == "random-seed" => state.seed_option_set = true,
            Mode::Benchmarking => state.benchmarking_option_set = true,
            Mode::Initialization => state.initialization_option_set = true,
            Mode::Any => {}
        }
        match self.update {
            Update::Early(EarlyAction::Help) => state.opts.action = Action::Help,
            Update::Early(EarlyAction::Version) => state.opts.action = Action::Version,
            Update::Flag(field) => *field(&mut state.opts) = true,
            Update::Text(field) => *field(&mut state.opts) = Some(text(value.unwrap_or_default())),
            Update::Custom(apply) => return apply(state, value, diag),
        }
        Ok(())
    }
}

impl OptionDef {
    /// True when `arg` is exactly the option's short or long form, without a value.
    fn is_written_as(&self, arg: &[u8]) -> bool {
        let long = arg.strip_prefix(b"--") == Some(self.long.as_bytes());
        let short = matches!((self.short, arg), (Some(ch), [b'-', c]) if ch == *c);
        long || short
    }

    /// True when getopt_long sees the option (everything but `--help`/`--version`).
    fn is_getopt_option(&self) -> bool {
        !matches!(self.update, Update::Early(_))
    }
}

/// What shell completions and the man page need about one option (the
/// table entry without its update function).
#[derive(Debug, Clone)]
pub struct OptionDoc {
    /// The short letter, if any.
    pub short: Option<char>,
    /// The long name without `--`.
    pub long: &'static str,
    /// Whether a value is taken.
    pub arg: HasArg,
    /// The value's name, for options that take one.
    pub value_name: Option<&'static str>,
    /// The option's appearances in `--help`.
    pub help: &'static [HelpEntry],
}

impl OptionDoc {
    /// The synopsis `--help` prints: `-c, --client=NUM`, `--percentiles[=LIST]`.
    pub fn synopsis(&self) -> String {
        let mut text = String::new();
        if let Some(short) = self.short {
            text.push('-');
            text.push(short);
            text.push_str(", ");
        }
        text.push_str("--");
        text.push_str(self.long);
        match (self.arg, self.value_name) {
            (HasArg::Required, Some(name)) => {
                text.push('=');
                text.push_str(name);
            }
            (HasArg::Optional, Some(name)) => {
                text.push_str("[=");
                text.push_str(name);
                text.push(']');
            }
            _ => {}
        }
        text
    }
}

/// Every option's documentation, in table order: the data `--help`, the
/// shell completions and the man page are generated from.
pub fn option_docs() -> impl Iterator<Item = OptionDoc> {
    OPTIONS.iter().map(|def| OptionDoc {
        short: def.short.map(char::from),
        long: def.long,
        arg: def.arg,
        value_name: def.value_name,
        help: def.help,
    })
}

/// The short options getopt_long knows (pgbench's
/// `b:c:Cd:D:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v`).
pub fn short_options() -> Vec<ShortOpt<&'static OptionDef>> {
    OPTIONS
        .iter()
        .filter(|def| def.is_getopt_option())
        .filter_map(|def| {
            def.short.map(|ch| ShortOpt {
                ch,
                has_arg: def.arg,
                id: def,
            })
        })
        .collect()
}

/// The long options getopt_long knows, in table order.
pub fn long_options() -> Vec<LongOpt<&'static OptionDef>> {
    OPTIONS
        .iter()
        .filter(|def| def.is_getopt_option())
        .map(|def| LongOpt {
            name: def.long,
            has_arg: def.arg,
            id: def,
            extension: def.extension,
        })
        .collect()
}

/// The early action `arg` asks for when it is exactly `-?`, `--help`, `-V` or `--version`.
pub fn early_action(arg: &[u8]) -> Option<EarlyAction> {
    OPTIONS.iter().find_map(|def| match def.update {
        Update::Early(action) if def.is_written_as(arg) => Some(action),
        _ => None,
    })
}

use HasArg::{No, Optional, Required};
use Mode::{Any, Benchmarking as Bench, Initialization as Init};
use Section::{
    Benchmarking as BenchHelp, Common, Extensions, Initialization as InitHelp, SelectWhatToRun,
};

/// A help appearance whose first line goes beside the synopsis when it fits.
const fn help(section: Section, rank: u8, lines: &'static [&'static str]) -> HelpEntry {
    HelpEntry {
        section,
        rank,
        beside_synopsis: None,
        lines,
    }
}

/// A pgbench option with a short letter.
const fn both(
    short: u8,
    long: &'static str,
    arg: HasArg,
    value_name: Option<&'static str>,
    mode: Mode,
    help: &'static [HelpEntry],
    update: Update,
) -> OptionDef {
    OptionDef {
        short: Some(short),
        long,
        arg,
        value_name,
        extension: false,
        mode,
        help,
        update,
    }
}

/// A pgbench option with only a long name.
const fn long(
    long: &'static str,
    arg: HasArg,
    value_name: Option<&'static str>,
    mode: Mode,
    help: &'static [HelpEntry],
    update: Update,
) -> OptionDef {
    OptionDef {
        short: None,
        long,
        arg,
        value_name,
        extension: false,
        mode,
        help,
        update,
    }
}

/// An option pgbench (18 or 19) does not have (long name only).
const fn extension(
    long: &'static str,
    arg: HasArg,
    value_name: Option<&'static str>,
    help: &'static [HelpEntry],
    update: Update,
) -> OptionDef {
    OptionDef {
        short: None,
        long,
        arg,
        value_name,
        extension: true,
        mode: Bench,
        help,
        update,
    }
}

impl OptionDef {
    /// The same option, accepted with and without `-i`.
    const fn in_any_mode(self) -> OptionDef {
        OptionDef { mode: Any, ..self }
    }
}

const NUM: Option<&str> = Some("NUM");

/// Every option, in pgbench 19's `long_options[]` order, then the extensions,
/// then `--help` and `--version` (which pgbench checks before getopt_long).
#[rustfmt::skip]
pub static OPTIONS: &[OptionDef] = &[
    both(b'b', "builtin", Required, Some("NAME[@W]"), Bench,
        &[help(SelectWhatToRun, 1, &[
            "add builtin script NAME weighted at W (default: 1)",
            "(use \"-b list\" to list available scripts)",
        ])],
        Update::Custom(apply::builtin)),
    both(b'c', "client", Required, NUM, Bench,
        &[help(BenchHelp, 1, &["number of concurrent database clients (default: 1)"])],
        Update::Custom(apply::client)),
    both(b'C', "connect", No, None, Bench,
        &[help(BenchHelp, 2, &["establish new connection for each transaction"])],
        Update::Flag(|o| &mut o.connect_per_transaction)),
    both(b'd', "dbname", Required, Some("DBNAME"), Any,
        &[help(Common, 2, &["database name to connect to"])],
        Update::Text(|o| &mut o.dbname)),
    both(b'D', "define", Required, Some("VARNAME=VALUE"), Bench,
        &[help(BenchHelp, 3, &["define variable for use by custom script"])],
        Update::Custom(apply::define)),
    both(b'f', "file", Required, Some("FILENAME[@W]"), Bench,
        &[help(SelectWhatToRun, 2, &["add script FILENAME weighted at W (default: 1)"])],
        Update::Custom(apply::file)),
    both(b'F', "fillfactor", Required, NUM, Init,
        &[help(InitHelp, 3, &["set fill factor"])],
        Update::Custom(apply::fillfactor)),
    both(b'h', "host", Required, Some("HOSTNAME"), Any,
        &[help(Common, 3, &["database server host or socket directory"])],
        Update::Text(|o| &mut o.host)),
    both(b'i', "initialize", No, None, Any,
        &[help(InitHelp, 1, &["invokes initialization mode"])],
        Update::Custom(apply::initialize)),
    both(b'I', "init-steps", Required, Some("[dtgGvpf]+"), Init,
        &[HelpEntry {
            section: InitHelp,
            rank: 2,
            beside_synopsis: Some("(default \"dtgvp\")"),
            lines: &[
                "run selected initialization steps, in the specified order",
                "d: drop any existing pgbench tables",
                "t: create the tables used by the standard pgbench scenario",
                "g: generate data, client-side",
                "G: generate data, server-side",
                "v: invoke VACUUM on the standard tables",
                "p: create primary key indexes on the standard tables",
                "f: create foreign keys between the standard tables",
            ],
        }],
        Update::Custom(apply::init_steps)),
    // pgbench counts -j as a benchmarking option; pgrush loads data with -j
    // parallel connections, so it is accepted with -i too.
    both(b'j', "jobs", Required, NUM, Any,
        &[help(BenchHelp, 4, &["number of threads (default: 1)"])],
        Update::Custom(apply::jobs)),
    both(b'l', "log", No, None, Bench,
        &[help(BenchHelp, 5, &["write transaction times to log file"])],
        Update::Flag(|o| &mut o.log)),
    both(b'L', "latency-limit", Required, NUM, Bench,
        &[help(BenchHelp, 6, &["count transactions lasting more than NUM ms as late"])],
        Update::Custom(apply::latency_limit)),
    both(b'n', "no-vacuum", No, None, Any,
        &[
            help(InitHelp, 4, &["do not run VACUUM during initialization"]),
            help(BenchHelp, 8, &["do not run VACUUM before tests"]),
        ],
        Update::Flag(|o| &mut o.no_vacuum)),
    both(b'p', "port", Required, Some("PORT"), Any,
        &[help(Common, 4, &["database server port number"])],
        Update::Text(|o| &mut o.port)),
    both(b'P', "progress", Required, NUM, Bench,
        &[help(BenchHelp, 9, &["show thread progress report every NUM seconds"])],
        Update::Custom(apply::progress)),
    both(b'M', "protocol", Required, Some("simple|extended|prepared"), Bench,
        &[help(BenchHelp, 7, &["protocol for submitting queries (default: simple)"])],
        Update::Custom(apply::protocol)),
    both(b'q', "quiet", No, None, Init,
        &[help(InitHelp, 5, &["quiet logging (one message each 5 seconds)"])],
        Update::Flag(|o| &mut o.quiet)),
    both(b'r', "report-per-command", No, None, Bench,
        &[help(BenchHelp, 10, &["report latencies, failures, and retries per command"])],
        Update::Flag(|o| &mut o.report_per_command)),
    both(b'R', "rate", Required, NUM, Bench,
        &[help(BenchHelp, 11, &["target rate in transactions per second"])],
        Update::Custom(apply::rate)),
    both(b's', "scale", Required, NUM, Any,
        &[
            help(InitHelp, 6, &["scaling factor"]),
            help(BenchHelp, 12, &["report this scale factor in output"]),
        ],
        Update::Custom(apply::scale)),
    both(b'S', "select-only", No, None, Bench,
        &[help(SelectWhatToRun, 4, &[
            "perform SELECT-only transactions",
            "(same as \"-b select-only\")",
        ])],
        Update::Custom(apply::select_only)),
    both(b'N', "skip-some-updates", No, None, Bench,
        &[help(SelectWhatToRun, 3, &[
            "skip updates of pgbench_tellers and pgbench_branches",
            "(same as \"-b simple-update\")",
        ])],
        Update::Custom(apply::skip_some_updates)),
    both(b'T', "time", Required, NUM, Bench,
        &[help(BenchHelp, 14, &["duration of benchmark test in seconds"])],
        Update::Custom(apply::time)),
    both(b't', "transactions", Required, NUM, Bench,
        &[help(BenchHelp, 13, &["number of transactions each client runs (default: 10)"])],
        Update::Custom(apply::transactions)),
    both(b'U', "username", Required, Some("USERNAME"), Any,
        &[help(Common, 5, &["connect as specified database user"])],
        Update::Text(|o| &mut o.user)),
    both(b'v', "vacuum-all", No, None, Bench,
        &[help(BenchHelp, 15, &["vacuum all four standard tables before tests"])],
        Update::Flag(|o| &mut o.vacuum_all)),
    long("unlogged-tables", No, None, Init,
        &[help(InitHelp, 12, &["create tables as unlogged tables"])],
        Update::Flag(|o| &mut o.unlogged_tables)),
    long("tablespace", Required, Some("TABLESPACE"), Init,
        &[help(InitHelp, 11, &["create tables in the specified tablespace"])],
        Update::Text(|o| &mut o.tablespace)),
    long("index-tablespace", Required, Some("TABLESPACE"), Init,
        &[help(InitHelp, 8, &["create indexes in the specified tablespace"])],
        Update::Text(|o| &mut o.index_tablespace)),
    long("sampling-rate", Required, NUM, Bench,
        &[help(BenchHelp, 24, &["fraction of transactions to log (e.g., 0.01 for 1%)"])],
        Update::Custom(apply::sampling_rate)),
    long("aggregate-interval", Required, NUM, Bench,
        &[help(BenchHelp, 16, &["aggregate data over NUM seconds"])],
        Update::Custom(apply::aggregate_interval)),
    long("progress-timestamp", No, None, Bench,
        &[help(BenchHelp, 22, &["use Unix epoch timestamps for progress"])],
        Update::Flag(|o| &mut o.progress_timestamp)),
    long("log-prefix", Required, Some("PREFIX"), Bench,
        &[help(BenchHelp, 20, &[
            "prefix for transaction time log file",
            "(default: \"pgbench_log\")",
        ])],
        Update::Text(|o| &mut o.log_prefix)),
    long("foreign-keys", No, None, Init,
        &[help(InitHelp, 7, &["create foreign key constraints between tables"])],
        Update::Flag(|o| &mut o.foreign_keys)),
    long("random-seed", Required, Some("SEED"), Bench,
        &[help(BenchHelp, 23, &["set random seed (\"time\", \"rand\", integer)"])],
        Update::Custom(apply::random_seed)),
    long("show-script", Required, Some("NAME"), Any,
        &[help(BenchHelp, 25, &["show builtin script code, then exit"])],
        Update::Custom(apply::show_script)),
    long("partitions", Required, NUM, Init,
        &[help(InitHelp, 10, &["partition pgbench_accounts into NUM parts (default: 0)"])],
        Update::Custom(apply::partitions)),
    long("partition-method", Required, Some("(range|hash)"), Init,
        &[help(InitHelp, 9, &["partition pgbench_accounts with this method (default: range)"])],
        Update::Custom(apply::partition_method)),
    long("failures-detailed", No, None, Bench,
        &[help(BenchHelp, 19, &["report the failures grouped by basic types"])],
        Update::Flag(|o| &mut o.failures_detailed)),
    long("max-tries", Required, NUM, Bench,
        &[help(BenchHelp, 21, &["max number of tries to run transaction (default: 1)"])],
        Update::Custom(apply::max_tries)),
    long("verbose-errors", No, None, Bench,
        &[help(BenchHelp, 26, &["print messages of all errors"])],
        Update::Flag(|o| &mut o.verbose_errors)),
    long("exit-on-abort", No, None, Bench,
        &[help(BenchHelp, 18, &["exit when any client is aborted"])],
        Update::Flag(|o| &mut o.exit_on_abort)),
    long("debug", No, None, Any,
        &[help(Common, 1, &["print debugging output"])],
        Update::Flag(|o| &mut o.debug)),
    // PostgreSQL 19's, last in pgbench 19's table: a pgbench option for prefix
    // matching too (`--con` is ambiguous, as in pgbench 19).
    long("continue-on-error", No, None, Bench,
        &[help(BenchHelp, 17, &["continue running after an SQL error"])],
        Update::Flag(|o| &mut o.continue_on_error)),
    extension("percentiles", Optional, Some("LIST"),
        &[help(Extensions, 4, &[
            "print latency percentiles after the report",
            "(default: 50,90,99,99.9,99.99)",
        ])],
        Update::Custom(apply::percentiles)),
    extension("json", Required, Some("FILE"),
        &[help(Extensions, 2, &["write the run's results as JSON to FILE (\"-\": standard output)"])],
        Update::Text(|o| &mut o.json)),
    extension("html", Required, Some("FILE"),
        &[help(Extensions, 1, &["write a self-contained HTML report of the run to FILE"])],
        Update::Text(|o| &mut o.html)),
    extension("no-warnings", No, None,
        &[help(Extensions, 3, &["do not print warnings about the run's meaningfulness"])],
        Update::Flag(|o| &mut o.no_warnings)),
    extension("report-latencies", No, None,
        &[help(Extensions, 5, &["same as -r (its name before PostgreSQL 10)"])],
        Update::Flag(|o| &mut o.report_per_command)),
    extension("assert", Required, Some("EXPR"),
        &[help(Extensions, 6, &[
            "check a result after the run; repeatable, e.g.",
            "\"tps>=1000\", \"p99<5ms\", \"select-only:p99.9<=20ms\";",
            "exit status 3 when one fails (see docs/ci.md)",
        ])],
        Update::Custom(apply::assert)),
    extension("junit", Required, Some("FILE"),
        &[help(Extensions, 7, &["write the --assert verdicts to FILE as JUnit XML"])],
        Update::Text(|o| &mut o.junit)),
    extension("server-stats", Optional, Some("INTERVAL"),
        &[help(Extensions, 8, &[
            "sample what the server does during the run every INTERVAL",
            "seconds (default: 1) and explain the result; on by",
            "default with --json or --html",
        ])],
        Update::Custom(apply::server_stats)),
    extension("no-server-stats", No, None,
        &[help(Extensions, 9, &["do not sample the server with --json or --html"])],
        Update::Flag(|o| &mut o.no_server_stats)),
    extension("shard", Required, Some("INDEX/COUNT"),
        &[help(Extensions, 10, &[
            "run as shard INDEX (from 0) of COUNT processes of one",
            "benchmark (default: from Slurm, MPI or Kubernetes)",
        ])],
        Update::Custom(shard_options::shard)),
    extension("shards", Required, NUM,
        &[help(Extensions, 11, &["number of shards with a Kubernetes JOB_COMPLETION_INDEX"])],
        Update::Custom(shard_options::shards)),
    extension("shard-timeout", Required, Some("SECONDS"),
        &[help(Extensions, 12, &["how long shards wait for each other (default: 60)"])],
        Update::Custom(shard_options::shard_timeout)),
    extension("start-at", Required, Some("TIME"),
        &[help(Extensions, 13, &[
            "start the shards' measured interval at TIME (server",
            "clock; RFC 3339 or Unix seconds) instead of a barrier",
        ])],
        Update::Custom(shard_options::start_at)),
    extension("shard-reports", No, None,
        &[help(Extensions, 14, &[
            "every shard prints its full report (default: shard 0;",
            "the others print one line)",
        ])],
        Update::Flag(|o| &mut o.shard_reports)),
    extension("warmup", Required, Some("DURATION"),
        &[help(Extensions, 15, &[
            "run the workload for DURATION seconds (e.g. 10 or 10s)",
            "before measuring; -T is the measured time",
        ])],
        Update::Custom(apply::warmup)),
    extension("workload", Required, Some("NAME"),
        &[help(Extensions, 16, &[
            "pgbench (default) or tpcc: with -i, create the",
            "TPC-C-like tables (-s warehouses); without -i, run",
            "its five transactions",
        ])],
        Update::Custom(apply::workload)).in_any_mode(),
    extension("check", No, None,
        &[help(Extensions, 17, &[
            "with --workload tpcc: check the consistency conditions",
            "1-4 after the run (as \"pgrush check\"), and that the",
            "orders it added are the New-Orders its clients committed",
        ])],
        Update::Flag(|o| &mut o.check)),
    extension("tpcc-mode", Required, Some("MODE"),
        &[help(Extensions, 26, &[
            "with --workload tpcc: procedures (default; one server",
            "function call per transaction) or client (the",
            "statements, one round trip each)",
        ])],
        Update::Custom(apply::tpcc_mode)),
    extension("tpcc-think", Optional, Some("SCALE"),
        &[help(Extensions, 27, &[
            "with --workload tpcc: the spec's keying time before and",
            "think time after each transaction, times SCALE (default",
            "1; off by default); latencies include them",
        ])],
        Update::Custom(apply::tpcc_think)),
    extension("stage", Required, Some("SPEC"),
        &[help(Extensions, 18, &[
            "run in stages, repeatable: SPEC is DURATION[,clients=N]",
            "[,rate=TPS][,ramp][,label=NAME], e.g. 30s,clients=4;",
            "with ramp clients/rate move linearly from the previous",
            "stage's; -T is their total (see README, \"Stages\")",
        ])],
        Update::Custom(apply::stage)),
    extension("stages", Required, Some("FILE"),
        &[help(Extensions, 19, &[
            "read stages from FILE, one SPEC a line (# comments)",
        ])],
        Update::Custom(apply::stages_file)),
    extension("metrics-listen", Required, Some("ADDR"),
        &[help(Extensions, 20, &[
            "serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9187,",
            "path /metrics) from the start of the run to the report",
        ])],
        Update::Custom(apply::metrics_listen)),
    extension("metrics-linger", Required, Some("SECONDS"),
        &[help(Extensions, 21, &[
            "keep serving the metrics and the dashboard SECONDS",
            "after the report",
        ])],
        Update::Custom(apply::metrics_linger)),
    extension("reconnect", Optional, Some("TIMEOUT"),
        &[help(Extensions, 22, &[
            "a client that loses its connection counts a connection",
            "failure, reconnects and goes on; it aborts after",
            "TIMEOUT seconds without one (default: 60)",
        ])],
        Update::Custom(apply::reconnect)),
    extension("dashboard", Required, Some("ADDR"),
        &[help(Extensions, 23, &[
            "serve a live page of the run on ADDR, e.g.",
            "127.0.0.1:8080 (--metrics-listen's ADDR: one listener",
            "for both), then its report, --metrics-linger more",
        ])],
        Update::Custom(apply::dashboard)),
    extension("dashboard-bind-any", No, None,
        &[help(Extensions, 24, &[
            "allow --dashboard on an address other than loopback",
        ])],
        Update::Flag(|o| &mut o.dashboard_bind_any)),
    extension("target", Required, Some("SCRIPT=CONNINFO"),
        &[help(Extensions, 25, &[
            "send SCRIPT's transactions (a -f file as given, or a",
            "builtin's full name) to the server(s) CONNINFO names,",
            "e.g. read.sql='host=r1,r2 load_balance_hosts=random';",
            "repeatable; the report adds per-target figures",
        ])],
        Update::Custom(apply::target)),
    both(b'V', "version", No, None, Any,
        &[help(Common, 6, &["output version information, then exit"])],
        Update::Early(EarlyAction::Version)),
    both(b'?', "help", No, None, Any,
        &[help(Common, 7, &["show this help, then exit"])],
        Update::Early(EarlyAction::Help)),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Env, parse_with};
    use pgrush_run::options::Action;
    use std::collections::HashSet;
    use std::ffi::OsString;

    /// A value each option accepts, different from its default.
    fn sample_value(long: &str) -> &'static str {
        match long {
            "builtin" | "show-script" => "tpcb-like",
            "client" | "jobs" | "partitions" => "2",
            "dbname" => "bench",
            "define" => "x=1",
            "file" => "-",
            "fillfactor" => "90",
            "host" => "db.example",
            "init-steps" => "dt",
            "latency-limit" | "progress" | "aggregate-interval" | "transactions" => "5",
            "port" => "6543",
            "protocol" => "prepared",
            "rate" => "100",
            "scale" | "max-tries" => "3",
            "time" => "60",
            "username" => "alice",
            "tablespace" | "index-tablespace" => "fast",
            "sampling-rate" => "0.5",
            "log-prefix" => "run",
            "random-seed" => "42",
            "partition-method" => "hash",
            "percentiles" => "50,99",
            "json" => "run.json",
            "html" => "run.html",
            "assert" => "tps>=1",
            "junit" => "run.xml",
            "server-stats" => "0.5",
            "shard" => "1/2",
            "shards" => "4",
            "shard-timeout" => "5",
            "warmup" => "2s",
            "reconnect" => "10",
            "target" => "tpcb-like=host=db.example",
            "workload" => "tpcc",
            "tpcc-mode" => "client",
            "tpcc-think" => "0.5",
            "stage" => "2s,clients=1",
            "stages" => concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/stages-example.txt"),
            "start-at" => "2026-11-24T01:00:00Z",
            "metrics-listen" => "127.0.0.1:9187",
            "metrics-linger" => "5",
            "dashboard" => "127.0.0.1:8080",
            other => panic!("no sample value for --{other}: add one to this test"),
        }
    }

    /// Arguments the option needs beside it to be accepted in its mode.
    fn context(def: &OptionDef) -> Vec<String> {
        let mut args = Vec::new();
        if def.mode == Mode::Initialization {
            args.push("-i".to_string());
        }
        match def.long {
            "partition-method" => args.push("--partitions=2".to_string()),
            "sampling-rate" | "aggregate-interval" | "log-prefix" => args.push("-l".to_string()),
            "progress-timestamp" => args.push("-P1".to_string()),
            "junit" => args.push("--assert=failed==0".to_string()),
            "start-at" => args.push("--shard=0/2".to_string()),
            "stage" | "stages" => args.push("-c16".to_string()),
            "shards" => args.push("--shard=0/2".to_string()),
            "workload" => args.push("-i".to_string()),
            "check" | "tpcc-mode" | "tpcc-think" => args.push("--workload=tpcc".to_string()),
            _ => {}
        }
        args
    }

    /// Parses `args` (without argv[0]); panics on failure.
    fn parse(args: &[String]) -> Options {
        let mut argv = vec![OsString::from("pgrush")];
        argv.extend(args.iter().map(OsString::from));
        let mut messages = Vec::new();
        parse_with(&argv, &Env::default(), &mut messages).unwrap_or_else(|status| {
            panic!(
                "{args:?} failed with {status}: {}",
                String::from_utf8_lossy(&messages)
            )
        })
    }

    /// The option with its value in short form (`-c2`, `-c 2`) or long form
    /// (`--client=2`, `--client 2`).
    fn spellings(def: &OptionDef) -> Vec<Vec<String>> {
        let long = format!("--{}", def.long);
        let mut forms = Vec::new();
        match def.arg {
            HasArg::No => {
                forms.push(vec![long]);
                forms.extend(def.short.map(|ch| vec![format!("-{}", char::from(ch))]));
            }
            HasArg::Optional => {
                forms.push(vec![long.clone()]);
                forms.push(vec![format!("{long}={}", sample_value(def.long))]);
            }
            HasArg::Required => {
                let value = sample_value(def.long);
                forms.push(vec![format!("{long}={value}")]);
                forms.push(vec![long, value.to_string()]);
                if let Some(ch) = def.short {
                    let short = format!("-{}", char::from(ch));
                    forms.push(vec![format!("{short}{value}")]);
                    forms.push(vec![short, value.to_string()]);
                }
            }
        }
        forms
    }

    #[test]
    fn every_option_parses_in_short_and_long_form() {
        for def in OPTIONS.iter().filter(|def| def.is_getopt_option()) {
            let context = context(def);
            let without = parse(&context);
            let mut results = Vec::new();
            for form in spellings(def) {
                let args: Vec<String> = context.iter().cloned().chain(form).collect();
                let parsed = parse(&args);
                assert_ne!(parsed, without, "{args:?} changed nothing");
                results.push(parsed);
            }
            assert!(
                results.windows(2).all(|w| w[0] == w[1]) || def.arg == HasArg::Optional,
                "--{}: the spellings disagree",
                def.long
            );
        }
    }

    #[test]
    fn help_and_version_parse_as_first_argument() {
        for def in OPTIONS.iter().filter(|def| !def.is_getopt_option()) {
            let short = format!("-{}", char::from(def.short.expect("short form")));
            let long = format!("--{}", def.long);
            let first = parse(&[short]).action;
            assert_eq!(first, parse(&[long]).action);
            assert!(matches!(first, Action::Help | Action::Version));
        }
    }

    #[test]
    fn every_option_appears_in_help() {
        let help = crate::help::help_text("pgrush");
        for doc in option_docs() {
            assert!(!doc.help.is_empty(), "--{} has no help", doc.long);
            let synopsis = format!("\n  {}", doc.synopsis());
            assert!(
                help.contains(&synopsis),
                "--{} missing from --help",
                doc.long
            );
            for line in doc.help.iter().flat_map(|entry| entry.lines) {
                assert!(help.contains(line), "--{}: {line:?} missing", doc.long);
            }
        }
    }

    #[test]
    fn short_letters_and_long_names_are_unique() {
        let mut shorts = HashSet::new();
        let mut longs = HashSet::new();
        for def in OPTIONS {
            assert!(longs.insert(def.long), "--{} defined twice", def.long);
            if let Some(ch) = def.short {
                assert!(shorts.insert(ch), "-{} defined twice", char::from(ch));
            }
        }
    }

    #[test]
    fn help_ranks_number_each_section_from_one() {
        for section in Section::ALL {
            let mut ranks: Vec<u8> = OPTIONS
                .iter()
                .flat_map(|def| def.help)
                .filter(|entry| entry.section == section)
                .map(|entry| entry.rank)
                .collect();
            ranks.sort_unstable();
            let expected: Vec<u8> = (1..).take(ranks.len()).collect();
            assert_eq!(ranks, expected, "{section:?}");
        }
    }

    #[test]
    fn getopt_tables_keep_pgbench_order() {
        let longs: Vec<&str> = long_options().iter().map(|l| l.name).collect();
        assert_eq!(&longs[..3], ["builtin", "client", "connect"]);
        let protocol = longs.iter().position(|&n| n == "protocol");
        let progress = longs.iter().position(|&n| n == "progress");
        assert!(
            progress < protocol,
            "glibc lists --progress before --protocol"
        );
        let shorts: String = short_options().iter().map(|s| char::from(s.ch)).collect();
        assert_eq!(shorts.len(), 27, "{shorts}");
        assert!(
            !shorts.contains(['V', '?']),
            "-V/-? are only first arguments"
        );
    }

    #[test]
    fn report_latencies_is_the_old_name_of_r() {
        let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let short = parse(&args(&["-r"]));
        assert!(short.report_per_command);
        assert_eq!(parse(&args(&["--report-latencies"])), short);
        assert_eq!(parse(&args(&["--report-l"])), short);
        // pgbench's own abbreviations still resolve to pgbench's option.
        assert_eq!(parse(&args(&["--report"])), short);
        assert_eq!(parse(&args(&["--rep"])), short);
    }
}
