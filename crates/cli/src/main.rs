//! `pgrush`: a drop-in replacement for PostgreSQL's `pgbench`.
//!
//! The binary picks its personality from the name it was started by
//! (`pg_test_timing` runs the clock-overhead check) and from a leading
//! subcommand word (one of [`subcommands::ALL`]; not when started as `pgbench`,
//! where a first word is a database name); anything else is a pgbench command line.
//! A subcommand's unsuccessful end is a `Failure` value, printed here, once.

mod about;
mod capacity_cmd;
mod check_cmd;
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
mod saved_run;
mod subcommand;
mod subcommands;
mod sweep_cmd;
mod sweep_gate;
mod timing_cmd;

use std::ffi::OsString;

use pgrush_run::options::Action;
use pgrush_run::{RunPlan, exit_status};
use subcommand::Invocation;

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
    let invocation = Invocation {
        argv0,
        prog: base,
        subcommands: subcommands::ALL,
    };
    if invocation.prog == "pg_test_timing" {
        return timing_cmd::run_compat(&invocation.argv0, &args[1..]);
    }
    let subcommand = args
        .get(1)
        .and_then(|a| a.to_str())
        .filter(|_| subcommands::available(&invocation.prog))
        .and_then(subcommands::find);
    if let Some(sub) = subcommand {
        let result = (sub.run)(&invocation, &args[2..]);
        return exit_status(result, &invocation.prog, &invocation.argv0);
    }
    let opts = match parse::parse_command_line(&args) {
        Ok(opts) => opts,
        Err(failure) => return exit_status(Err(failure), &invocation.prog, &invocation.argv0),
    };
    let prog = opts.progname.clone();
    match opts.action.clone() {
        Action::Help => help::print_help(&prog, &subcommands::help_section_for(&prog)),
        Action::Version => help::print_version(&prog),
        Action::ListBuiltins => help::print_builtin_list(),
        Action::ShowScript(name) => help::print_show_script(&name),
        Action::Init => exit_status(
            init_cmd::run(&opts, &prompt::password).map(|()| 0),
            &prog,
            &invocation.argv0,
        ),
        Action::Bench => {
            let check = opts.check;
            let (mut result, new_orders) = pgrush_run::run_counting_new_orders(
                &RunPlan::resolve(opts.clone()),
                &prompt::password,
            );
            if check && matches!(result, Ok(0)) {
                result = check_cmd::check_and_print(&opts, &prompt::password, new_orders.as_ref());
            }
            exit_status(result, &prog, &invocation.argv0)
        }
    }
}
