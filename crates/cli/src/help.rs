//! `--help`, `--version`, `-b list` and `--show-script` output.
//!
//! The help text is pgbench 18.6's, byte for byte, plus PostgreSQL 19's
//! `--continue-on-error` line among the benchmarking options (as pgbench 19 lists
//! it), with the program name
//! (basename of argv[0]) where pgbench prints its own name (the first two
//! lines; the other mentions of "pgbench" name tables and log files and stay).
//!
//! The option lines are generated from the option table
//! (`parse::table::OPTIONS`): each option's synopsis, then its description
//! from column 27 (beside the synopsis when the synopsis is at most 24
//! characters, as in pgbench's `usage()`). Options pgbench 18 does not have are
//! listed in a separate section (`Section::Extensions`) that ends with an
//! empty line, just before the bug-report lines; without it the text is
//! pgbench's.
//!
//! Version line: `<progname> (PostgreSQL) 18.6 (pgrush X.Y.Z)`. Tools that
//! parse `pgbench -V` already cope with a trailing parenthesised vendor string
//! (Debian's pgbench prints `pgbench (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)`),
//! and the third word is still the PostgreSQL version pgrush emulates.

use crate::parse::table::{HelpEntry, OptionDoc, Section, option_docs};
use std::io::Write;

use crate::about::{bug_report_lines, version_text};

/// The column where help descriptions start.
const DESCRIPTION_COLUMN: usize = 27;

/// pgbench 18's `--help` text for `progname`, plus the extensions section,
/// generated from the option table, without pgrush's subcommands (see
/// [`help_text_with`]; the tests read it).
#[cfg(test)]
pub fn help_text(progname: &str) -> String {
    help_text_with(progname, "")
}

/// [`help_text`] with `subcommands` (the subcommand section, ending with an empty
/// line) just before the bug-report lines.
pub fn help_text_with(progname: &str, subcommands: &str) -> String {
    let mut text = format!(
        "{progname} is a benchmarking tool for PostgreSQL.\n\n\
         Usage:\n  {progname} [OPTION]... [DBNAME]\n\n"
    );
    let docs: Vec<OptionDoc> = option_docs().collect();
    for section in Section::ALL {
        text.push_str(section.heading());
        text.push('\n');
        for (doc, entry) in section_entries(&docs, section) {
            push_help_entry(&mut text, doc, entry);
        }
        text.push('\n');
    }
    text.push_str(subcommands);
    text.push_str(&bug_report_lines());
    text
}

/// The options described in `section`, in their help order.
pub(crate) fn section_entries(
    docs: &[OptionDoc],
    section: Section,
) -> Vec<(&OptionDoc, &'static HelpEntry)> {
    let mut entries: Vec<(&OptionDoc, &'static HelpEntry)> = docs
        .iter()
        .flat_map(|doc| doc.help.iter().map(move |entry| (doc, entry)))
        .filter(|(_, entry)| entry.section == section)
        .collect();
    entries.sort_by_key(|(_, entry)| entry.rank);
    entries
}

/// One option's lines: the synopsis, then the description at
/// [`DESCRIPTION_COLUMN`] (beside the synopsis when it fits, as pgbench's
/// `usage()` lays it out).
fn push_help_entry(text: &mut String, doc: &OptionDoc, entry: &HelpEntry) {
    let indent = " ".repeat(DESCRIPTION_COLUMN);
    let synopsis = doc.synopsis();
    text.push_str("  ");
    text.push_str(&synopsis);
    let mut lines = entry.lines.iter();
    let pad = (DESCRIPTION_COLUMN - 2).checked_sub(synopsis.len());
    match (entry.beside_synopsis, pad) {
        (Some(note), _) => {
            text.push(' ');
            text.push_str(note);
        }
        (None, Some(pad)) if pad > 0 => {
            if let Some(first) = lines.next() {
                text.push_str(&" ".repeat(pad));
                text.push_str(first);
            }
        }
        (None, _) => {}
    }
    text.push('\n');
    for line in lines {
        text.push_str(&indent);
        text.push_str(line);
        text.push('\n');
    }
}

/// Prints pgbench 18's `--help` text adapted to `progname`, with `subcommands` (the
/// subcommand section, or nothing) before the bug-report lines; returns 0.
pub fn print_help(progname: &str, subcommands: &str) -> i32 {
    write_stdout(help_text_with(progname, subcommands).as_bytes())
}

/// Prints the version line; returns 0.
pub fn print_version(progname: &str) -> i32 {
    write_stdout(version_text(progname).as_bytes())
}

/// `-b list`: the builtin list on stderr; returns 0.
pub fn print_builtin_list() -> i32 {
    let _ = std::io::stderr().write_all(pgrush_script::builtin_list_text().as_bytes());
    0
}

/// `--show-script=NAME` (NAME already resolved): the script on stderr; returns 0.
pub fn print_show_script(name: &str) -> i32 {
    match pgrush_script::show_any_script_text(name) {
        Ok(text) => {
            let _ = std::io::stderr().write_all(text.as_bytes());
            0
        }
        Err(_) => 1,
    }
}

fn write_stdout(bytes: &[u8]) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_uses_progname_and_keeps_other_names() {
        let text = help_text("pgbench");
        assert!(text.starts_with(
            "pgbench is a benchmarking tool for PostgreSQL.\n\nUsage:\n  pgbench [OPTION]... [DBNAME]\n"
        ));
        assert_eq!(
            text.replace("pgbench [OPTION]", "pgrush [OPTION]")
                .replacen("pgbench is", "pgrush is", 1),
            help_text("pgrush")
        );
        assert!(text.contains("(default: \"pgbench_log\")"));
        assert!(text.contains("  -I, --init-steps=[dtgGvpf]+ (default \"dtgvp\")\n"));
        let heading = format!("{}\n", Section::Extensions.heading());
        let section = text.find(&heading).expect("extensions section");
        assert!(text[..section].ends_with("show this help, then exit\n\n"));
        assert!(text[section..].ends_with(&format!("\n\n{}", bug_report_lines())));
        assert!(!text.contains("pgsql-bugs@lists.postgresql.org"));
    }

    #[test]
    fn version_line_keeps_pgbench_shape() {
        let line = version_text("pgrush");
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&words[..3], &["pgrush", "(PostgreSQL)", "18.6"]);
        assert!(line.ends_with(")\n"));
    }
}
