//! `pgrush completions bash|zsh|fish`: a shell completion script generated
//! from the option table that `--help` is generated from.
//!
//! [`spec::CommandSpec`] gathers what the command line accepts (the pgbench
//! options with a [`spec::ValueHint`] each, the subcommands and their options,
//! the builtin script names); one module per shell writes it in that shell's
//! language. Options whose value is a file complete file names, `-b` and
//! `--show-script` complete the builtin script names, options with a few
//! words as value (`-M`, `--partition-method`) complete those words, and the
//! first word completes the subcommands.

mod bash;
mod fish;
pub mod spec;
mod words;
mod zsh;

use std::ffi::OsString;

use pgrush_run::Failure;
use spec::CommandSpec;

use crate::subcommand::{Invocation, Operands, Opt, Subcommand, write_stdout};

/// A shell pgrush writes completions for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// GNU bash (with or without the bash-completion package).
    Bash,
    /// zsh (its completion system, `compinit`).
    Zsh,
    /// fish.
    Fish,
}

impl Shell {
    /// The shells' names, as `pgrush completions` takes them.
    pub const NAMES: [&'static str; 3] = ["bash", "zsh", "fish"];

    /// The shell named `name`.
    pub fn from_name(name: &str) -> Option<Shell> {
        match name {
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "fish" => Some(Shell::Fish),
            _ => None,
        }
    }

    /// The completion script for this shell.
    pub fn script(self, spec: &CommandSpec) -> String {
        match self {
            Shell::Bash => bash::script(spec),
            Shell::Zsh => zsh::script(spec),
            Shell::Fish => fish::script(spec),
        }
    }
}

/// `pgrush completions`: its options and `--help`.
pub const COMMAND: Subcommand = Subcommand {
    name: "completions",
    args: " bash|zsh|fish",
    summary: "print a shell completion script",
    about: "\
pgrush completions prints a shell completion script.

Usage:
  pgrush completions bash|zsh|fish

For example: source <(pgrush completions bash)

",
    options: &[Opt::HELP],
    notes: "",
    operands: Operands::Words(&Shell::NAMES),
    pgbench_options: false,
    run,
};

/// `pgrush completions SHELL`: prints the script.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let names = Shell::NAMES.join(", ");
    let shell = match scan.operands.as_slice() {
        [name] => Shell::from_name(name)
            .ok_or_else(|| COMMAND.usage(format!("unknown shell \"{name}\" (known: {names})")))?,
        [] => return Err(COMMAND.usage(format!("name a shell: {names}"))),
        [_, extra, ..] => {
            return Err(COMMAND.usage(format!("too many arguments (first is \"{extra}\")")));
        }
    };
    let spec = CommandSpec::gather(inv.subcommands);
    write_stdout(shell.script(&spec).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shells_are_named_as_the_command_takes_them() {
        for name in Shell::NAMES {
            assert!(Shell::from_name(name).is_some(), "{name}");
        }
        assert_eq!(Shell::from_name("tcsh"), None);
    }
}
