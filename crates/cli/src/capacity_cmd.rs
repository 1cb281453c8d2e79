//! `pgrush capacity`: the command line of a capacity search (`pgrush_lab::capacity`).
//!
//! The search's own options (`--slo`, `--start-rate`, `--precision`, `--step`,
//! `--max-step`, `--warmup`, `--json`, `--html`, `--assert`) are taken out first; every
//! other argument is a pgbench option handed on to each step, checked by the ordinary
//! parser (with a rate and a duration, as the steps run) before anything starts, so a
//! bad option gets pgbench's message. The options the search sets itself are refused.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use pgrush_lab::capacity::{self, CapacityConfig, CapacityResult, Slo};
use pgrush_report::assertion::{StepAssertion, Threshold, Unit, Verdict};
use pgrush_run::{Failure, gate};

use crate::subcommand::{Invocation, Operands, Opt, Subcommand};

/// `pgrush capacity`: its options and `--help` (every other option is pgbench's).
pub const COMMAND: Subcommand = Subcommand {
    name: "capacity",
    args: " --slo ...",
    summary: "the highest rate at which every SLO holds",
    about: "\
pgrush capacity finds the highest rate (transactions per second) a server
sustains while every SLO holds. Each step runs the workload open-loop at an
offered rate (-R; latency counts from each transaction's scheduled start); the
rate doubles while the steps hold, then the search bisects between the highest
rate that held and the lowest that failed. A step fails when an SLO fails or
the server falls behind the offered rate.

Usage:
  pgrush capacity --slo EXPR [--slo EXPR]... [OPTION]... [PGBENCH OPTION]...
                  [DBNAME]

",
    options: &[
        Opt::valued(
            None,
            "slo",
            "EXPR",
            &[
                "an objective every step must meet, in --assert's",
                "syntax: p99<10ms, p99.9<=50ms, latency-avg<5ms,",
                "failed<0.1%, lag-max<100ms (repeatable)",
            ],
        ),
        Opt::valued(
            None,
            "start-rate",
            "TPS",
            &[
                "the first rate (default: half the tps of a",
                "closed-loop probe run first)",
            ],
        ),
        Opt::valued(
            None,
            "precision",
            "PERCENT",
            &[
                "stop when the lowest failing rate is within",
                "PERCENT of the highest rate that held (default 5)",
            ],
        ),
        Opt::valued(
            None,
            "step",
            "SECONDS",
            &[
                "shortest measured time of a step (default 10;",
                "longer when a percentile needs more transactions)",
            ],
        ),
        Opt::valued(
            None,
            "max-step",
            "SECONDS",
            &["longest measured time of a step (default 60)"],
        ),
        Opt::valued(
            None,
            "warmup",
            "SECONDS",
            &["discarded warm-up before each step (default 2; 0:", "none)"],
        ),
        Opt::valued(
            None,
            "json",
            "FILE",
            &["write the result as JSON (schema pgrush-capacity/1)"],
        ),
        Opt::valued(
            None,
            "html",
            "FILE",
            &["write the result as an HTML page with charts"],
        ),
        Opt::valued(
            None,
            "assert",
            "EXPR",
            &[
                "a gate on the result: capacity>=N (exit status 3",
                "when it fails; repeatable)",
            ],
        ),
        Opt::HELP,
    ],
    notes: "\
Every other option is pgbench's and goes to each step (-c, -j, -f, -M, -n,
connection options ...); -R, -T, -t, -L and -i are the search's own business.
Percentile SLOs are decided on the transactions above the bound, with a 95%
Wilson interval; a step too short to tell is repeated (at most 3 rounds).
Ctrl-C stops the search and prints what it found so far.
",
    operands: Operands::Files,
    pgbench_options: true,
    run,
};

/// The search's own options and the options handed on.
#[derive(Debug, Clone, PartialEq, Default)]
struct CapacityArgs {
    slos: Vec<String>,
    start_rate: Option<f64>,
    precision_pct: f64,
    step_s: u32,
    max_step_s: u32,
    warmup_s: u32,
    json: Option<PathBuf>,
    html: Option<PathBuf>,
    asserts: Vec<String>,
    /// The pgbench options (`--long=value`) and the database name.
    run_args: Vec<String>,
}

/// The pgbench options the search sets itself (or that break its statistics).
const REFUSED: [(&str, &str); 5] = [
    ("rate", "the search sets each step's rate"),
    (
        "time",
        "the search sets each step's duration (--step, --max-step)",
    ),
    (
        "transactions",
        "the search sets each step's duration (--step, --max-step)",
    ),
    (
        "latency-limit",
        "skipped transactions would leave the percentiles",
    ),
    ("initialize", "initialize the tables first with pgrush -i"),
];

