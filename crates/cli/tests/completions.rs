//! `pgrush completions bash|zsh|fish`, loaded in the real shells: each shell
//! completes the options, the values of `-b`, `-M`, `--partition-method` and
//! file options, and the subcommands; every option of `--help` and every
//! subcommand appears in every script. Needs bash, bash-completion, zsh and
//! fish (`scripts/install-deps`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PGRUSH: &str = env!("CARGO_BIN_EXE_pgrush");

fn pgrush(args: &[&str]) -> Output {
    Command::new(PGRUSH)
        .args(args)
        .output()
        .expect("run pgrush")
}

/// The script for `shell`, written to `dir`.
fn write_script(dir: &Path, shell: &str) -> PathBuf {
    let out = pgrush(&["completions", shell]);
    assert!(out.status.success(), "{shell}: {out:?}");
    let path = dir.join(format!("pgrush.{shell}"));
    std::fs::write(&path, &out.stdout).expect("write script");
    path
}

/// Runs `shell args...`; returns stdout, failing on a non-zero exit or any stderr.
fn run_shell(shell: &str, args: &[&str]) -> String {
    let out = Command::new(shell)
        .args(args)
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shell} (scripts/install-deps installs it): {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{shell} {args:?}: {}\n{stderr}",
        out.status
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The long options and subcommands `pgrush --help` lists.
fn help_words() -> (Vec<String>, Vec<String>) {
    let help = String::from_utf8(pgrush(&["--help"]).stdout).expect("utf-8");
    let mut longs = Vec::new();
    let mut subcommands = Vec::new();
    let mut in_subcommands = false;
    for line in help.lines() {
        let text = line.trim_start();
        if line.starts_with("Subcommands") || line.is_empty() {
            in_subcommands = line.starts_with("Subcommands");
        }
        if let Some(rest) = text.strip_prefix("pgrush ").filter(|_| in_subcommands) {
            subcommands.extend(rest.split_whitespace().next().map(str::to_string));
        }
        if !text.starts_with('-') || !line.starts_with("  ") {
            continue;
        }
        let synopsis = text.split("  ").next().unwrap_or("");
        for spelling in synopsis.split(", ") {
            if let Some(long) = spelling.strip_prefix("--") {
                let end = long.find(['=', '[', ' ']).unwrap_or(long.len());
                longs.push(long[..end].to_string());
            }
        }
    }
    assert!(longs.len() > 50, "{longs:?}");
    assert!(subcommands.contains(&"demo".to_string()), "{subcommands:?}");
    (longs, subcommands)
}

/// What `_pgrush` puts in COMPREPLY for each case: `(COMP_LINE, COMP_WORDS)`
/// as bash would split them (at `=` too), the cursor at the end.
fn bash_replies(
    script: &Path,
    with_bash_completion: bool,
    cases: &[(&str, &[&str])],
) -> Vec<String> {
    let mut program = String::new();
    if with_bash_completion {
        program.push_str("source /usr/share/bash-completion/bash_completion\n");
    }
    program.push_str(&format!("source '{}'\n", script.display()));
    program.push_str(
        "comp() { COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; shift; COMP_WORDS=(\"$@\"); \
         COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _pgrush; local IFS='|'; echo \"${COMPREPLY[*]}\"; }\n",
    );
    for (line, words) in cases {
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        program.push_str(&format!("comp '{line}' {}\n", quoted.join(" ")));
    }
    run_shell("bash", &["--norc", "--noprofile", "-c", &program])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_options_values_and_subcommands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = write_script(dir.path(), "bash");
    std::fs::write(dir.path().join("run.sql"), "SELECT 1;\n").expect("write");
    let file = dir.path().join("ru");
    let file = file.to_str().expect("utf-8 path");
    let cases: &[(&str, &[&str])] = &[
        ("pgrush --cl", &["pgrush", "--cl"]),
        ("pgrush -b ", &["pgrush", "-b", ""]),
        ("pgrush --builtin se", &["pgrush", "--builtin", "se"]),
        ("pgrush -b tpcb-like@", &["pgrush", "-b", "tpcb-like@"]),
        ("pgrush -M ", &["pgrush", "-M", ""]),
        (
            "pgrush --partition-method=h",
            &["pgrush", "--partition-method", "=", "h"],
        ),
        ("pgrush ", &["pgrush", ""]),
        ("pgrush -c ", &["pgrush", "-c", ""]),
        ("pgrush -I ", &["pgrush", "-I", ""]),
        ("pgrush completions ", &["pgrush", "completions", ""]),
        ("pgrush report --m", &["pgrush", "report", "--m"]),
        ("pgrush --he", &["pgrush", "--he"]),
    ];
    let mut with_file = cases.to_vec();
    let file_line = format!("pgrush -f {file}");
    let file_words = ["pgrush", "-f", file];
    with_file.push((&file_line, &file_words[..]));
    let (_, subcommands) = help_words();
    assert!(subcommands.ends_with(&["completions".to_string(), "man".to_string()]));
    let listed = subcommands.join("|");
    let expected = [
        "--client",
        "tpcb-like|simple-update|select-only",
        "select-only",
        "",
        "simple|extended|prepared",
        "hash",
        &listed,
        "",
        "",
        "bash|zsh|fish",
        "--markdown",
        "--help",
    ];
    for bash_completion in [false, true] {
        let replies = bash_replies(&script, bash_completion, &with_file);
        assert_eq!(
            &replies[..expected.len()],
            expected,
            "bash-completion: {bash_completion}"
        );
        let file_reply = &replies[expected.len()];
        assert!(file_reply.ends_with("run.sql"), "-f: {file_reply:?}");
    }
}

/// Completes `line` in an interactive zsh driven through `zpty`: a wrapper
/// of `compadd` records the matches, then the shell exits after completing.
const ZSH_CAPTURE: &str = r#"zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''; autoload -U compinit; compinit -u -D; source ${(q)1}"
zpty -w z "bindkey '^I' complete-word; comppostfuncs=(exit)"
zpty -w z "compadd() { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return; fi; local -a hits; builtin compadd -A hits \"\$@\"; (( \$#hits )) && print -rl -- \$hits >> ${(q)2}; builtin compadd \"\$@\" }"
zpty -w z "$3"$'\t'
while zpty -r z line; do :; done
zpty -d z
"#;

/// The matches zsh offers for `line`; `case` names the file they are written to.
fn zsh_matches(dir: &Path, script: &Path, case: usize, line: &str) -> Vec<String> {
    let capture = dir.join("capture.zsh");
    let out = dir.join(format!("matches-{case}"));
    let args = [
        "-f",
        capture.to_str().expect("utf-8"),
        script.to_str().expect("utf-8"),
        out.to_str().expect("utf-8"),
        line,
    ];
    let status = Command::new("timeout")
        .arg("20")
        .arg("zsh")
        .args(args)
        .status()
        .expect("run zsh (scripts/install-deps installs it)");
    assert!(status.success(), "zsh capture of {line:?}: {status}");
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let mut matches: Vec<String> = text.lines().map(str::to_string).collect();
    matches.sort();
    matches
}

#[test]
fn zsh_completes_options_values_and_subcommands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = write_script(dir.path(), "zsh");
    let loaded = run_shell(
        "zsh",
        &[
            "-f",
            "-c",
            &format!(
                "autoload -U compinit; compinit -u -D; source '{}'; whence -w _pgrush",
                script.display()
            ),
        ],
    );
    assert_eq!(loaded.trim(), "_pgrush: function");
    let sorted = |list: &[&str]| {
        let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    let (_, subcommands) = help_words();
    let all_subcommands: Vec<&str> = subcommands.iter().map(String::as_str).collect();
    let cases: &[(&str, &[&str])] = &[
        ("pgrush --cl", &["--client"]),
        ("pgrush -b ", &["tpcb-like", "simple-update", "select-only"]),
        ("pgrush -b tpcb-like@", &[]),
        ("pgrush -M ", &["simple", "extended", "prepared"]),
        ("pgrush --partition-method=", &["range", "hash"]),
        ("pgrush ", &all_subcommands),
        ("pgrush report --m", &["--markdown"]),
        ("pgrush man ", &all_subcommands),
    ];
    std::fs::write(dir.path().join("capture.zsh"), ZSH_CAPTURE).expect("write");
    // Each capture starts an interactive zsh and compinit: run them side by side.
    let found: Vec<Vec<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .iter()
            .enumerate()
            .map(|(case, (line, _))| {
                let (dir, script) = (dir.path(), &script);
                scope.spawn(move || zsh_matches(dir, script, case, line))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("capture"))
            .collect()
    });
    for ((line, expected), found) in cases.iter().zip(found) {
        assert_eq!(found, sorted(expected), "{line:?}");
    }
}

