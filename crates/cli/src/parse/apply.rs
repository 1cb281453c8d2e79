//! The option loop's per-option handling: value checks made while the options
//! are read (so their errors come in command-line order, as in pgbench).

use super::diag::{Diag, cat};
use super::numbers::{self, IntOptionError};
use super::script_file;
use super::table::Opt;
use super::{parse_seed, seeded, text};
use crate::options::{Action, Options, PartitionMethod, QueryMode, ScriptSource, ScriptSpec};
use pgrush_report::PercentileList;
use pgrush_script::{BuiltinError, MAX_SCRIPTS, RawMessage, WeightError};

/// Allowed `-I` step characters.
pub const ALL_INIT_STEPS: &[u8] = b"dtgGvpf";

/// Everything the option loop accumulates.
pub struct State {
    /// The options parsed so far.
    pub opts: Options,
    /// A benchmarking-only option was given.
    pub benchmarking_option_set: bool,
    /// An initialization-only option was given.
    pub initialization_option_set: bool,
    /// `-i` was given.
    pub init_mode: bool,
    /// `-I` as given (last one wins).
    pub init_steps: Option<Vec<u8>>,
    /// Sum of script weights.
    pub total_weight: u64,
    /// Soft open-files limit for the `-c` check.
    nofile_limit: Option<u64>,
}

impl State {
    /// Starts from `opts` (defaults plus anything set before the loop).
    pub fn new(opts: Options, nofile_limit: Option<u64>) -> Self {
        State {
            opts,
            benchmarking_option_set: false,
            initialization_option_set: false,
            init_mode: false,
            init_steps: None,
            total_weight: 0,
            nofile_limit,
        }
    }

