//! `pgrush timing` and the `pg_test_timing` personality.
//!
//! Command line as pg_test_timing 18: `-?`/`--help` and `-V`/`--version` only as
//! the first argument, then getopt_long over `-d`/`--duration` (every message
//! and exit status the same; the program name in messages is the basename of
//! argv[0], `pgrush` for `pgrush timing`). pgrush's additions are long options
//! (`--ns`, `--clock`, `--all-clocks`, `--json`, `--explain-analyze`,
//! `--host`, `--port`, `--username`, `--dbname`; abbreviations of `--duration`
//! keep their meaning) plus `-h`/`-p`/`-U` under `pgrush timing` only, so that
//! every pg_test_timing command line behaves the same under that name.
//!
//! Backwards steps: started as `pg_test_timing` with no pgrush option, the
//! measurement stops at the first reading that is a whole microsecond behind
//! the previous one, prints pg_test_timing's two lines and exits 1, exactly as
//! pg_test_timing 18. Otherwise (`pgrush timing`, or any pgrush option) backwards
//! steps are counted at nanosecond resolution, the measurement goes on, the
//! count and largest step are reported and the exit status is 1.

use crate::parse::getopt::{Getopt, GetoptError, LongOpt, ShortOpt};
use crate::subcommand::{Invocation, Operands, Opt, Subcommand};
use pgrush_run::{Failure, Line};
use pgrush_timing::explain;
use pgrush_timing::{
    CheckResults, ClockKind, ClockReport, ClockSet, MeasureConfig, SystemClock, check, duration,
    measure_system, text,
};
use pgrush_wire::Connection;
use pgrush_wire::conninfo::ConnectRequest;
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;

/// pg_test_timing's default duration, in seconds.
const DEFAULT_DURATION: u32 = 3;

/// `pgrush timing`: its options and `--help`. Under the name `pg_test_timing` the
/// same table is read, with `-d` as the only short option (pg_test_timing 18's `d:`).
pub const COMMAND: Subcommand = Subcommand {
    name: "timing",
    args: "",
    summary: "measure the clock's overhead (as pg_test_timing)",
    about: "\
{prog} timing measures the cost and behaviour of the system clock, as pg_test_timing
does, then shows a nanosecond histogram with percentiles and backwards steps.
Started under the name pg_test_timing, it behaves as pg_test_timing 18.

Usage:
  {prog} timing [-d DURATION] [OPTION]...

",
    options: &[
        Opt::valued(
            Some('d'),
            "duration",
            "SECONDS",
            &["measure for SECONDS seconds per clock (default: 3)"],
        ),
        Opt::valued(
            None,
            "clock",
            "CLOCK",
            &[
                "clock to measure: monotonic (default), monotonic_raw,",
                "monotonic_coarse, realtime, tsc (invariant TSC only)",
            ],
        ),
        Opt::flag(
            None,
            "all-clocks",
            &["measure every available clock and compare them"],
        ),
        Opt::flag(
            None,
            "ns",
            &[
                "nanosecond histogram and percentiles under the name",
                "pg_test_timing (always shown by pgrush timing)",
            ],
        ),
        Opt::flag(None, "json", &["print the results as JSON"]),
        Opt::flag(
            None,
            "explain-analyze",
            &[
                "measure EXPLAIN ANALYZE's timing overhead per row on",
                "a server (temporary table of 100000 rows)",
            ],
        ),
        Opt::HOST,
        Opt::PORT,
        Opt::USERNAME,
        Opt::valued(None, "dbname", "DBNAME", &["database to connect to"]),
        Opt::flag(
            Some('V'),
            "version",
            &["output version information, then exit"],
        ),
        Opt::HELP,
    ],
    notes: "Exit status: 0, or 1 on errors and when the clock went backwards.\n",
    operands: Operands::Files,
    pgbench_options: false,
    run,
};