fn fish_complete(script: &Path, line: &str) -> Vec<String> {
    let program = format!("source '{}'; complete -C '{line}'", script.display());
    let mut words: Vec<String> = run_shell("fish", &["--no-config", "-c", &program])
        .lines()
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .collect();
    words.sort();
    words
}

#[test]
fn fish_completes_options_values_and_subcommands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = write_script(dir.path(), "fish");
    std::fs::write(dir.path().join("run.sql"), "SELECT 1;\n").expect("write");
    let file_line = format!("pgrush --file {}", dir.path().join("ru").display());
    let file_match = dir.path().join("run.sql").display().to_string();
    let (_, subcommands) = help_words();
    let mut all_subcommands: Vec<&str> = subcommands.iter().map(String::as_str).collect();
    all_subcommands.sort();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("pgrush --cl", vec!["--client"]),
        (
            "pgrush -b ",
            vec!["select-only", "simple-update", "tpcb-like"],
        ),
        ("pgrush -M ", vec!["extended", "prepared", "simple"]),
        (
            "pgrush --partition-method=",
            vec!["--partition-method=hash", "--partition-method=range"],
        ),
        ("pgrush ", all_subcommands),
        ("pgrush report --m", vec!["--markdown"]),
        ("pgrush completions ", vec!["bash", "fish", "zsh"]),
        ("pgrush -c ", vec![]),
        (&file_line, vec![&file_match]),
    ];
    for (line, expected) in cases {
        assert_eq!(fish_complete(&script, line), expected, "{line:?}");
    }
}

