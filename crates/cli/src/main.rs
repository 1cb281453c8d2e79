//! `pgrush`: a drop-in replacement for PostgreSQL's `pgbench`.
//!
//! The binary picks its personality from the name it was started by
//! (`pg_test_timing` runs the clock-overhead check) and from a leading
//! subcommand word (one of [`subcommands::ALL`]; not when started as `pgbench`,
//! where a first word is a database name); anything else is a pgbench command line.
//! A subcommand's unsuccessful end is a `Failure` value, printed here, once.

mod about;
mod bench;
mod completions;
mod connect;
mod demo;
mod help;
mod init_cmd;
mod man;
mod merge_cmd;
mod ops_cmd;
mod options;
mod output_file;
mod parse;
mod prompt;
mod report_cmd;
mod server_stats;
mod shard;
mod subcommand;
mod subcommands;
mod sweep_cmd;
mod timing_cmd;

use std::ffi::OsString;

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
        return match (sub.run)(&invocation, &args[2..]) {
            Ok(status) => status,
            Err(failure) => {
                failure.print(&invocation.prog, &invocation.argv0);
                failure.status()
            }
        };
    }
    let opts = match parse::parse_args(&args) {
        Ok(opts) => opts,
        Err(code) => return code,
    };
    match &opts.action {
        options::Action::Help => help::print_help(
            &opts.progname,
            &subcommands::help_section_for(&opts.progname),
        ),
        options::Action::Version => help::print_version(&opts.progname),
        options::Action::ListBuiltins => help::print_builtin_list(),
        options::Action::ShowScript(name) => help::print_show_script(name),
        options::Action::Init => init_cmd::run(&opts),
        options::Action::Bench => bench::run(&opts),
    }
}