/// getopt's tables, from [`COMMAND`]'s (`--help` and `--version` are read only as
/// the first argument, as pg_test_timing does): every long option (pgrush's after
/// `--duration` in prefix matching), and `-d` only under the name `pg_test_timing`.
fn getopt_tables(compat_name: bool) -> (Vec<ShortOpt<&'static Opt>>, Vec<LongOpt<&'static Opt>>) {
    let options = COMMAND
        .options
        .iter()
        .filter(|o| !matches!(o.long, "help" | "version"));
    let shorts = options
        .clone()
        .filter(|o| !compat_name || o.long == "duration")
        .filter_map(|o| {
            Some(ShortOpt {
                ch: u8::try_from(o.short?).ok()?,
                has_arg: o.arg,
                id: o,
            })
        })
        .collect();
    let longs = options
        .map(|o| LongOpt {
            name: o.long,
            has_arg: o.arg,
            id: o,
            extension: o.long != "duration",
        })
        .collect();
    (shorts, longs)
}

/// Names used in messages.
#[derive(Debug, Clone)]
struct Names {
    /// argv[0] as typed (getopt's messages).
    argv0: Vec<u8>,
    /// Basename of argv[0].
    progname: String,
    /// What the `Try "... --help"` hint names.
    command: String,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Settings {
    duration: u32,
    clock: Option<ClockKind>,
    all_clocks: bool,
    json: bool,
    explain: bool,
    /// pgrush behaviour (nanosecond detail, backwards steps counted).
    extended: bool,
    host: Option<String>,
    port: Option<String>,
    user: Option<String>,
    dbname: Option<String>,
}

/// What ends parsing without a measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TimingError {
    /// glibc's complaint, then the hint.
    Getopt(GetoptError),
    /// `<prog>: <msg>`, then the hint.
    Usage(String),
    /// `<prog>: <msg>` only (pg_test_timing gives no hint for a duration out of range).
    Bare(String),
}

/// The outcome of parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Parsed {
    Help,
    Version,
    Run(Box<Settings>),
    Fail(TimingError),
}

/// The names under `pg_test_timing`/`pgrush timing`, from argv[0].
fn names_of(argv0: &str, compat_name: bool) -> Names {
    let progname = std::path::Path::new(argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| argv0.to_string());
    Names {
        argv0: argv0.as_bytes().to_vec(),
        command: if compat_name {
            progname.clone()
        } else {
            format!("{progname} timing")
        },
        progname,
    }
}

fn parse_args(args: &[OsString], compat_name: bool) -> Parsed {
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    let posixly_correct = std::env::var_os("POSIXLY_CORRECT").is_some();
    parse(&args, compat_name, posixly_correct)
}

/// The `pg_test_timing` personality: pg_test_timing 18's messages and exit statuses.
pub fn run_compat(argv0: &str, args: &[OsString]) -> i32 {
    let names = names_of(argv0, true);
    match parse_args(args, true) {
        Parsed::Help => write_out(usage(&names, true).as_bytes(), 0),
        Parsed::Version => write_out(crate::about::version_text("pg_test_timing").as_bytes(), 0),
        Parsed::Fail(e) => {
            let prog = &names.progname;
            let text = match e {
                TimingError::Getopt(e) => {
                    format!("{}{}", getopt_message(&e, &names.argv0), try_line(&names))
                }
                TimingError::Usage(msg) => format!("{prog}: {msg}\n{}", try_line(&names)),
                TimingError::Bare(msg) => format!("{prog}: {msg}\n"),
            };
            let _ = io::stderr().write_all(text.as_bytes());
            1
        }
        Parsed::Run(settings) => execute(&settings, &names),
    }
}

/// `pgrush timing`: the same check, with pgrush's usage errors.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let names = names_of(&inv.argv0, false);
    match parse_args(args, false) {
        Parsed::Help => COMMAND.print_help(&inv.prog),
        Parsed::Version => {
            crate::subcommand::write_stdout(crate::about::version_text("pg_test_timing").as_bytes())
        }
        Parsed::Fail(TimingError::Getopt(e)) => Err(Failure::exit(1)
            .then(Line::Getopt(e.message()))
            .then(Line::TryHelp(Some(COMMAND.name.to_string())))),
        Parsed::Fail(TimingError::Usage(msg) | TimingError::Bare(msg)) => Err(COMMAND.usage(msg)),
        Parsed::Run(settings) => Ok(execute(&settings, &names)),
    }
}

fn write_out(bytes: &[u8], code: i32) -> i32 {
    let mut out = io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
    code
}

/// `--help` text.
fn usage(names: &Names, compat_name: bool) -> String {
    if compat_name {
        return format!("Usage: {} [-d DURATION]\n", names.progname);
    }
    COMMAND.help_text(&names.progname)
}

