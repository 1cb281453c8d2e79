//! `pgrush man [SUBCOMMAND]`: the manual pages, in roff, generated from the
//! sources `--help` is generated from.
//!
//! `pgrush(1)` lists the pgbench options section by section from the option
//! table, with their `--help` lines; `pgrush-NAME(1)`, one per subcommand of
//! `--help`, is made from that subcommand's own `--help` (its prose becomes
//! the description, its `Usage:` block the synopsis, its `Options:` block the
//! options). `pgrush man --list` prints the pages' names, for packagers.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

use pgrush_run::Failure;
use roff::{Inline, Roff, bold, italic, line_break, roman};

use crate::about::bug_report_lines;
use crate::completions::spec::{CommandSpec, OptionSpec, SubcommandSpec};
use crate::help::section_entries;
use crate::parse::getopt::HasArg;
use crate::parse::table::{HelpEntry, OptionDoc, Section};
use crate::subcommand::{Invocation, Operands, Opt, Subcommand, write_stdout};

/// `pgrush man`: its options and `--help`.
pub const COMMAND: Subcommand = Subcommand {
    name: "man",
    args: " [--list | SUBCOMMAND]",
    summary: "print a manual page (roff)",
    about: "\
pgrush man prints pgrush's manual pages in roff.

Usage:
  pgrush man              pgrush(1)
  pgrush man SUBCOMMAND   pgrush-SUBCOMMAND(1)
  pgrush man --list       the pages' names

On a terminal the page is shown as man -l - shows it (or by groff);
in a pipe or a file it is the roff itself.

",
    options: &[
        Opt::flag(None, "list", &["list the manual pages"]),
        Opt::HELP,
    ],
    notes: "",
    operands: Operands::Subcommands,
    pgbench_options: false,
    run,
};

/// `pgrush man [--list | SUBCOMMAND]`: prints a page.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let spec = CommandSpec::gather(inv.subcommands);
    let list = !scan.options.is_empty();
    let page = match scan.operands.as_slice() {
        [] if list => return write_stdout((page_names(&spec).join("\n") + "\n").as_bytes()),
        [] => main_page(&spec),
        [_, ..] if list => {
            return Err(COMMAND.usage("--list takes no page name"));
        }
        [name] => match spec.subcommands.iter().find(|sub| sub.name == *name) {
            Some(sub) => subcommand_page(sub),
            None => return Err(COMMAND.usage(format!("no manual page for \"{name}\""))),
        },
        [_, extra, ..] => {
            return Err(COMMAND.usage(format!("too many arguments (first is \"{extra}\")")));
        }
    };
    show(&page)
}

/// Programs that render a page for a terminal, in order of preference; the page goes
/// to their standard input.
const RENDERERS: [(&str, &[&str]); 2] = [("man", &["-l", "-"]), ("groff", &["-man", "-Tutf8"])];

/// Prints `page`: rendered (by `man -l -`, else `groff`) when standard output is a
/// terminal and one of them is installed, the roff itself otherwise.
fn show(page: &str) -> Result<i32, Failure> {
    if std::io::stdout().is_terminal() {
        for (program, args) in RENDERERS {
            if let Some(status) = render(program, args, page) {
                return Ok(status);
            }
        }
    }
    write_stdout(page.as_bytes())
}

/// Pipes `page` into `program ARGS` (which writes to our standard output); its exit
/// status, or `None` when it cannot be started.
fn render(program: &str, args: &[&str], page: &str) -> Option<i32> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .spawn()
        .ok()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A pager quit before the end closes the pipe early: not an error.
        let _ = stdin.write_all(page.as_bytes());
    }
    let status = child.wait().ok()?;
    Some(status.code().unwrap_or(1))
}

/// The date in the pages' `.TH` line: the build's `SOURCE_DATE_EPOCH` (the
/// reproducible-builds convention packagers set) as `YYYY-MM-DD`, else the date of
/// this version ([`VERSION_DATE`]). Never the clock: the pages stay reproducible.
pub fn page_date() -> String {
    option_env!("SOURCE_DATE_EPOCH")
        .and_then(|s| s.trim().parse::<i64>().ok())
        .map_or_else(|| VERSION_DATE.to_string(), date_of_epoch)
}

/// The day the workspace's version (`CARGO_PKG_VERSION`) was set; bump it with the version.
pub const VERSION_DATE: &str = "2026-11-22";

