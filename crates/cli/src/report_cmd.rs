//! Reports beyond pgbench on the command line: the `pgrush report` subcommand (render a saved run as
//! HTML, compare saved runs as text, Markdown or CSV, gate saved runs, sweeps and ops
//! results with `--assert` ([`saved_gates`])), and the opt-in extras of a benchmark
//! run (`--percentiles`, `--json`, `--html`, warnings), called by `bench.rs`.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use pgrush_engine::messages;
use pgrush_lab::sweep;
use pgrush_report::assertion::Assertion;
use pgrush_report::compare::{Comparison, Format};
use pgrush_report::document::{ClientInfo, RunContext, RunDocument, ServerInfo};
use pgrush_report::html;
use pgrush_report::warnings::{WarningInputs, warnings};
use pgrush_run::Failure;
use pgrush_stats::RunSummary;
use pgrush_stats::server::ServerTimeline;
use pgrush_wire::Connection;
use pgrush_wire::conninfo::{ConnParams, redact_argv};

mod saved_gates;

use saved_gates::{gate_saved_ops, gate_saved_run, gate_saved_sweep, parse_assertions};

use crate::bench::gate;
use crate::options::{Options, ScriptSource};
use crate::server_stats::ServerSampling;
use crate::subcommand::{Invocation, Operands, Opt, Subcommand};

/// `pgrush report`: its options and `--help`.
pub const COMMAND: Subcommand = Subcommand {
    name: "report",
    args: " RUN.json",
    summary: "render or compare runs saved with --json",
    about: "\
{prog} report renders and compares saved runs (written with --json=FILE),
or saved operations timings (pgrush ops --json FILE).

Usage:
  {prog} report RUN.json --html=FILE     render one run as a self-contained HTML page
  {prog} report RUN.json...              print a side-by-side table of runs
  {prog} report [--baseline=BASE.json] RUN.json --assert=EXPR...
                                         check a saved run (exit status 3 when an
                                         assertion fails)
  {prog} report [--baseline=BASE_DIR] DIR --assert=EXPR...
                                         check every cell of a saved sweep (on the
                                         cell's run with the median tps)
  {prog} report DIR                      print a saved sweep again (see sweep --help)
  {prog} report [--baseline=BASE.json] OPS.json --assert=STEP<=DURATION...
                                         check pgrush ops results at every scale
                                         (\"load<=60s\", \"restore<=1.2*baseline\")

",
    options: &[
        Opt::valued(
            None,
            "html",
            "FILE",
            &[
                "write an HTML page to FILE (- for stdout): the report",
                "of one run, or the comparison of several runs",
            ],
        ),
        Opt::flag(None, "markdown", &["print the table as Markdown"]),
        Opt::flag(None, "csv", &["print the table as CSV"]),
        Opt::valued(
            None,
            "baseline",
            "FILE",
            &[
                "compare with this saved run: EXPR may use",
                "FACTOR*baseline, e.g. \"tps>=0.95*baseline\",",
                "\"p99<=1.1*baseline\"",
            ],
        ),
        Opt::valued(
            None,
            "assert",
            "EXPR",
            &[
                "check a result of RUN.json, e.g. \"tps>=1000\",",
                "\"p99<5ms\" (repeatable)",
            ],
        ),
        Opt::valued(
            None,
            "junit",
            "FILE",
            &["write the --assert verdicts to FILE as JUnit XML"],
        ),
        Opt::HELP,
    ],
    notes: "",
    operands: Operands::Files,
    pgbench_options: false,
    run,
};

/// What `pgrush report` was asked to do.
#[derive(Debug, Clone, PartialEq)]
struct ReportArgs {
    files: Vec<String>,
    html: Option<String>,
    format: Format,
    /// `--baseline=FILE`: the saved run `…*baseline` thresholds read.
    baseline: Option<String>,
    /// `--assert=EXPR`, in order, as given: parsed once the kind of results is known
    /// (runs and sweeps take run metrics, `pgrush ops` results take step names).
    expressions: Vec<String>,
    /// `--junit=FILE`.
    junit: Option<String>,
}

/// Parses the arguments; `Ok(None)` asks for the help text.
fn parse_report_args(args: &[OsString]) -> Result<Option<ReportArgs>, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return Ok(None);
    };
    let mut out = ReportArgs {
        files: scan.operands,
        html: None,
        format: Format::Text,
        baseline: None,
        expressions: Vec::new(),
        junit: None,
    };
    for (found, value) in scan.options {
        let long = found.long();
        let value = value.unwrap_or_default();
        if value.is_empty() && !matches!(long, "markdown" | "csv") {
            return Err(COMMAND.usage(format!("--{long}: a value is needed")));
        }
        match long {
            "markdown" => out.format = Format::Markdown,
            "csv" => out.format = Format::Csv,
            "html" => out.html = Some(value),
            "baseline" => out.baseline = Some(value),
            "junit" => out.junit = Some(value),
            _ => out.expressions.push(value),
        }
    }
    check_report_args(&out)?;
    Ok(Some(out))
}