/// Reads the command line; `Ok(None)` asks for `--help`.
fn parse_own(args: &[OsString]) -> Result<Option<CapacityArgs>, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return Ok(None);
    };
    let mut out = CapacityArgs {
        precision_pct: 5.0,
        step_s: 10,
        max_step_s: 60,
        warmup_s: 2,
        ..CapacityArgs::default()
    };
    for handed in scan.pgbench_args() {
        if let Some((long, why)) = REFUSED.iter().find(|(l, _)| *l == handed.long) {
            return Err(COMMAND.usage(format!("--{long} cannot be used: {why}")));
        }
        out.run_args.push(handed.text);
    }
    for (found, value) in &scan.options {
        let value = value.clone().unwrap_or_default();
        let seconds = |long: &str, min: u32| {
            value
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= min)
                .ok_or_else(|| COMMAND.usage(format!("invalid value \"{value}\" for --{long}")))
        };
        let number = |long: &str, low: f64, high: f64| {
            value
                .trim()
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|v| *v > low && *v <= high)
                .ok_or_else(|| COMMAND.usage(format!("invalid value \"{value}\" for --{long}")))
        };
        match found.long() {
            "slo" => out.slos.push(value),
            "start-rate" => out.start_rate = Some(number("start-rate", 0.0, 1e9)?),
            "precision" => out.precision_pct = number("precision", 0.0, 100.0)?,
            "step" => out.step_s = seconds("step", 1)?,
            "max-step" => out.max_step_s = seconds("max-step", 1)?,
            "warmup" => out.warmup_s = seconds("warmup", 0)?,
            "json" => out.json = Some(PathBuf::from(&value)),
            "html" => out.html = Some(PathBuf::from(&value)),
            "assert" => out.asserts.push(value),
            _ => {}
        }
    }
    if out.max_step_s < out.step_s {
        return Err(COMMAND.usage(format!(
            "--max-step ({}) is shorter than --step ({})",
            out.max_step_s, out.step_s
        )));
    }
    match scan.operands.as_slice() {
        [] => {}
        [db] => out.run_args.push(db.clone()),
        [_, extra, ..] => {
            return Err(COMMAND.usage(format!(
                "too many command-line arguments (first is \"{extra}\")"
            )));
        }
    }
    Ok(Some(out))
}

/// The SLOs; a bad one is a usage error.
fn parse_slos(texts: &[String]) -> Result<Vec<Slo>, Failure> {
    if texts.is_empty() {
        return Err(COMMAND.usage("nothing to hold: give at least one --slo EXPR (e.g. p99<10ms)"));
    }
    texts
        .iter()
        .map(|t| Slo::parse(t).map_err(|e| COMMAND.usage(e.to_string())))
        .collect()
}

/// The gates: `capacity OP N` (a rate, no unit), or `capacity OP [FACTOR*]baseline`
/// where a saved baseline search is given (`pgrush report --baseline`).
pub(crate) fn parse_gates(
    texts: &[String],
    baseline_given: bool,
) -> Result<Vec<StepAssertion>, Failure> {
    texts
        .iter()
        .map(|text| {
            let bad = |why: String| COMMAND.usage(format!("invalid assertion \"{text}\": {why}"));
            let a = StepAssertion::parse(text, &["capacity"]).map_err(|e| bad(e.to_string()))?;
            match a.threshold {
                Threshold::Value {
                    unit: Unit::None, ..
                } => Ok(a),
                Threshold::Value { unit, .. } => Err(bad(format!(
                    "capacity is a rate in tps: no unit (\"{}\")",
                    unit.as_str()
                ))),
                Threshold::Baseline { .. } if baseline_given => Ok(a),
                Threshold::Baseline { .. } => Err(bad(
                    "capacity has no baseline here: give a rate, or a saved search with \
                     pgrush report --baseline"
                        .to_string(),
                )),
            }
        })
        .collect()
}

/// The verdict of a gate on the search's capacity (against `baseline`'s capacity for
/// `capacity OP FACTOR*baseline`).
pub(crate) fn gate_verdict(
    a: &StepAssertion,
    result: &CapacityResult,
    baseline: Option<&CapacityResult>,
) -> Verdict {
    let base_value = baseline.and_then(|b| b.capacity_tps);
    let threshold = match a.threshold {
        Threshold::Value { value, .. } => Some(value),
        Threshold::Baseline { factor } => base_value.map(|b| b * factor),
    };
    let measured = result.capacity_tps;
    let note = if measured.is_none() {
        Some("not measured: no sustainable rate found".to_string())
    } else if threshold.is_none() {
        Some("no baseline value: the baseline search found no sustainable rate".to_string())
    } else {
        None
    };
    Verdict {
        expression: a.source.clone(),
        // A rate has no unit: `capacity >= 100`, `capacity >= 0.9 * baseline`.
        assertion: match a.threshold {
            Threshold::Value { value, .. } => format!("capacity {} {value}", a.op.as_str()),
            Threshold::Baseline { .. } => a.normalized(),
        },
        passed: matches!((measured, threshold), (Some(m), Some(t)) if a.op.holds(m, t)),
        measured,
        threshold,
        baseline: match a.threshold {
            Threshold::Baseline { .. } => base_value,
            Threshold::Value { .. } => None,
        },
        unit: String::new(),
        note,
    }
}

