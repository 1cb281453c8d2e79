//! What pgrush's command line accepts, gathered for the shell completions and
//! the man pages: the pgbench options from the option table
//! ([`option_docs`]), the subcommands with their option tables (the list of
//! `subcommands`, handed in, so a new subcommand needs nothing here), and the
//! builtin script names. Nothing is read by running the binary.

use crate::parse::getopt::HasArg;
use crate::parse::table::{OptionDoc, option_docs};
use crate::subcommand::{self, Opt, Subcommand};

/// What a shell offers for an option's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueHint {
    /// The option takes no value (or only an attached optional one).
    None,
    /// A value with nothing to offer (a number, a name).
    Text,
    /// A file name.
    File,
    /// A builtin script name, optionally followed by `@WEIGHT`.
    BuiltinScript,
    /// One of a few words.
    Choices(Vec<String>),
}

impl ValueHint {
    /// The hint for a value named `value_name` in a help text: `a|b|c` or
    /// `(a|b)` lists the choices, a name starting with `FILE` is a file,
    /// `NAME` or `NAME[@W]` is a builtin script (as `-b` and `--show-script`
    /// write it), anything else is free text.
    pub fn from_value_name(value_name: &str) -> ValueHint {
        let bare = value_name.trim_start_matches('(').trim_end_matches(')');
        if bare.contains('|') {
            return ValueHint::Choices(bare.split('|').map(str::to_string).collect());
        }
        match bare {
            name if name.starts_with("FILE") => ValueHint::File,
            "NAME" | "NAME[@W]" => ValueHint::BuiltinScript,
            _ => ValueHint::Text,
        }
    }
}

/// One option as the completions and man pages see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSpec {
    /// The short letter, if any.
    pub short: Option<char>,
    /// The long name without `--`, if any (some subcommand options are short only).
    pub long: Option<String>,
    /// What the value is.
    pub value: ValueHint,
    /// The value's name as the help writes it (`NUM`), for options that take one.
    pub value_name: Option<String>,
    /// True when the value is optional and attached with `=` only.
    pub optional_value: bool,
    /// The help's description lines.
    pub description: Vec<String>,
}

impl OptionSpec {
    /// The first description line (what the shells show beside the option).
    pub fn summary(&self) -> &str {
        self.description.first().map_or("", String::as_str)
    }

    /// The option's spellings: `-c` then `--client`.
    pub fn spellings(&self) -> Vec<String> {
        let short = self.short.map(|c| format!("-{c}"));
        let long = self.long.as_ref().map(|l| format!("--{l}"));
        short.into_iter().chain(long).collect()
    }

    /// True when the option needs a value in the next word (or attached).
    pub fn takes_value(&self) -> bool {
        self.value != ValueHint::None
    }

    /// The spec of one option of a subcommand's table.
    fn from_opt(opt: &Opt) -> OptionSpec {
        OptionSpec::new(
            opt.short,
            opt.long,
            opt.arg,
            opt.value_name,
            opt.help.iter(),
        )
    }

    fn from_doc(doc: &OptionDoc) -> OptionSpec {
        let lines = doc.help.iter().flat_map(|entry| entry.lines);
        OptionSpec::new(doc.short, doc.long, doc.arg, doc.value_name, lines)
    }

    fn new<'a>(
        short: Option<char>,
        long: &str,
        arg: HasArg,
        value_name: Option<&str>,
        description: impl Iterator<Item = &'a &'a str>,
    ) -> OptionSpec {
        let value = match (arg, value_name) {
            (HasArg::Required, Some(name)) => ValueHint::from_value_name(name),
            (HasArg::Required, None) => ValueHint::Text,
            (HasArg::No | HasArg::Optional, _) => ValueHint::None,
        };
        OptionSpec {
            short,
            long: Some(long.to_string()),
            value,
            value_name: value_name.map(str::to_string),
            optional_value: arg == HasArg::Optional,
            description: description.map(|line| line.to_string()).collect(),
        }
    }
}