/// The combinations `pgrush report` refuses.
fn check_report_args(args: &ReportArgs) -> Result<(), Failure> {
    let refuse = |msg: &str| Err(COMMAND.usage(msg));
    if args.files.is_empty() {
        return refuse("no run file given");
    }
    if args.html.is_some() && args.format != Format::Text {
        return refuse("--html cannot be combined with --markdown or --csv");
    }
    let gating = !args.expressions.is_empty();
    if (args.baseline.is_some() || args.junit.is_some()) && !gating {
        return refuse("--baseline and --junit are allowed only with --assert");
    }
    if gating && args.files.len() != 1 {
        return refuse("--assert checks exactly one run file (the baseline goes in --baseline)");
    }
    if gating && args.html.is_some() {
        return refuse("--assert cannot be combined with --html");
    }
    Ok(())
}

/// Reads a run document (`-` = stdin), streaming it from the file (its text is never
/// held whole), secrets of its command line redacted; errors are reported and give
/// exit status 1.
pub(crate) fn read_run(prog: &str, path: &str) -> Result<RunDocument, i32> {
    let parsed = if path == "-" {
        RunDocument::from_reader(std::io::stdin().lock())
    } else {
        match std::fs::File::open(path) {
            Ok(file) => RunDocument::from_reader(file),
            Err(e) => {
                messages::error(
                    prog,
                    &format!(
                        "could not open file \"{path}\": {}",
                        pgrush_wire::strerror(&e)
                    ),
                );
                return Err(1);
            }
        }
    };
    let mut doc = parsed.map_err(|e| {
        messages::error(prog, &format!("\"{path}\": {e}"));
        1
    })?;
    // A document of an older pgrush may hold a password: never repeat it.
    doc.command_line = redact_argv(&doc.command_line);
    Ok(doc)
}

/// Writes `text` to `path` (`-` = stdout); errors are reported and give exit status 1.
pub(crate) fn write_output(prog: &str, path: &str, text: &str) -> Result<(), i32> {
    if path == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| crate::output_file::stdout_failed(prog, &e));
    }
    crate::output_file::write_atomically(Path::new(path), text.as_bytes()).map_err(|e| {
        messages::error(prog, &crate::output_file::write_error(path, &e));
        1
    })
}

/// Whether the arguments ask for a gate (`--assert`, `--baseline`, `--junit`): a saved
/// sweep is then checked here rather than printed by `pgrush sweep`'s report.
fn gate_options_given(args: &[OsString]) -> bool {
    args.iter()
        .map(|a| a.to_string_lossy())
        .take_while(|a| a != "--")
        .any(|a| {
            ["--assert", "--baseline", "--junit"]
                .iter()
                .any(|o| a == *o || a.starts_with(&format!("{o}=")))
        })
}

/// True when `path` is a directory holding a saved sweep.
fn is_sweep_dir(path: &str) -> bool {
    Path::new(path).join(sweep::PLAN_FILE).is_file()
}

/// `pgrush report …`: returns the exit status.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    if !gate_options_given(args) && crate::sweep_cmd::is_saved_sweep(args.first()) {
        return crate::sweep_cmd::report_saved(&inv.prog, args);
    }
    let Some(parsed) = parse_report_args(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let prog = inv.prog.as_str();
    let outputs = [parsed.html.as_deref(), parsed.junit.as_deref()];
    if let Err(code) = crate::output_file::check_outputs(prog, outputs) {
        return Ok(code);
    }
    if let Some(outcome) = gate_saved_ops(prog, &parsed) {
        return outcome;
    }
    if let Some(outcome) =
        crate::ops_cmd::report(&parsed.files, parsed.html.as_deref(), parsed.format)
    {
        return outcome;
    }
    let assertions = parse_assertions(&parsed.expressions)?;
    Ok(report_runs(prog, &parsed, &assertions))
}

