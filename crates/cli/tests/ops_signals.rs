//! Signals sent to `pgrush ops --pgdata` alone (as `kill`, `timeout` or a CI
//! cancellation send them, not to its process group): during each step pgrush ends
//! the program it runs with every process that program forked (`pg_basebackup -X
//! stream`'s WAL streamer), hands the cluster back as found and exits with the
//! interrupted status, a second signal during the hand back notwithstanding; killed
//! outright (`SIGKILL`), its journal lets the next run hand the cluster back first. And the hand back restarts the server the way it was
//! started: its output goes to the `pg_ctl -l` file again, nothing new in PGDATA.

mod ops_common;

use std::collections::BTreeMap;
use std::io::BufRead;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use ops_common::{
    Sandbox, errors_of, existing_cluster_of, postmaster_pid, processes, stop_left_server,
};
use pgrush_cluster::{Cluster, ShutdownMode};
use pgrush_testkit::run;

/// How long a run may take to reach a step, and to exit after a signal (a hang
/// detector, not a timing claim: an interrupted run takes seconds).
const LIMIT: Duration = Duration::from_secs(90);

/// What the hand back must leave as it was: the configuration files, the data
/// directory's top-level entries, the databases, the user's table and settings, and
/// no directory of pgrush's in the sandbox.
#[derive(Debug, PartialEq)]
struct ClusterState {
    config: BTreeMap<String, String>,
    entries: Vec<String>,
    databases: String,
    my_table: String,
    settings: Vec<String>,
    leftovers: Vec<String>,
}

impl ClusterState {
    fn of(cluster: &Cluster, sandbox: &Sandbox) -> ClusterState {
        let data_dir = cluster.data_dir();
        let names = |dir: &Path| -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .expect("read dir")
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let config = ["postgresql.conf", "postgresql.auto.conf"]
            .iter()
            .map(|n| {
                let bytes = std::fs::read(data_dir.join(n)).unwrap();
                (n.to_string(), String::from_utf8_lossy(&bytes).into_owned())
            })
            .collect();
        let psql = |sql: &str| cluster.psql(sql).unwrap_or_else(|e| format!("{e}"));
        let settings = ["archive_mode", "archive_command", "max_wal_size"]
            .iter()
            .map(|name| psql(&format!("SHOW {name}")))
            .chain([psql(
                "SELECT count(*) FROM pg_settings WHERE pending_restart",
            )])
            .collect();
        ClusterState {
            config,
            entries: names(data_dir),
            databases: psql("SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database"),
            my_table: psql("SELECT sum(id) FROM my_table"),
            settings,
            leftovers: names(sandbox.path())
                .into_iter()
                .filter(|n| n.starts_with("pgrush-adopted-") || n.starts_with("pgrush-sandbox-"))
                .collect(),
        }
    }
}

/// The running descendants of `root` but the server's processes (the postmaster
/// pgrush restarted is handed back running), as `(pid, command name)`.
fn descendants(root: u32) -> Vec<(u32, String)> {
    let all = processes();
    let mut found: Vec<(u32, String)> = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for (pid, ppid, comm) in &all {
            if *ppid == parent && comm != "postgres" {
                found.push((*pid, comm.clone()));
                parents.push(*pid);
            }
        }
    }
    found
}

/// Which of `family` still run (not zombies), with the same command name.
fn survivors(family: &[(u32, String)]) -> Vec<(u32, String)> {
    let now = processes();
    family
        .iter()
        .filter(|(pid, comm)| now.iter().any(|(p, _, c)| p == pid && c == comm))
        .cloned()
        .collect()
}

fn send(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(i32::try_from(pid).unwrap(), sig) };
}

/// A `pgrush ops` run whose standard error is read line by line as it comes.
struct Running {
    child: Child,
    lines: Receiver<String>,
    stderr: String,
}

