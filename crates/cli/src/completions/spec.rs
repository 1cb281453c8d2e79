//! What pgrush's command line accepts, gathered for the shell completions and
//! the man pages: the pgbench options from the option table
//! ([`option_docs`]), the subcommands from [`SUBCOMMANDS`] (their options read
//! from their own `--help`, so a new subcommand needs nothing here), the
//! packaging subcommands, and the builtin script names.

use std::process::Command;

use crate::help::{PACKAGING_SUBCOMMANDS, SUBCOMMANDS};
use crate::parse::getopt::HasArg;
use crate::parse::table::{OptionDoc, option_docs};

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

    fn from_doc(doc: &OptionDoc) -> OptionSpec {
        let value = match (doc.arg, doc.value_name) {
            (HasArg::Required, Some(name)) => ValueHint::from_value_name(name),
            (HasArg::Required, None) => ValueHint::Text,
            (HasArg::No | HasArg::Optional, _) => ValueHint::None,
        };
        OptionSpec {
            short: doc.short,
            long: Some(doc.long.to_string()),
            value,
            value_name: doc.value_name.map(str::to_string),
            optional_value: doc.arg == HasArg::Optional,
            description: doc
                .help
                .iter()
                .flat_map(|entry| entry.lines)
                .map(|line| line.to_string())
                .collect(),
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
    /// Its options.
    pub options: Vec<OptionSpec>,
    /// What follows the options.
    pub operands: Operands,
    /// Its own `--help` text (empty for the packaging subcommands).
    pub help: String,
}

/// Everything the completions and man pages are generated from.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// The pgbench options, in option-table order.
    pub options: Vec<OptionSpec>,
    /// The option table's own data, for the man page's sections.
    pub docs: Vec<OptionDoc>,
    /// The subcommands listed in `--help`, then the packaging ones.
    pub subcommands: Vec<SubcommandSpec>,
    /// The builtin script names (`-b`).
    pub builtins: Vec<String>,
}

/// A subcommand's `--help` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The program's own path is unknown.
    #[error("cannot find the pgrush executable: {0}")]
    CurrentExe(std::io::Error),
    /// Running `pgrush NAME --help` failed.
    #[error("cannot run \"pgrush {name} --help\": {source}")]
    Spawn {
        /// The subcommand.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// `pgrush NAME --help` exited with an error or printed nothing.
    #[error("\"pgrush {name} --help\" printed no help (exit status {status})")]
    NoHelp {
        /// The subcommand.
        name: String,
        /// How it exited.
        status: std::process::ExitStatus,
    },
}

impl CommandSpec {
    /// Gathers the command line's description; runs `pgrush NAME --help` for
    /// each subcommand of [`SUBCOMMANDS`] to read its options.
    pub fn gather() -> Result<CommandSpec, SpecError> {
        let exe = std::env::current_exe().map_err(SpecError::CurrentExe)?;
        let mut subcommands = Vec::new();
        for (name, args, summary) in SUBCOMMANDS {
            let help = subcommand_help(&exe, name)?;
            subcommands.push(SubcommandSpec {
                name: name.to_string(),
                args: args.to_string(),
                summary: summary.to_string(),
                options: help_options(&help),
                operands: Operands::Files,
                help,
            });
        }
        subcommands.extend(packaging_subcommands());
        let docs: Vec<OptionDoc> = option_docs().collect();
        Ok(CommandSpec {
            options: docs.iter().map(OptionSpec::from_doc).collect(),
            docs,
            subcommands,
            builtins: pgrush_script::BUILTINS
                .iter()
                .map(|b| b.name.to_string())
                .collect(),
        })
    }

    /// The subcommands listed in `--help` (those with a man page of their own).
    pub fn documented_subcommands(&self) -> impl Iterator<Item = &SubcommandSpec> {
        self.subcommands.iter().filter(|sub| !sub.help.is_empty())
    }
}

