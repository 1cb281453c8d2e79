//! Running the PostgreSQL programs (and pgrush itself) and measuring what they wrote.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::error::OpsError;

/// Runs `cmd` to completion; returns its standard output and the seconds it took.
pub fn run_timed(mut cmd: Command, program: &str) -> Result<(String, f64), OpsError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let out = cmd
        .output()
        .map_err(|e| OpsError::io(format!("run {program}"), e))?;
    let seconds = start.elapsed().as_secs_f64();
    if crate::interrupt::requested() {
        return Err(OpsError::Interrupted);
    }
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        return Err(OpsError::Program {
            program: program.to_string(),
            status: out.status.to_string(),
            output: lines[lines.len().saturating_sub(5)..].join("\n"),
        });
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), seconds))
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
