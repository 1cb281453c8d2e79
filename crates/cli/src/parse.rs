//! getopt_long-compatible parsing of pgbench's command line into [`Options`].
//!
//! The order of events follows pgbench 18: `--help`/`-?`/`-V`/`--version` are
//! recognised only as the first argument; then `PGBENCH_RANDOM_SEED` is
//! checked; then options are processed left to right (each error stops the
//! parse at once, in option order); then the checks pgbench makes after the
//! option loop (`finish`). The `setting random seed` lines are printed as they
//! come; the complaint that ends the parse is returned as a [`Failure`].

mod apply;
mod diag;
mod finish;
pub(crate) mod getopt;
mod numbers;
mod script_file;
mod shard_options;
pub(crate) mod table;
mod values;

use diag::Diag;
use getopt::Getopt;
use pgrush_run::Failure;
use pgrush_run::options::{Action, Options};
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use table::EarlyAction;
use values::{parse_seed, seeded};

/// The parts of the process environment the parser looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    /// `PGBENCH_RANDOM_SEED`, if set.
    pub random_seed: Option<Vec<u8>>,
    /// True when `POSIXLY_CORRECT` is set (getopt stops at the first non-option).
    pub posixly_correct: bool,
    /// The soft `RLIMIT_NOFILE` limit (`None`: unknown or unlimited).
    pub nofile_limit: Option<u64>,
    /// The launcher variables that say which shard this is (Slurm, MPI, Kubernetes).
    pub launcher: pgrush_run::shard::LauncherEnv,
}

impl Env {
    /// Reads the real environment and resource limits.
    pub fn from_process() -> Env {
        Env {
            random_seed: std::env::var_os("PGBENCH_RANDOM_SEED").map(|v| v.as_bytes().to_vec()),
            posixly_correct: std::env::var_os("POSIXLY_CORRECT").is_some(),
            nofile_limit: nofile_limit(),
            launcher: pgrush_run::shard::LauncherEnv::from_process(),
        }
    }
}

/// The soft limit on open files, as `getrlimit(RLIMIT_NOFILE)` reports it.
fn nofile_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes into the struct we pass.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    if rc != 0 || rl.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(rl.rlim_cur)
}

/// Parses and validates `args` (argv including argv[0]), reading the process's
/// environment; the seed lines go to stderr at once.
pub fn parse_command_line(args: &[OsString]) -> Result<Options, Failure> {
    let env = Env::from_process();
    let stderr = io::stderr();
    let mut lock = stderr.lock();
    parse_failing(args, &env, &mut lock)
}

/// [`parse_command_line`] with an explicit environment and message sink, the complaint
/// written to `err` (the unit tests' view of what a user sees).
#[cfg(test)]
pub fn parse_with(args: &[OsString], env: &Env, err: &mut dyn Write) -> Result<Options, i32> {
    parse_failing(args, env, err).map_err(|failure| {
        let (prog, argv0) = names(args);
        failure.write_to(&prog, &argv0, err);
        failure.status()
    })
}

/// The program's name as pgbench's messages show it (argv[0]'s file name) and as
/// typed (glibc's getopt lines).
#[cfg(test)]
fn names(args: &[OsString]) -> (String, String) {
    let argv0 = args.first().map_or(&b"pgrush"[..], |a| a.as_bytes());
    (
        String::from_utf8_lossy(basename(argv0)).into_owned(),
        String::from_utf8_lossy(argv0).into_owned(),
    )
}

/// The parse with an explicit environment; `info` gets the seed lines.
fn parse_failing(args: &[OsString], env: &Env, info: &mut dyn Write) -> Result<Options, Failure> {
    let raw: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    let progname = basename(raw.first().map_or(&b"pgrush"[..], |a| a));
    let mut diag = Diag::new(progname, info);
    parse_options(&raw, progname, env, &mut diag).map_err(|status| diag.failure(status))
}

/// The parse itself; `Err(status)` once `diag` holds the complaint.
fn parse_options(
    raw: &[Vec<u8>],
    progname: &[u8],
    env: &Env,
    diag: &mut Diag<'_>,
) -> Result<Options, i32> {
    let mut opts = Options {
        progname: String::from_utf8_lossy(progname).into_owned(),
        ..Options::default()
    };
    if let Some(action) = raw.get(1).and_then(|first| table::early_action(first)) {
        opts.action = match action {
            EarlyAction::Help => Action::Help,
            EarlyAction::Version => Action::Version,
        };
        return Ok(opts);
    }
    if let Some(seed) = &env.random_seed {
        match parse_seed(seed, diag) {
            Some(choice) => seeded(&mut opts, choice, diag),
            None => {
                diag.error(
                    b"error while setting random seed from PGBENCH_RANDOM_SEED environment variable",
                );
                return Err(1);
            }
        }
    }
    let rest = raw.get(1..).unwrap_or(&[]);
    let (shorts, longs) = (table::short_options(), table::long_options());
    let mut scan = Getopt::new(rest, &shorts, &longs, env.posixly_correct);
    let mut state = apply::State::new(opts, env.nofile_limit);
    state.launcher = env.launcher.clone();
    while let Some(item) = scan.next_opt() {
        let found = match item {
            Ok(found) => found,
            Err(e) => {
                let mut line = Vec::new();
                // Writing into a Vec cannot fail. The program's name is added when printed.
                let _ = e.write_to(b"", &mut line);
                diag.getopt(line.strip_prefix(b": ").unwrap_or(&line));
                diag.try_help();
                return Err(1);
            }
        };
        found.id.apply_to(&mut state, found.arg, diag)?;
        if matches!(
            state.opts.action,
            Action::ListBuiltins | Action::ShowScript(_)
        ) {
            return Ok(state.opts);
        }
    }
    finish::finish(state, &scan.positional(), diag)
}

/// The file name part of argv[0] (PostgreSQL's `get_progname`).
fn basename(argv0: &[u8]) -> &[u8] {
    match argv0.iter().rposition(|&b| b == b'/') {
        Some(i) => &argv0[i + 1..],
        None => argv0,
    }
}

#[cfg(test)]
mod tests;
