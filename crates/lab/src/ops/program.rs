//! Running the PostgreSQL programs (and pgrush itself) and measuring what they wrote.

use std::io::{BufRead, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pgrush_cluster::stop_process_group;

use crate::ops::error::OpsError;

/// How often a running program is checked for Ctrl-C.
const POLL: Duration = Duration::from_millis(20);
/// How long an interrupted program's process group has, after `SIGTERM`, before the
/// rest of it is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// What a finished program left.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// Its standard output.
    pub stdout: String,
    /// Its standard error, line by line, each with the seconds since the start at which
    /// it was read.
    pub stderr_lines: Vec<(f64, String)>,
    /// Seconds from start to exit.
    pub seconds: f64,
}

/// Runs `cmd` to completion; returns its standard output and the seconds it took.
/// Ctrl-C kills the program (then the error is [`OpsError::Interrupted`]).
pub fn run_timed(cmd: Command, program: &str) -> Result<(String, f64), OpsError> {
    run_program(cmd, program).map(|f| (f.stdout, f.seconds))
}

/// Runs `cmd` to completion, timestamping its standard error's lines as they come.
///
/// The program leads a process group of its own, so that a terminal's Ctrl-C reaches
/// pgrush alone and pgrush decides; on Ctrl-C (or `SIGTERM` to pgrush) the whole group
/// is ended, the processes a program forks included (`pg_basebackup -X stream`'s WAL
/// streamer), and the error is [`OpsError::Interrupted`].
pub fn run_program(mut cmd: Command, program: &str) -> Result<Finished, OpsError> {
    if crate::ops::interrupt::requested() {
        return Err(OpsError::Interrupted);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| OpsError::io(format!("run {program}"), e))?;
    let stdout = child.stdout.take().map(read_all);
    let stderr = child.stderr.take().map(|pipe| read_lines(pipe, start));
    let status = loop {
        if crate::ops::interrupt::requested() {
            stop_process_group(&mut child, STOP_GRACE);
            return Err(OpsError::Interrupted);
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => return Err(OpsError::io(format!("wait for {program}"), e)),
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let stdout = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr_lines = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    if !status.success() {
        let tail = &stderr_lines[stderr_lines.len().saturating_sub(5)..];
        let lines: Vec<&str> = tail.iter().map(|(_, l)| l.as_str()).collect();
        return Err(OpsError::Program {
            program: program.to_string(),
            status: status.to_string(),
            output: lines.join("\n"),
        });
    }
    Ok(Finished {
        stdout,
        stderr_lines,
        seconds,
    })
}

/// Reads a pipe to its end on a thread of its own.
fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Reads a pipe's lines on a thread of its own, each with when it came (seconds since
/// `start`).
fn read_lines(
    pipe: impl Read + Send + 'static,
    start: Instant,
) -> std::thread::JoinHandle<Vec<(f64, String)>> {
    std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut reader = std::io::BufReader::new(pipe);
        let mut buf = Vec::new();
        while matches!(reader.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
            let line = String::from_utf8_lossy(&buf).trim_end().to_string();
            lines.push((start.elapsed().as_secs_f64(), line));
            buf.clear();
        }
        lines
    })
}

/// Bytes and files under `path` (a file or a directory tree).
pub fn disk_usage(path: &Path) -> (u64, u64) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return (0, 0);
    };
    if !meta.is_dir() {
        return (meta.len(), 1);
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return (0, 0);
    };
    entries.flatten().fold((0, 0), |(bytes, files), entry| {
        let (b, f) = disk_usage(&entry.path());
        (bytes + b, files + f)
    })
}

/// Removes a file or directory tree if it exists.
pub fn remove(path: &Path) -> Result<(), OpsError> {
    let result = match std::fs::symlink_metadata(path) {
        Err(_) => return Ok(()),
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
    };
    result.map_err(|e| OpsError::io(format!("remove {}", path.display()), e))
}

/// Bytes per second, `None` for an instant.
pub fn rate(bytes: u64, seconds: f64) -> Option<f64> {
    (seconds > 0.0).then(|| bytes as f64 / seconds)
}

/// Polls `ready` every `poll` until it holds: [`OpsError::Interrupted`] on Ctrl-C, and
/// the error `late` describes when `limit` passes first.
pub fn wait_until(
    (limit, poll): (Duration, Duration),
    mut ready: impl FnMut() -> Result<bool, OpsError>,
    late: impl FnOnce() -> String,
) -> Result<(), OpsError> {
    let start = Instant::now();
    while !ready()? {
        if crate::ops::interrupt::requested() {
            return Err(OpsError::Interrupted);
        }
        if start.elapsed() > limit {
            return Err(OpsError::Unexpected(late()));
        }
        std::thread::sleep(poll);
    }
    Ok(())
}
