//! `pgrush sweep`: the command line of a configuration sweep (`pgrush_lab::sweep`).
//!
//! The sweep's own options (`--vary`, `--repeat`, `--warmup`, `--out`, `--seed`,
//! `--json`, `--markdown`, `--csv`) are taken out first; every other argument is a
//! pgbench option, read with pgrush's own option table (`parse::table`) and sorted by
//! its mode: initialization options go to each `pgrush -i`, benchmarking options to
//! each run, connection options to both. Both command lines are checked by the
//! ordinary parser before anything starts, so a bad option gets pgbench's message.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use pgrush_lab::sweep::{
    self, Axis, AxisKind, InitOption, PlanKey, SweepConfig, SweepSummary, TPCC_WORKLOAD_ARG,
    Target, output::TableFormat,
};

use pgrush_run::Failure;

use crate::parse::table::Mode;
use crate::subcommand::{HandedOn, Invocation, Operands, Opt, Subcommand};

/// `pgrush sweep`: its options and `--help` (every other option is pgbench's).
pub const COMMAND: Subcommand = Subcommand {
    name: "sweep",
    args: " --vary ...",
    summary: "compare configurations over repeats, with intervals",
    about: "\
pgrush sweep compares configurations: every combination of the varied values
(a cell) runs several times, in a shuffled order, and the report gives each
cell's median with a 95% bootstrap confidence interval.

Usage:
  pgrush sweep --vary AXIS=V1,V2[,...] [--vary ...] [OPTION]...
               [PGBENCH OPTION]... [DBNAME]

Axes:
  fillfactor, unlogged (on/off), scale, partitions, partition-method,
  foreign-keys (on/off), warehouses (--workload tpcc's -s)
                             initialization options (the tables are
                             initialized again when one changes)
  clients, jobs, protocol, rate, script (a builtin's name or a file)
                             run options
  set:NAME                   a server setting: ALTER SYSTEM and a reload (or
                             a restart of pgrush's own throwaway cluster),
                             restored at the end, also after Ctrl-C

",
    options: &[
        Opt::valued(
            None,
            "vary",
            "AXIS=V1,V2",
            &["vary AXIS over the values (repeatable)"],
        ),
        Opt::valued(
            None,
            "repeat",
            "N",
            &[
                "runs per cell (default 3; 1 leaves differences",
                "untested)",
            ],
        ),
        Opt::valued(
            None,
            "warmup",
            "SECONDS",
            &["discarded warm-up before each run (default 5;", "0: none)"],
        ),
        Opt::valued(
            None,
            "out",
            "DIR",
            &[
                "where the runs and sweep.json go, a new or empty",
                "directory (default pgrush-sweep-DATE-TIME); the",
                "same command with the same --out resumes,",
                "skipping finished runs",
            ],
        ),
        Opt::valued(
            None,
            "seed",
            "N",
            &[
                "seed of the run order and the bootstrap (default:",
                "random, printed)",
            ],
        ),
        Opt::valued(
            None,
            "json",
            "FILE",
            &["write the results as JSON (schema pgrush-sweep.v1)"],
        ),
        Opt::valued(
            None,
            "html",
            "FILE",
            &["write the results as an HTML page with charts"],
        ),
        Opt::flag(None, "markdown", &["print the table as Markdown"]),
        Opt::flag(None, "csv", &["print the table as CSV"]),
        Opt::HELP,
    ],
    notes: "\
Every other option is pgbench's, passed to each initialization (-s, -F, ...)
or run (-c, -T, -M, ...); runs default to -T 60 and always report per-statement
latencies (-r). Without -h/-p/-d/DBNAME and PGHOST/PGPORT/PGDATABASE the sweep
runs on a throwaway cluster, as pgrush demo; otherwise it replaces the pgbench
tables of the database named. \"pgrush report DIR\" prints a saved sweep again.
",
    operands: Operands::Files,
    pgbench_options: true,
    run,
};

/// The sweep's own options.
#[derive(Debug, Clone, PartialEq, Default)]
struct SweepArgs {
    axes: Vec<Axis>,
    repeat: u32,
    warmup: u32,
    out: Option<PathBuf>,
    seed: Option<u64>,
    json: Option<PathBuf>,
    html: Option<PathBuf>,
    format: Option<TableFormat>,
    /// The pgbench options, each as `--long=value`.
    pgbench: Vec<HandedOn>,
    /// The other arguments (a database name).
    operands: Vec<String>,
}

/// The pgbench options sorted by where they go.
#[derive(Debug, Clone, PartialEq, Default)]
struct Passed {
    init: Vec<String>,
    run: Vec<String>,
    conn: Vec<String>,
    /// The long names seen (to find conflicts with axes).
    names: Vec<&'static str>,
}

/// Reads the command line with the sweep's table; `Ok(None)` asks for `--help`.
fn parse_own(args: &[OsString]) -> Result<Option<SweepArgs>, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return Ok(None);
    };
    let mut out = SweepArgs {
        repeat: 3,
        warmup: 5,
        pgbench: scan.pgbench_args().collect(),
        ..SweepArgs::default()
    };
    for (found, value) in &scan.options {
        let value = value.clone().unwrap_or_default();
        let number = |what: &str, min: u32| {
            value
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= min)
                .ok_or_else(|| COMMAND.usage(format!("invalid {what} \"{value}\"")))
        };
        match found.long() {
            "vary" => out
                .axes
                .push(Axis::parse(&value).map_err(|e| COMMAND.usage(e.to_string()))?),
            "repeat" => out.repeat = number("repeat count (at least 1)", 1)?,
            "warmup" => out.warmup = number("warm-up duration", 0)?,
            "out" => out.out = Some(PathBuf::from(&value)),
            "seed" => {
                out.seed = Some(
                    value
                        .parse()
                        .map_err(|_| COMMAND.usage(format!("invalid seed \"{value}\"")))?,
                )
            }
            "json" => out.json = Some(PathBuf::from(&value)),
            "html" => out.html = Some(PathBuf::from(&value)),
            "markdown" => out.format = Some(TableFormat::Markdown),
            "csv" => out.format = Some(TableFormat::Csv),
            _ => {}
        }
    }
    out.operands = scan.operands;
    sweep::check_distinct(&out.axes).map_err(|e| COMMAND.usage(e.to_string()))?;
    Ok(Some(out))
}