    /// Applies one option; `Err(status)` after printing the complaint.
    /// `value` is `None` for options without one (and for `--percentiles` alone).
    pub fn apply(
        &mut self,
        opt: Opt,
        value: Option<&[u8]>,
        diag: &mut Diag<'_>,
    ) -> Result<(), i32> {
        let arg = value.unwrap_or_default();
        if is_benchmarking_option(opt) {
            self.benchmarking_option_set = true;
        }
        if is_initialization_option(opt) {
            self.initialization_option_set = true;
        }
        let o = &mut self.opts;
        match opt {
            Opt::Builtin => return self.builtin(arg, diag),
            Opt::File => return self.file(arg, diag),
            Opt::SelectOnly => return self.add_builtin("select-only", 1, diag),
            Opt::SkipSomeUpdates => return self.add_builtin("simple-update", 1, diag),
            Opt::Client => {
                o.clients = int_option(arg, "-c/--client", 1, diag)?;
                self.check_open_files(diag)?;
            }
            Opt::Connect => o.connect_per_transaction = true,
            Opt::Dbname => o.dbname = Some(text(arg)),
            Opt::Define => define(o, arg, diag)?,
            Opt::Fillfactor => o.fillfactor = int_range(arg, "-F/--fillfactor", 10, 100, diag)?,
            Opt::Host => o.host = Some(text(arg)),
            Opt::Initialize => self.init_mode = true,
            Opt::InitSteps => {
                check_init_steps(arg, diag)?;
                self.init_steps = Some(arg.to_vec());
            }
            Opt::Jobs => o.jobs = int_option(arg, "-j/--jobs", 1, diag)?,
            Opt::Log => o.log = true,
            Opt::LatencyLimit => {
                let limit_ms = numbers::atof(arg);
                if limit_ms.is_nan() || limit_ms > 0.0 {
                    // C's double-to-int64 conversion; NaN and huge values are not meaningful.
                    o.latency_limit_us = (limit_ms * 1000.0) as u64;
                } else {
                    return fatal(diag, &cat(&[b"invalid latency limit: \"", arg, b"\""]));
                }
            }
            Opt::Protocol => {
                o.query_mode = match arg {
                    b"simple" => QueryMode::Simple,
                    b"extended" => QueryMode::Extended,
                    b"prepared" => QueryMode::Prepared,
                    _ => {
                        return fatal(diag, &cat(&[b"invalid query mode (-M): \"", arg, b"\""]));
                    }
                }
            }
            Opt::NoVacuum => o.no_vacuum = true,
            Opt::Port => o.port = Some(text(arg)),
            Opt::Progress => o.progress = int_option(arg, "-P/--progress", 1, diag)?,
            Opt::Quiet => o.quiet = true,
            Opt::ReportPerCommand => o.report_per_command = true,
            Opt::Rate => {
                let rate = numbers::atof(arg);
                if rate <= 0.0 {
                    return fatal(diag, &cat(&[b"invalid rate limit: \"", arg, b"\""]));
                }
                o.rate = rate;
            }
            Opt::Scale => o.scale = Some(int_option(arg, "-s/--scale", 1, diag)?),
            Opt::Transactions => {
                o.transactions = Some(int_option(arg, "-t/--transactions", 1, diag)?);
            }
            Opt::Time => o.duration = Some(int_option(arg, "-T/--time", 1, diag)?),
            Opt::Username => o.user = Some(text(arg)),
            Opt::VacuumAll => o.vacuum_all = true,
            Opt::UnloggedTables => o.unlogged_tables = true,
            Opt::Tablespace => o.tablespace = Some(text(arg)),
            Opt::IndexTablespace => o.index_tablespace = Some(text(arg)),
            Opt::SamplingRate => {
                let rate = numbers::atof(arg);
                if rate <= 0.0 || rate > 1.0 {
                    return fatal(diag, &cat(&[b"invalid sampling rate: \"", arg, b"\""]));
                }
                o.sampling_rate = rate;
            }
            Opt::AggregateInterval => {
                o.aggregate_interval = int_option(arg, "--aggregate-interval", 1, diag)?;
            }
            Opt::ProgressTimestamp => o.progress_timestamp = true,
            Opt::LogPrefix => o.log_prefix = Some(text(arg)),
            Opt::ForeignKeys => o.foreign_keys = true,
            Opt::RandomSeed => match parse_seed(arg, diag) {
                Some(choice) => seeded(o, choice, diag),
                None => {
                    return fatal(
                        diag,
                        b"error while setting random seed from --random-seed option",
                    );
                }
            },
            Opt::ShowScript => {
                let b = find_builtin(arg, diag)?;
                o.action = Action::ShowScript(b.name.to_string());
            }
            Opt::Partitions => o.partitions = int_option(arg, "--partitions", 0, diag)?,
            Opt::PartitionMethod => {
                o.partition_method = if arg.eq_ignore_ascii_case(b"range") {
                    Some(PartitionMethod::Range)
                } else if arg.eq_ignore_ascii_case(b"hash") {
                    Some(PartitionMethod::Hash)
                } else {
                    return fatal(
                        diag,
                        &cat(&[
                            b"invalid partition method, expecting \"range\" or \"hash\", got: \"",
                            arg,
                            b"\"",
                        ]),
                    );
                };
            }
            Opt::FailuresDetailed => o.failures_detailed = true,
            Opt::MaxTries => {
                let tries = numbers::atoi(arg);
                if tries < 0 {
                    return fatal(
                        diag,
                        &cat(&[b"invalid number of maximum tries: \"", arg, b"\""]),
                    );
                }
                o.max_tries = tries.unsigned_abs();
            }
            Opt::VerboseErrors => o.verbose_errors = true,
            Opt::ExitOnAbort => o.exit_on_abort = true,
            Opt::Debug => o.debug = true,
            Opt::ContinueOnError => o.continue_on_error = true,
            Opt::Percentiles => {
                o.percentiles = Some(match value {
                    None => PercentileList::default(),
                    Some(list) => match PercentileList::parse(&String::from_utf8_lossy(list)) {
                        Ok(list) => list,
                        Err(e) => return fatal(diag, e.to_string().as_bytes()),
                    },
                });
            }
            Opt::Json => o.json = Some(text(arg)),
            Opt::Html => o.html = Some(text(arg)),
            Opt::NoWarnings => o.no_warnings = true,
        }
        Ok(())
    }

