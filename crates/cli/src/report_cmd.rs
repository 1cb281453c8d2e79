//! Reports beyond pgbench on the command line: the `pgrush report` subcommand (render a saved run as
//! HTML, compare saved runs as text, Markdown or CSV, gate saved runs, sweeps and ops
//! results with `--assert` ([`saved_gates`])). The opt-in extras of a benchmark run
//! are `pgrush_run::output`.

use std::ffi::OsString;
use std::path::Path;

use pgrush_lab::sweep::is_saved_sweep;
use pgrush_report::assertion::Assertion;
use pgrush_report::compare::{Comparison, Format};
use pgrush_report::html;
use pgrush_run::Failure;
use pgrush_run::output_file::write_output;

mod request;
mod saved_capacity;
mod saved_gates;

use request::ReportArgs;
use saved_gates::{gate_saved_ops, gate_saved_run, gate_saved_sweep};

use crate::saved_run::read_run;
use crate::subcommand::{Invocation, Operands, Opt, Subcommand};

/// `pgrush report`: its options and `--help`.
pub const COMMAND: Subcommand = Subcommand {
    name: "report",
    args: " RUN.json",
    summary: "render or compare runs saved with --json",
    about: "\
{prog} report renders and compares saved runs (written with --json=FILE),
saved operations timings (pgrush ops --json FILE) or saved capacity
searches (pgrush capacity --json FILE).

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
  {prog} report CAP.json...              print saved capacity searches side by side
  {prog} report [--baseline=BASE.json] CAP.json --assert=\"capacity>=N\"
                                         check a saved capacity search
                                         (\"capacity>=0.9*baseline\")

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

/// The `--assert` expressions as run assertions; a malformed one is an option error.
fn parse_assertions(expressions: &[String]) -> Result<Vec<Assertion>, Failure> {
    expressions
        .iter()
        .map(|v| {
            Assertion::parse(v)
                .map_err(|e| COMMAND.usage(format!("invalid assertion \"{v}\": {e}")))
        })
        .collect()
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

/// `pgrush report …`: returns the exit status.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    if !gate_options_given(args) && crate::sweep_cmd::is_saved_sweep(args.first()) {
        return crate::sweep_cmd::report_saved(args);
    }
    let Some(parsed) = parse_report_args(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let prog = inv.prog.as_str();
    let outputs = [parsed.html.as_deref(), parsed.junit.as_deref()];
    pgrush_run::output_file::check_outputs(outputs)?;
    if let Some(outcome) = gate_saved_ops(prog, &parsed) {
        return outcome;
    }
    if let Some(outcome) = saved_capacity::report(prog, &parsed) {
        return outcome;
    }
    if let Some(outcome) =
        crate::ops_cmd::report(&parsed.files, parsed.html.as_deref(), parsed.format)
    {
        return outcome;
    }
    let assertions = parse_assertions(&parsed.expressions)?;
    report_runs(prog, &parsed, &assertions)
}

/// Renders, compares or gates saved runs (or gates a saved sweep); returns the exit status.
fn report_runs(prog: &str, parsed: &ReportArgs, assertions: &[Assertion]) -> Result<i32, Failure> {
    if !assertions.is_empty() && parsed.files.iter().any(|f| is_saved_sweep(Path::new(f))) {
        return gate_saved_sweep(prog, parsed, assertions);
    }
    let runs = parsed
        .files
        .iter()
        .map(|f| Ok((f.clone(), read_run(f)?)))
        .collect::<Result<Vec<_>, Failure>>()?;
    if !assertions.is_empty() {
        return gate_saved_run(prog, parsed, assertions, runs);
    }
    if let Some(path) = &parsed.html {
        let page = match runs.as_slice() {
            [(_, only)] => html::render(only),
            _ => html::render_comparison(&runs),
        };
        return write_output(path, &page).map(|()| 0);
    }
    let table = Comparison::build(&runs).render(parsed.format);
    write_output("-", &table).map(|()| 0)
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