/// Sorts the pgbench options by mode, in `--long=value` form.
fn sort_options(pgbench: &[HandedOn], operands: &[String]) -> Result<Passed, String> {
    let mut passed = Passed::default();
    for def in pgbench {
        let text = def.text.clone();
        passed.names.push(def.long);
        match (def.long, def.mode) {
            ("initialize" | "show-script", _) => {
                return Err(format!(
                    "--{} cannot be used: the sweep initializes the tables itself",
                    def.long
                ));
            }
            ("dbname" | "host" | "port" | "username", _) => passed.conn.push(text),
            ("scale", _) | (_, Mode::Initialization) => passed.init.push(text),
            ("no-vacuum" | "debug" | "workload", _) => {
                passed.init.push(text.clone());
                passed.run.push(text);
            }
            _ => passed.run.push(text),
        }
    }
    // The TPC-C-like load draws its rows from --random-seed: each cell loads the same.
    if passed.init.iter().any(|a| a == TPCC_WORKLOAD_ARG) {
        let seeds = passed
            .run
            .iter()
            .filter(|a| a.starts_with("--random-seed="));
        passed.init.extend(seeds.cloned().collect::<Vec<_>>());
    }
    match operands {
        [] => {}
        [db] => passed.conn.push(db.clone()),
        [_, extra, ..] => {
            return Err(format!(
                "too many command-line arguments (first is \"{extra}\")"
            ));
        }
    }
    Ok(passed)
}

/// An axis that sets an option also given on the command line.
fn conflict(axes: &[Axis], passed: &Passed) -> Option<String> {
    axes.iter().find_map(|axis| {
        let name = axis
            .option_names()
            .iter()
            .find(|n| passed.names.contains(n))?;
        Some(format!(
            "--vary {} conflicts with --{name}: give one or the other",
            axis.name()
        ))
    })
}

/// Checks the initialization and run command lines (with each axis' first value) with
/// pgbench's parser.
fn check_with_parser(
    axes: &[Axis],
    passed: &Passed,
) -> Result<pgrush_wire::conninfo::ConnectRequest, Failure> {
    let first = |init: bool| -> Vec<String> {
        axes.iter()
            .filter(|a| a.is_init() == init)
            .flat_map(|a| a.args(&a.values[0]))
            .collect()
    };
    let argv = |parts: &[&[String]]| -> Vec<OsString> {
        std::iter::once(OsString::from("pgrush"))
            .chain(parts.iter().flat_map(|p| p.iter().map(OsString::from)))
            .collect()
    };
    let init_flag = vec!["--initialize".to_string()];
    crate::parse::parse_command_line(&argv(&[
        &init_flag,
        &passed.init,
        &first(true),
        &passed.conn,
    ]))?;
    let opts =
        crate::parse::parse_command_line(&argv(&[&passed.run, &first(false), &passed.conn]))?;
    Ok(opts.connect_request())
}

