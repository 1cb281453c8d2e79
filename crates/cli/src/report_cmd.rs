//! Reports beyond pgbench on the command line: the `pgrush report` subcommand (render a saved run as
//! HTML, compare saved runs as text, Markdown or CSV), and the opt-in extras of a benchmark
//! run (`--percentiles`, `--json`, `--html`, warnings), called by `bench.rs`.

use std::ffi::OsString;
use std::io::Write;

use pgrush_engine::messages;
use pgrush_report::compare::{Comparison, Format};
use pgrush_report::document::{ClientInfo, RunContext, RunDocument, ServerInfo};
use pgrush_report::html;
use pgrush_report::warnings::{WarningInputs, warnings};
use pgrush_stats::RunSummary;
use pgrush_wire::Connection;
use pgrush_wire::conninfo::ConnParams;

use crate::options::{Options, ScriptSource};

const USAGE: &str = "\
{prog} report renders and compares saved runs (written with --json=FILE),
or saved operations timings (pgrush ops --json FILE).

Usage:
  {prog} report RUN.json --html=FILE     render one run as a self-contained HTML page
  {prog} report RUN.json...              print a side-by-side table of runs

Options:
  --html=FILE     write an HTML page to FILE (- for stdout): the report of one run,
                  or the comparison of several runs
  --markdown      print the table as Markdown
  --csv           print the table as CSV
  -?, --help      show this help, then exit

";

/// What `pgrush report` was asked to do.
#[derive(Debug, Clone, PartialEq)]
struct ReportArgs {
    files: Vec<String>,
    html: Option<String>,
    format: Format,
}

fn usage_error(prog: &str, msg: &str) -> i32 {
    messages::error(prog, msg);
    messages::hint(
        prog,
        &format!("Try \"{prog} report --help\" for more information."),
    );
    1
}

fn parse_report_args(prog: &str, args: &[OsString]) -> Result<Option<ReportArgs>, i32> {
    let mut out = ReportArgs {
        files: Vec::new(),
        html: None,
        format: Format::Text,
    };
    let mut only_files = false;
    let mut it = args.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(arg) = it.next() {
        if only_files || arg == "-" || !arg.starts_with('-') {
            out.files.push(arg);
            continue;
        }
        match arg.as_str() {
            "--" => only_files = true,
            "--help" | "-?" | "-h" => return Ok(None),
            "--markdown" => out.format = Format::Markdown,
            "--csv" => out.format = Format::Csv,
            "--html" => match it.next() {
                Some(v) => out.html = Some(v),
                None => {
                    return Err(usage_error(prog, "option '--html' requires an argument"));
                }
            },
            _ => match arg.strip_prefix("--html=") {
                Some(v) if !v.is_empty() => out.html = Some(v.to_string()),
                _ => return Err(usage_error(prog, &format!("unrecognized option \"{arg}\""))),
            },
        }
    }
    if out.files.is_empty() {
        return Err(usage_error(prog, "no run file given"));
    }
    if out.html.is_some() && out.format != Format::Text {
        return Err(usage_error(
            prog,
            "--html cannot be combined with --markdown or --csv",
        ));
    }
    Ok(Some(out))
}

fn read_run(prog: &str, path: &str) -> Result<RunDocument, i32> {
    let text = if path == "-" {
        let mut s = String::new();
        match std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            Ok(_) => s,
            Err(e) => {
                messages::error(
                    prog,
                    &format!(
                        "could not read standard input: {}",
                        pgrush_wire::strerror(&e)
                    ),
                );
                return Err(1);
            }
        }
    } else {
        match std::fs::read_to_string(path) {
            Ok(s) => s,
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
    RunDocument::from_json(&text).map_err(|e| {
        messages::error(prog, &format!("\"{path}\": {e}"));
        1
    })
}

/// Writes `text` to `path` (`-` = stdout); errors are reported and give exit status 1.
fn write_output(prog: &str, path: &str, text: &str) -> Result<(), i32> {
    let result = if path == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    } else {
        std::fs::write(path, text)
    };
    result.map_err(|e| {
        messages::error(
            prog,
            &format!(
                "could not write file \"{path}\": {}",
                pgrush_wire::strerror(&e)
            ),
        );
        1
    })
}