    /// `-b NAME[@W]` (or `-b list`).
    fn builtin(&mut self, arg: &[u8], diag: &mut Diag<'_>) -> Result<(), i32> {
        if arg == b"list" {
            self.opts.action = Action::ListBuiltins;
            return Ok(());
        }
        let (name, weight) = script_weight(arg, diag)?;
        let b = find_builtin(name, diag)?;
        self.add_script(
            ScriptSource::Builtin(b.name.to_string()),
            weight,
            None,
            diag,
        )
    }

    /// `-S` / `-N`.
    fn add_builtin(&mut self, name: &str, weight: u32, diag: &mut Diag<'_>) -> Result<(), i32> {
        self.add_script(ScriptSource::Builtin(name.to_string()), weight, None, diag)
    }

    /// `-f FILE[@W]`: the file must be readable now (pgbench reads it here).
    fn file(&mut self, arg: &[u8], diag: &mut Diag<'_>) -> Result<(), i32> {
        let (path, weight) = script_weight(arg, diag)?;
        let file_text = if path == b"-" {
            None
        } else {
            script_file::check(path, weight, diag)?
        };
        self.add_script(ScriptSource::File(path.to_vec()), weight, file_text, diag)
    }

    fn add_script(
        &mut self,
        source: ScriptSource,
        weight: u32,
        text: Option<Vec<u8>>,
        diag: &mut Diag<'_>,
    ) -> Result<(), i32> {
        if self.opts.scripts.len() >= MAX_SCRIPTS {
            return fatal(
                diag,
                format!("at most {MAX_SCRIPTS} SQL scripts are allowed").as_bytes(),
            );
        }
        self.total_weight += u64::from(weight);
        self.opts.scripts.push(ScriptSpec {
            source,
            weight,
            text,
        });
        Ok(())
    }

    /// pgbench refuses client counts the open-files limit cannot serve.
    fn check_open_files(&self, diag: &mut Diag<'_>) -> Result<(), i32> {
        let Some(limit) = self.nofile_limit else {
            return Ok(());
        };
        // pgbench computes `nclients + 3` in a C int, which wraps.
        let needed = (self.opts.clients as i32).wrapping_add(3);
        if (i64::from(needed) as u64) > limit {
            diag.error(
                format!(
                    "need at least {needed} open files, but system limit is {}",
                    limit as i64
                )
                .as_bytes(),
            );
            diag.hint(
                b"Reduce number of clients, or use limit/ulimit to increase the system limit.",
            );
            return Err(1);
        }
        Ok(())
    }
}

/// Options that make pgbench refuse `-i`.
///
/// `-j` is not among them: pgrush loads data with `-j` parallel connections
/// (pgbench rejects `-i -j N`).
fn is_benchmarking_option(opt: Opt) -> bool {
    use Opt::*;
    matches!(
        opt,
        Builtin
            | Client
            | Connect
            | Define
            | File
            | Log
            | LatencyLimit
            | Protocol
            | SkipSomeUpdates
            | Progress
            | ReportPerCommand
            | Rate
            | SelectOnly
            | Transactions
            | Time
            | VacuumAll
            | SamplingRate
            | AggregateInterval
            | ProgressTimestamp
            | LogPrefix
            | RandomSeed
            | FailuresDetailed
            | MaxTries
            | VerboseErrors
            | ExitOnAbort
            | ContinueOnError
            | Percentiles
            | Json
            | Html
            | NoWarnings
    )
}

/// Options that make pgbench refuse benchmarking mode.
fn is_initialization_option(opt: Opt) -> bool {
    use Opt::*;
    matches!(
        opt,
        Fillfactor
            | InitSteps
            | Quiet
            | UnloggedTables
            | Tablespace
            | IndexTablespace
            | ForeignKeys
            | Partitions
            | PartitionMethod
    )
}

