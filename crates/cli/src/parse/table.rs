//! pgbench 18's option table (short letters and long names, in pgbench's
//! order, which glibc uses when listing ambiguous candidates).

use super::getopt::{HasArg, LongOpt, ShortOpt};

/// Every option pgrush understands in pgbench mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opt {
    /// `-b/--builtin`.
    Builtin,
    /// `-c/--client`.
    Client,
    /// `-C/--connect`.
    Connect,
    /// `-d/--dbname`.
    Dbname,
    /// `-D/--define`.
    Define,
    /// `-f/--file`.
    File,
    /// `-F/--fillfactor`.
    Fillfactor,
    /// `-h/--host`.
    Host,
    /// `-i/--initialize`.
    Initialize,
    /// `-I/--init-steps`.
    InitSteps,
    /// `-j/--jobs`.
    Jobs,
    /// `-l/--log`.
    Log,
    /// `-L/--latency-limit`.
    LatencyLimit,
    /// `-n/--no-vacuum`.
    NoVacuum,
    /// `-p/--port`.
    Port,
    /// `-P/--progress`.
    Progress,
    /// `-M/--protocol`.
    Protocol,
    /// `-q/--quiet`.
    Quiet,
    /// `-r/--report-per-command`.
    ReportPerCommand,
    /// `-R/--rate`.
    Rate,
    /// `-s/--scale`.
    Scale,
    /// `-S/--select-only`.
    SelectOnly,
    /// `-N/--skip-some-updates`.
    SkipSomeUpdates,
    /// `-T/--time`.
    Time,
    /// `-t/--transactions`.
    Transactions,
    /// `-U/--username`.
    Username,
    /// `-v/--vacuum-all`.
    VacuumAll,
    /// `--unlogged-tables`.
    UnloggedTables,
    /// `--tablespace`.
    Tablespace,
    /// `--index-tablespace`.
    IndexTablespace,
    /// `--sampling-rate`.
    SamplingRate,
    /// `--aggregate-interval`.
    AggregateInterval,
    /// `--progress-timestamp`.
    ProgressTimestamp,
    /// `--log-prefix`.
    LogPrefix,
    /// `--foreign-keys`.
    ForeignKeys,
    /// `--random-seed`.
    RandomSeed,
    /// `--show-script`.
    ShowScript,
    /// `--partitions`.
    Partitions,
    /// `--partition-method`.
    PartitionMethod,
    /// `--failures-detailed`.
    FailuresDetailed,
    /// `--max-tries`.
    MaxTries,
    /// `--verbose-errors`.
    VerboseErrors,
    /// `--exit-on-abort`.
    ExitOnAbort,
    /// `--debug`.
    Debug,
    /// `--continue-on-error` (PostgreSQL 19).
    ContinueOnError,
    /// `--percentiles[=LIST]` (pgrush).
    Percentiles,
    /// `--json=FILE` (pgrush).
    Json,
    /// `--html=FILE` (pgrush).
    Html,
    /// `--no-warnings` (pgrush).
    NoWarnings,
}

const fn s(ch: u8, has_arg: HasArg, id: Opt) -> ShortOpt<Opt> {
    ShortOpt { ch, has_arg, id }
}

const fn l(name: &'static str, has_arg: HasArg, id: Opt) -> LongOpt<Opt> {
    LongOpt {
        name,
        has_arg,
        id,
        extension: false,
    }
}

/// An option pgbench 18 does not have (see [`LongOpt::extension`]).
const fn x(name: &'static str, has_arg: HasArg, id: Opt) -> LongOpt<Opt> {
    LongOpt {
        name,
        has_arg,
        id,
        extension: true,
    }
}

use HasArg::{No, Required as Req};

