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

/// The PostgreSQL release whose pgbench pgrush reproduces.
pub const PG_VERSION: &str = "18.6";

/// The column where help descriptions start.
const DESCRIPTION_COLUMN: usize = 27;

/// pgbench 18's `--help` text for `progname`, plus the extensions section,
/// generated from the option table.
pub fn help_text(progname: &str) -> String {
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
    if subcommands_available(progname) {
        text.push_str(&subcommands_section());
    }
    text.push_str(&bug_report_lines());
    text
}

/// pgrush's subcommands: the word after `pgrush`, its arguments, and one line on what
/// it does. `main.rs` dispatches each of them; `--help` lists them.
pub const SUBCOMMANDS: &[(&str, &str, &str)] = &[
    (
        "demo",
        "",
        "benchmark a throwaway local cluster, no setup needed",
    ),
    (
        "merge",
        " SHARD...",
        "merge a sharded run's documents into one report",
    ),
    (
        "ops",
        "",
        "time load, dump, restore, reindex, backups, recovery",
    ),
    (
        "report",
        " RUN.json",
        "render or compare runs saved with --json",
    ),
    (
        "sweep",
        " --vary ...",
        "compare configurations over repeats, with intervals",
    ),
    (
        "timing",
        "",
        "measure the clock's overhead (as pg_test_timing)",
    ),
];

/// Subcommands for packagers and shell set-up, left out of `--help` (whose text
/// stays pgbench's plus [`SUBCOMMANDS`]); the man page and the completions list them.
pub const PACKAGING_SUBCOMMANDS: &[(&str, &str, &str)] = &[
    (
        "completions",
        " bash|zsh|fish",
        "print a shell completion script",
    ),
    (
        "man",
        " [--list | SUBCOMMAND]",
        "print a manual page (roff)",
    ),
];

/// Heading of the subcommand section of `--help`.
pub const SUBCOMMANDS_HEADER: &str = "Subcommands (pgrush only):\n";

/// Whether the first word can be a subcommand: not when pgrush runs under the name
/// `pgbench` (a drop-in link), where a first word is a database name.
pub fn subcommands_available(progname: &str) -> bool {
    progname != "pgbench"
}

/// The `--help` section listing [`SUBCOMMANDS`], ending with an empty line.
fn subcommands_section() -> String {
    let mut text = String::from(SUBCOMMANDS_HEADER);
    for (name, args, summary) in SUBCOMMANDS {
        let synopsis = format!("pgrush {name}{args}");
        let pad = (DESCRIPTION_COLUMN - 2)
            .saturating_sub(synopsis.len())
            .max(1);
        text.push_str(&format!("  {synopsis}{}{summary}\n", " ".repeat(pad)));
    }
    text.push_str("Run \"pgrush SUBCOMMAND --help\" for a subcommand's options.\n\n");
    text
}

/// The project's repository, from the workspace's `Cargo.toml`.
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The project's home page, from the workspace's `Cargo.toml`.
pub const HOMEPAGE: &str = env!("CARGO_PKG_HOMEPAGE");

/// Reports a bad `pgrush SUBCOMMAND` command line: the error, then the hint to read
/// `--help`. Returns the exit status (1).
pub fn usage_error(prog: &str, subcommand: &str, msg: &str) -> i32 {
    pgrush_engine::messages::error(prog, msg);
    pgrush_engine::messages::hint(
        prog,
        &format!("Try \"{prog} {subcommand} --help\" for more information."),
    );
    1
}

/// Prints a subcommand's usage text (`{prog}` replaced by the program name) and the
/// bug-report lines, for `--help`.
pub fn print_usage(usage: &str, prog: &str) {
    print!("{}{}", usage.replace("{prog}", prog), bug_report_lines());
}

/// The last lines of every help text: where pgrush's bugs go (pgbench's help sends
/// them to PostgreSQL's list, which is not where a pgrush bug belongs).
pub fn bug_report_lines() -> String {
    format!("Report bugs to <{REPOSITORY}/issues>.\npgrush home page: <{HOMEPAGE}>\n")
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

/// Prints pgbench 18's `--help` text adapted to `progname`; returns 0.
pub fn print_help(progname: &str) -> i32 {
    write_stdout(help_text(progname).as_bytes())
}

/// The `-V` line, including the newline.
pub fn version_text(progname: &str) -> String {
    format!(
        "{progname} (PostgreSQL) {PG_VERSION} (pgrush {})\n",
        env!("CARGO_PKG_VERSION")
    )
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
    match pgrush_script::show_script_text(name) {
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

    /// pgrush's `--help`: pgbench 18.6's text plus the extensions and subcommand
    /// sections, with pgrush's bug-report lines (kept to catch unintended changes).
    const GOLDEN_HELP: &str = include_str!("help_golden.txt");

    #[test]
    fn help_is_byte_identical_to_the_golden_text() {
        assert_eq!(help_text("pgrush"), GOLDEN_HELP);
    }

    #[test]
    fn help_uses_progname_and_keeps_other_names() {
        let text = help_text("pgbench");
        assert!(text.starts_with(
            "pgbench is a benchmarking tool for PostgreSQL.\n\nUsage:\n  pgbench [OPTION]... [DBNAME]\n"
        ));
        // Under the name pgbench there are no subcommands: a first word names a database.
        assert!(!text.contains(SUBCOMMANDS_HEADER));
        assert_eq!(
            text.replace("pgbench [OPTION]", "pgrush [OPTION]")
                .replacen("pgbench is", "pgrush is", 1),
            GOLDEN_HELP.replace(&subcommands_section(), "")
        );
        assert!(text.contains("(default: \"pgbench_log\")"));
        assert!(text.contains("  -I, --init-steps=[dtgGvpf]+ (default \"dtgvp\")\n"));
        let heading = format!("{}\n", Section::Extensions.heading());
        let section = text.find(&heading).expect("extensions section");
        assert!(text[..section].ends_with("show this help, then exit\n\n"));
        assert!(text[section..].ends_with(&format!("\n\n{}", bug_report_lines())));
    }

    #[test]
    fn help_lists_every_subcommand_and_sends_bugs_to_the_project() {
        let text = help_text("pgrush");
        let start = text.find(SUBCOMMANDS_HEADER).expect("subcommand section");
        let section = &text[start..];
        for (name, _, summary) in SUBCOMMANDS {
            let line = section
                .lines()
                .find(|l| l.starts_with(&format!("  pgrush {name}")))
                .unwrap_or_else(|| panic!("{name} not listed"));
            assert!(line.ends_with(summary), "{line}");
        }
        assert!(text.ends_with(&bug_report_lines()));
        assert!(!text.contains("pgsql-bugs@lists.postgresql.org"));
        assert!(bug_report_lines().starts_with("Report bugs to <https://"));
        for line in section.lines() {
            assert!(line.len() < 80, "help line too long: {line:?}");
        }
    }
    #[test]
    fn version_line_keeps_pgbench_shape() {
        let line = version_text("pgrush");
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&words[..3], &["pgrush", "(PostgreSQL)", "18.6"]);
        assert!(line.ends_with(")\n"));
    }
}
