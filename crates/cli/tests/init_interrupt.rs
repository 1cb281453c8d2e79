//! Ctrl-C during `-i`: pgbench 18 sends a cancel request, prints `Cancel request sent`,
//! and fails with the cancelled statement's error (exit status 1). pgrush must print the
//! same, stop generating rows at once, and leave nothing loaded.

mod child_process;
mod init_common;

use child_process::{Streams, wait_with_timeout};
use init_common::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Which program an interrupted run uses.
#[derive(Clone, Copy, Debug)]
enum Program {
    Pgbench,
    Pgrush,
}

impl Program {
    fn command(self) -> Command {
        match self {
            Program::Pgbench => pgbench_command(),
            Program::Pgrush => pgrush_command(),
        }
    }
}

/// What an interrupted initialization left behind.
struct Interrupted {
    code: Option<i32>,
    stderr: String,
    /// Seconds from the signal to the end of the process.
    stop_seconds: f64,
}

/// Runs `program -i args db`, sends SIGINT once stderr shows a line starting with
/// `signal_after` (plus `delay`), and collects the outcome.
fn interrupt(
    program: Program,
    args: &[&str],
    db: &str,
    signal_after: &str,
    delay: Duration,
) -> Interrupted {
    let mut child: Child = program
        .command()
        .args(args)
        .arg(db)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the initialization");
    let streams = Streams::new(&mut child);
    assert!(
        streams.wait_for(signal_after, Duration::from_secs(60)),
        "{program:?} {args:?} never printed {signal_after:?}"
    );
    std::thread::sleep(delay);
    let signalled = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let code = wait_with_timeout(&mut child, Duration::from_secs(60));
    let stop_seconds = signalled.elapsed().as_secs_f64();
    let (_, stderr) = streams.finish();
    Interrupted {
        code,
        stderr,
        stop_seconds,
    }
}

/// stderr without progress lines, the server's COPY position masked (it depends on
/// when the cancel arrived), timings masked and pgbench's name replaced by pgrush's.
fn comparable(stderr: &str) -> String {
    let kept: Vec<String> = stderr
        .lines()
        .filter(|l| !l.contains(" tuples ("))
        .map(|l| match l.find(", line ") {
            Some(at) if l.starts_with("CONTEXT:  COPY ") => format!("{}, line N", &l[..at]),
            _ => l.to_string(),
        })
        .collect();
    normalize(&(kept.join("\n") + "\n"))
}

fn accounts_rows(db: &str) -> String {
    cluster()
        .psql_db(db, "select count(*) from pgbench_accounts")
        .unwrap_or_else(|e| format!("error: {e}"))
        .trim()
        .to_string()
}

#[test]
fn ctrl_c_during_copy_cancels_it_as_pgbench_does() {
    let args = ["-i", "-s", "20"];
    let first_progress = "100000 of 2000000 tuples";
    // pgbench ends its COPY normally after Ctrl-C, so when the server has not acted on
    // the cancel by then its COPY succeeds (its own race): try it up to three times.
    let (oracle_db, want) = (0..3)
        .map(|_| {
            let db = new_db("int_pgbench");
            let out = interrupt(Program::Pgbench, &args, &db, first_progress, Duration::ZERO);
            (db, out)
        })
        .find(|(_, out)| {
            out.stderr
                .contains("canceling statement due to user request")
        })
        .expect("pgbench's COPY was never cancelled");
    assert_eq!(want.code, Some(1), "pgbench: {}", want.stderr);
    assert!(
        want.stderr.contains("Cancel request sent\n"),
        "{}",
        want.stderr
    );
    assert_eq!(accounts_rows(&oracle_db), "0");
    for jobs in ["1", "2"] {
        let db = new_db("int_pgrush");
        let mut pargs = args.to_vec();
        pargs.extend(["-j", jobs]);
        let got = interrupt(Program::Pgrush, &pargs, &db, first_progress, Duration::ZERO);
        assert_eq!(got.code, Some(1), "pgrush -j {jobs}: {}", got.stderr);
        assert_eq!(
            comparable(&got.stderr),
            comparable(&want.stderr),
            "stderr of -j {jobs}"
        );
        // It stopped generating at once instead of sending all the rows.
        assert!(
            !got.stderr.contains("2000000 of 2000000"),
            "-j {jobs} kept loading:\n{}",
            got.stderr
        );
        assert!(
            got.stop_seconds < 10.0,
            "-j {jobs} took {} s",
            got.stop_seconds
        );
        assert_eq!(accounts_rows(&db), "0", "rows left by -j {jobs}");
    }
}

/// Holds an exclusive lock on pgbench_branches of `db` (through psql) until dropped.
struct LockHolder {
    psql: Child,
}

impl LockHolder {
    fn new(db: &str) -> LockHolder {
        let mut psql = client_command("psql", db)
            .args(["-X", "-q", "-A", "-t"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn psql");
        let stdin = psql.stdin.as_mut().expect("psql stdin");
        stdin
            .write_all(
                b"begin;\nlock table pgbench_branches in access exclusive mode;\nselect 'locked';\n",
            )
            .expect("write to psql");
        stdin.flush().expect("flush psql");
        let mut line = String::new();
        let stdout = psql.stdout.take().expect("psql stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read psql");
        assert_eq!(line.trim(), "locked");
        LockHolder { psql }
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        let _ = self.psql.kill();
        let _ = self.psql.wait();
    }
}

#[test]
fn ctrl_c_during_a_blocked_statement_cancels_it_as_pgbench_does() {
    let mut outcomes = Vec::new();
    for (program, jobs) in [
        (Program::Pgbench, "1"),
        (Program::Pgrush, "1"),
        (Program::Pgrush, "2"),
    ] {
        let db = new_db("int_lock");
        let setup = pgrush(&["-i", "-I", "dt"], &db);
        assert_eq!(setup.code, 0, "{}", setup.stderr);
        let _lock = LockHolder::new(&db);
        let mut args = vec!["-i", "-I", "g"];
        if matches!(program, Program::Pgrush) {
            args.extend(["-j", jobs]);
        }
        // The truncate of the `g` step waits for the lock until the cancel arrives.
        let got = interrupt(
            program,
            &args,
            &db,
            "generating data (client-side)...",
            Duration::from_millis(300),
        );
        assert_eq!(got.code, Some(1), "{program:?} -j {jobs}: {}", got.stderr);
        assert!(
            got.stderr
                .contains("ERROR:  canceling statement due to user request"),
            "{program:?} -j {jobs}: {}",
            got.stderr
        );
        outcomes.push((format!("{program:?} -j {jobs}"), comparable(&got.stderr)));
    }
    let (_, want) = &outcomes[0];
    for (name, got) in &outcomes[1..] {
        assert_eq!(got, want, "stderr of {name}");
    }
}