/// pgbench's short options `b:c:Cd:D:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v`.
pub const SHORTS: &[ShortOpt<Opt>] = &[
    s(b'b', Req, Opt::Builtin),
    s(b'c', Req, Opt::Client),
    s(b'C', No, Opt::Connect),
    s(b'd', Req, Opt::Dbname),
    s(b'D', Req, Opt::Define),
    s(b'f', Req, Opt::File),
    s(b'F', Req, Opt::Fillfactor),
    s(b'h', Req, Opt::Host),
    s(b'i', No, Opt::Initialize),
    s(b'I', Req, Opt::InitSteps),
    s(b'j', Req, Opt::Jobs),
    s(b'l', No, Opt::Log),
    s(b'L', Req, Opt::LatencyLimit),
    s(b'M', Req, Opt::Protocol),
    s(b'n', No, Opt::NoVacuum),
    s(b'N', No, Opt::SkipSomeUpdates),
    s(b'p', Req, Opt::Port),
    s(b'P', Req, Opt::Progress),
    s(b'q', No, Opt::Quiet),
    s(b'r', No, Opt::ReportPerCommand),
    s(b'R', Req, Opt::Rate),
    s(b's', Req, Opt::Scale),
    s(b'S', No, Opt::SelectOnly),
    s(b't', Req, Opt::Transactions),
    s(b'T', Req, Opt::Time),
    s(b'U', Req, Opt::Username),
    s(b'v', No, Opt::VacuumAll),
];

/// pgbench 18's long options in its table order, then the extensions
/// (PostgreSQL 19's `--continue-on-error` and pgrush's own options).
pub const LONGS: &[LongOpt<Opt>] = &[
    l("builtin", Req, Opt::Builtin),
    l("client", Req, Opt::Client),
    l("connect", No, Opt::Connect),
    l("dbname", Req, Opt::Dbname),
    l("define", Req, Opt::Define),
    l("file", Req, Opt::File),
    l("fillfactor", Req, Opt::Fillfactor),
    l("host", Req, Opt::Host),
    l("initialize", No, Opt::Initialize),
    l("init-steps", Req, Opt::InitSteps),
    l("jobs", Req, Opt::Jobs),
    l("log", No, Opt::Log),
    l("latency-limit", Req, Opt::LatencyLimit),
    l("no-vacuum", No, Opt::NoVacuum),
    l("port", Req, Opt::Port),
    l("progress", Req, Opt::Progress),
    l("protocol", Req, Opt::Protocol),
    l("quiet", No, Opt::Quiet),
    l("report-per-command", No, Opt::ReportPerCommand),
    l("rate", Req, Opt::Rate),
    l("scale", Req, Opt::Scale),
    l("select-only", No, Opt::SelectOnly),
    l("skip-some-updates", No, Opt::SkipSomeUpdates),
    l("time", Req, Opt::Time),
    l("transactions", Req, Opt::Transactions),
    l("username", Req, Opt::Username),
    l("vacuum-all", No, Opt::VacuumAll),
    l("unlogged-tables", No, Opt::UnloggedTables),
    l("tablespace", Req, Opt::Tablespace),
    l("index-tablespace", Req, Opt::IndexTablespace),
    l("sampling-rate", Req, Opt::SamplingRate),
    l("aggregate-interval", Req, Opt::AggregateInterval),
    l("progress-timestamp", No, Opt::ProgressTimestamp),
    l("log-prefix", Req, Opt::LogPrefix),
    l("foreign-keys", No, Opt::ForeignKeys),
    l("random-seed", Req, Opt::RandomSeed),
    l("show-script", Req, Opt::ShowScript),
    l("partitions", Req, Opt::Partitions),
    l("partition-method", Req, Opt::PartitionMethod),
    l("failures-detailed", No, Opt::FailuresDetailed),
    l("max-tries", Req, Opt::MaxTries),
    l("verbose-errors", No, Opt::VerboseErrors),
    l("exit-on-abort", No, Opt::ExitOnAbort),
    l("debug", No, Opt::Debug),
    x("continue-on-error", No, Opt::ContinueOnError),
    x("percentiles", HasArg::Optional, Opt::Percentiles),
    x("json", Req, Opt::Json),
    x("html", Req, Opt::Html),
    x("no-warnings", No, Opt::NoWarnings),
];
