//! A private high-availability cluster for tests: one etcd and two PostgreSQL 15
//! members managed by Patroni (Debian's `etcd-server`, `patroni` and `python3-etcd`),
//! on free ports, in a temp dir, with synchronous replication. Every process is
//! stopped when the [`Patroni`] is dropped (a panicking test too): Patroni first (it
//! stops its PostgreSQL), then any postmaster left, then etcd; the daemons also get
//! SIGTERM when the thread that started them ends.
//!
//! The members are configured from `deploy/patroni/member.yml` (the documented
//! recipe), its placeholders filled in. As root, Patroni and PostgreSQL run as the
//! `postgres` account (PostgreSQL refuses root).
//!
//! ```no_run
//! let ha = pgrush_testkit::patroni::Patroni::start();
//! let leader = ha.wait_for_sync_leader(std::time::Duration::from_secs(60));
//! ha.kill_postmaster(leader);
//! ```

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use tempfile::TempDir;

use crate::closed_port;
use crate::daemon::{Daemon, account_ids, wait_until};

/// The member template (`deploy/patroni/member.yml`).
pub const MEMBER_TEMPLATE: &str = include_str!("../../../deploy/patroni/member.yml");

/// The superuser's name and password of the template.
pub const SUPERUSER: (&str, &str) = ("postgres", "supersecret");

/// The programs the cluster needs, each with the Debian package that installs it.
const PROGRAMS: [(&str, &str); 2] = [
    ("/usr/bin/patroni", "patroni (with python3-etcd)"),
    ("/usr/bin/etcd", "etcd-server"),
];

/// One Patroni member.
#[derive(Debug)]
pub struct Member {
    /// `n1` or `n2`.
    pub name: String,
    /// PostgreSQL's TCP port (on 127.0.0.1).
    pub pg_port: u16,
    /// Patroni's REST API port (on 127.0.0.1).
    pub api_port: u16,
    /// The member's directory (configuration, data directory, socket, log).
    pub dir: PathBuf,
    daemon: Option<Daemon>,
}

impl Member {
    /// Patroni's log (PostgreSQL's output included).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("patroni.log")).unwrap_or_default()
    }

    /// The postmaster's pid, from its `postmaster.pid` (None when it has none).
    pub fn postmaster_pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.dir.join("data/postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Whether process `pid` runs with the member's directory on its command line
    /// (its postmaster, not a process that took a stale pid).
    fn owns(&self, pid: i32) -> bool {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
            String::from_utf8_lossy(&cmdline).contains(&*self.dir.to_string_lossy())
        })
    }

    /// `GET path` on the member's REST API: the status code and the body (None when
    /// the API does not answer).
    pub fn api(&self, path: &str) -> Option<(u16, String)> {
        http_get(self.api_port, path)
    }
}

/// etcd and two Patroni members, stopped when dropped.
#[derive(Debug)]
pub struct Patroni {
    /// The two members.
    pub members: Vec<Member>,
    etcd: Option<Daemon>,
    dir: TempDir,
}

impl Patroni {
    /// Starts etcd and both members (not waiting for them: see
    /// [`Patroni::wait_for_sync_leader`]). Panics with the reason when a program is
    /// missing (naming its Debian package) or a daemon cannot start.
    pub fn start() -> Patroni {
        for (program, package) in PROGRAMS {
            assert!(
                Path::new(program).exists(),
                "{program} is missing: install the Debian packages patroni, etcd-server and \
                 python3-etcd (scripts/install-deps does, as root); needed for {package}"
            );
        }
        let dir = tempfile::Builder::new()
            .prefix("pgrush-patroni-")
            .tempdir()
            .expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod the Patroni dir");
        let etcd_port = closed_port();
        let etcd = start_etcd(dir.path(), etcd_port);
        let mut ha = Patroni {
            members: Vec::new(),
            etcd: Some(etcd),
            dir,
        };
        for name in ["n1", "n2"] {
            let member = start_member(ha.dir.path(), name, etcd_port);
            ha.members.push(member);
        }
        ha
    }

    /// The conninfo of both members, asking for the read-write one.
    pub fn conninfo(&self) -> String {
        let ports: Vec<String> = self.members.iter().map(|m| m.pg_port.to_string()).collect();
        format!(
            "host=127.0.0.1,127.0.0.1 port={} user={} dbname=postgres \
             target_session_attrs=read-write connect_timeout=2",
            ports.join(","),
            SUPERUSER.0
        )
    }

    /// The member whose REST API says it is the leader (`GET /leader` 200).
    pub fn leader(&self) -> Option<usize> {
        self.members
            .iter()
            .position(|m| m.api("/leader").is_some_and(|(code, _)| code == 200))
    }

    /// Waits until one member is the leader and the other its synchronous standby
    /// (`GET /sync` 200), and returns the leader. Panics with the logs after `limit`.
    pub fn wait_for_sync_leader(&self, limit: Duration) -> usize {
        let synced = wait_until(limit, || {
            self.members
                .iter()
                .any(|m| m.api("/sync").is_some_and(|(code, _)| code == 200))
                && self.leader().is_some()
        });
        assert!(
            synced,
            "no synchronous standby in {limit:?}:\n{}",
            self.logs()
        );
        self.leader().expect("a leader")
    }

