//! Runs that end abnormally: the server dies mid-run, and Ctrl-C (SIGINT).
//! Both exit 2 with the partial report, and every transaction the report
//! counts is in the `-l` log.

mod bench_common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bench_common::Scratch;
use pgrush_sandbox::Cluster;
use pgrush_sandbox::oracle::{self, Which};
use pgrush_sandbox::testkit;

fn wait_with_timeout(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            use std::os::unix::process::ExitStatusExt;
            return Some(
                status
                    .code()
                    .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
            );
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn_pgrush(dir: &Scratch, env: Vec<(String, String)>, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_pgrush"))
        .current_dir(&dir.path)
        .envs(env)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pgrush")
}

fn read_all(child: &mut Child) -> (String, String) {
    use std::io::Read;
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    (out, err)
}

fn processed(stdout: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|v| v.split('/').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no processed line in:\n{stdout}"))
}

fn log_lines(dir: &Scratch, prefix: &str) -> u64 {
    dir.files_with_prefix(prefix)
        .values()
        .map(|t| t.lines().count() as u64)
        .sum()
}

#[test]
fn server_killed_mid_run() {
    let cluster = Cluster::start().expect("start cluster");
    let init = testkit::run(
        oracle::require(Which::Pgbench18)
            .command()
            .args(["-i", "-s", "1", "-q"])
            .envs(cluster.env()),
    );
    assert_eq!(init.code, 0, "{}", init.stderr);
    let dir = Scratch::new(&[]);
    let mut child = spawn_pgrush(
        &dir,
        cluster.env(),
        &[
            "-n",
            "-T",
            "30",
            "-c",
            "2",
            "-j",
            "2",
            "-S",
            "-l",
            "--log-prefix=kill",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    let pid = cluster.pid().expect("postmaster pid");
    // SAFETY: sending SIGQUIT (immediate shutdown) to the sandbox's postmaster.
    unsafe { libc::kill(pid as i32, libc::SIGQUIT) };
    let code = wait_with_timeout(&mut child, Duration::from_secs(20));
    let (stdout, stderr) = read_all(&mut child);
    assert_eq!(code, Some(2), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("transaction type: <builtin: select only>"),
        "{stdout}"
    );
    assert!(
        stderr.contains("Run was aborted; the above results are incomplete."),
        "{stderr}"
    );
    let n = processed(&stdout);
    assert!(n > 0, "{stdout}");
    assert_eq!(log_lines(&dir, "kill"), n, "log lines vs report");
    drop(cluster);
}

#[test]
fn ctrl_c_stops_with_partial_report() {
    let cluster = bench_common::cluster();
    let dir = Scratch::new(&[]);
    let mut env = cluster.env();
    env.push(("PGDATABASE".to_string(), bench_common::DB.to_string()));
    let mut child = spawn_pgrush(
        &dir,
        env,
        &[
            "-n",
            "-T",
            "60",
            "-c",
            "2",
            "-S",
            "-l",
            "--log-prefix=int",
            "-P",
            "1",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let code = wait_with_timeout(&mut child, Duration::from_secs(10));
    let (stdout, stderr) = read_all(&mut child);
    assert_eq!(code, Some(2), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "too slow to stop"
    );
    assert!(stdout.contains("duration: 60 s"), "{stdout}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let n = processed(&stdout);
    assert!(n > 0, "{stdout}");
    assert_eq!(log_lines(&dir, "int"), n, "log lines vs report");
}
