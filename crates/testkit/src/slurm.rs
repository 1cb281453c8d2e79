//! A private single-node Slurm for tests: its own `munged`, `slurmctld` and `slurmd`
//! (Debian's `munge` and `slurm-wlm`), configured in a temp dir, on ports nothing else
//! uses, and stopped (their files removed) when the [`Slurm`] is dropped.
//!
//! Nothing of the machine's own set-up is used or changed: the munge key, socket, log
//! and seed live in the temp dir (`AuthInfo=socket=...` points Slurm at that socket),
//! and clients find the controller through `SLURM_CONF` ([`Slurm::apply`]), never
//! `/etc/slurm`. The node is this machine under its own host name, with 16 CPUs
//! declared whatever it has (`SlurmdParameters=config_overrides`), so `srun -n 4` runs
//! four tasks on a small machine too. The daemons run as root (Slurm's `slurmd` must);
//! munged runs as the `munge` account.
//!
//! Instances are serialized machine-wide with a lock in the temp dir (two test
//! processes never run two controllers for the same node name at once); the daemons
//! die with the thread that started them, even if the test aborts.
//!
//! ```no_run
//! let slurm = pgrush_testkit::slurm::Slurm::start();
//! let out = pgrush_testkit::run(slurm.srun(4).args(["printenv", "SLURM_PROCID"]));
//! assert_eq!(out.code, 0);
//! ```

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tempfile::TempDir;

use crate::closed_port;
use crate::daemon::{Daemon, MachineLock, account_ids, wait_until};

/// CPUs the test node declares (more than a small machine has, so tasks can share CPUs).
pub const NODE_CPUS: u32 = 16;

/// The partition every job runs in.
pub const PARTITION: &str = "pgrush";

/// A running single-node Slurm with its private munge.
#[derive(Debug)]
pub struct Slurm {
    // Fields drop in order: daemons first (slurmd before the controller, munged last),
    // then the files, then the lock.
    slurmd: Daemon,
    slurmctld: Daemon,
    _munged: Daemon,
    dir: TempDir,
    _lock: MachineLock,
}

impl Slurm {
    /// Creates the munge key and the Slurm configuration, starts munged, slurmctld and
    /// slurmd, and waits until `sinfo` shows the node idle. Panics with the daemons'
    /// logs when something fails (a missing program names its Debian package).
    pub fn start() -> Slurm {
        let lock = MachineLock::acquire("pgrush-slurm");
        let dir = tempfile::Builder::new()
            .prefix("pgrush-slurm-")
            .tempdir()
            .expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod the Slurm dir");
        let munged = start_munged(dir.path());
        write_config(dir.path());
        for sub in ["state", "spool"] {
            std::fs::create_dir(dir.path().join(sub)).expect("create a Slurm dir");
        }
        let conf = dir.path().join("slurm.conf");
        let slurmctld = Daemon::spawn(
            "slurmctld (Debian package slurmctld, from slurm-wlm)",
            Command::new("slurmctld").arg("-D").env("SLURM_CONF", &conf),
            &dir.path().join("slurmctld.out"),
        );
        let slurmd = Daemon::spawn(
            "slurmd (Debian package slurmd, from slurm-wlm)",
            Command::new("slurmd").arg("-D").env("SLURM_CONF", &conf),
            &dir.path().join("slurmd.out"),
        );
        let mut slurm = Slurm {
            slurmd,
            slurmctld,
            _munged: munged,
            dir,
            _lock: lock,
        };
        slurm.wait_idle();
        slurm
    }

    fn wait_idle(&mut self) {
        let conf = self.conf();
        let idle = wait_until(Duration::from_secs(20), || {
            let out = Command::new("sinfo")
                .args(["-h", "-o", "%T"])
                .env("SLURM_CONF", &conf)
                .output();
            matches!(out, Ok(out) if String::from_utf8_lossy(&out.stdout).trim() == "idle")
        });
        let log = self.log();
        self.slurmctld.check_alive(&log);
        self.slurmd.check_alive(&log);
        assert!(idle, "the Slurm node did not become idle:\n{log}");
    }

    /// The private `slurm.conf` (what `SLURM_CONF` names).
    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// The instance's directory (configuration, logs, state).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Points a Slurm client (`srun`, `sbatch`, `sinfo`) at this instance: sets
    /// `SLURM_CONF` after removing every launcher variable the caller inherited
    /// ([`crate::clear_launcher_env`]).
    pub fn apply(&self, cmd: &mut Command) {
        crate::clear_launcher_env(cmd);
        cmd.env("SLURM_CONF", self.conf());
    }

    /// `srun -n TASKS --kill-on-bad-exit=1`, pointed at this instance: add the program
    /// and its arguments. Each task gets `SLURM_PROCID` and `SLURM_NTASKS`.
    pub fn srun(&self, tasks: u32) -> Command {
        let mut cmd = Command::new("srun");
        self.apply(&mut cmd);
        cmd.arg("-n")
            .arg(tasks.to_string())
            .arg("--kill-on-bad-exit=1");
        cmd
    }