/// Whether the environment names a server.
fn env_names_server() -> bool {
    pgrush_wire::conninfo::names_server(&|v| std::env::var(v).ok())
}

/// `pgrush-sweep-YYYYMMDD-HHMMSS` (UTC, now).
fn default_out_dir() -> PathBuf {
    let now = pgrush_stats::wall_clock::unix_time_us();
    PathBuf::from(format!(
        "pgrush-sweep-{}",
        pgrush_report::utc_time::file_stamp_utc(now)
    ))
}

/// A failure of the sweep (not of its command line): `<prog>: error: sweep: <msg>`.
fn fail(msg: &str) -> Failure {
    Failure::error(format!("sweep: {msg}"))
}

/// The sweep's configuration from the command line.
fn configure(own: &SweepArgs) -> Result<SweepConfig, Failure> {
    if own.axes.is_empty() {
        return Err(COMMAND.usage("nothing to compare: give at least one --vary AXIS=V1,V2"));
    }
    let mut passed = sort_options(&own.pgbench, &own.operands).map_err(|m| COMMAND.usage(m))?;
    if let Some(msg) = conflict(&own.axes, &passed) {
        return Err(COMMAND.usage(msg));
    }
    let warehouses = AxisKind::Init(InitOption::Warehouses);
    if own.axes.iter().any(|a| a.kind == warehouses)
        && !passed.init.iter().any(|a| a == TPCC_WORKLOAD_ARG)
    {
        return Err(COMMAND
            .usage("--vary warehouses needs --workload tpcc (vary scale for pgbench's tables)"));
    }
    if !passed
        .names
        .iter()
        .any(|n| *n == "time" || *n == "transactions")
    {
        passed.run.push("--time=60".into());
    }
    let request = check_with_parser(&own.axes, &passed)?;
    let target = if passed.conn.is_empty() && !env_names_server() {
        Target::Throwaway
    } else {
        Target::Given {
            request,
            child_args: passed.conn.clone(),
        }
    };
    let exe = std::env::current_exe()
        .map_err(|e| fail(&format!("cannot find the pgrush binary: {e}")))?;
    Ok(SweepConfig {
        key: PlanKey {
            axes: own.axes.clone(),
            repeats: own.repeat,
            warmup_s: own.warmup,
            init_args: passed.init,
            run_args: passed.run,
            target: target.describe(),
        },
        seed: own.seed,
        out_dir: own.out.clone().unwrap_or_else(default_out_dir),
        exe,
        target,
    })
}

/// Prints the table and the comparisons; writes `--json` and `--html`.
fn report(summary: &SweepSummary, own: &SweepArgs) -> Result<i32, Failure> {
    let format = own.format.unwrap_or(TableFormat::Text);
    let mut text = sweep::output::render_table(summary, format);
    if format != TableFormat::Csv {
        text.push('\n');
        let sentences = sweep::output::comparisons_text(summary);
        for line in sentences.lines() {
            if format == TableFormat::Markdown {
                text.push_str("- ");
            }
            text.push_str(line);
            text.push('\n');
        }
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        return Err(pgrush_run::output_file::stdout_failure(&e));
    }
    let files = [
        (&own.json, summary.to_json()),
        (
            &own.html,
            own.html
                .as_ref()
                .map(|_| sweep::html::render(summary))
                .unwrap_or_default(),
        ),
    ];
    for (path, text) in files {
        if let Some(path) = path
            && let Err(e) = pgrush_run::output_file::write_atomically(path, text.as_bytes())
        {
            return Err(fail(&format!("{}: {e}", path.display())));
        }
    }
    Ok(0)
}

/// True when `arg` names a directory holding a sweep (`pgrush report DIR`).
pub fn is_saved_sweep(arg: Option<&OsString>) -> bool {
    arg.is_some_and(|dir| sweep::is_saved_sweep(std::path::Path::new(dir)))
}

/// `pgrush report DIR [--markdown|--csv] [--json FILE] [--html FILE]`: the results of
/// the runs a sweep saved in DIR (finished or not).
pub fn report_saved(args: &[OsString]) -> Result<i32, Failure> {
    let own = match parse_own(args) {
        Ok(Some(own))
            if own.operands.len() == 1 && own.axes.is_empty() && own.pgbench.is_empty() =>
        {
            own
        }
        Ok(_) | Err(_) => {
            return Err(fail(
                "report: give one sweep directory and output options only",
            ));
        }
    };
    match sweep::load_summary(std::path::Path::new(&own.operands[0])) {
        Ok(summary) => report(&summary, &own),
        Err(e) => Err(fail(&format!("report: {e}"))),
    }
}

