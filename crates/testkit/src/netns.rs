//! Separate "hosts" on one machine: network namespaces, each joined to this one by a
//! veth pair on private addresses, whose programs run under their own host name.
//!
//! [`Hosts::create`]`(n)` makes namespaces `pgrush-PID-SEQ-K` (`K` in `0..n`). Namespace
//! `K` gets the point-to-point subnet `10.231.S.4K/30`: this side of its veth pair
//! ([`Host::gateway`]) is `.4K+1`, the namespace's side ([`Host::address`]) `.4K+2`.
//! `S` is the first third byte with no address of `10.231.S.0/24` on this machine,
//! chosen under a machine-wide lock, so concurrent test processes never share a subnet.
//! A server that should be reached from the namespaces must listen on the gateways
//! ([`Hosts::listen_addresses`]) and accept the subnet ([`Hosts::hba_line`]); the
//! addresses exist from `create` on, so start the server afterwards.
//!
//! Namespaces share this machine's host name (UTS namespace) unless told otherwise, so
//! [`Host::command`] runs programs under `unshare --uts` with the host's own name
//! ([`Host::host_name`]). Dropping [`Hosts`] deletes the namespaces (and with them the
//! veth pairs); namespaces left by test processes that died are deleted by the next
//! `create`. Needs root and `ip` (Debian `iproute2`) and `unshare` (`util-linux`).
//!
//! ```no_run
//! let hosts = pgrush_testkit::netns::Hosts::create(2);
//! let out = pgrush_testkit::run(&mut hosts.get(1).command("hostname"));
//! assert_eq!(out.stdout.trim(), hosts.get(1).host_name());
//! ```

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::daemon::MachineLock;

/// The first two bytes of every address made here.
const PREFIX: [u8; 2] = [10, 231];

/// The most namespaces one [`Hosts`] can hold (64 /30 subnets in a /24).
pub const MAX_HOSTS: usize = 64;

/// The prefix of the namespaces' names.
const NAME_PREFIX: &str = "pgrush-";

static SEQUENCE: AtomicU32 = AtomicU32::new(0);

/// One namespace: its name, its addresses and the host name its programs see.
#[derive(Debug, Clone)]
pub struct Host {
    namespace: String,
    host_name: String,
    gateway: Ipv4Addr,
    address: Ipv4Addr,
}

impl Host {
    /// The namespace's name (for `ip netns exec`).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The host name programs in the namespace see (`pgrush-hostK-PID`).
    pub fn host_name(&self) -> &str {
        &self.host_name
    }

    /// This machine's side of the veth pair: where a server the namespace reaches listens.
    pub fn gateway(&self) -> Ipv4Addr {
        self.gateway
    }

    /// The namespace's side of the veth pair (the source address of its connections).
    pub fn address(&self) -> Ipv4Addr {
        self.address
    }

    /// A command that runs `program` in the namespace under [`Host::host_name`]: add its
    /// arguments. The environment and working directory are the caller's, as usual.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.namespace, "unshare", "--uts", "--"])
            .args(["sh", "-c", "hostname \"$0\" && exec \"$@\""])
            .arg(&self.host_name)
            .arg(program);
        cmd
    }
}

/// Network namespaces that stand for separate client machines; deleted when dropped.
#[derive(Debug)]
pub struct Hosts {
    hosts: Vec<Host>,
    subnet: Ipv4Addr,
}

impl Hosts {
    /// Creates `count` namespaces (at most [`MAX_HOSTS`]), each with loopback up and a
    /// veth pair to this machine. Panics with `ip`'s message when a step fails.
    pub fn create(count: usize) -> Hosts {
        assert!(
            (1..=MAX_HOSTS).contains(&count),
            "between 1 and {MAX_HOSTS} hosts"
        );
        let _lock = MachineLock::acquire("pgrush-netns");
        remove_stale_namespaces();
        let third = free_third_byte();
        let pid = std::process::id();
        let seq = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let mut made = Hosts {
            hosts: Vec::with_capacity(count),
            subnet: Ipv4Addr::new(PREFIX[0], PREFIX[1], third, 0),
        };
        for k in 0..count {
            let base = u8::try_from(4 * k).expect("k < 64");
            let host = Host {
                namespace: format!("{NAME_PREFIX}{pid}-{seq}-{k}"),
                host_name: format!("pgrush-host{k}-{pid}"),
                gateway: Ipv4Addr::new(PREFIX[0], PREFIX[1], third, base + 1),
                address: Ipv4Addr::new(PREFIX[0], PREFIX[1], third, base + 2),
            };
            // Pushed before it is set up, so a failure halfway still deletes it.
            made.hosts.push(host.clone());
            set_up(&host, &format!("{pid:x}{seq:x}"), k);
        }
        made
    }

    /// The namespaces, in order.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// Namespace `k`.
    pub fn get(&self, k: usize) -> &Host {
        &self.hosts[k]
    }

    /// `listen_addresses` for a server reachable on loopback and from every namespace.
    pub fn listen_addresses(&self) -> String {
        let mut list = vec!["127.0.0.1".to_string()];
        list.extend(self.hosts.iter().map(|h| h.gateway.to_string()));
        list.join(",")
    }

    /// A `pg_hba.conf` line admitting every namespace's address with `method`.
    pub fn hba_line(&self, method: &str) -> String {
        format!("host all all {}/24 {method}", self.subnet)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for host in &self.hosts {
            let _ = Command::new("ip")
                .args(["netns", "delete", &host.namespace])
                .output();
        }
    }
}

/// Runs `ip ARGS`; panics with its message on failure.
fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run ip (Debian package iproute2): {e}"));
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Creates the namespace, its veth pair (`pg{tag}h{k}` here, `pg{tag}n{k}` inside) and
/// the addresses, and brings everything up.
fn set_up(host: &Host, tag: &str, k: usize) {
    let ns = host.namespace.as_str();
    let outside = format!("pg{tag}h{k}");
    let inside = format!("pg{tag}n{k}");
    let gateway = format!("{}/30", host.gateway);
    let address = format!("{}/30", host.address);
    ip(&["netns", "add", ns]);
    ip(&[
        "link", "add", &outside, "type", "veth", "peer", "name", &inside,
    ]);
    ip(&["link", "set", &inside, "netns", ns]);
    ip(&["addr", "add", &gateway, "dev", &outside]);
    ip(&["link", "set", &outside, "up"]);
    ip(&["-n", ns, "addr", "add", &address, "dev", &inside]);
    ip(&["-n", ns, "link", "set", &inside, "up"]);
    ip(&["-n", ns, "link", "set", "lo", "up"]);
}

/// Deletes the namespaces of test processes that no longer run.
fn remove_stale_namespaces() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(NAME_PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "delete", name]).output();
        }
    }
}

/// The first `S` such that no address of this machine lies in `10.231.S.0/24`.
fn free_third_byte() -> u8 {
    let out = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
        .unwrap_or_else(|e| panic!("run ip (Debian package iproute2): {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let used: Vec<u8> = text
        .split_whitespace()
        .filter_map(|word| word.split('/').next()?.parse::<Ipv4Addr>().ok())
        .filter(|addr| addr.octets()[..2] == PREFIX)
        .map(|addr| addr.octets()[2])
        .collect();
    (0..=u8::MAX)
        .find(|third| !used.contains(third))
        .expect("a free 10.231.S.0/24 subnet")
}
