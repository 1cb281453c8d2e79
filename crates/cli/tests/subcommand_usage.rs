//! Every subcommand speaks with one voice about a bad command line: an unknown option,
//! a missing argument and a bad value each give one message (glibc's line, or
//! `pgrush: error: ...`) and the hint naming that subcommand's `--help`, exit status 1,
//! nothing on standard output. And the completions and manual pages cover every option
//! of every subcommand's table (as its `--help`, generated from the same table, lists them).

mod help_common;

use std::process::{Command, Output};

const PGRUSH: &str = env!("CARGO_BIN_EXE_pgrush");

/// One subcommand's three bad command lines.
struct BadLines {
    name: &'static str,
    missing_argument: &'static [&'static str],
    bad_value: &'static [&'static str],
}

/// For every subcommand: a missing argument and a bad value. (`man` has no option
/// that takes a value and no operand it needs: its "missing argument" is an argument
/// given to `--list`, which takes none.)
const BAD_LINES: &[BadLines] = &[
    BadLines {
        name: "capacity",
        missing_argument: &["--slo"],
        bad_value: &["--slo", "p99<5ms", "--precision", "none"],
    },
    BadLines {
        name: "check",
        missing_argument: &["--workload"],
        bad_value: &["--workload", "tpcx"],
    },
    BadLines {
        name: "demo",
        missing_argument: &["-T"],
        bad_value: &["-s", "0"],
    },
    BadLines {
        name: "merge",
        missing_argument: &["a.json", "--json"],
        bad_value: &["--json=", "a.json"],
    },
    BadLines {
        name: "ops",
        missing_argument: &["--repeat"],
        bad_value: &["--scale", "1,0"],
    },
    BadLines {
        name: "report",
        missing_argument: &["a.json", "--baseline"],
        bad_value: &["--assert=tps>", "a.json"],
    },
    BadLines {
        name: "sweep",
        missing_argument: &["--vary"],
        bad_value: &["--vary", "clients=1,2", "--warmup", "soon"],
    },
    BadLines {
        name: "timing",
        missing_argument: &["--duration"],
        bad_value: &["--clock=sundial"],
    },
    BadLines {
        name: "completions",
        missing_argument: &[],
        bad_value: &["tcsh"],
    },
    BadLines {
        name: "man",
        missing_argument: &["--list=pgrush"],
        bad_value: &["no-such-page"],
    },
];

/// `pgrush ARGS` with nothing of the caller's PostgreSQL environment, in a scratch
/// directory (nothing a subcommand could write lands in the source tree).
fn pgrush(args: &[&str]) -> Output {
    let dir = std::env::temp_dir();
    let mut cmd = Command::new(PGRUSH);
    cmd.args(args)
        .current_dir(dir)
        .env_remove("POSIXLY_CORRECT");
    for (name, _) in std::env::vars() {
        if name.starts_with("PG") {
            cmd.env_remove(name);
        }
    }
    cmd.output().expect("run pgrush")
}

fn stdout_of(args: &[&str]) -> String {
    let out = pgrush(args);
    assert!(out.status.success(), "pgrush {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The subcommands `pgrush --help` lists.
fn listed_subcommands() -> Vec<String> {
    help_common::listed_subcommands(&stdout_of(&["--help"]))
}

/// Checks a usage error of `name`: one message line, then the hint; exit 1; no stdout.
/// Returns the message line.
fn usage_error(name: &str, args: &[&str]) -> String {
    let mut full = vec![name];
    full.extend_from_slice(args);
    let out = pgrush(&full);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "pgrush {full:?}: {stderr}");
    assert!(out.stdout.is_empty(), "pgrush {full:?}: stdout not empty");
    let lines: Vec<&str> = stderr.lines().collect();
    let hint = format!("pgrush: hint: Try \"pgrush {name} --help\" for more information.");
    assert_eq!(lines.len(), 2, "pgrush {full:?}: {stderr}");
    assert_eq!(lines[1], hint, "pgrush {full:?}");
    let message = lines[0];
    assert!(
        message.starts_with("pgrush: error: ") || message.starts_with(&format!("{PGRUSH}: ")),
        "pgrush {full:?}: {message}"
    );
    message.to_string()
}

#[test]
fn every_subcommand_has_its_bad_command_lines_here() {
    let names: Vec<&str> = BAD_LINES.iter().map(|b| b.name).collect();
    assert_eq!(listed_subcommands(), names);
}

#[test]
fn an_unknown_option_names_the_subcommands_help() {
    for bad in BAD_LINES {
        let message = usage_error(bad.name, &["--no-such-option"]);
        assert_eq!(
            message,
            format!("{PGRUSH}: unrecognized option '--no-such-option'")
        );
        let message = usage_error(bad.name, &["-Z"]);
        assert_eq!(message, format!("{PGRUSH}: invalid option -- 'Z'"));
    }
}

#[test]
fn a_missing_argument_names_the_subcommands_help() {
    for bad in BAD_LINES {
        let message = usage_error(bad.name, bad.missing_argument);
        let glibc = ["requires an argument", "doesn't allow an argument"];
        assert!(
            glibc.iter().any(|m| message.contains(m)) || message.starts_with("pgrush: error: "),
            "{}: {message}",
            bad.name
        );
    }
}

#[test]
fn a_bad_value_names_the_subcommands_help() {
    for bad in BAD_LINES {
        let message = usage_error(bad.name, bad.bad_value);
        assert!(
            message.starts_with("pgrush: error: "),
            "{}: {message}",
            bad.name
        );
    }
}

/// The body of the bash or zsh function `_pgrush__NAME` of a completion script.
fn function_body<'a>(script: &'a str, name: &str) -> &'a str {
    let head = format!("\n_pgrush__{name}() {{\n");
    let start = script
        .find(&head)
        .unwrap_or_else(|| panic!("no function for {name}"))
        + head.len();
    let end = script[start..]
        .find("\n}\n")
        .map_or(script.len(), |e| start + e);
    &script[start..end]
}

#[test]
fn completions_and_man_pages_cover_every_subcommands_options() {
    let scripts: Vec<(&str, String)> = ["bash", "zsh", "fish"]
        .into_iter()
        .map(|shell| (shell, stdout_of(&["completions", shell])))
        .collect();
    for name in listed_subcommands() {
        let longs = help_common::long_options(&stdout_of(&[&name, "--help"]));
        assert!(longs.contains(&"help".to_string()), "{name}: {longs:?}");
        let page = stdout_of(&["man", &name]).replace("\\-", "-");
        for long in &longs {
            assert!(
                page.contains(&format!("--{long}")),
                "pgrush-{name}(1): --{long}"
            );
            for (shell, script) in &scripts {
                let found = match *shell {
                    "fish" => script.lines().any(|l| {
                        l.starts_with(&format!(
                            "complete -c pgrush -n '__pgrush_using_subcommand {name}' "
                        )) && l.contains(&format!(" -l '{long}' "))
                    }),
                    _ => function_body(script, &name).contains(&format!("--{long}")),
                };
                assert!(found, "{shell}: {name} --{long}");
            }
        }
    }
}