    /// Waits until member `i` is the leader; panics with the logs after `limit`.
    pub fn wait_for_leader(&self, i: usize, limit: Duration) {
        let led = wait_until(limit, || self.leader() == Some(i));
        assert!(
            led,
            "{} did not take over in {limit:?}:\n{}",
            self.members[i].name,
            self.logs()
        );
    }

    /// Kills member `i`'s postmaster with SIGKILL (Patroni stays up) and returns when.
    pub fn kill_postmaster(&self, i: usize) -> SystemTime {
        let pid = self.members[i]
            .postmaster_pid()
            .unwrap_or_else(|| panic!("{} has no postmaster", self.members[i].name));
        let at = SystemTime::now();
        // SAFETY: kill has no memory-safety preconditions.
        let rc = unsafe { libc::kill(pid, libc::SIGKILL) };
        assert_eq!(rc, 0, "kill {pid}: {}", std::io::Error::last_os_error());
        at
    }

    /// Every member's log and etcd's, headed by their names.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for m in &self.members {
            out.push_str(&format!("==== {} ====\n{}\n", m.name, m.log()));
        }
        let etcd = std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default();
        let tail: Vec<&str> = etcd.lines().rev().take(20).collect();
        out.push_str("==== etcd (last lines) ====\n");
        for line in tail.iter().rev() {
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

impl Drop for Patroni {
    fn drop(&mut self) {
        // Patroni stops its PostgreSQL on SIGTERM; a postmaster it left (or one that
        // outlived a SIGKILLed Patroni) is killed after it.
        for m in &mut self.members {
            drop(m.daemon.take());
        }
        for m in &self.members {
            if let Some(pid) = m.postmaster_pid().filter(|&pid| m.owns(pid)) {
                // SAFETY: kill has no memory-safety preconditions; the pid is the
                // member's postmaster (its command line names the member's dir).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                wait_until(Duration::from_secs(5), || !m.owns(pid));
            }
        }
        drop(self.etcd.take());
    }
}

/// The account servers run as: `postgres` as root, ourselves otherwise.
fn server_ids() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    (unsafe { libc::geteuid() } == 0).then(|| account_ids("postgres"))
}

/// Starts etcd on `port` (its peer port: another free one) and waits for its health.
fn start_etcd(dir: &Path, port: u16) -> Daemon {
    let data = dir.join("etcd");
    std::fs::create_dir(&data).expect("create etcd's dir");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let client = format!("http://127.0.0.1:{port}");
    let peer = format!("http://127.0.0.1:{}", closed_port());
    let log = dir.join("etcd.log");
    let mut etcd = Daemon::spawn(
        "etcd (Debian package etcd-server)",
        Command::new("/usr/bin/etcd")
            .args(["--name", "e1", "--data-dir"])
            .arg(&data)
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args(["--initial-cluster", &format!("e1={peer}")])
            .args([
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                "pgrush",
            ]),
        &log,
    );
    let healthy = wait_until(Duration::from_secs(20), || {
        http_get(port, "/health").is_some_and(|(code, _)| code == 200)
    });
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    etcd.check_alive(&text);
    assert!(healthy, "etcd did not become healthy:\n{text}");
    etcd
}

/// Writes member `name`'s configuration from the template and starts its Patroni.
fn start_member(dir: &Path, name: &str, etcd_port: u16) -> Member {
    let member_dir = dir.join(name);
    std::fs::create_dir(&member_dir).expect("create a member dir");
    std::fs::set_permissions(&member_dir, std::fs::Permissions::from_mode(0o700))
        .expect("chmod a member dir");
    let (pg_port, api_port) = (closed_port(), closed_port());
    let config = MEMBER_TEMPLATE
        .replace("@NAME@", name)
        .replace("@DIR@", &member_dir.display().to_string())
        .replace("@PG_PORT@", &pg_port.to_string())
        .replace("@API_PORT@", &api_port.to_string())
        .replace("@ETCD@", &format!("127.0.0.1:{etcd_port}"));
    let config_path = member_dir.join("patroni.yml");
    std::fs::write(&config_path, config).expect("write a member's configuration");
    let mut cmd = Command::new("/usr/bin/patroni");
    cmd.arg(&config_path)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &member_dir)
        .env("TZ", "UTC")
        .env("LC_ALL", "C.UTF-8");
    if let Some((uid, gid)) = server_ids() {
        for path in [&member_dir, &config_path] {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("chown a member file");
        }
        cmd.uid(uid).gid(gid).env("USER", "postgres");
    }
    let daemon = Daemon::spawn(
        "patroni (Debian packages patroni and python3-etcd)",
        &mut cmd,
        &member_dir.join("patroni.log"),
    );
    Member {
        name: name.to_string(),
        pg_port,
        api_port,
        dir: member_dir,
        daemon: Some(daemon),
    }
}

/// `GET path` over HTTP/1.0 on 127.0.0.1:`port`: the status code and the body.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let code = response.split(' ').nth(1)?.parse().ok()?;
    let body = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, body)| body)
        .to_string();
    Some((code, body))
}
