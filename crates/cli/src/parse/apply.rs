//! The option loop's per-option handling: value checks made while the options
//! are read (so their errors come in command-line order, as in pgbench).

use super::diag::{Diag, cat};
use super::numbers::{IntOptionError, option_parse_int};
use super::script_file;
use super::values::{parse_seed, seeded};
use pgrush_cconv::{atof, atoi};
use pgrush_report::PercentileList;
use pgrush_report::assertion::Assertion;
use pgrush_run::options::{Action, Options, PartitionMethod, ScriptSource, ScriptSpec};
use pgrush_script::{BuiltinError, MAX_SCRIPTS, RawMessage, WeightError};
use pgrush_stats::QueryMode;
use pgrush_stats::stages::{StageSpec, parse_stages_file};

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
    /// `--random-seed` was given (a benchmarking option, except for the TPC-C-like load).
    pub seed_option_set: bool,
    /// `-i` was given.
    pub init_mode: bool,
    /// `-I` as given (last one wins).
    pub init_steps: Option<Vec<u8>>,
    /// Sum of script weights.
    pub total_weight: u64,
    /// Soft open-files limit for the `-c` check.
    nofile_limit: Option<u64>,
    /// The launcher variables (shard detection after the option loop).
    pub launcher: pgrush_run::shard::LauncherEnv,
}

impl State {
    /// Starts from `opts` (defaults plus anything set before the loop).
    pub fn new(opts: Options, nofile_limit: Option<u64>) -> Self {
        State {
            opts,
            benchmarking_option_set: false,
            initialization_option_set: false,
            seed_option_set: false,
            init_mode: false,
            init_steps: None,
            total_weight: 0,
            nofile_limit,
            launcher: pgrush_run::shard::LauncherEnv::default(),
        }
    }

