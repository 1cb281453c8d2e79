//! Long steps on a terminal: `pgrush ops` and `pgrush sweep` redraw one line with what
//! runs, its elapsed time and the time left where known (off a terminal they print one
//! line per step: `ops_steps`, `sweep`).

mod ops_common;
mod tty_common;

use std::process::Command;

use ops_common::Sandbox;
use tty_common::run_in_a_terminal;

/// The progress lines drawn (between `\r` and the erase-line escape).
fn drawn(screen: &str) -> Vec<&str> {
    screen
        .split('\r')
        .filter_map(|part| part.strip_prefix("\x1b[K"))
        .filter(|line| !line.is_empty())
        .collect()
}

#[test]
fn ops_shows_the_workload_with_its_elapsed_and_left_time() {
    let sandbox = Sandbox::new();
    let args = [
        "--scale",
        "1",
        "--steps",
        "load,crash-recovery",
        "--workload-seconds",
        "3",
        "--workload-clients",
        "1",
    ];
    let (code, screen) = run_in_a_terminal(&sandbox.command(None, &args));
    assert_eq!(code, 0, "{screen}");
    let lines = drawn(&screen);
    let workload: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("pgrush ops: scale 1: crash-recovery (workload): "))
        .collect();
    // Drawn after 1 s, then every second of the 3 s workload: "1 s, about 2 s left".
    assert!(!workload.is_empty(), "{screen:?}");
    assert!(
        workload
            .iter()
            .all(|l| l.ends_with(" s left") && l.contains(" s, about ")),
        "{workload:?}"
    );
    // On a terminal the steps are not announced by lines of their own.
    assert!(
        !screen.contains("pgrush ops: scale 1: crash-recovery\r\n"),
        "{screen:?}"
    );
    assert!(
        screen.contains("pgrush ops: disk space: scale 1 needs about "),
        "{screen:?}"
    );
    assert_eq!(sandbox.leftover_clusters(), Vec::<String>::new());
}

#[test]
fn sweep_shows_run_k_of_n_and_the_time_left_in_the_sweep() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("sweep");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    cmd.arg("sweep").args([
        "--vary",
        "clients=1",
        "--repeat",
        "1",
        "--warmup",
        "2",
        "-s",
        "1",
        "-T",
        "2",
        "--out",
    ]);
    cmd.arg(&out_dir);
    pgrush_testkit::clear_pg_env(&mut cmd);
    let (code, screen) = run_in_a_terminal(&cmd);
    assert_eq!(code, 0, "{screen}");
    let lines = drawn(&screen);
    // The warm-up is the measured run's own (`--warmup`): one phase.
    let line = lines
        .iter()
        .find(|l| {
            l.starts_with("pgrush sweep: [1/1] cell ") && l.contains(": warm-up and measured run: ")
        })
        .unwrap_or_else(|| panic!("no run line in {screen:?}"));
    // 4 s planned for the run (2 s warm-up, -T 2): the time left counts down.
    assert!(line.ends_with(" s left in the sweep"), "{line}");
}