/// `pgrush completions` and `pgrush man`: their operands are words.
fn packaging_subcommands() -> Vec<SubcommandSpec> {
    let subcommand_names: Vec<String> = SUBCOMMANDS
        .iter()
        .map(|(name, _, _)| name.to_string())
        .collect();
    PACKAGING_SUBCOMMANDS
        .iter()
        .map(|(name, args, summary)| {
            let (options, operands) = match *name {
                "completions" => (
                    Vec::new(),
                    Operands::Words(crate::completions::Shell::NAMES.map(String::from).to_vec()),
                ),
                "man" => (
                    vec![OptionSpec {
                        short: None,
                        long: Some("list".to_string()),
                        value: ValueHint::None,
                        value_name: None,
                        optional_value: false,
                        description: vec!["list the manual pages".to_string()],
                    }],
                    Operands::Words(subcommand_names.clone()),
                ),
                _ => (Vec::new(), Operands::Files),
            };
            SubcommandSpec {
                name: name.to_string(),
                args: args.to_string(),
                summary: summary.to_string(),
                options,
                operands,
                help: String::new(),
            }
        })
        .collect()
}

/// The standard output of `EXE NAME --help`.
fn subcommand_help(exe: &std::path::Path, name: &str) -> Result<String, SpecError> {
    let output = Command::new(exe)
        .args([name, "--help"])
        .output()
        .map_err(|source| SpecError::Spawn {
            name: name.to_string(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() || text.trim().is_empty() {
        return Err(SpecError::NoHelp {
            name: name.to_string(),
            status: output.status,
        });
    }
    Ok(text)
}

/// The options of a help text's `Options:` block: each line that starts
/// (after the indentation) with `-` gives the spellings before the first two
/// spaces and the description after them; more indented lines continue the
/// description.
pub fn help_options(help: &str) -> Vec<OptionSpec> {
    let mut options: Vec<OptionSpec> = Vec::new();
    let mut in_options = false;
    for line in help.lines() {
        if !line.starts_with(' ') {
            in_options = line == "Options:";
            continue;
        }
        if !in_options {
            continue;
        }
        let text = line.trim_start();
        if text.starts_with('-') {
            options.push(option_line(text));
        } else if let Some(last) = options.last_mut() {
            last.description.push(text.to_string());
        }
    }
    options
}

/// One option line: `-d, --duration=SECONDS   measure for ...`.
fn option_line(text: &str) -> OptionSpec {
    let (synopsis, description) = match text.find("  ") {
        Some(at) => (&text[..at], text[at..].trim()),
        None => (text, ""),
    };
    let mut spec = OptionSpec {
        short: None,
        long: None,
        value: ValueHint::None,
        value_name: None,
        optional_value: false,
        description: vec![description.to_string()],
    };
    for spelling in synopsis.split(", ") {
        let end = spelling.find(['=', ' ', '[']).unwrap_or(spelling.len());
        let (name, rest) = spelling.split_at(end);
        if let Some(long) = name.strip_prefix("--") {
            spec.long = Some(long.to_string());
        } else if let Some(short) = name.strip_prefix('-') {
            spec.short = short.chars().next();
        }
        let value_name = rest
            .trim_start_matches(['[', '=', ' '])
            .trim_end_matches(']');
        if !value_name.is_empty() {
            spec.optional_value = rest.starts_with('[');
            spec.value = if spec.optional_value {
                ValueHint::None
            } else {
                ValueHint::from_value_name(value_name)
            };
            spec.value_name = Some(value_name.to_string());
        }
    }
    spec
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

    #[test]
    fn help_options_reads_both_layouts() {
        let help = "x does y.\n\nUsage:\n  x [-h HOST]\n\nOptions:\n  \
                    -h HOST      database server host\n  \
                    -d, --duration=SECONDS   measure for SECONDS\n                           \
                    per clock\n      --json               print JSON\n  \
                    --html=FILE     write HTML\n  -?, --help      show this help\n\nMore:\n  -z  not an option\n";
        let options = help_options(help);
        let spellings: Vec<Vec<String>> = options.iter().map(OptionSpec::spellings).collect();
        assert_eq!(
            spellings,
            [
                vec!["-h"],
                vec!["-d", "--duration"],
                vec!["--json"],
                vec!["--html"],
                vec!["-?", "--help"],
            ]
        );
        assert_eq!(options[0].value, ValueHint::Text);
        assert_eq!(options[1].description, ["measure for SECONDS", "per clock"]);
        assert_eq!(options[2].value, ValueHint::None);
        assert_eq!(options[3].value, ValueHint::File);
        assert_eq!(options[4].summary(), "show this help");
    }
}