    /// `-b NAME[@W]` (or `-b list`).
    fn add_builtin_arg(&mut self, arg: &[u8], diag: &mut Diag<'_>) -> Result<(), i32> {
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
    fn add_file_arg(&mut self, arg: &[u8], diag: &mut Diag<'_>) -> Result<(), i32> {
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

// The custom updates of the option table ([`Update::Custom`]), in table order.

/// `-b NAME[@W]` (or `-b list`).
pub fn builtin(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.add_builtin_arg(value.unwrap_or_default(), diag)
}

/// `-c NUM`, checked against the open-files limit.
pub fn client(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.clients = int_option(value.unwrap_or_default(), "-c/--client", 1, diag)?;
    st.check_open_files(diag)
}

/// `-D NAME=VALUE`.
pub fn define(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    match pgrush_script::parse_define(value.unwrap_or_default()) {
        Ok(nv) => {
            st.opts.defines.push(nv);
            Ok(())
        }
        Err(e) => fatal(diag, &e.to_bytes()),
    }
}

/// `-f FILE[@W]`.
pub fn file(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.add_file_arg(value.unwrap_or_default(), diag)
}

/// `-F NUM` (10 to 100).
pub fn fillfactor(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.fillfactor = int_range(value.unwrap_or_default(), "-F/--fillfactor", 10, 100, diag)?;
    Ok(())
}

/// `-i`.
pub fn initialize(st: &mut State, _: Option<&[u8]>, _: &mut Diag<'_>) -> Result<(), i32> {
    st.init_mode = true;
    Ok(())
}

/// `-I STEPS` (checked now, in benchmarking mode too; the last one wins).
pub fn init_steps(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let steps = value.unwrap_or_default();
    check_init_steps(steps, diag)?;
    st.init_steps = Some(steps.to_vec());
    Ok(())
}

/// `-j NUM`.
pub fn jobs(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.jobs = int_option(value.unwrap_or_default(), "-j/--jobs", 1, diag)?;
    Ok(())
}

/// `-L NUM` milliseconds.
pub fn latency_limit(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let arg = value.unwrap_or_default();
    let limit_ms = atof(arg);
    if limit_ms.is_nan() || limit_ms > 0.0 {
        // C's double-to-int64 conversion; NaN and huge values are not meaningful.
        st.opts.latency_limit_us = (limit_ms * 1000.0) as u64;
        Ok(())
    } else {
        fatal(diag, &cat(&[b"invalid latency limit: \"", arg, b"\""]))
    }
}

/// `-P NUM` seconds.
pub fn progress(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.progress = int_option(value.unwrap_or_default(), "-P/--progress", 1, diag)?;
    Ok(())
}

/// `-M simple|extended|prepared`.
pub fn protocol(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.query_mode = match value.unwrap_or_default() {
        b"simple" => QueryMode::Simple,
        b"extended" => QueryMode::Extended,
        b"prepared" => QueryMode::Prepared,
        arg => return fatal(diag, &cat(&[b"invalid query mode (-M): \"", arg, b"\""])),
    };
    Ok(())
}

/// `-R NUM` transactions per second.
pub fn rate(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let arg = value.unwrap_or_default();
    let rate = atof(arg);
    if rate <= 0.0 {
        return fatal(diag, &cat(&[b"invalid rate limit: \"", arg, b"\""]));
    }
    st.opts.rate = rate;
    Ok(())
}

/// `-s NUM`.
pub fn scale(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.scale = Some(int_option(
        value.unwrap_or_default(),
        "-s/--scale",
        1,
        diag,
    )?);
    Ok(())
}

/// `-S`: the select-only builtin.
pub fn select_only(st: &mut State, _: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.add_builtin("select-only", 1, diag)
}

/// `-N`: the simple-update builtin.
pub fn skip_some_updates(st: &mut State, _: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.add_builtin("simple-update", 1, diag)
}

/// `-T NUM` seconds.
pub fn time(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.duration = Some(int_option(value.unwrap_or_default(), "-T/--time", 1, diag)?);
    Ok(())
}

/// `-t NUM`.
pub fn transactions(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let count = int_option(value.unwrap_or_default(), "-t/--transactions", 1, diag)?;
    st.opts.transactions = Some(count);
    Ok(())
}

/// `--sampling-rate NUM` (above 0, at most 1).
pub fn sampling_rate(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let arg = value.unwrap_or_default();
    let rate = atof(arg);
    if rate <= 0.0 || rate > 1.0 {
        return fatal(diag, &cat(&[b"invalid sampling rate: \"", arg, b"\""]));
    }
    st.opts.sampling_rate = rate;
    Ok(())
}

/// `--aggregate-interval NUM` seconds.
pub fn aggregate_interval(
    st: &mut State,
    value: Option<&[u8]>,
    diag: &mut Diag<'_>,
) -> Result<(), i32> {
    let seconds = int_option(value.unwrap_or_default(), "--aggregate-interval", 1, diag)?;
    st.opts.aggregate_interval = seconds;
    Ok(())
}

/// `--random-seed SEED` (prints `setting random seed to N` at once).
pub fn random_seed(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    match parse_seed(value.unwrap_or_default(), diag) {
        Some(choice) => {
            seeded(&mut st.opts, choice, diag);
            Ok(())
        }
        None => fatal(
            diag,
            b"error while setting random seed from --random-seed option",
        ),
    }
}

/// `--workload NAME`.
pub fn workload(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let arg = value.unwrap_or_default();
    match pgrush_run::options::Workload::from_name(&String::from_utf8_lossy(arg)) {
        Some(w) => {
            st.opts.workload = w;
            Ok(())
        }
        None => {
            diag.error(&cat(&[b"invalid workload: \"", arg, b"\""]));
            diag.detail(b"Expecting \"pgbench\" or \"tpcc\".");
            Err(1)
        }
    }
}

/// `--tpcc-mode MODE`.
pub fn tpcc_mode(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let arg = value.unwrap_or_default();
    match pgrush_run::options::TpccMode::from_name(&String::from_utf8_lossy(arg)) {
        Some(mode) => {
            st.opts.tpcc_mode = Some(mode);
            Ok(())
        }
        None => {
            diag.error(&cat(&[b"invalid TPC-C mode: \"", arg, b"\""]));
            diag.detail(b"Expecting \"client\" or \"procedures\".");
            Err(1)
        }
    }
}

/// `--tpcc-think[=SCALE]`: a positive number, at most
/// [`pgrush_script::TPCC_THINK_MAX_SCALE`]; 1 when absent.
pub fn tpcc_think(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let scale = match value {
        None => 1.0,
        Some(v) => match std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
        {
            Some(s) if s > 0.0 && s <= pgrush_script::TPCC_THINK_MAX_SCALE => s,
            _ => {
                return fatal(
                    diag,
                    &cat(&[
                        b"invalid --tpcc-think scale: \"",
                        v,
                        b"\" (a number above 0 and at most 1000 expected)",
                    ]),
                );
            }
        },
    };
    st.opts.tpcc_think = Some(scale);
    Ok(())
}

/// `--show-script NAME`: one of pgbench's builtins by prefix, or a TPC-C-like workload's
/// script named exactly.
pub fn show_script(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let name = value.unwrap_or_default();
    let tpcc = pgrush_script::tpcc_script_named(&String::from_utf8_lossy(name));
    let b = match tpcc {
        Some(b) => b,
        None => find_builtin(name, diag)?,
    };
    st.opts.action = Action::ShowScript(b.name.to_string());
    Ok(())
}

/// `--partitions NUM`.
pub fn partitions(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.partitions = int_option(value.unwrap_or_default(), "--partitions", 0, diag)?;
    Ok(())
}

/// `--partition-method range|hash` (any case).
pub fn partition_method(
    st: &mut State,
    value: Option<&[u8]>,
    diag: &mut Diag<'_>,
) -> Result<(), i32> {
    let arg = value.unwrap_or_default();
    st.opts.partition_method = if arg.eq_ignore_ascii_case(b"range") {
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
    Ok(())
}

/// `--max-tries NUM` (`atoi`, negative refused, 0 = unlimited).
pub fn max_tries(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let arg = value.unwrap_or_default();
    let tries = atoi(arg);
    if tries < 0 {
        return fatal(
            diag,
            &cat(&[b"invalid number of maximum tries: \"", arg, b"\""]),
        );
    }
    st.opts.max_tries = tries.unsigned_abs();
    Ok(())
}

/// `--percentiles[=LIST]` (the default list without a value).
pub fn percentiles(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let list = match value {
        None => PercentileList::default(),
        Some(list) => match PercentileList::parse(&String::from_utf8_lossy(list)) {
            Ok(list) => list,
            Err(e) => return fatal(diag, e.to_string().as_bytes()),
        },
    };
    st.opts.percentiles = Some(list);
    Ok(())
}

/// `--server-stats[=INTERVAL]`: a positive number of seconds (1 when not given).
pub fn server_stats(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let seconds = match value {
        None => 1.0,
        Some(v) => match std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
        {
            Some(s) if s.is_finite() && (0.01..=3600.0).contains(&s) => s,
            _ => {
                return fatal(
                    diag,
                    &cat(&[
                        b"invalid server statistics interval: \"",
                        v,
                        b"\" (seconds from 0.01 to 3600 expected)",
                    ]),
                );
            }
        },
    };
    st.opts.server_stats = Some(std::time::Duration::from_secs_f64(seconds));
    Ok(())
}

/// `--metrics-listen ADDR`: an IP address and port (`127.0.0.1:9187`, `[::1]:9187`),
/// or `localhost:PORT`.
pub fn metrics_listen(
    st: &mut State,
    value: Option<&[u8]>,
    diag: &mut Diag<'_>,
) -> Result<(), i32> {
    st.opts.metrics_listen = Some(listen_address(value, b"metrics", b"9187", diag)?);
    Ok(())
}

/// `--dashboard ADDR`: as `--metrics-listen`'s.
pub fn dashboard(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    st.opts.dashboard = Some(listen_address(value, b"dashboard", b"8080", diag)?);
    Ok(())
}

/// An address to listen on: an IP address and port, or `localhost:PORT`; `what` and
/// `port` name the option's purpose and an example port in the error.
fn listen_address(
    value: Option<&[u8]>,
    what: &[u8],
    port: &[u8],
    diag: &mut Diag<'_>,
) -> Result<std::net::SocketAddr, i32> {
    let given = value.unwrap_or_default();
    let text = std::str::from_utf8(given).unwrap_or_default().trim();
    let local = text
        .strip_prefix("localhost:")
        .map(|port| format!("127.0.0.1:{port}"));
    match local
        .as_deref()
        .unwrap_or(text)
        .parse::<std::net::SocketAddr>()
    {
        Ok(addr) => Ok(addr),
        Err(_) => fatal(
            diag,
            &cat(&[
                b"invalid ",
                what,
                b" address: \"",
                given,
                b"\" (HOST:PORT expected, e.g. 127.0.0.1:",
                port,
                b")",
            ]),
        ),
    }
}

/// `--metrics-linger SECONDS`: whole seconds, from 0.
pub fn metrics_linger(
    st: &mut State,
    value: Option<&[u8]>,
    diag: &mut Diag<'_>,
) -> Result<(), i32> {
    st.opts.metrics_linger_s = int_option(value.unwrap_or_default(), "--metrics-linger", 0, diag)?;
    Ok(())
}

/// `--reconnect[=TIMEOUT]`: whole seconds from 1, with an optional `s` (60 when
/// not given).
pub fn reconnect(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let seconds = match value {
        None => 60,
        Some(given) => {
            let digits = given.strip_suffix(b"s").unwrap_or(given);
            int_option(digits, "--reconnect", 1, diag)?
        }
    };
    st.opts.reconnect_timeout_s = Some(seconds);
    Ok(())
}

/// `--target SCRIPT=CONNINFO`: split at the first `=` (the script is checked
/// against the run's scripts once all options are read).
pub fn target(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let given = value.unwrap_or_default();
    let Some(eq) = given.iter().position(|&b| b == b'=') else {
        diag.error(&cat(&[
            b"invalid --target \"",
            given,
            b"\" (SCRIPT=CONNINFO expected)",
        ]));
        diag.try_help();
        return Err(1);
    };
    st.opts.targets.push(pgrush_run::options::ScriptTarget {
        script: given[..eq].to_vec(),
        conninfo: String::from_utf8_lossy(&given[eq + 1..]).into_owned(),
    });
    Ok(())
}

/// `--warmup DURATION`: whole seconds, from 1, with an optional `s` (`10`, `10s`).
pub fn warmup(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let given = value.unwrap_or_default();
    let digits = given.strip_suffix(b"s").unwrap_or(given);
    st.opts.warmup_s = int_option(digits, "--warmup", 1, diag)?;
    Ok(())
}

/// `--stage SPEC`: one more stage (see `pgrush_stats::stages`).
pub fn stage(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let text = String::from_utf8_lossy(value.unwrap_or_default());
    match StageSpec::parse(&text) {
        Ok(spec) => {
            st.opts.stages.push(spec);
            Ok(())
        }
        Err(e) => {
            diag.error(format!("invalid stage \"{text}\": {e}").as_bytes());
            diag.try_help();
            Err(1)
        }
    }
}

/// `--stages FILE`: the stages of a file, one spec a line, `#` comments.
pub fn stages_file(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let name = String::from_utf8_lossy(value.unwrap_or_default()).into_owned();
    let text = match std::fs::read_to_string(&name) {
        Ok(text) => text,
        Err(e) => {
            return fatal(
                diag,
                format!("could not read stages file \"{name}\": {e}").as_bytes(),
            );
        }
    };
    match parse_stages_file(&text) {
        Ok(specs) if specs.is_empty() => fatal(
            diag,
            format!("stages file \"{name}\" has no stage").as_bytes(),
        ),
        Ok(specs) => {
            st.opts.stages.extend(specs);
            Ok(())
        }
        Err((line, e)) => fatal(
            diag,
            format!("invalid stage in \"{name}\" line {line}: {e}").as_bytes(),
        ),
    }
}

/// `--assert EXPR`: the expression must be well formed now; whether the run can
/// produce its metric is checked once every option is known.
pub fn assert(st: &mut State, value: Option<&[u8]>, diag: &mut Diag<'_>) -> Result<(), i32> {
    let text = String::from_utf8_lossy(value.unwrap_or_default());
    match Assertion::parse(&text) {
        Ok(assertion) => {
            st.opts.assertions.push(assertion);
            Ok(())
        }
        Err(e) => {
            diag.error(format!("invalid assertion \"{text}\": {e}").as_bytes());
            diag.try_help();
            Err(1)
        }
    }
}

/// Prints `error: msg` and yields exit status 1.
fn fatal<T>(diag: &mut Diag<'_>, msg: &[u8]) -> Result<T, i32> {
    diag.error(msg);
    Err(1)
}

/// `option_parse_int(arg, label, min, INT_MAX)` as an unsigned count.
pub(super) fn int_option(
    arg: &[u8],
    label: &str,
    min: i32,
    diag: &mut Diag<'_>,
) -> Result<u32, i32> {
    int_range(arg, label, min, i32::MAX, diag)
}

/// `option_parse_int(arg, label, min, max)`.
fn int_range(arg: &[u8], label: &str, min: i32, max: i32, diag: &mut Diag<'_>) -> Result<u32, i32> {
    match option_parse_int(arg, min, max) {
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