/// `pgrush report …`: returns the exit status.
pub fn run(prog: &str, args: &[OsString]) -> i32 {
    let parsed = match parse_report_args(prog, args) {
        Ok(Some(p)) => p,
        Ok(None) => {
            print!(
                "{}{}",
                USAGE.replace("{prog}", prog),
                crate::help::bug_report_lines()
            );
            return 0;
        }
        Err(code) => return code,
    };
    if let Some(code) = crate::ops_cmd::report(&parsed.files, parsed.html.as_deref()) {
        return code;
    }
    let mut runs = Vec::with_capacity(parsed.files.len());
    for f in &parsed.files {
        match read_run(prog, f) {
            Ok(doc) => runs.push((f.clone(), doc)),
            Err(code) => return code,
        }
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
    opts.percentiles.is_some() || opts.json.is_some() || opts.html.is_some()
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
#[derive(Debug, Clone)]
pub struct RunExtras {
    enabled: bool,
    server: Option<ServerInfo>,
    autovacuum_before: Option<i64>,
    start_time_unix_us: i64,
    params: Option<ConnParams>,
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
        }
    }

    /// Marks the start of the run (call just before the engine starts).
    pub fn mark_start(&mut self) {
        self.start_time_unix_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
            .unwrap_or(0);
    }

    fn autovacuum_during_run(&self) -> Option<bool> {
        let before = self.autovacuum_before?;
        let mut con = Connection::connect(self.params.as_ref()?).ok()?;
        let after = autovacuum_activity(&mut con);
        let _ = con.close();
        Some(after? > before)
    }

    /// After the text report: percentile lines, warnings, `--json` and `--html`.
    /// Returns exit status 1 when a file cannot be written.
    pub fn after_run(&self, opts: &Options, summary: &RunSummary) -> Result<(), i32> {
        if !self.enabled {
            return Ok(());
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
        let found = warnings(&WarningInputs {
            duration_s: summary.bench_duration_s(),
            tpcb_like: tpcb_like(opts),
            clients: summary.config.clients,
            scale: summary.config.scale,
            threads: summary.config.threads,
            cpus: client.cpus,
            autovacuum_during_run: if opts.no_warnings {
                None
            } else {
                self.autovacuum_during_run()
            },
        });
        if !opts.no_warnings {
            for w in &found {
                messages::warning(prog, w);
            }
        }
        if opts.json.is_none() && opts.html.is_none() {
            return Ok(());
        }
        let ctx = RunContext {
            command_line: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            start_time_unix_us: self.start_time_unix_us,
            server: self.server.clone(),
            client,
            percentiles: list,
            warnings: found,
        };
        let doc = RunDocument::build(summary, &ctx);
        if let Some(path) = &opts.json {
            write_output(prog, path, &doc.to_json())?;
        }
        if let Some(path) = &opts.html {
            write_output(prog, path, &html::render(&doc))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_report_arguments() {
        let p = parse_report_args("pgrush", &args(&["a.json", "--markdown", "b.json"]));
        assert_eq!(
            p,
            Ok(Some(ReportArgs {
                files: vec!["a.json".into(), "b.json".into()],
                html: None,
                format: Format::Markdown,
            }))
        );
        let p = parse_report_args("pgrush", &args(&["--html", "x.html", "a.json"]));
        assert_eq!(p.map(|r| r.and_then(|r| r.html)), Ok(Some("x.html".into())));
        let p = parse_report_args("pgrush", &args(&["a.json", "--csv"]));
        assert!(matches!(
            p,
            Ok(Some(ReportArgs {
                format: Format::Csv,
                ..
            }))
        ));
        assert_eq!(parse_report_args("pgrush", &args(&["--help"])), Ok(None));
        assert_eq!(parse_report_args("pgrush", &args(&[])), Err(1));
        assert_eq!(
            parse_report_args("pgrush", &args(&["--bogus", "a"])),
            Err(1)
        );
        assert!(matches!(
            parse_report_args("pgrush", &args(&["--html=x", "a", "b"])),
            Ok(Some(_))
        ));
        assert_eq!(
            parse_report_args("pgrush", &args(&["--html=x", "--csv", "a"])),
            Err(1)
        );
        let p = parse_report_args("pgrush", &args(&["--", "--odd.json"]));
        assert_eq!(
            p.map(|r| r.map(|r| r.files)),
            Ok(Some(vec!["--odd.json".into()]))
        );
    }
}
