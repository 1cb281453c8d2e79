//! `pgrush man`: every page renders with groff without a warning, `pgrush(1)`
//! shows every option of `--help` and every subcommand, and `pgrush-NAME(1)`
//! every option of `pgrush NAME --help`. Needs groff (`scripts/install-deps`).

mod help_common;

use help_common::long_options;
use std::io::Write;
use std::process::{Command, Output, Stdio};

const PGRUSH: &str = env!("CARGO_BIN_EXE_pgrush");

fn pgrush(args: &[&str]) -> Output {
    Command::new(PGRUSH)
        .args(args)
        .output()
        .expect("run pgrush")
}

fn stdout_of(args: &[&str]) -> String {
    let out = pgrush(args);
    assert!(out.status.success(), "pgrush {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs `groff -man ARGS` on `page`; returns (stdout, stderr).
fn groff(page: &str, args: &[&str]) -> (String, String) {
    let mut child = Command::new("groff")
        .arg("-man")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run groff (scripts/install-deps installs it)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write page");
    let out = child.wait_with_output().expect("groff");
    assert!(out.status.success(), "groff {args:?}: {out:?}");
    (
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// The page as text: plain characters, lines long enough that nothing is hyphenated.
fn rendered(page: &str) -> String {
    groff(page, &["-Tutf8", "-P-cbou", "-rLL=300n"]).0
}

/// The manual pages' names, as `pgrush man --list` prints them.
fn page_names() -> Vec<String> {
    stdout_of(&["man", "--list"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_page_renders_without_warnings() {
    let names = page_names();
    assert_eq!(names[0], "pgrush");
    for name in &names {
        let subcommand = name.strip_prefix("pgrush-");
        let page = stdout_of(&["man"].into_iter().chain(subcommand).collect::<Vec<_>>());
        assert!(
            page.contains(&format!(".TH {} 1 ", name.to_uppercase())),
            "{name}"
        );
        let (_, warnings) = groff(&page, &["-ww", "-z"]);
        assert_eq!(warnings, "", "{name}");
        let text = rendered(&page);
        assert!(text.contains(&format!("{name} - ")), "{name}: NAME section");
        assert!(text.contains("REPORTING BUGS"), "{name}");
    }
}

#[test]
fn pages_carry_a_reproducible_date() {
    let page = stdout_of(&["man"]);
    let th = page
        .lines()
        .find(|l| l.starts_with(".TH "))
        .unwrap_or_else(|| panic!("no .TH line:\n{page}"));
    let date = th.split_whitespace().nth(3).unwrap_or_default();
    let digits: Vec<usize> = date.split('-').map(str::len).collect();
    assert_eq!(digits, [4, 2, 2], "{th}");
    assert!(date.chars().all(|c| c.is_ascii_digit() || c == '-'), "{th}");
    assert!(rendered(&page).contains(date), "the footer shows {date}");
    assert_eq!(stdout_of(&["man"]), page, "the same page on every run");
}

/// A terminal gets the page rendered (by `man -l -` here, with `cat` as its pager),
/// not the roff: `script` gives pgrush a pseudo-terminal as its standard output.
#[test]
fn a_terminal_gets_the_rendered_page() {
    let out = Command::new("script")
        .args(["-qfec", &format!("'{PGRUSH}' man"), "/dev/null"])
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "80")
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    // Bold and underline as a terminal pager gets them: "X\x08X", "_\x08X".
    let mut text = String::new();
    for c in String::from_utf8_lossy(&out.stdout).chars() {
        if c == '\x08' {
            text.pop();
        } else {
            text.push(c);
        }
    }
    assert!(out.status.success(), "{out:?}");
    assert!(
        !text.contains(".TH ") && !text.contains("\n.SH"),
        "raw roff:\n{text}"
    );
    assert!(text.contains("NAME"), "{text}");
    assert!(text.contains("pgrush - "), "{text}");
    assert!(text.contains("REPORTING BUGS"), "{text}");
    // The list of pages is no page: printed as it is.
    let list = Command::new("script")
        .args(["-qfec", &format!("'{PGRUSH}' man --list"), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    assert!(
        String::from_utf8_lossy(&list.stdout).starts_with("pgrush\r\npgrush-"),
        "{list:?}"
    );
}

#[test]
fn main_page_shows_every_option_and_subcommand() {
    let help = stdout_of(&["--help"]);
    let longs = long_options(&help);
    assert!(longs.len() > 50, "{longs:?}");
    let text = rendered(&stdout_of(&["man"]));
    for long in &longs {
        assert!(text.contains(&format!("--{long}")), "--{long} missing");
    }
    assert!(text.contains("-c, --client=NUM"), "synopsis as in --help");
    assert!(text.contains("d: drop any existing pgbench tables"));
    let names = page_names();
    assert!(names.len() > 1, "{names:?}");
    for name in names.iter().skip(1) {
        let subcommand = name.trim_start_matches("pgrush-");
        assert!(text.contains(&format!("pgrush {subcommand}")), "{name}");
        assert!(text.contains(&format!("{name}(1)")), "{name}: SEE ALSO");
    }
}

#[test]
fn subcommand_pages_show_their_options() {
    for name in page_names().iter().skip(1) {
        let subcommand = name.trim_start_matches("pgrush-");
        let longs = long_options(&stdout_of(&[subcommand, "--help"]));
        assert!(
            longs.contains(&"help".to_string()),
            "{subcommand}: {longs:?}"
        );
        let text = rendered(&stdout_of(&["man", subcommand]));
        assert!(
            text.contains("SYNOPSIS") && text.contains("DESCRIPTION"),
            "{name}"
        );
        for long in &longs {
            assert!(
                text.contains(&format!("--{long}")),
                "{name}: --{long} missing"
            );
        }
    }
}

#[test]
fn unknown_pages_are_errors() {
    let out = pgrush(&["man", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        "pgrush: error: no manual page for \"nosuch\"\n\
         pgrush: hint: Try \"pgrush man --help\" for more information.\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn help_names_the_forms() {
    let text = stdout_of(&["man", "--help"]);
    for form in [
        "pgrush man   ",
        "pgrush man SUBCOMMAND",
        "pgrush man --list",
    ] {
        assert!(text.contains(form), "{form}: {text}");
    }
}