impl Running {
    fn start(cmd: &mut Command) -> Running {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn pgrush ops");
        let pipe = child.stderr.take().expect("stderr");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines,
            stderr: String::new(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until `ready` holds, checking it as each line comes and every 2 ms;
    /// returns false when the line `until` came first.
    fn wait_for(&mut self, ready: &mut dyn FnMut(&str) -> bool, until: &str) -> bool {
        let started = Instant::now();
        loop {
            match self.lines.recv_timeout(Duration::from_millis(2)) {
                Ok(line) => {
                    self.stderr.push_str(&line);
                    self.stderr.push('\n');
                    if line == until {
                        return false;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("pgrush ended before it was ready:\n{}", self.stderr)
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if ready(&self.stderr) {
                return true;
            }
            assert!(started.elapsed() < LIMIT, "never ready:\n{}", self.stderr);
        }
    }

    /// Sends `sig` again once pgrush hands the cluster back (it runs `psql` for that),
    /// unless it has exited already: a second signal must not cut the hand back short.
    fn signal_again_during_hand_back(&mut self, sig: i32) {
        let started = Instant::now();
        while matches!(self.child.try_wait(), Ok(None)) && started.elapsed() < LIMIT {
            if descendants(self.pid()).iter().any(|(_, c)| c == "psql") {
                send(self.pid(), sig);
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Waits for the exit (at most [`LIMIT`]; a run that hangs is killed with what it
    /// started, and the test fails); returns the status code and standard error.
    fn finish(mut self) -> (Option<i32>, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > LIMIT {
                let family = descendants(self.pid());
                send(self.pid(), libc::SIGKILL);
                for (pid, _) in family {
                    send(pid, libc::SIGKILL);
                }
                let _ = self.child.wait();
                panic!("pgrush hangs after the signal:\n{}", self.stderr);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.stderr.push_str(&line);
            self.stderr.push('\n');
        }
        (status.code(), self.stderr)
    }
}

/// `pgrush ops --pgdata DIR --scale 1 --steps STEPS --workload-seconds 60`.
fn ops(sandbox: &Sandbox, data_dir: &Path, steps: &str) -> Command {
    sandbox.command(
        None,
        &[
            "--pgdata",
            data_dir.to_str().unwrap(),
            "--scale",
            "1",
            "--steps",
            steps,
            "--workload-seconds",
            "60",
        ],
    )
}

/// Runs `body`, then stops the server left running and drops the cluster, failing
/// afterwards if `body` failed.
fn with_cleanup(cluster: Cluster, body: impl FnOnce(&Cluster)) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&cluster)));
    stop_left_server(cluster.data_dir());
    drop(cluster);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// A program's command name and how many of its processes must run.
type Program = (&'static str, usize);

/// The step signalled, its `--steps`, the signal, and the program (with how many of
/// its processes) that must run before the signal. A long step follows the short
/// ones, so a step that ends before the signal does not end the run.
const CASES: &[(&str, &str, i32, Option<Program>)] = &[
    ("load", "load,reindex", libc::SIGINT, None),
    (
        "dump",
        "load,dump,crash-recovery",
        libc::SIGTERM,
        Some(("pg_dump", 1)),
    ),
    (
        "restore",
        "load,restore,crash-recovery",
        libc::SIGINT,
        Some(("pg_restore", 1)),
    ),
    (
        "reindex",
        "load,reindex,crash-recovery",
        libc::SIGTERM,
        None,
    ),
    (
        "basebackup",
        "load,basebackup,crash-recovery",
        libc::SIGINT,
        Some(("pg_basebackup", 2)),
    ),
    (
        "crash-recovery",
        "load,crash-recovery",
        libc::SIGTERM,
        Some(("pgrush", 1)),
    ),
    ("pitr", "load,pitr", libc::SIGINT, Some(("pgrush", 1))),
];

#[test]
fn a_signal_to_pgrush_alone_ends_each_step_and_hands_the_cluster_back() {
    let sandbox = Sandbox::new();
    let cluster = existing_cluster_of(&sandbox, 15);
    let data_dir = cluster.data_dir().to_path_buf();
    let before = ClusterState::of(&cluster, &sandbox);
    with_cleanup(cluster, |cluster| {
        for &(step, steps, sig, program) in CASES {
            let mut run = Running::start(&mut ops(&sandbox, &data_dir, steps));
            let pid = run.pid();
            let entered = format!("pgrush ops: scale 1: {step}");
            run.wait_for(&mut |stderr| stderr.contains(&entered), "");
            let next = match steps.rsplit_once(',') {
                Some((_, last)) if last != step => format!("pgrush ops: scale 1: {last}"),
                _ => String::from("-"),
            };
            let mut running = |_: &str| match program {
                Some((name, count)) => {
                    descendants(pid).iter().filter(|(_, c)| c == name).count() >= count
                }
                None => true,
            };
            let in_step = run.wait_for(&mut running, &next);
            let family = descendants(pid);
            send(pid, sig);
            run.signal_again_during_hand_back(sig);
            let (code, stderr) = run.finish();
            assert_eq!(code, Some(1), "{step}: {stderr}");
            assert_eq!(
                errors_of(&stderr),
                "pgrush: error: ops: interrupted\n",
                "{step}"
            );
            assert_eq!(survivors(&family), Vec::new(), "{step}: left running");
            assert_eq!(ClusterState::of(cluster, &sandbox), before, "{step}");
            assert!(
                postmaster_pid(&data_dir).is_some(),
                "{step}: handed back running"
            );
            if !in_step {
                eprintln!("{step}: ended before its program was seen; signalled in the next");
            }
        }
        let out = run(&mut ops(&sandbox, &data_dir, "load"));
        assert_eq!(out.code, 0, "a following run works: {out:?}");
        assert_eq!(ClusterState::of(cluster, &sandbox), before);
    });
}

#[test]
fn a_run_killed_outright_is_handed_back_by_the_next_run() {
    let sandbox = Sandbox::new();
    let cluster = existing_cluster_of(&sandbox, 15);
    let data_dir = cluster.data_dir().to_path_buf();
    let before = ClusterState::of(&cluster, &sandbox);
    with_cleanup(cluster, |cluster| {
        let mut killed = Running::start(&mut ops(&sandbox, &data_dir, "load,pitr"));
        let pid = killed.pid();
        killed.wait_for(&mut |s| s.contains("pgrush ops: scale 1: pitr"), "");
        // pitr's workload runs: archiving is on, the scratch database in use.
        killed.wait_for(
            &mut |_| descendants(pid).iter().any(|(_, c)| c == "pgrush"),
            "",
        );
        let family = descendants(pid);
        send(pid, libc::SIGKILL);
        let _ = killed.finish();
        for (pid, _) in survivors(&family) {
            send(pid, libc::SIGKILL);
        }
        assert!(
            data_dir.join("pgrush-adopted.json").is_file(),
            "journal left"
        );
        assert_eq!(
            cluster.show("archive_mode").unwrap(),
            "on",
            "not handed back"
        );
        let out = run(&mut ops(&sandbox, &data_dir, "load"));
        assert_eq!(out.code, 0, "{out:?}");
        let replay = format!(
            "pgrush ops: an earlier run on {} was killed before it handed the cluster back; \
             done now:\n",
            data_dir.display()
        );
        assert!(out.stderr.starts_with(&replay), "{}", out.stderr);
        for line in [
            "restored ",
            "dropped the scratch database \"pgrush_ops\"",
            "left the server running, as that run found it",
        ] {
            assert!(
                out.stderr.contains(&format!("pgrush ops:   {line}")),
                "{}",
                out.stderr
            );
        }
        assert_eq!(ClusterState::of(cluster, &sandbox), before);
    });
}

/// Runs `pg_ctl ARGS` as the owner of `data_dir` (the server account).
fn pg_ctl(cluster: &Cluster, args: &[&str]) {
    let meta = std::fs::metadata(cluster.data_dir()).unwrap();
    let out = run(Command::new(cluster.bin_dir().join("pg_ctl"))
        .arg("-D")
        .arg(cluster.data_dir())
        .args(args)
        .uid(meta.uid())
        .gid(meta.gid())
        .current_dir("/"));
    assert_eq!(out.code, 0, "pg_ctl {args:?}: {out:?}");
}

/// The file descriptor `fd` of process `pid` points to.
fn fd_target(pid: u32, fd: u32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).expect("readlink")
}

#[test]
fn the_server_is_handed_back_writing_to_its_pg_ctl_log_file() {
    let sandbox = Sandbox::new();
    let cluster = existing_cluster_of(&sandbox, 15);
    cluster.stop(ShutdownMode::Fast).expect("stop");
    let data_dir = cluster.data_dir().to_path_buf();
    let log = sandbox.path().join("user.log");
    std::fs::write(&log, "").unwrap();
    let owner = std::fs::metadata(&data_dir).unwrap();
    std::os::unix::fs::chown(&log, Some(owner.uid()), Some(owner.gid())).unwrap();
    let port = format!("-p {}", cluster.port());
    pg_ctl(
        &cluster,
        &["-l", log.to_str().unwrap(), "-o", &port, "-w", "start"],
    );
    let before = ClusterState::of(&cluster, &sandbox);
    let pid_before = postmaster_pid(&data_dir).expect("started");
    with_cleanup(cluster, |cluster| {
        let out = run(&mut ops(&sandbox, &data_dir, "load"));
        assert_eq!(out.code, 0, "{out:?}");
        let pid = postmaster_pid(&data_dir).expect("handed back running");
        assert_ne!(pid, pid_before, "pgrush restarted it");
        assert_eq!(fd_target(pid, 2), log, "standard error");
        assert_eq!(fd_target(pid, 1), log, "standard output");
        let written = std::fs::metadata(&log).unwrap().len();
        cluster.psql("SELECT pg_reload_conf()").unwrap();
        let started = Instant::now();
        loop {
            let text = std::fs::read(&log).unwrap();
            let new = String::from_utf8_lossy(&text[written as usize..]).into_owned();
            if new.contains("received SIGHUP, reloading configuration files") {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "log: {new}");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!data_dir.join("log").exists(), "no log/ made in PGDATA");
        assert_eq!(ClusterState::of(cluster, &sandbox), before);
    });
}