/// Renders, compares or gates saved runs (or gates a saved sweep); returns the exit status.
fn report_runs(prog: &str, parsed: &ReportArgs, assertions: &[Assertion]) -> i32 {
    if !assertions.is_empty() && parsed.files.iter().any(|f| is_sweep_dir(f)) {
        return gate_saved_sweep(prog, parsed, assertions);
    }
    let mut runs = Vec::with_capacity(parsed.files.len());
    for f in &parsed.files {
        match read_run(prog, f) {
            Ok(doc) => runs.push((f.clone(), doc)),
            Err(code) => return code,
        }
    }
    if !assertions.is_empty() {
        return gate_saved_run(prog, parsed, assertions, runs);
    }
    if let Some(path) = &parsed.html {
        let page = match runs.as_slice() {
            [(_, only)] => html::render(only),
            _ => html::render_comparison(&runs),
        };
        return match write_output(prog, path, &page) {
            Ok(()) => 0,
            Err(code) => code,
        };
    }
    let table = Comparison::build(&runs).render(parsed.format);
    match write_output(prog, "-", &table) {
        Ok(()) => 0,
        Err(code) => code,
    }
}

// ---------------------------------------------------------------------------------------
// Extras of a benchmark run.

/// Whether any output beyond pgbench's was asked for (warnings are printed only then: by default
/// pgrush's output is exactly pgbench's).
pub fn extras_enabled(opts: &Options) -> bool {
    opts.percentiles.is_some()
        || opts.json.is_some()
        || opts.html.is_some()
        || !opts.assertions.is_empty()
        || opts.server_stats.is_some()
}

/// Whether the run ends with a run document (`--json`, `--html`, `--assert`,
/// `--server-stats`): only then are per-interval statistics kept.
pub fn builds_document(opts: &Options) -> bool {
    opts.json.is_some()
        || opts.html.is_some()
        || !opts.assertions.is_empty()
        || crate::server_stats::enabled(opts)
}

/// Whether the text output (banner, report, percentile lines) must go to stderr because
/// stdout carries the JSON document (`--json=-`).
pub fn text_to_stderr(opts: &Options) -> bool {
    opts.json.as_deref() == Some("-")
}

/// Where the banner and the text report go: stdout, or stderr with `--json=-`.
pub fn text_out(opts: &Options) -> Box<dyn Write> {
    if text_to_stderr(opts) {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    }
}

/// The builtin tpcb-like script is one of the scripts (the default).
fn tpcb_like(opts: &Options) -> bool {
    opts.scripts.is_empty()
        || opts
            .scripts
            .iter()
            .any(|s| matches!(&s.source, ScriptSource::Builtin(n) if n == "tpcb-like"))
}

const AUTOVACUUM_QUERY: &str = "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) \
     + (SELECT count(*) FROM pg_catalog.pg_stat_activity \
        WHERE backend_type = 'autovacuum worker' AND query LIKE '%pgbench\\_%') \
     FROM pg_catalog.pg_stat_user_tables WHERE relname LIKE 'pgbench\\_%'";

/// A number that grows when autovacuum works on the pgbench tables (vacuum and analyze
/// counts plus running workers), `None` when it cannot be read.
fn autovacuum_activity(con: &mut Connection) -> Option<i64> {
    let results = con.simple_query(AUTOVACUUM_QUERY).ok()?;
    results.first()?.get(0, 0)?.parse().ok()
}

/// The server's version and [`pgrush_report::document::SERVER_SETTINGS`].
fn server_info(con: &mut Connection) -> ServerInfo {
    let mut settings = std::collections::BTreeMap::new();
    if let Ok(results) = con.simple_query(&pgrush_report::document::server_settings_query())
        && let Some(r) = results.first()
    {
        for row in 0..r.rows().len() {
            if let (Some(k), Some(v)) = (r.get(row, 0), r.get(row, 1)) {
                settings.insert(k.to_string(), v.to_string());
            }
        }
    }
    ServerInfo {
        version: con.server_version().to_string(),
        version_num: con.server_version_num(),
        settings,
    }
}

