//! Child processes: helper programs, the postmaster's signals, the watchdog.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::ClusterError;

/// Removes every `PG*` variable of this process's environment (libpq's connection
/// settings, `PGRUSH_*` switches) from `cmd`, so that a child program is steered only
/// by what the caller sets afterwards.
///
/// The cluster runs its own helper programs (`initdb`, `postgres`, `psql`) this way, so
/// a `PGHOST` or `PGDATABASE` meant for another server never leaks into them.
pub fn clear_pg_env(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"PG") {
            cmd.env_remove(name);
        }
    }
}

/// Runs a helper program to completion, failing with its output when it fails.
pub(crate) fn run_checked(cmd: &mut Command, program: &str) -> Result<(), ClusterError> {
    let out = cmd
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .map_err(|e| ClusterError::io(format!("run {program}"), e))?;
    if out.status.success() {
        return Ok(());
    }
    let mut output = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if output.is_empty() {
        output = String::from_utf8_lossy(&out.stdout).trim().to_string();
    }
    Err(ClusterError::Command {
        program: program.to_string(),
        status: out.status.to_string(),
        output,
    })
}

/// Sends `signal` to a process we started; false when it is already gone.
pub(crate) fn signal(pid: u32, signal: i32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: kill has no memory-safety preconditions; the pid is our own unreaped child
    // (or its process group, given as a negative number by the caller's choice of pid).
    unsafe { libc::kill(pid, signal) == 0 }
}

/// Waits up to `limit` for a child to exit; true when it did (and was reaped).
pub(crate) fn wait_exit(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `sig`, waits up to `grace`, then kills and reaps the child.
pub(crate) fn stop_child(child: &mut Child, sig: i32, grace: Duration) {
    signal(child.id(), sig);
    if !wait_exit(child, grace) {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// How often [`stop_process_group`] looks whether the group is gone.
const GROUP_POLL: Duration = Duration::from_millis(10);

/// Sends `sig` to every process of the group `pgid` (nothing for an id out of range).
pub(crate) fn signal_group(pgid: u32, sig: i32) {
    if let Ok(pgid) = i32::try_from(pgid) {
        // SAFETY: kill has no memory-safety preconditions; -pgid names the group.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

/// Ends `child`, started as the leader of a process group of its own
/// (`Command::process_group(0)`), and every process of that group, such as the process
/// `pg_basebackup -X stream` forks to stream WAL: `SIGTERM` to the group, then, for
/// what still runs after `grace`, `SIGKILL`. Returns once the child is reaped and no
/// process of the group runs (zombies left to another parent count as gone).
pub fn stop_process_group(child: &mut Child, grace: Duration) {
    let pgid = child.id();
    if i32::try_from(pgid).is_err() {
        return;
    }
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    let mut reaped = false;
    loop {
        reaped = reaped || matches!(child.try_wait(), Ok(Some(_)) | Err(_));
        if reaped && !group_alive(pgid) {
            return;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(GROUP_POLL);
    }
    signal_group(pgid, libc::SIGKILL);
    let _ = child.wait();
    let deadline = Instant::now() + grace;
    while group_alive(pgid) && Instant::now() < deadline {
        std::thread::sleep(GROUP_POLL);
    }
}

/// A process's state, parent and process group from `/proc/PID/stat`.
struct ProcStat {
    pid: u32,
    state: String,
    ppid: Option<u32>,
    pgrp: Option<u32>,
}

impl ProcStat {
    /// Whether the process still runs (neither a zombie nor dead).
    fn running(&self) -> bool {
        self.state != "Z" && self.state != "X"
    }
}

/// Every process's [`ProcStat`].
fn processes() -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
            let (_, rest) = stat.rsplit_once(')')?;
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("Z").to_string();
            let ppid = fields.next().and_then(|f| f.parse().ok());
            let pgrp = fields.next().and_then(|f| f.parse().ok());
            Some(ProcStat {
                pid,
                state,
                ppid,
                pgrp,
            })
        })
        .collect()
}

/// Whether a process other than a zombie is left in process group `pgid`.
pub(crate) fn group_alive(pgid: u32) -> bool {
    processes()
        .iter()
        .any(|p| p.pgrp == Some(pgid) && p.running())
}

/// The running children of `pid` (a postmaster's backends make themselves process
/// group leaders, so its group does not hold them).
pub(crate) fn children_of(pid: u32) -> Vec<u32> {
    processes()
        .iter()
        .filter(|p| p.ppid == Some(pid) && p.running())
        .map(|p| p.pid)
        .collect()
}

/// Which of `pids` still run (zombies excluded).
pub(crate) fn still_running(pids: &[u32]) -> Vec<u32> {
    processes()
        .iter()
        .filter(|p| pids.contains(&p.pid) && p.running())
        .map(|p| p.pid)
        .collect()
}

/// What the watchdog does once this process is gone.
pub(crate) struct WatchdogPlan<'a> {
    /// The postmaster to stop, if one runs.
    pub postmaster: Option<u32>,
    /// The signal name (`QUIT`: immediate, `INT`: fast shutdown) it gets first.
    pub signal: &'static str,
    /// The directory to delete afterwards (throwaway clusters).
    pub remove: Option<&'a Path>,
}

/// A helper process that stops the postmaster and deletes the files if this process
/// dies without cleaning up (abort, SIGKILL, a `Cluster` that is never dropped).
pub(crate) fn spawn_watchdog(plan: &WatchdogPlan<'_>) -> Result<Child, ClusterError> {
    const SCRIPT: &str = r#"while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
if [ -n "$2" ]; then
  kill -"$3" "$2" 2>/dev/null
  i=0; while kill -0 "$2" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  kill -KILL "$2" 2>/dev/null
fi
if [ -n "$4" ]; then rm -rf "$4"; fi"#;
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", SCRIPT, "pgrush-cluster-watchdog"])
        .arg(std::process::id().to_string())
        .arg(plan.postmaster.map(|p| p.to_string()).unwrap_or_default())
        .arg(plan.signal);
    match plan.remove {
        Some(dir) => cmd.arg(dir),
        None => cmd.arg(""),
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| ClusterError::io("start the watchdog", e))
}
