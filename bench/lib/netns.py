"""A network namespace joined to this one by a veth pair, for the `NAME@remote` workloads of
bench/compare: their clients run in the namespace and reach the server, which stays in this
one, over the pair, a network device with its own queues and interrupts instead of
loopback. With a delay, a netem qdisc on each end of the pair adds it in each direction, so
that the round trip is a real one (the kernel needs CONFIG_NET_SCH_NETEM).

Needs root and iproute2 (`ip`, and `tc` for a delay). The namespace and the pair are named
after the process id and removed by `teardown` (deleting one end of a pair deletes both).
"""
import os
import shutil
import subprocess

HOST_ADDR = "10.231.0.1"  # this namespace's end: the server listens here
PEER_ADDR = "10.231.0.2"  # the clients' end


class RemoteError(Exception):
    """The namespace, the pair or the delay could not be set up."""


def _run(argv):
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        raise RemoteError("%s: %s" % (" ".join(argv), (out.stderr or out.stdout).strip()))


class Remote:
    """The clients' namespace; `prefix()` runs a command in it."""

    def __init__(self, delay_us=0):
        pid = os.getpid()
        self.namespace = "pgrush-bench-%d" % pid
        self.host_end = "pgrb%dh" % (pid % 10**9)
        self.peer_end = "pgrb%dp" % (pid % 10**9)
        self.delay_us = delay_us
        self.ready = False

    def setup(self):
        if os.geteuid() != 0:
            raise RemoteError("@remote workloads need root (a network namespace and a veth pair)")
        if not shutil.which("ip") or (self.delay_us and not shutil.which("tc")):
            raise RemoteError("@remote workloads need iproute2 (`ip`, and `tc` for --remote-delay)")
        ns, host, peer = self.namespace, self.host_end, self.peer_end
        _run(["ip", "netns", "add", ns])
        self.ready = True
        _run(["ip", "link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns])
        _run(["ip", "addr", "add", HOST_ADDR + "/30", "dev", host])
        _run(["ip", "link", "set", host, "up"])
        _run(["ip", "-n", ns, "addr", "add", PEER_ADDR + "/30", "dev", peer])
        _run(["ip", "-n", ns, "link", "set", peer, "up"])
        _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        if self.delay_us:
            delay = "%dus" % self.delay_us
            try:
                _run(["tc", "qdisc", "add", "dev", host, "root", "netem", "delay", delay])
                _run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", peer, "root",
                      "netem", "delay", delay])
            except RemoteError as e:
                raise RemoteError("no delay on this kernel (netem, CONFIG_NET_SCH_NETEM): %s" % e)

    def prefix(self):
        """The words that run a command in the clients' namespace (`ip netns exec` execs it:
        the measured process is the client's)."""
        return ["ip", "netns", "exec", self.namespace]

    def teardown(self):
        if not self.ready:
            return
        self.ready = False
        subprocess.run(["ip", "link", "del", self.host_end], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.namespace], capture_output=True)