/// What the extras need from before the run (taken on the setup connection).
#[derive(Debug)]
pub struct RunExtras {
    enabled: bool,
    server: Option<ServerInfo>,
    autovacuum_before: Option<i64>,
    start_time_unix_us: i64,
    params: Option<ConnParams>,
    sampling: Option<ServerSampling>,
    shard: Option<pgrush_report::document::ShardDoc>,
}

impl RunExtras {
    /// Reads the server facts on the setup connection (only when extras are enabled).
    pub fn before_run(opts: &Options, con: &mut Connection, params: &ConnParams) -> Self {
        let enabled = extras_enabled(opts);
        let watch_autovacuum = enabled && tpcb_like(opts) && !opts.no_warnings;
        RunExtras {
            enabled,
            server: enabled.then(|| server_info(con)),
            autovacuum_before: if watch_autovacuum {
                autovacuum_activity(con)
            } else {
                None
            },
            start_time_unix_us: 0,
            params: watch_autovacuum.then(|| params.clone()),
            sampling: ServerSampling::for_run(opts, params),
            shard: None,
        }
    }

    /// Marks the start of the run (call just before the engine starts) and starts
    /// the server sampler.
    pub fn mark_start(&mut self, prog: &str) {
        self.start_time_unix_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        if let Some(s) = self.sampling.as_mut() {
            s.start(prog);
        }
    }

    /// A shard's run: its document carries `shard`, and starts (with its time
    /// series) at the agreed start, `start_time_unix_us` on this machine's clock.
    pub fn set_shard(&mut self, shard: pgrush_report::document::ShardDoc, start_time_unix_us: i64) {
        self.shard = Some(shard);
        self.start_time_unix_us = start_time_unix_us;
    }

    fn autovacuum_during_run(&self) -> Option<bool> {
        let before = self.autovacuum_before?;
        let mut con = Connection::connect(self.params.as_ref()?).ok()?;
        let after = autovacuum_activity(&mut con);
        let _ = con.close();
        Some(after? > before)
    }

    /// After the text report: percentile lines, warnings, the `--assert` verdicts,
    /// `--json`, `--html` and `--junit`. Returns whether every assertion held (true
    /// without assertions), or exit status 1 when a file cannot be written.
    pub fn after_run(&mut self, opts: &Options, summary: &RunSummary) -> Result<bool, i32> {
        if !self.enabled {
            return Ok(true);
        }
        let prog = opts.progname.as_str();
        let list = opts.percentiles.clone().unwrap_or_default();
        if let Some(list) = &opts.percentiles {
            let text = pgrush_report::percentiles::render_text(summary, list);
            let mut out = text_out(opts);
            let _ = out.write_all(&text);
            let _ = out.flush();
        }
        let client = ClientInfo::detect();
        let found = self.warnings(opts, summary, &client);
        if !builds_document(opts) {
            return Ok(true);
        }
        let ctx = RunContext {
            command_line: redact_argv(
                &std::env::args_os()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>(),
            ),
            start_time_unix_us: self.start_time_unix_us,
            server: self.server.clone(),
            client,
            percentiles: list,
            warnings: found,
        };
        let mut doc = RunDocument::build(summary, &ctx);
        if let Some(shard) = &self.shard {
            doc.shard = Some(shard.clone());
            crate::bench::align_time_series(&mut doc, summary.bench_duration_s());
        }
        if let Some(s) = self.sampling.as_mut() {
            doc.server_stats = s.finish(summary, doc.time_series.as_ref());
            print_server_stats(opts, doc.server_stats.as_ref());
        }
        let passed = gate_run(opts, &mut doc)?;
        if let Some(path) = &opts.json {
            write_output(prog, path, &doc.to_json())?;
        }
        if let Some(path) = &opts.html {
            write_output(prog, path, &html::render(&doc))?;
        }
        Ok(passed)
    }

    /// The meaningfulness warnings, printed unless `--no-warnings`.
    fn warnings(&self, opts: &Options, summary: &RunSummary, client: &ClientInfo) -> Vec<String> {
        let found = warnings(&WarningInputs {
            tpcb_like: tpcb_like(opts),
            cpus: client.cpus,
            autovacuum_during_run: if opts.no_warnings {
                None
            } else {
                self.autovacuum_during_run()
            },
            ..WarningInputs::from_summary(summary)
        });
        if !opts.no_warnings {
            for w in &found {
                messages::warning(&opts.progname, w);
            }
        }
        found
    }
}

