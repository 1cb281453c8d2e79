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