    /// `sbatch --wait`, pointed at this instance: add options and the script.
    pub fn sbatch(&self) -> Command {
        let mut cmd = Command::new("sbatch");
        self.apply(&mut cmd);
        cmd.arg("--wait");
        cmd
    }

    /// The daemons' logs (for failure messages).
    pub fn log(&self) -> String {
        let mut text = String::new();
        for name in [
            "munged.log",
            "munge/munged.log",
            "slurmctld.out",
            "slurmctld.log",
            "slurmd.out",
            "slurmd.log",
        ] {
            let body = std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
            text.push_str(&format!("--- {name}\n{body}"));
        }
        text
    }
}

/// This machine's short host name, which `SlurmctldHost` and `NodeName` must use.
fn short_host_name() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("read the host name");
    name.trim()
        .split('.')
        .next()
        .unwrap_or("localhost")
        .to_string()
}

/// Writes a 1024-byte key readable only by munge, then starts munged on a socket in
/// `dir/run` and waits for the socket.
fn start_munged(dir: &Path) -> Daemon {
    let (uid, gid) = account_ids("munge");
    let key_dir = dir.join("munge");
    let run_dir = dir.join("run");
    for (sub, mode) in [(&key_dir, 0o700), (&run_dir, 0o755)] {
        std::fs::create_dir(sub).expect("create a munge dir");
        std::os::unix::fs::chown(sub, Some(uid), Some(gid)).expect("chown a munge dir");
        std::fs::set_permissions(sub, std::fs::Permissions::from_mode(mode))
            .expect("chmod a munge dir");
    }
    let key: Vec<u8> = (0..1024).map(|_| rand_byte()).collect();
    let key_path = key_dir.join("munge.key");
    std::fs::write(&key_path, key).expect("write the munge key");
    std::os::unix::fs::chown(&key_path, Some(uid), Some(gid)).expect("chown the munge key");
    std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o400))
        .expect("chmod the munge key");
    let socket = run_dir.join("munge.sock");
    let mut cmd = Command::new("munged");
    cmd.arg("--foreground")
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--key-file={}", key_path.display()))
        .arg(format!(
            "--log-file={}",
            key_dir.join("munged.log").display()
        ))
        .arg(format!(
            "--pid-file={}",
            run_dir.join("munged.pid").display()
        ))
        .arg(format!(
            "--seed-file={}",
            key_dir.join("munged.seed").display()
        ))
        .uid(uid)
        .gid(gid);
    let mut munged = Daemon::spawn(
        "munged (Debian package munge)",
        &mut cmd,
        &dir.join("munged.log"),
    );
    let ready = wait_until(Duration::from_secs(10), || socket.exists());
    let log = std::fs::read_to_string(key_dir.join("munged.log")).unwrap_or_default();
    munged.check_alive(&log);
    assert!(ready, "munged did not create its socket:\n{log}");
    munged
}

/// One byte from the kernel's random source.
fn rand_byte() -> u8 {
    let mut byte = 0u8;
    // SAFETY: getrandom writes at most one byte into `byte`.
    let n = unsafe { libc::getrandom((&raw mut byte).cast(), 1, 0) };
    assert_eq!(n, 1, "getrandom failed");
    byte
}

/// Writes `dir/slurm.conf`: one node (this machine) in one partition, private ports,
/// files and munge socket.
fn write_config(dir: &Path) {
    let host = short_host_name();
    let d = dir.display();
    let (ctld_port, slurmd_port) = (closed_port(), closed_port());
    let text = format!(
        "ClusterName=pgrush\n\
         SlurmctldHost={host}(127.0.0.1)\n\
         SlurmctldPort={ctld_port}\n\
         SlurmdPort={slurmd_port}\n\
         AuthType=auth/munge\n\
         CredType=cred/munge\n\
         AuthInfo=socket={d}/run/munge.sock\n\
         ProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\n\
         MpiDefault=none\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         SlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd.pid\n\
         StateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool\n\
         SlurmctldLogFile={d}/slurmctld.log\n\
         SlurmdLogFile={d}/slurmd.log\n\
         SchedulerType=sched/builtin\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_CPU\n\
         ReturnToService=2\n\
         SlurmdParameters=config_overrides\n\
         JobCompType=jobcomp/none\n\
         AccountingStorageType=accounting_storage/none\n\
         NodeName={host} NodeAddr=127.0.0.1 CPUs={NODE_CPUS} RealMemory=2000 State=UNKNOWN\n\
         PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP \
         OverSubscribe=YES\n"
    );
    std::fs::write(dir.join("slurm.conf"), text).expect("write slurm.conf");
}