#[test]
fn every_option_and_subcommand_is_in_every_script() {
    let (longs, subcommands) = help_words();
    for shell in ["bash", "zsh", "fish"] {
        let out = pgrush(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).expect("utf-8");
        for long in &longs {
            let found = match shell {
                "fish" => script.contains(&format!(" -l '{long}' ")),
                _ => script.contains(&format!("--{long}")),
            };
            assert!(found, "{shell}: --{long} missing");
        }
        for name in &subcommands {
            assert!(script.contains(name.as_str()), "{shell}: {name} missing");
        }
    }
}

#[test]
fn bad_shell_names_are_errors() {
    for (args, message) in [
        (&["completions", "tcsh"][..], "unknown shell \"tcsh\""),
        (&["completions"][..], "name a shell: bash, zsh, fish"),
        (&["completions", "bash", "zsh"][..], "too many arguments"),
    ] {
        let out = pgrush(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("pgrush: error: "), "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
        assert!(
            stderr.ends_with(
                "pgrush: hint: Try \"pgrush completions --help\" for more information.\n"
            ),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn help_names_the_shells() {
    for flag in ["--help", "-?"] {
        let out = pgrush(&["completions", flag]);
        assert!(out.status.success(), "{flag}");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert!(
            text.contains("pgrush completions bash|zsh|fish\n"),
            "{text}"
        );
    }
}