/// Prints `error: msg` and yields exit status 1.
fn fatal<T>(diag: &mut Diag<'_>, msg: &[u8]) -> Result<T, i32> {
    diag.error(msg);
    Err(1)
}

/// `option_parse_int(arg, label, min, INT_MAX)` as an unsigned count.
fn int_option(arg: &[u8], label: &str, min: i32, diag: &mut Diag<'_>) -> Result<u32, i32> {
    int_range(arg, label, min, i32::MAX, diag)
}

/// `option_parse_int(arg, label, min, max)`.
fn int_range(arg: &[u8], label: &str, min: i32, max: i32, diag: &mut Diag<'_>) -> Result<u32, i32> {
    match numbers::option_parse_int(arg, min, max) {
        Ok(v) => Ok(v.unsigned_abs()),
        Err(IntOptionError::Invalid) => fatal(
            diag,
            &cat(&[
                b"invalid value \"",
                arg,
                b"\" for option ",
                label.as_bytes(),
            ]),
        ),
        Err(IntOptionError::OutOfRange) => fatal(
            diag,
            format!("{label} must be in range {min}..{max}").as_bytes(),
        ),
    }
}

/// `-D NAME=VALUE`.
fn define(o: &mut Options, arg: &[u8], diag: &mut Diag<'_>) -> Result<(), i32> {
    match pgrush_script::parse_define(arg) {
        Ok(nv) => {
            o.defines.push(nv);
            Ok(())
        }
        Err(e) => fatal(diag, &e.to_bytes()),
    }
}

/// `-I` validation (made while parsing, in bench mode too).
fn check_init_steps(steps: &[u8], diag: &mut Diag<'_>) -> Result<(), i32> {
    if steps.is_empty() {
        return fatal(diag, b"no initialization steps specified");
    }
    if let Some(&bad) = steps
        .iter()
        .find(|&&c| c != b' ' && !ALL_INIT_STEPS.contains(&c))
    {
        diag.error(&cat(&[
            b"unrecognized initialization step \"",
            &[bad],
            b"\"",
        ]));
        diag.detail(b"Allowed step characters are: \"dtgGvpf\".");
        return Err(1);
    }
    Ok(())
}

/// Splits `NAME@WEIGHT` at the last `@` (weight 1 when absent).
fn script_weight<'a>(arg: &'a [u8], diag: &mut Diag<'_>) -> Result<(&'a [u8], u32), i32> {
    let at = arg.iter().rposition(|&b| b == b'@');
    // The weight text is ASCII when valid, so a lossy copy decides the same way.
    match pgrush_script::parse_script_weight(&String::from_utf8_lossy(arg)) {
        Ok((_, weight)) => Ok((at.map_or(arg, |i| &arg[..i]), weight)),
        Err(WeightError::Invalid(_)) => {
            let spec = at.map_or(&b""[..], |i| &arg[i..]);
            fatal(diag, &cat(&[b"invalid weight specification: ", spec]))
        }
        Err(e @ WeightError::OutOfRange(_)) => fatal(diag, e.to_string().as_bytes()),
    }
}

/// Resolves a builtin name; on failure prints the complaint and the list.
fn find_builtin(name: &[u8], diag: &mut Diag<'_>) -> Result<&'static pgrush_script::Builtin, i32> {
    match pgrush_script::builtin_by_prefix(&String::from_utf8_lossy(name)) {
        Ok(b) => Ok(b),
        Err(e) => {
            // Echo the name as typed (builtin names are ASCII, so a lossy copy
            // matches exactly the same builtins).
            match e {
                BuiltinError::NotFound(_) => {
                    diag.error(&cat(&[b"no builtin script found for name \"", name, b"\""]))
                }
                BuiltinError::Ambiguous { count, .. } => diag.error(&cat(&[
                    format!("ambiguous builtin name: {count} builtin scripts found for prefix \"")
                        .as_bytes(),
                    name,
                    b"\"",
                ])),
            }
            diag.raw(pgrush_script::builtin_list_text().as_bytes());
            Err(1)
        }
    }
}