/// `YYYY-MM-DD` (UTC) of a Unix time in seconds (the proleptic Gregorian calendar).
fn date_of_epoch(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    // Days since 0000-03-01, counted in 400-year eras of 146097 days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The pages' names: `pgrush`, then `pgrush-NAME` per documented subcommand.
pub fn page_names(spec: &CommandSpec) -> Vec<String> {
    std::iter::once("pgrush".to_string())
        .chain(
            spec.subcommands
                .iter()
                .map(|sub| format!("pgrush-{}", sub.name)),
        )
        .collect()
}

/// `.TH` and NAME for page `name`.
fn page_start(name: &str, summary: &str) -> Roff {
    let mut page = Roff::new();
    let source = format!("pgrush {}", env!("CARGO_PKG_VERSION"));
    page.control(
        "TH",
        [
            &name.to_uppercase(),
            "1",
            &page_date(),
            &source,
            "User Commands",
        ],
    );
    page.control("SH", ["NAME"]);
    let mut chars = summary.chars();
    let summary: String = chars
        .next()
        .map(|c| c.to_ascii_lowercase())
        .into_iter()
        .chain(chars)
        .collect();
    page.text([roman(format!("{name} - {summary}"))]);
    page
}

/// The last sections of every page.
fn page_end(page: &mut Roff, see_also: &[String]) {
    page.control("SH", ["REPORTING BUGS"]);
    let mut lines = Vec::new();
    for line in bug_report_lines().lines() {
        lines.push(roman(line));
        lines.push(line_break());
    }
    page.text(lines);
    page.control("SH", ["SEE ALSO"]);
    let refs: Vec<String> = see_also.iter().map(|name| format!("{name}(1)")).collect();
    page.text([roman(refs.join(", "))]);
}

/// `pgrush(1)`.
pub fn main_page(spec: &CommandSpec) -> String {
    let mut page = page_start("pgrush", env!("CARGO_PKG_DESCRIPTION"));
    page.control("SH", ["SYNOPSIS"]);
    let options = || {
        [
            roman("["),
            italic("OPTION"),
            roman("]... ["),
            italic("DBNAME"),
            roman("]"),
        ]
    };
    let synopses: [Vec<Inline>; 3] = [
        options().to_vec(),
        [bold("-i"), roman(" ")]
            .into_iter()
            .chain(options())
            .collect(),
        vec![
            italic("SUBCOMMAND"),
            roman(" ["),
            italic("ARG"),
            roman("]..."),
        ],
    ];
    for synopsis in synopses {
        page.text(
            [bold("pgrush"), roman(" ")]
                .into_iter()
                .chain(synopsis)
                .collect::<Vec<_>>(),
        );
        page.control("br", []);
    }
    page.control("SH", ["DESCRIPTION"]);
    page.text([roman(
        "pgrush is a benchmarking tool for PostgreSQL that takes pgbench's options, \
         runs pgbench's scripts and prints pgbench's output.",
    )]);
    page.control("PP", []);
    page.text([roman(
        "Started under the name pgbench (a link), it behaves as pgbench and has no \
         subcommands: a first word is a database name. Started under the name \
         pg_test_timing, it behaves as pg_test_timing.",
    )]);
    page.control("SH", ["OPTIONS"]);
    for section in Section::ALL {
        page.control("SS", [section.heading().trim_end_matches(':')]);
        for (doc, entry) in section_entries(&spec.docs, section) {
            option_item(&mut page, doc, entry);
        }
    }
    page.control("SH", ["SUBCOMMANDS"]);
    for sub in &spec.subcommands {
        page.control("TP", []);
        page.text([
            bold(format!("pgrush {}", sub.name)),
            roman(sub.args.clone()),
        ]);
        let mut text = sub.summary.clone();
        text.push_str(&format!("; see pgrush-{}(1)", sub.name));
        page.text([roman(format!("{text}."))]);
    }
    page.control("SH", ["EXIT STATUS"]);
    page.text([roman(
        "As pgbench: 0 after a successful run, 1 for bad options and for errors before \
         the benchmark starts (such as a failed first connection), 2 for errors during the run. \
         In addition, 3 when the run succeeded but an --assert check failed.",
    )]);
    page.control("SH", ["ENVIRONMENT"]);
    page.text([roman(
        "The connection defaults come from the libpq environment variables \
         (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE and the others libpq reads).",
    )]);
    let mut see_also = vec!["pgbench".to_string(), "pg_test_timing".to_string()];
    see_also.extend(page_names(spec).into_iter().skip(1));
    page_end(&mut page, &see_also);
    page.render()
}

/// One `.TP` item: the synopsis, then the help lines.
fn option_item(page: &mut Roff, doc: &OptionDoc, entry: &HelpEntry) {
    page.control("TP", []);
    let mut tag = Vec::new();
    if let Some(short) = doc.short {
        tag.push(bold(format!("-{short}")));
        tag.push(roman(", "));
    }
    tag.push(bold(format!("--{}", doc.long)));
    match (doc.arg, doc.value_name) {
        (HasArg::Required, Some(name)) => tag.extend([roman("="), italic(name)]),
        (HasArg::Optional, Some(name)) => {
            tag.extend([roman("[="), italic(name), roman("]")]);
        }
        _ => {}
    }
    page.text(tag);
    let lines = entry
        .beside_synopsis
        .into_iter()
        .chain(entry.lines.iter().copied());
    page.text(broken_lines(lines));
}

/// `lines` as one text line with a break between them (as `--help` shows them).
fn broken_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<Inline> {
    let mut inlines = Vec::new();
    for line in lines {
        if !inlines.is_empty() {
            inlines.push(line_break());
        }
        inlines.push(roman(line));
    }
    inlines
}

/// A block of a subcommand's `--help`.
#[derive(Debug, Default)]
struct HelpBlocks {
    /// The prose paragraphs (lines at the left margin), for DESCRIPTION.
    description: Vec<Vec<String>>,
    /// Indented blocks under a heading (`Usage:`), by heading.
    titled: Vec<(String, Vec<String>)>,
}

/// Splits a `--help` text into prose paragraphs and titled, indented blocks;
/// the bug-report lines are left out (every page has its own section).
fn help_blocks(help: &str) -> HelpBlocks {
    let bugs = bug_report_lines();
    let mut blocks = HelpBlocks::default();
    let mut in_titled = false;
    let mut paragraph_open = false;
    for line in help.lines() {
        if line.trim().is_empty() {
            paragraph_open = false;
            continue;
        }
        if bugs.lines().any(|bug| bug == line) {
            continue;
        }
        if line.starts_with(' ') && in_titled {
            if let Some((_, lines)) = blocks.titled.last_mut() {
                lines.push(line.to_string());
            }
        } else if !line.starts_with(' ') && line.ends_with(':') && !line.contains(". ") {
            blocks
                .titled
                .push((line.trim_end_matches(':').to_string(), Vec::new()));
            in_titled = true;
        } else {
            in_titled = false;
            match blocks.description.last_mut() {
                Some(paragraph) if paragraph_open => paragraph.push(line.trim().to_string()),
                _ => blocks.description.push(vec![line.trim().to_string()]),
            }
            paragraph_open = true;
        }
    }
    blocks
}

/// `pgrush-NAME(1)`, from the subcommand's `--help`.
pub fn subcommand_page(sub: &SubcommandSpec) -> String {
    let name = format!("pgrush-{}", sub.name);
    let mut page = page_start(&name, &sub.summary);
    let blocks = help_blocks(&sub.help);
    for (title, lines) in &blocks.titled {
        let title = match title.as_str() {
            "Usage" => "SYNOPSIS".to_string(),
            other => other.to_uppercase(),
        };
        page.control("SH", [title.as_str()]);
        if title == "OPTIONS" {
            for option in &sub.options {
                subcommand_option(&mut page, option);
            }
            continue;
        }
        page.control("nf", []);
        for line in lines {
            // The block's own indentation goes; a continuation keeps its offset.
            page.text([roman(line.strip_prefix("  ").unwrap_or(line))]);
        }
        page.control("fi", []);
        if title == "SYNOPSIS" {
            page.control("SH", ["DESCRIPTION"]);
            for (i, paragraph) in blocks.description.iter().enumerate() {
                if i > 0 {
                    page.control("PP", []);
                }
                page.text([roman(paragraph.join(" "))]);
            }
        }
    }
    page_end(&mut page, &["pgrush".to_string()]);
    page.render()
}

/// One subcommand option as a `.TP` item.
fn subcommand_option(page: &mut Roff, option: &OptionSpec) {
    page.control("TP", []);
    let mut tag = Vec::new();
    for spelling in option.spellings() {
        if !tag.is_empty() {
            tag.push(roman(", "));
        }
        tag.push(bold(spelling));
    }
    if let Some(value) = &option.value_name {
        let separator = match (option.optional_value, &option.long) {
            (true, _) => "[=",
            (false, Some(_)) => "=",
            (false, None) => " ",
        };
        tag.push(roman(separator));
        tag.push(italic(value.clone()));
        if option.optional_value {
            tag.push(roman("]"));
        }
    }
    page.text(tag);
    page.text([roman(option.description.join(" "))]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_unix_times() {
        assert_eq!(date_of_epoch(0), "1970-01-01");
        assert_eq!(date_of_epoch(951_782_400), "2000-02-29");
        assert_eq!(date_of_epoch(1_798_761_599), "2026-12-31");
        assert_eq!(date_of_epoch(-86_400), "1969-12-31");
    }

    #[test]
    fn help_blocks_separate_prose_from_titled_blocks() {
        let help = format!(
            "x runs y.\nIt is quick.\n\nUsage:\n  x [-h HOST]\n\nMore prose: here.\n\nOptions:\n  \
             -h HOST  host\n\n{}",
            bug_report_lines()
        );
        let blocks = help_blocks(&help);
        assert_eq!(
            blocks.description,
            [vec!["x runs y.", "It is quick."], vec!["More prose: here."]]
        );
        let titles: Vec<&str> = blocks.titled.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles, ["Usage", "Options"]);
        assert_eq!(blocks.titled[0].1, ["  x [-h HOST]"]);
    }
}
