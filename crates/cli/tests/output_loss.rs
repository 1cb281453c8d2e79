//! Output that cannot be delivered is a failure: standard output whose reader went away
//! ends pgrush as it ends pgbench 18 (SIGPIPE), `-l` lines and `--json` documents that
//! do not fit on a full file system give a non-zero status and leave no partial
//! document, and output files that cannot be written are found before the run starts.

mod bench_common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use bench_common::{DB, Prog, Scratch};

/// A transaction that lasts at least 200 ms: the report comes well after the banner.
const SLOW: &str = "\\sleep 200 ms\nSELECT 1;\n";

/// Runs `prog` with stdout a pipe that is closed once the first line (the banner) is
/// read, as `prog … | head -1` does; returns the signal that ended it, if any.
fn first_line_then_close(prog: Prog, dir: &Scratch, args: &[&str]) -> Option<i32> {
    let mut child = bench_common::command(prog, &dir.path, DB)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let _ = out.read_line(&mut line);
    drop(out);
    let status = child.wait().expect("wait");
    assert_eq!(
        status.code(),
        None,
        "{prog:?} exited with {status} instead of a signal"
    );
    status.signal()
}

#[test]
fn a_closed_standard_output_ends_the_run_with_sigpipe_as_pgbench() {
    bench_common::cluster();
    let dir = Scratch::new(&[("slow.sql", SLOW)]);
    let args = ["-n", "-f", "slow.sql", "-t", "1"];
    let pgbench = first_line_then_close(Prog::Pgbench, &dir, &args);
    assert_eq!(pgbench, Some(libc::SIGPIPE));
    assert_eq!(first_line_then_close(Prog::Pgrush, &dir, &args), pgbench);

    // `--json=-`: the document is standard output, the text report goes to stderr.
    let (read, write) = std::io::pipe().expect("pipe");
    drop(read);
    let status = bench_common::command(Prog::Pgrush, &dir.path, DB)
        .args(["-n", "-S", "-t", "5", "--json=-"])
        .stdout(write)
        .stderr(Stdio::null())
        .status()
        .expect("run");
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status}");
}

/// Output files that cannot be written are refused before connecting: no banner, the
/// message of a failed write, exit status 1.
#[test]
fn unwritable_output_files_are_refused_before_the_run() {
    bench_common::cluster();
    let dir = Scratch::new(&[]);
    let cases: [&[&str]; 3] = [
        &["--json=no/such/dir/run.json"],
        &["--html=no/such/dir/run.html"],
        &["--assert=tps>0", "--junit=no/such/dir/j.xml"],
    ];
    for extra in cases {
        let out = pgrush_testkit::run(
            bench_common::command(Prog::Pgrush, &dir.path, DB)
                .args(["-n", "-S", "-t", "5"])
                .args(extra),
        );
        let path = extra[extra.len() - 1]
            .split_once('=')
            .map_or("", |(_, p)| p);
        assert_eq!(out.code, 1, "{extra:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{extra:?}: the run started");
        assert_eq!(
            out.stderr,
            format!("pgrush: error: could not write file \"{path}\": No such file or directory\n")
        );
    }
    let mut sweep = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    sweep
        .current_dir(&dir.path)
        .args([
            "sweep",
            "--vary",
            "set:synchronous_commit=on,off",
            "--repeat",
            "1",
        ])
        .args(["--out", "sweep", "--json", "no/such/dir/s.json", "-T", "1"])
        .args(["-h", "/nonexistent-pgrush-socket-dir"]);
    let out = pgrush_testkit::run(&mut sweep);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("pgrush: error: sweep: no/such/dir/s.json: No such file or directory"),
        "{}",
        out.stderr
    );
}

/// On a full file system (a small tmpfs mounted in a private mount namespace), lost
/// `-l` lines make the exit status 1 (pgbench ignores the failed writes and exits 0),
/// and a `--json` document that does not fit is not left behind half written.
#[test]
fn a_full_file_system_is_a_failure_without_partial_files() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test mounts a tmpfs in a private mount namespace and needs root (CI runs as root)"
    );
    bench_common::cluster();
    let dir = Scratch::new(&[]);
    let mount = dir.path.join("small");
    std::fs::create_dir(&mount).expect("mount point");
    // The filler leaves one page free; standard output and error go outside.
    const SCRIPT: &str = r#"mount -t tmpfs -o size=64k pgrush-output-test "$1" || exit 97
cd "$1" || exit 98
head -c 60000 /dev/zero > filler 2>/dev/null
err=$2; shift 2
"$@" > /dev/null 2> "$err"; status=$?
echo "status $status"; ls -A; cat "$err""#;
    let pgrush = bench_common::command(Prog::Pgrush, &dir.path, DB);
    let mut cmd = pgrush_testkit::in_private_mount_namespace(SCRIPT);
    cmd.arg(&mount)
        .arg(dir.path.join("stderr.txt"))
        .arg(pgrush.get_program())
        .args(["-n", "-S", "-t", "2000", "-l", "--json=run.json"])
        .envs(pgrush.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))));
    let out = pgrush_testkit::run(&mut cmd);
    let report = out.stdout;
    assert!(report.starts_with("status 1\n"), "{report}");
    assert!(
        report.contains("pgrush: error: could not write to log file"),
        "{report}"
    );
    assert!(
        report
            .contains("pgrush: error: could not write file \"run.json\": No space left on device"),
        "{report}"
    );
    let files: Vec<&str> = report
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("pgrush"))
        .collect();
    assert!(
        !files.contains(&"run.json"),
        "a partial run.json is left: {report}"
    );
    assert!(!files.iter().any(|f| f.ends_with(".tmp")), "{report}");
}