/// What a subcommand takes after its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operands {
    /// File names (or nothing: the shells then offer files, which does no harm).
    Files,
    /// One of these words.
    Words(Vec<String>),
}

/// One subcommand: `pgrush NAME ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubcommandSpec {
    /// The word after `pgrush`.
    pub name: String,
    /// Its arguments as `--help` lists them (` RUN.json`).
    pub args: String,
    /// One line on what it does.
    pub summary: String,
    /// Its options, from its option table.
    pub options: Vec<OptionSpec>,
    /// What follows the options.
    pub operands: Operands,
    /// Its own `--help` text (generated from the same table).
    pub help: String,
}

impl SubcommandSpec {
    /// The spec of `sub`; `all` names the subcommands (the operands of `pgrush man`).
    fn of(sub: &Subcommand, all: &[&Subcommand]) -> SubcommandSpec {
        let operands = match sub.operands {
            subcommand::Operands::Files => Operands::Files,
            subcommand::Operands::Words(words) => {
                Operands::Words(words.iter().map(|w| w.to_string()).collect())
            }
            subcommand::Operands::Subcommands => {
                Operands::Words(all.iter().map(|s| s.name.to_string()).collect())
            }
        };
        SubcommandSpec {
            name: sub.name.to_string(),
            args: sub.args.to_string(),
            summary: sub.summary.to_string(),
            options: sub.options.iter().map(OptionSpec::from_opt).collect(),
            operands,
            help: sub.help_text("pgrush"),
        }
    }
}

/// Everything the completions and man pages are generated from.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// The pgbench options, in option-table order.
    pub options: Vec<OptionSpec>,
    /// The option table's own data, for the man page's sections.
    pub docs: Vec<OptionDoc>,
    /// The subcommands, in `--help` order.
    pub subcommands: Vec<SubcommandSpec>,
    /// The builtin script names (`-b`).
    pub builtins: Vec<String>,
}

impl CommandSpec {
    /// Gathers the command line's description from the option tables of the main
    /// command and of `subcommands`.
    pub fn gather(subcommands: &[&Subcommand]) -> CommandSpec {
        let docs: Vec<OptionDoc> = option_docs().collect();
        CommandSpec {
            options: docs.iter().map(OptionSpec::from_doc).collect(),
            docs,
            subcommands: subcommands
                .iter()
                .map(|sub| SubcommandSpec::of(sub, subcommands))
                .collect(),
            builtins: pgrush_script::BUILTINS
                .iter()
                .map(|b| b.name.to_string())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(options: &'a [OptionSpec], long: &str) -> &'a OptionSpec {
        options
            .iter()
            .find(|o| o.long.as_deref() == Some(long))
            .unwrap_or_else(|| panic!("--{long} missing"))
    }

    #[test]
    fn value_hints_come_from_the_value_names() {
        let options: Vec<OptionSpec> = option_docs().map(|d| OptionSpec::from_doc(&d)).collect();
        assert_eq!(find(&options, "builtin").value, ValueHint::BuiltinScript);
        assert_eq!(
            find(&options, "show-script").value,
            ValueHint::BuiltinScript
        );
        assert_eq!(find(&options, "file").value, ValueHint::File);
        assert_eq!(find(&options, "json").value, ValueHint::File);
        let words =
            |list: &[&str]| ValueHint::Choices(list.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            find(&options, "protocol").value,
            words(&["simple", "extended", "prepared"])
        );
        assert_eq!(
            find(&options, "partition-method").value,
            words(&["range", "hash"])
        );
        assert_eq!(find(&options, "init-steps").value, ValueHint::Text);
        assert_eq!(find(&options, "client").value, ValueHint::Text);
        assert_eq!(find(&options, "connect").value, ValueHint::None);
        let percentiles = find(&options, "percentiles");
        assert!(percentiles.optional_value && !percentiles.takes_value());
    }
}
