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

/// `word` as one shell word that survives quote removal in bash, zsh and
/// fish alike: characters other than letters, digits and `-_.,/@=+%` are
/// backslash-escaped (`-?` becomes `-\?`, so no glob sees it).
pub(crate) fn shell_word(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for ch in word.chars() {
        if !(ch.is_ascii_alphanumeric() || "-_.,/@=+%".contains(ch)) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// `text` inside single quotes for bash and zsh (`'` becomes `'\''`).
pub(crate) fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The subcommand names as shell words, space-separated.
pub(crate) fn subcommand_words(spec: &CommandSpec) -> String {
    let names: Vec<String> = spec
        .subcommands
        .iter()
        .map(|sub| shell_word(&sub.name))
        .collect();
    names.join(" ")
}

/// A subcommand name as part of a shell function name (`-` becomes `_`).
pub(crate) fn function_suffix(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_escape_globs_and_quotes() {
        assert_eq!(shell_word("-?"), r"-\?");
        assert_eq!(shell_word("--client"), "--client");
        assert_eq!(shell_word("a b'c"), r"a\ b\'c");
        assert_eq!(single_quoted("it's"), r"'it'\''s'");
        assert_eq!(function_suffix("report-x"), "report_x");
    }

    #[test]
    fn shells_are_named_as_the_command_takes_them() {
        for name in Shell::NAMES {
            assert!(Shell::from_name(name).is_some(), "{name}");
        }
        assert_eq!(Shell::from_name("tcsh"), None);
    }
}