/// The server statistics' warnings, and with `--server-stats` their summary.
fn print_server_stats(opts: &Options, timeline: Option<&ServerTimeline>) {
    let Some(timeline) = timeline else {
        return;
    };
    if !opts.no_warnings {
        for w in &timeline.warnings {
            messages::warning(&opts.progname, w);
        }
    }
    if opts.server_stats.is_some() {
        let mut out = text_out(opts);
        let _ = out.write_all(pgrush_report::server::render_text(timeline).as_bytes());
        let _ = out.flush();
    }
}

/// The `--assert` verdicts of a run: printed after the report, stored in `doc`, written
/// to `--junit`'s file. Returns whether every assertion held.
fn gate_run(opts: &Options, doc: &mut RunDocument) -> Result<bool, i32> {
    if opts.assertions.is_empty() {
        return Ok(true);
    }
    let facts = gate::run_facts(opts);
    let verdicts = gate::verdicts(&opts.assertions, &facts, doc, None);
    gate::print_verdicts(&verdicts, &mut text_out(opts));
    if let Some(path) = &opts.junit {
        let out = format!("{}{}", doc.report_text, gate::verdict_lines(&verdicts));
        let xml = pgrush_report::junit::render(&opts.progname, &verdicts, &out);
        write_output(&opts.progname, path, &xml)?;
    }
    let passed = gate::all_passed(&verdicts);
    doc.assertions = Some(verdicts);
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn status_of(parsed: Result<Option<ReportArgs>, Failure>) -> Option<i32> {
        parsed.err().map(|f| f.status())
    }

    #[test]
    fn parses_report_arguments() {
        let p = parse_report_args(&args(&["a.json", "--markdown", "b.json"]));
        assert_eq!(
            p,
            Ok(Some(ReportArgs {
                files: vec!["a.json".into(), "b.json".into()],
                html: None,
                format: Format::Markdown,
                baseline: None,
                expressions: Vec::new(),
                junit: None,
            }))
        );
        let p = parse_report_args(&args(&["--html", "x.html", "a.json"]));
        assert_eq!(p.map(|r| r.and_then(|r| r.html)), Ok(Some("x.html".into())));
        let p = parse_report_args(&args(&["a.json", "--csv"]));
        assert!(matches!(
            p,
            Ok(Some(ReportArgs {
                format: Format::Csv,
                ..
            }))
        ));
        assert_eq!(parse_report_args(&args(&["--help"])), Ok(None));
        assert_eq!(status_of(parse_report_args(&args(&[]))), Some(1));
        assert_eq!(
            status_of(parse_report_args(&args(&["--bogus", "a"]))),
            Some(1)
        );
        assert!(matches!(
            parse_report_args(&args(&["--html=x", "a", "b"])),
            Ok(Some(_))
        ));
        assert_eq!(
            status_of(parse_report_args(&args(&["--html=x", "--csv", "a"]))),
            Some(1)
        );
        let p = parse_report_args(&args(&[
            "--baseline",
            "b.json",
            "n.json",
            "--assert=tps>=0.9*baseline",
        ]));
        let p = p.ok().flatten();
        assert_eq!(
            p.as_ref().and_then(|r| r.baseline.clone()),
            Some("b.json".into())
        );
        assert_eq!(p.map(|r| r.expressions.len()), Some(1));
        let p = parse_report_args(&args(&["n.json", "--assert", "p99<5", "--junit=j"]));
        assert_eq!(p.map(|r| r.and_then(|r| r.junit)), Ok(Some("j".into())));
        assert_eq!(
            parse_assertions(&["tps>".to_string()])
                .err()
                .map(|f| f.status()),
            Some(1)
        );
        for refused in [
            &["n.json", "--junit=j"][..],
            &["--baseline=b.json", "n.json"],
            &["a.json", "b.json", "--assert=tps>1"],
            &["n.json", "--assert=tps>1", "--html=x"],
            &["n.json", "--assert"],
        ] {
            assert_eq!(
                status_of(parse_report_args(&args(refused))),
                Some(1),
                "{refused:?}"
            );
        }
        let p = parse_report_args(&args(&["--", "--odd.json"]));
        assert_eq!(
            p.map(|r| r.map(|r| r.files)),
            Ok(Some(vec!["--odd.json".into()]))
        );
    }
}