/// Runs `pgrush sweep ARGS`.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let Some(own) = parse_own(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let cfg = configure(&own)?;
    for path in [&own.json, &own.html].into_iter().flatten() {
        if let Err(e) = pgrush_run::output_file::check_writable(path) {
            return Err(fail(&format!("{}: {e}", path.display())));
        }
    }
    let mut console = std::io::stdout();
    let (summary, outcome) =
        sweep::run_sweep(&cfg, &mut console).map_err(|e| fail(&e.to_string()))?;
    println!();
    let status = report(&summary, &own)?;
    if outcome.interrupted {
        eprintln!(
            "pgrush sweep: interrupted; the finished runs are kept in {}: run the same \
             command with --out {} to resume",
            cfg.out_dir.display(),
            cfg.out_dir.display()
        );
        return Ok(1);
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn own_options_are_taken_out() {
        let own = parse_own(&os(&[
            "--vary",
            "fillfactor=100,80",
            "--vary=clients=1,2",
            "-c",
            "4",
            "--repeat=2",
            "--warmup",
            "0",
            "--seed",
            "9",
            "--out",
            "d",
            "--csv",
            "-T1",
            "bench",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(own.axes.len(), 2);
        assert_eq!((own.repeat, own.warmup, own.seed), (2, 0, Some(9)));
        assert_eq!(own.out, Some(PathBuf::from("d")));
        assert_eq!(own.format, Some(TableFormat::Csv));
        let passed: Vec<&str> = own.pgbench.iter().map(|h| h.text.as_str()).collect();
        assert_eq!(passed, ["--client=4", "--time=1"]);
        assert_eq!(own.operands, ["bench"]);
        assert!(parse_own(&os(&["--bogus"])).is_err());
        assert!(parse_own(&os(&["--repeat", "0"])).is_err());
        assert!(parse_own(&os(&["--vary"])).is_err());
        assert!(parse_own(&os(&["--vary", "clients=1", "--vary", "clients=2"])).is_err());
    }

    #[test]
    fn pgbench_options_go_where_their_mode_says() {
        let own = |list: &[&str]| parse_own(&os(list)).unwrap().unwrap();
        let sorted = |list: &[&str]| {
            let own = own(list);
            sort_options(&own.pgbench, &own.operands)
        };
        let p = sorted(&[
            "-s", "2", "-F90", "-c", "4", "-T", "1", "-h", "/tmp", "-n", "-M", "prepared", "db",
        ])
        .unwrap();
        assert_eq!(p.init, ["--scale=2", "--fillfactor=90", "--no-vacuum"]);
        assert_eq!(
            p.run,
            [
                "--client=4",
                "--time=1",
                "--no-vacuum",
                "--protocol=prepared"
            ]
        );
        assert_eq!(p.conn, ["--host=/tmp", "db"]);
        let axes = [Axis::parse("clients=1,2").unwrap()];
        assert!(conflict(&axes, &p).unwrap().contains("--client"));
        assert!(sorted(&["-i"]).is_err());
        assert!(sorted(&["a", "b"]).is_err());
        // The TPC-C-like workload is loaded and run, from the same seed.
        let p = sorted(&["--workload", "tpcc", "--random-seed", "5", "-c", "2"]).unwrap();
        assert_eq!(p.init, ["--workload=tpcc", "--random-seed=5"]);
        assert_eq!(p.run, ["--workload=tpcc", "--random-seed=5", "--client=2"]);
        let p = sorted(&["--random-seed", "5"]).unwrap();
        assert!(p.init.is_empty());
    }

    #[test]
    fn warehouses_need_the_tpcc_workload() {
        let own = |list: &[&str]| parse_own(&os(list)).unwrap().unwrap();
        let failure = configure(&own(&["--vary", "warehouses=1,2", "-t", "1"])).unwrap_err();
        let mut text = Vec::new();
        failure.write_to("pgrush", "pgrush", &mut text);
        let text = String::from_utf8_lossy(&text);
        assert!(
            text.contains(
                "--vary warehouses needs --workload tpcc (vary scale for pgbench's tables)"
            ),
            "{text}"
        );
        let failure = configure(&own(&["--vary", "warehouses=1,2", "-s", "3"])).unwrap_err();
        assert_eq!(failure.status(), 1);
        let cfg = configure(&own(&[
            "--vary",
            "warehouses=1,2",
            "--workload",
            "tpcc",
            "-t",
            "1",
        ]))
        .unwrap();
        assert!(cfg.key.tpcc());
    }
}
