//! What a new user meets first: the help lists every subcommand and each one's `--help`
//! works; a word that is not a subcommand is a database name, as in pgbench 18; when no
//! server answers, a person at a terminal is pointed at `pgrush demo`, while a pipe gets
//! exactly pgbench 18's stderr.

mod help_common;

use help_common::listed_subcommands;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use pgrush_testkit::oracle::{self, Which};
use pgrush_testkit::{self as testkit, Output};

/// Both programs run under this name, so their messages can be compared as they are.
const ARGV0: &str = "bin/pgbench-under-test";

const HINT: &str = "hint: no PostgreSQL server answered; \"pgrush demo\"";

fn pgrush() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    cmd
}

/// `program ARGS` against a closed port, under [`ARGV0`].
fn against_closed_port(mut cmd: Command, port: u16, args: &[&str]) -> Command {
    testkit::clear_pg_env(&mut cmd);
    cmd.arg0(ARGV0)
        .args(args)
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", port.to_string());
    cmd
}

/// Runs `cmd` with its standard error on a new pseudo-terminal; returns (exit code,
/// what it wrote to the terminal).
fn run_with_terminal_stderr(cmd: &mut Command) -> (i32, String) {
    let (mut master, slave) = open_pty();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(slave))
        .spawn()
        .expect("spawn");
    // Replacing the command's stderr closes our copy of the terminal's slave side, so
    // the master reads until the child has exited (EIO).
    cmd.stderr(Stdio::null());
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match master.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
    let status = child.wait().expect("wait");
    // The terminal turns "\n" into "\r\n".
    let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
    (status.code().unwrap_or(-1), text)
}

/// A new pseudo-terminal: (master as a file, slave).
fn open_pty() -> (std::fs::File, OwnedFd) {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    // SAFETY: openpty writes two descriptors into the integers we pass; the name,
    // termios and window-size pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are fresh and owned by nothing else.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    }
}

#[test]
fn no_server_hint_only_on_a_terminal() {
    let port = pgrush_testkit::closed_port();
    for (args, last_error) in [
        (
            &["-n", "-t", "1"][..],
            "could not create connection for setup\n",
        ),
        (
            &["-i", "-s", "1"][..],
            "could not create connection for initialization\n",
        ),
    ] {
        // In a pipe: exactly pgbench 18's stderr and exit status.
        let ours = testkit::run(&mut against_closed_port(pgrush(), port, args));
        let pgbench = oracle::require(Which::Pgbench18);
        let theirs = testkit::run(&mut against_closed_port(pgbench.command(), port, args));
        assert_eq!(
            (ours.code, &ours.stderr),
            (theirs.code, &theirs.stderr),
            "{args:?}"
        );
        assert!(!ours.stderr.contains("hint:"), "{}", ours.stderr);

        // On a terminal: the same lines, then the hint.
        let (code, text) = run_with_terminal_stderr(&mut against_closed_port(pgrush(), port, args));
        assert_eq!(code, 1, "{text}");
        let (before, hint) = text
            .split_once(&format!("pgbench-under-test: {HINT}"))
            .unwrap_or_else(|| panic!("no hint on the terminal for {args:?}:\n{text}"));
        assert_eq!(before, theirs.stderr, "{args:?}");
        assert!(before.ends_with(last_error), "{before}");
        assert!(hint.ends_with("cluster\n"), "{hint}");
    }
}

#[test]
fn no_hint_when_a_server_answered() {
    let cluster = pgrush_testkit::shared();
    let mut cmd = pgrush();
    cmd.args(["-n", "-t", "1", "no_such_database_here"]);
    for (name, value) in cluster.env() {
        cmd.env(name, value);
    }
    let (code, text) = run_with_terminal_stderr(&mut cmd);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no_such_database_here"), "{text}");
    assert!(!text.contains("hint:"), "{text}");
}

#[test]
fn every_listed_subcommand_has_help_in_the_same_shape() {
    let help = testkit::run(pgrush().arg("--help"));
    assert_eq!(help.code, 0);
    let bugs = format!(
        "Report bugs to <{}/issues>.\npgrush home page: <{}>\n",
        env!("CARGO_PKG_REPOSITORY"),
        env!("CARGO_PKG_HOMEPAGE")
    );
    assert!(help.stdout.ends_with(&bugs), "{}", help.stdout);
    let names = listed_subcommands(&help.stdout);
    assert_eq!(
        names,
        [
            "capacity",
            "check",
            "demo",
            "merge",
            "ops",
            "report",
            "sweep",
            "timing",
            "completions",
            "man"
        ]
    );
    for name in &names {
        let out: Output = testkit::run(pgrush().args([name.as_str(), "--help"]));
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        assert!(out.stderr.is_empty(), "{name}: {}", out.stderr);
        let first = out.stdout.lines().next().unwrap_or("");
        assert!(
            first.starts_with(&format!("pgrush {name} ")),
            "{name}: {first}"
        );
        assert!(
            out.stdout.contains(&format!("\nUsage:\n  pgrush {name}")),
            "{name}: {}",
            out.stdout
        );
        assert!(out.stdout.ends_with(&bugs), "{name}: {}", out.stdout);
    }
}

#[test]
fn an_unknown_word_is_a_database_name_as_in_pgbench() {
    let port = pgrush_testkit::closed_port();
    let pgbench = oracle::require(Which::Pgbench18);
    for args in [&["frobnicate"][..], &["inventory", "-n"], &["-n", "sweep"]] {
        let ours = testkit::run(&mut against_closed_port(pgrush(), port, args));
        let theirs = testkit::run(&mut against_closed_port(pgbench.command(), port, args));
        assert_eq!(ours, theirs, "{args:?}");
    }
    // Under the name pgbench, even a subcommand's word is a database name.
    let ours =
        testkit::run(against_closed_port(pgrush(), port, &["demo"]).arg0(Path::new("pgbench")));
    let theirs = testkit::run(
        against_closed_port(pgbench.command(), port, &["demo"]).arg0(Path::new("pgbench")),
    );
    assert_eq!(ours, theirs);
}