fn try_line(names: &Names) -> String {
    format!("Try \"{} --help\" for more information.\n", names.command)
}

fn text_arg(arg: Option<&[u8]>) -> String {
    String::from_utf8_lossy(arg.unwrap_or_default()).into_owned()
}

/// Parses the arguments after argv[0] (after `timing` for `pgrush timing`).
fn parse(args: &[Vec<u8>], compat_name: bool, posixly_correct: bool) -> Parsed {
    match args.first().map(Vec::as_slice) {
        Some(b"--help" | b"-?") => return Parsed::Help,
        Some(b"--version" | b"-V") => return Parsed::Version,
        _ => {}
    }
    let (shorts, longs) = getopt_tables(compat_name);
    let mut s = Settings {
        duration: DEFAULT_DURATION,
        clock: None,
        all_clocks: false,
        json: false,
        explain: false,
        extended: !compat_name,
        host: None,
        port: None,
        user: None,
        dbname: None,
    };
    let usage = |msg: String| Parsed::Fail(TimingError::Usage(msg));
    let mut scan = Getopt::new(args, &shorts, &longs, posixly_correct);
    while let Some(found) = scan.next_opt() {
        let found = match found {
            Ok(f) => f,
            Err(e) => return Parsed::Fail(TimingError::Getopt(e)),
        };
        if let Err(e) = apply(&mut s, found.id.long, found.arg) {
            return Parsed::Fail(e);
        }
    }
    if let Some(first) = scan.positional().first() {
        return usage(format!(
            "too many command-line arguments (first is \"{}\")",
            String::from_utf8_lossy(first)
        ));
    }
    if s.all_clocks && s.clock.is_some() {
        return usage("--clock and --all-clocks cannot be used together".to_string());
    }
    Parsed::Run(Box::new(s))
}

/// Applies the option `long` with its value `arg`.
fn apply(s: &mut Settings, long: &str, arg: Option<&[u8]>) -> Result<(), TimingError> {
    match long {
        "duration" => match duration::parse_duration(arg.unwrap_or_default()) {
            Ok(d) => s.duration = d,
            Err(duration::DurationError::Invalid) => {
                return Err(TimingError::Usage(
                    "invalid argument for option --duration".to_string(),
                ));
            }
            Err(duration::DurationError::OutOfRange) => {
                return Err(TimingError::Bare(
                    "--duration must be in range 1..4294967295".to_string(),
                ));
            }
        },
        "clock" => match ClockKind::parse(&text_arg(arg)) {
            Some(k) => {
                s.clock = Some(k);
                s.extended = true;
            }
            None => {
                let all: Vec<&str> = ClockKind::ALL.iter().map(|k| k.name()).collect();
                return Err(TimingError::Usage(format!(
                    "--clock must be one of {}",
                    all.join(", ")
                )));
            }
        },
        "ns" => s.extended = true,
        "all-clocks" => {
            s.all_clocks = true;
            s.extended = true;
        }
        "json" => {
            s.json = true;
            s.extended = true;
        }
        "explain-analyze" => {
            s.explain = true;
            s.extended = true;
        }
        "host" => s.host = Some(text_arg(arg)),
        "port" => s.port = Some(text_arg(arg)),
        "username" => s.user = Some(text_arg(arg)),
        _ => s.dbname = Some(text_arg(arg)),
    }
    Ok(())
}

