//! Daemons a test starts in the foreground (Slurm's, munge's): started so that they die
//! with the thread that started them, stopped with SIGTERM (then SIGKILL) when dropped.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A daemon running in the foreground as our child.
#[derive(Debug)]
pub(crate) struct Daemon {
    name: &'static str,
    child: Child,
}

impl Daemon {
    /// Starts `cmd` with its output appended to `log`; the kernel sends it SIGTERM when
    /// the thread that started it ends (`PR_SET_PDEATHSIG`), so a test that aborts leaves
    /// nothing running. Panics with the reason when it cannot start.
    pub(crate) fn spawn(name: &'static str, cmd: &mut Command, log: &Path) -> Daemon {
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .unwrap_or_else(|e| panic!("open {}: {e}", log.display()));
        let err = out.try_clone().expect("clone the log file");
        // SAFETY: prctl is async-signal-safe and touches no memory of ours.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        Daemon { name, child }
    }

    /// Panics with `log`'s text when the daemon has already exited.
    pub(crate) fn check_alive(&mut self, log: &str) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("{} exited ({status}):\n{log}", self.name);
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill has no memory-safety preconditions; the pid is our unreaped child.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An exclusive `flock` on a file in the temp dir, held until dropped: serializes
/// machine-wide set-ups between test processes (and threads, each opening the file).
#[derive(Debug)]
pub(crate) struct MachineLock {
    /// Holds the lock while open.
    _file: File,
}

impl MachineLock {
    /// Waits for the lock named `name`.
    pub(crate) fn acquire(name: &str) -> MachineLock {
        let path = std::env::temp_dir().join(format!("{name}.lock"));
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
        // SAFETY: flock on a descriptor we own.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        assert_eq!(
            rc,
            0,
            "flock {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        );
        MachineLock { _file: file }
    }
}

/// Polls `ready` every 50 ms until it holds or `limit` passes; false on timeout.
pub(crate) fn wait_until(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if ready() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The uid and gid of a system account (from `/etc/passwd`); panics when it does not
/// exist.
pub(crate) fn account_ids(name: &str) -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").expect("read /etc/passwd");
    passwd
        .lines()
        .map(|line| line.split(':').collect::<Vec<_>>())
        .find(|fields| fields.len() > 3 && fields[0] == name)
        .and_then(|fields| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
        .unwrap_or_else(|| {
            panic!("no account {name:?} (its Debian package makes it: see scripts/install-deps)")
        })
}
