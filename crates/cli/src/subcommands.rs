//! The list of pgrush's subcommands, the one place that names them: `main.rs`
//! dispatches through it, `pgrush --help` lists it, and the completions and man
//! pages are generated from it (each entry's option table is in its own module).

use crate::subcommand::Subcommand;

/// Every subcommand, in the order `pgrush --help` lists them.
pub const ALL: &[&Subcommand] = &[
    &crate::capacity_cmd::COMMAND,
    &crate::check_cmd::COMMAND,
    &crate::demo::COMMAND,
    &crate::merge_cmd::COMMAND,
    &crate::ops_cmd::COMMAND,
    &crate::report_cmd::COMMAND,
    &crate::sweep_cmd::COMMAND,
    &crate::timing_cmd::COMMAND,
    &crate::completions::COMMAND,
    &crate::man::COMMAND,
];

/// The subcommand called `name`.
pub fn find(name: &str) -> Option<&'static Subcommand> {
    ALL.iter().copied().find(|sub| sub.name == name)
}

/// Heading of the subcommand section of `pgrush --help`.
pub const HEADER: &str = "Subcommands (pgrush only):\n";

/// The `pgrush --help` section listing [`ALL`], ending with an empty line.
pub fn help_section() -> String {
    let mut text = String::from(HEADER);
    for sub in ALL {
        let synopsis = format!("pgrush {}{}", sub.name, sub.args);
        // The summary at column 27, beside the synopsis when it fits (as pgbench's options).
        let gap = match 25usize.checked_sub(synopsis.len()) {
            Some(pad) if pad > 0 => " ".repeat(pad),
            _ => format!("\n{}", " ".repeat(27)),
        };
        text.push_str(&format!("  {synopsis}{gap}{}\n", sub.summary));
    }
    text.push_str("Run \"pgrush SUBCOMMAND --help\" for a subcommand's options.\n\n");
    text
}

/// Whether the first word can be a subcommand: not when pgrush runs under the name
/// `pgbench` (a drop-in link), where a first word is a database name.
pub fn available(progname: &str) -> bool {
    progname != "pgbench"
}

/// The subcommand section of `progname --help`: [`help_section`], or nothing under
/// the name `pgbench`.
pub fn help_section_for(progname: &str) -> String {
    if available(progname) {
        help_section()
    } else {
        String::new()
    }
}

/// `pgrush --help`: pgbench's help with the extensions, then the subcommands.
#[cfg(test)]
fn main_help_text(progname: &str) -> String {
    crate::help::help_text_with(progname, &help_section_for(progname))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pgrush's `--help`: pgbench 18.6's text plus the extensions and subcommand
    /// sections, with pgrush's bug-report lines (kept to catch unintended changes).
    const GOLDEN_HELP: &str = include_str!("help_golden.txt");

    #[test]
    fn help_is_byte_identical_to_the_golden_text() {
        assert_eq!(main_help_text("pgrush"), GOLDEN_HELP);
    }

    #[test]
    fn under_the_name_pgbench_there_are_no_subcommands() {
        let text = main_help_text("pgbench");
        assert!(!text.contains(HEADER));
        assert_eq!(text, crate::help::help_text("pgbench"));
    }

    #[test]
    fn help_lists_every_subcommand() {
        let text = main_help_text("pgrush");
        let start = text.find(HEADER).expect("subcommand section");
        let section = &text[start..];
        for sub in ALL {
            let listed = format!("  pgrush {}{}", sub.name, sub.args);
            let at = section
                .find(&listed)
                .unwrap_or_else(|| panic!("{} not listed", sub.name));
            let entry = section[at + listed.len()..].trim_start();
            assert!(entry.starts_with(sub.summary), "{entry}");
            assert_eq!(find(sub.name).map(|s| s.name), Some(sub.name));
        }
        for line in section.lines() {
            assert!(line.len() < 80, "help line too long: {line:?}");
        }
    }

    #[test]
    fn every_table_has_help_and_unique_spellings() {
        for sub in ALL {
            assert!(sub.options.iter().any(|o| o.long == "help"), "{}", sub.name);
            let mut longs: Vec<&str> = sub.options.iter().map(|o| o.long).collect();
            let mut shorts: Vec<char> = sub.options.iter().filter_map(|o| o.short).collect();
            let (nl, ns) = (longs.len(), shorts.len());
            longs.sort_unstable();
            longs.dedup();
            shorts.sort_unstable();
            shorts.dedup();
            assert_eq!((longs.len(), shorts.len()), (nl, ns), "{}", sub.name);
            let help = sub.help_text("pgrush");
            assert!(help.starts_with(&format!("pgrush {} ", sub.name)), "{help}");
            assert!(
                help.contains(&format!("\nUsage:\n  pgrush {}", sub.name)),
                "{help}"
            );
            for opt in sub.options {
                assert!(
                    help.contains(&format!("\n  {}", opt.synopsis())),
                    "{}",
                    opt.long
                );
            }
        }
    }

    #[test]
    fn completions_and_man_pages_read_every_table() {
        use crate::completions::spec::{CommandSpec, Operands, ValueHint};
        let spec = CommandSpec::gather(ALL);
        assert_eq!(spec.subcommands.len(), ALL.len());
        for (sub, table) in spec.subcommands.iter().zip(ALL) {
            assert_eq!(sub.name, table.name);
            let longs: Vec<&str> = sub
                .options
                .iter()
                .filter_map(|o| o.long.as_deref())
                .collect();
            let want: Vec<&str> = table.options.iter().map(|o| o.long).collect();
            assert_eq!(longs, want, "{}", sub.name);
            assert_eq!(sub.help, table.help_text("pgrush"));
        }
        let ops = spec
            .subcommands
            .iter()
            .find(|s| s.name == "ops")
            .expect("ops");
        let dump_format = ops
            .options
            .iter()
            .find(|o| o.long.as_deref() == Some("dump-format"))
            .expect("--dump-format");
        let formats = ["custom", "directory", "plain", "tar"].map(String::from);
        assert_eq!(dump_format.value, ValueHint::Choices(formats.to_vec()));
        let man = spec
            .subcommands
            .iter()
            .find(|s| s.name == "man")
            .expect("man");
        let names: Vec<String> = ALL.iter().map(|s| s.name.to_string()).collect();
        assert_eq!(man.operands, Operands::Words(names));
    }
}