fn getopt_message(e: &GetoptError, argv0: &[u8]) -> String {
    let mut buf = Vec::new();
    let _ = e.write_to(argv0, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Runs the measurement(s) and prints the results; returns the exit status.
fn execute(s: &Settings, names: &Names) -> i32 {
    let prog = &names.progname;
    let mut conn = match s.explain.then(|| connect(s, prog)).transpose() {
        Ok(c) => c,
        Err(msg) => {
            let _ = io::stderr().write_all(msg.as_bytes());
            return 1;
        }
    };
    let cfg = MeasureConfig::for_seconds(s.duration, s.extended);
    let mut out = io::stdout().lock();
    let mut results = CheckResults {
        duration_s: s.duration,
        reports: Vec::new(),
        unavailable: Vec::new(),
        explain: None,
    };
    if s.all_clocks {
        let clocks = ClockSet::open_all();
        results.reports = measure_all(s, &clocks, &cfg, &mut out);
        results.unavailable = clocks.unavailable;
    } else {
        match measure_one(s, &cfg, prog, &mut out) {
            Ok(r) => results.reports.push(r),
            Err(code) => return code,
        }
    }
    let _ = out.flush();
    results.explain = match conn.as_mut().map(explain::run).transpose() {
        Ok(r) => r,
        Err(e) => {
            let mut msg = format!("{prog}: error: {e}\n");
            if let explain::ExplainError::Query { sql, .. } = &e {
                msg.push_str(&format!("{prog}: detail: Query was: {sql}\n"));
            }
            let _ = io::stderr().write_all(msg.as_bytes());
            return 1;
        }
    };
    if let Some(c) = conn {
        let _ = c.close();
    }
    finish(s, &results, &mut out)
}

/// `--all-clocks`: prints the heading, measures every clock that opened and
/// prints the side-by-side table with the unavailable ones.
fn measure_all(
    s: &Settings,
    clocks: &ClockSet,
    cfg: &MeasureConfig,
    out: &mut dyn Write,
) -> Vec<ClockReport> {
    if !s.json {
        let heading = text::all_clocks_heading(clocks.available_count(), s.duration);
        let _ = out.write_all(heading.as_bytes());
        let _ = out.flush();
    }
    let reports = clocks.measure(cfg);
    if !s.json {
        let mut t = text::all_clocks_table(&reports);
        for u in &clocks.unavailable {
            t.push_str(&format!("{}: not available ({})\n", u.clock, u.reason));
        }
        let _ = out.write_all(t.as_bytes());
    }
    reports
}

/// One clock: pg_test_timing's output, then (pgrush behaviour) the nanosecond
/// section. `Err` carries the exit status (clock unavailable, or pg_test_timing's
/// stop at a backwards step).
fn measure_one(
    s: &Settings,
    cfg: &MeasureConfig,
    prog: &str,
    out: &mut dyn Write,
) -> Result<ClockReport, i32> {
    let kind = s.clock.unwrap_or(ClockKind::Monotonic);
    let clock = SystemClock::open(kind).map_err(|e| {
        let _ = writeln!(
            io::stderr(),
            "{prog}: clock \"{kind}\" is not available: {e}"
        );
        1
    })?;
    if !s.json {
        let _ = out.write_all(text::testing_line(s.duration).as_bytes());
        let _ = out.flush();
    }
    let r = measure_system(kind, clock, cfg);
    if let Some(warp) = r.measurement.warp_us {
        let _ = out.flush();
        let _ = io::stderr().write_all(text::warp_lines(warp).as_bytes());
        return Err(1);
    }
    if !s.json {
        let mut t = text::per_loop_line(&r.measurement);
        t.push_str(&text::us_histogram(&r.measurement));
        if s.extended {
            t.push_str(&text::ns_section(&r));
        }
        let _ = out.write_all(t.as_bytes());
    }
    Ok(r)
}

/// Prints the explain section or the JSON document, the backwards warnings,
/// and picks the exit status.
fn finish(s: &Settings, results: &CheckResults, out: &mut dyn Write) -> i32 {
    if s.json {
        let _ = out.write_all(results.json().to_json_string().as_bytes());
    } else if let Some(e) = &results.explain {
        let _ = out.write_all(explain::text(e, results.clock_cost_ns()).as_bytes());
    }
    let _ = out.flush();
    for r in results.went_backwards() {
        let _ = io::stderr().write_all(text::backwards_warning(r.clock, &r.measurement).as_bytes());
    }
    i32::from(results.backwards_detected())
}

/// Connects for `--explain-analyze` with the usual options and environment.
fn connect(s: &Settings, prog: &str) -> Result<Connection, String> {
    let request = ConnectRequest {
        dbname: s.dbname.clone(),
        host: s.host.clone(),
        port: s.port.clone(),
        user: s.user.clone(),
        password: None,
        fallback_application_name: Some(prog.to_string()),
        extra: Vec::new(),
    };
    check::connect(&request).map_err(|e| format!("{prog}: error: {e}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(compat: bool) -> Names {
        let progname = if compat { "pg_test_timing" } else { "pgrush" };
        Names {
            argv0: format!("/x/{progname}").into_bytes(),
            progname: progname.into(),
            command: if compat {
                progname.into()
            } else {
                "pgrush timing".into()
            },
        }
    }

    fn p(args: &[&str], compat: bool) -> Parsed {
        let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        parse(&args, compat, false)
    }

    fn settings(args: &[&str], compat: bool) -> Settings {
        match p(args, compat) {
            Parsed::Run(s) => *s,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn compat_defaults_and_abbreviations() {
        let s = settings(&[], true);
        assert_eq!((s.duration, s.extended), (3, false));
        assert_eq!(settings(&["--dur", "7"], true).duration, 7);
        assert_eq!(settings(&["--d=2"], true).duration, 2);
        assert_eq!(settings(&["-d5"], true).duration, 5);
        assert!(settings(&["--ns"], true).extended);
        assert!(settings(&[], false).extended);
    }

    #[test]
    fn help_and_version_only_first() {
        assert_eq!(p(&["-?", "x"], true), Parsed::Help);
        assert_eq!(p(&["--version"], false), Parsed::Version);
        assert_eq!(
            p(&["-d", "1", "-V"], true),
            Parsed::Fail(TimingError::Getopt(GetoptError::InvalidShort(b'V')))
        );
    }

    #[test]
    fn errors() {
        assert_eq!(
            p(&["-d", "0"], false),
            Parsed::Fail(TimingError::Bare(
                "--duration must be in range 1..4294967295".into()
            ))
        );
        assert_eq!(
            p(&["x", "-d", "1"], true),
            Parsed::Fail(TimingError::Usage(
                "too many command-line arguments (first is \"x\")".into()
            ))
        );
        assert_eq!(
            p(&["-h", "x"], true),
            Parsed::Fail(TimingError::Getopt(GetoptError::InvalidShort(b'h')))
        );
        assert_eq!(settings(&["-h", "x"], false).host.as_deref(), Some("x"));
        let Parsed::Fail(TimingError::Usage(msg)) = p(&["--clock=tai"], false) else {
            panic!()
        };
        assert!(msg.starts_with("--clock must be one of monotonic, monotonic_raw"));
        let Parsed::Fail(TimingError::Usage(msg)) = p(&["--clock=tsc", "--all-clocks"], false)
        else {
            panic!()
        };
        assert_eq!(msg, "--clock and --all-clocks cannot be used together");
    }

    fn report(backwards: u64) -> ClockReport {
        let mut us_histogram = [0; pgrush_timing::measure::US_BUCKETS];
        us_histogram[0] = 10;
        ClockReport {
            clock: ClockKind::Realtime,
            resolution_ns: Some(1.0),
            measurement: pgrush_timing::Measurement {
                loops: 10 + backwards,
                elapsed_ns: 1000,
                us_histogram,
                detail: None,
                backwards: pgrush_timing::measure::Backwards {
                    count: backwards,
                    largest_ns: if backwards > 0 { 1500 } else { 0 },
                },
                warp_us: None,
            },
        }
    }

    #[test]
    fn backwards_steps_make_the_exit_status_1() {
        let json = Settings {
            json: true,
            ..settings(&[], false)
        };
        let results = |reports: Vec<ClockReport>| CheckResults {
            duration_s: 3,
            reports,
            unavailable: Vec::new(),
            explain: None,
        };
        let mut out = Vec::new();
        assert_eq!(finish(&json, &results(vec![report(0)]), &mut out), 0);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"backwards_detected\": false"));
        let mut out = Vec::new();
        assert_eq!(
            finish(&json, &results(vec![report(0), report(3)]), &mut out),
            1
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"backwards_detected\": true"));
        assert!(text.contains("\"largest_step_ns\": 1500"));
        let plain = settings(&[], false);
        let mut out = Vec::new();
        assert_eq!(finish(&plain, &results(vec![report(2)]), &mut out), 1);
        assert!(out.is_empty());
    }

    #[test]
    fn usage_texts() {
        assert_eq!(
            usage(&names(true), true),
            "Usage: pg_test_timing [-d DURATION]\n"
        );
        assert!(usage(&names(false), false).contains("Usage:\n  pgrush timing [-d DURATION]"));
    }
}