/// The search's configuration; the run options are checked by pgbench's parser first.
fn configure(own: &CapacityArgs) -> Result<CapacityConfig, Failure> {
    let slos = parse_slos(&own.slos)?;
    let argv: Vec<OsString> = std::iter::once("pgrush".to_string())
        .chain(own.run_args.iter().cloned())
        .chain(["--rate=1".to_string(), "--time=1".to_string()])
        .map(OsString::from)
        .collect();
    crate::parse::parse_command_line(&argv)?;
    let exe = std::env::current_exe()
        .map_err(|e| fail(&format!("cannot find the pgrush binary: {e}")))?;
    Ok(CapacityConfig {
        slos,
        run_args: own.run_args.clone(),
        start_rate: own.start_rate,
        precision: own.precision_pct / 100.0,
        step_s: own.step_s,
        max_step_s: own.max_step_s,
        warmup_s: own.warmup_s,
        exe,
    })
}

/// A failure of the search (not of its command line): `<prog>: error: capacity: <msg>`.
fn fail(msg: &str) -> Failure {
    Failure::error(format!("capacity: {msg}"))
}

/// Prints the result, writes `--json` and `--html`, prints the gates' verdicts; the
/// exit status.
fn report(
    result: &CapacityResult,
    own: &CapacityArgs,
    gates: &[StepAssertion],
) -> Result<i32, Failure> {
    let verdicts: Vec<Verdict> = gates
        .iter()
        .map(|g| gate_verdict(g, result, None))
        .collect();
    let mut text = format!("\n{}", capacity::output::render_text(result));
    text.push_str(&gate::verdict_lines(&verdicts));
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        return Err(pgrush_run::output_file::stdout_failure(&e));
    }
    let html = own.html.as_ref().map(|_| capacity::html::render(result));
    for (path, text) in [(&own.json, Some(result.to_json())), (&own.html, html)] {
        if let (Some(path), Some(text)) = (path, text)
            && let Err(e) = pgrush_run::output_file::write_atomically(path, text.as_bytes())
        {
            return Err(fail(&format!("{}: {e}", path.display())));
        }
    }
    Ok(if gate::all_passed(&verdicts) {
        0
    } else {
        gate::ASSERTION_FAILED
    })
}

/// Runs `pgrush capacity ARGS`.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let Some(own) = parse_own(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let gates = parse_gates(&own.asserts, false)?;
    let cfg = configure(&own)?;
    for path in [&own.json, &own.html].into_iter().flatten() {
        if let Err(e) = pgrush_run::output_file::check_writable(path) {
            return Err(fail(&format!("{}: {e}", path.display())));
        }
    }
    let mut console = std::io::stdout();
    let result = capacity::run_capacity(&cfg, &mut console).map_err(|e| fail(&e.to_string()))?;
    let status = report(&result, &own, &gates)?;
    if result.interrupted {
        eprintln!("pgrush capacity: interrupted; {}", best_bound(&result));
        return Ok(1);
    }
    Ok(status)
}

/// The best bound an interrupted search found.
fn best_bound(result: &CapacityResult) -> String {
    let rate = capacity::rate_text;
    match (result.capacity_tps, result.first_failing_tps) {
        (Some(g), Some(b)) => format!(
            "the best bound so far: the capacity lies in [{}, {}) tps",
            rate(g),
            rate(b)
        ),
        (Some(g), None) => format!("the best bound so far: at least {} tps", rate(g)),
        (None, Some(b)) => format!("the best bound so far: below {} tps", rate(b)),
        (None, None) => "no step finished: no bound yet".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn own_options_are_taken_out_and_the_rest_handed_on() {
        let own = parse_own(&os(&[
            "--slo",
            "p99<10ms",
            "-c",
            "4",
            "--slo=failed<1%",
            "--precision",
            "2%",
            "--step",
            "3",
            "--warmup=0",
            "--start-rate",
            "100",
            "--assert",
            "capacity>=50",
            "-n",
            "db",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(own.slos, ["p99<10ms", "failed<1%"]);
        assert_eq!(own.precision_pct, 2.0);
        assert_eq!((own.step_s, own.max_step_s, own.warmup_s), (3, 60, 0));
        assert_eq!(own.start_rate, Some(100.0));
        assert_eq!(own.run_args, ["--client=4", "--no-vacuum", "db"]);
        assert_eq!(own.asserts, ["capacity>=50"]);
    }

    #[test]
    fn options_the_search_sets_are_refused() {
        let status = |list: &[&str]| parse_own(&os(list)).err().map(|f| f.status());
        for bad in [
            &["-R", "10"][..],
            &["-T", "5"],
            &["-t", "5"],
            &["-L", "5"],
            &["-i"],
            &["--precision", "0"],
            &["--step", "0"],
            &["--step", "20", "--max-step", "10"],
            &["a", "b"],
        ] {
            assert_eq!(status(bad), Some(1), "{bad:?}");
        }
    }

    #[test]
    fn gates_name_the_capacity_as_a_plain_rate() {
        let g = parse_gates(&["capacity>=5000".to_string()], false).unwrap();
        assert_eq!(g.len(), 1);
        for bad in ["tps>=1", "capacity>=5ms", "capacity>=baseline", "capacity"] {
            assert!(parse_gates(&[bad.to_string()], false).is_err(), "{bad}");
        }
    }
}
