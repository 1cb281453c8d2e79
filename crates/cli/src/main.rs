//! `pgrush`: a drop-in replacement for PostgreSQL's `pgbench`.
//!
//! The binary picks its personality from the name it was started by
//! (`pg_test_timing` runs the clock-overhead check) and from a leading
//! subcommand word (`timing`, `demo`, `ops`, `report`, `merge`, `sweep`, and `completions` and
//! `man` for packagers; not when started as `pgbench`, where a
//! first word is a database name); anything else is a pgbench command line.

mod completions;
mod demo;
mod help;
mod init_cmd;
mod man;
mod merge_cmd;
mod ops_cmd;
mod parse;
mod prompt;
mod report_cmd;
mod sweep_cmd;
mod sweep_gate;
mod timing_cmd;

use std::ffi::OsString;

use pgrush_run::options::Action;
use pgrush_run::{RunPlan, exit_status};

fn main() {
    let args: Vec<OsString> = std::env::args_os().collect();
    std::process::exit(dispatch(args));
}

/// Chooses the personality and runs it, returning the process exit status.
fn dispatch(args: Vec<OsString>) -> i32 {
    let argv0 = args
        .first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pgrush".to_string());
    let base = std::path::Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| argv0.clone());
    if base == "pg_test_timing" {
        return timing_cmd::run(&argv0, &args[1..], true);
    }
    // Started as `pgbench` (a drop-in symlink), `pgbench demo` names a database.
    let subcommand = if base == "pgbench" {
        None
    } else {
        args.get(1).and_then(|a| a.to_str())
    };
    match subcommand {
        Some("timing") => return timing_cmd::run(&argv0, &args[2..], false),
        Some("demo") => return demo::run(&args[2..]),
        Some("report") => return report_cmd::run(&base, &args[2..]),
        Some("merge") => return merge_cmd::run(&base, &args[2..]),
        Some("ops") => return ops_cmd::run(&base, &args[2..]),
        Some("sweep") => return sweep_cmd::run(&args[2..]),
        Some("completions") => return completions::run(&args[2..]),
        Some("man") => return man::run(&args[2..]),
        _ => {}
    }
    let opts = match parse::parse_command_line(&args) {
        Ok(opts) => opts,
        Err(failure) => {
            let (prog, argv0) = parse::names(&args);
            return exit_status(Err(failure), &prog, &argv0);
        }
    };
    let prog = opts.progname.clone();
    match opts.action.clone() {
        Action::Help => help::print_help(&prog),
        Action::Version => help::print_version(&prog),
        Action::ListBuiltins => help::print_builtin_list(),
        Action::ShowScript(name) => help::print_show_script(&name),
        Action::Init => exit_status(
            init_cmd::run(&opts, &prompt::password).map(|()| 0),
            &prog,
            &argv0,
        ),
        Action::Bench => exit_status(
            pgrush_run::run(&RunPlan::resolve(opts), &prompt::password),
            &prog,
            &argv0,
        ),
    }
}
