"""Running one benchmark client and measuring it, for bench/compare.

`measure()` runs a client (pgbench or pgrush) to completion and returns its own rusage
(`os.wait4`: user+sys CPU of that process and its threads), its peak RSS, wall time, and
the transaction count and tps parsed from its report.

Peak RSS cannot come from the wait4 of a child spawned by Python: Linux carries the
pre-exec address space's high-water mark (Python's, ~15 MiB) into the child's ru_maxrss.
So the client runs under GNU `time -f %M` (its own fork starts from a ~1 MiB process), whose
own CPU use (about a millisecond) is included in the wait4 figures. Without /usr/bin/time,
the client's `VmHWM` is sampled from /proc every 20 ms instead. `strace_counts()` runs the same
command under `strace -f -c` and returns the per-syscall call and error counts.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

_TX_RE = re.compile(r"^number of transactions actually processed: (\d+)", re.M)
_TPS_RE = re.compile(r"^tps = ([0-9.]+)", re.M)


class RunError(Exception):
    """A client run failed (non-zero exit, or no report)."""


GNU_TIME = "/usr/bin/time"


class _HwmSampler(threading.Thread):
    """Samples /proc/<pid>/status VmHWM until stopped (fallback without GNU time)."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.path = "/proc/%d/status" % pid
        self.peak_kib = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(0.02):
            try:
                with open(self.path, encoding="ascii", errors="replace") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self.peak_kib = max(self.peak_kib, int(line.split()[1]))
                            break
            except (OSError, ValueError):
                pass


def _spawn_wait(argv, env, log_prefix, peak_rss=False):
    """Runs argv with stdout/stderr in temp files; returns (rusage, wall, out, err, peak_kib)."""
    use_time = peak_rss and os.access(GNU_TIME, os.X_OK)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(prefix="pgrush-rss-") as rss:
        full = [GNU_TIME, "-q", "-f", "%M", "-o", rss.name, "--"] + argv if use_time else argv
        start = time.monotonic()
        # Its own process group, so that an interruption can stop the client under
        # `time` too (see below).
        proc = subprocess.Popen(full, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)
        sampler = None
        if peak_rss and not use_time:
            sampler = _HwmSampler(proc.pid)
            sampler.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            raise
        finally:
            if sampler:
                sampler.done.set()
                sampler.join()
        peak = sampler.peak_kib if sampler else None
        if use_time:
            rss.seek(0)
            text = rss.read().decode("ascii", "replace").split()
            peak = int(text[-1]) if text and text[-1].isdigit() else None
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise RunError(
            "%s exited with status %d\n--- stdout\n%s--- stderr\n%s"
            % (log_prefix, proc.returncode, stdout[-2000:], stderr[-2000:])
        )
    return ru, wall, stdout, stderr, peak


def parse_report(stdout):
    """(transactions, tps) from a pgbench-format report; tps None when absent."""
    tx = _TX_RE.search(stdout)
    tps = _TPS_RE.search(stdout)
    return (int(tx.group(1)) if tx else None, float(tps.group(1)) if tps else None)


def measure(argv, env, name, is_init=False):
    """Runs one client to completion and returns its figures as a dict."""
    ru, wall, stdout, stderr, peak = _spawn_wait(argv, env, name, peak_rss=True)
    if not peak:
        raise RunError("%s: could not read its peak RSS" % name)
    cpu = ru.ru_utime + ru.ru_stime
    res = {
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "cpu_s": cpu,
        "peak_rss_kib": peak,
        "ctx_switches": ru.ru_nvcsw + ru.ru_nivcsw,
    }
    if is_init:
        return res
    tx, tps = parse_report(stdout)
    if not tx or tps is None:
        raise RunError("%s: no transactions or no tps in its report:\n%s--- stderr\n%s"
                       % (name, stdout[-2000:], stderr[-1000:]))
    res["transactions"] = tx
    res["tps"] = tps
    res["cpu_us_per_tx"] = cpu * 1e6 / tx
    res["user_us_per_tx"] = ru.ru_utime * 1e6 / tx
    res["sys_us_per_tx"] = ru.ru_stime * 1e6 / tx
    res["ctx_switches_per_tx"] = res["ctx_switches"] / tx
    # Client capacity: how many transactions one fully used client core would drive.
    if cpu <= 0:
        raise RunError("%s: no CPU time measured" % name)
    res["tx_per_cpu_s"] = tx / cpu
    return res


def ensure_strace():
    """The strace binary (installed with apt-get when missing, as root)."""
    return ensure_tool("strace")


_STRACE_LINE = re.compile(
    r"^\s*([0-9.]+)\s+([0-9.]+)\s+(\d+)\s+(\d+)\s+(?:(\d+)\s+)?([a-z_0-9]+)\s*$"
)


def parse_strace_summary(text):
    """{syscall: (calls, errors)} from `strace -c` output (the total line excluded)."""
    counts = {}
    for line in text.splitlines():
        m = _STRACE_LINE.match(line)
        if not m or m.group(6) == "total":
            continue
        counts[m.group(6)] = (int(m.group(4)), int(m.group(5) or 0))
    return counts


def strace_counts(argv, env, name, strace):
    """Runs argv under `strace -f -c`; returns (transactions, {syscall: (calls, errors)})."""
    with tempfile.TemporaryDirectory(prefix="pgrush-strace-") as d:
        path = os.path.join(d, "summary")
        _, _, stdout, _, _ = _spawn_wait([strace, "-f", "-c", "-o", path, "--"] + argv, env, name)
        with open(path, encoding="utf-8", errors="replace") as f:
            summary = f.read()
    tx, _ = parse_report(stdout)
    if not tx:
        raise RunError("%s under strace: no transaction count in its report" % name)
    return tx, parse_strace_summary(summary)


def ensure_tool(name):
    """The path of `name`, installed with apt-get when missing (as root)."""
    path = shutil.which(name)
    if path:
        return path
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-q", name], check=False,
                       stdout=subprocess.DEVNULL)
        path = shutil.which(name)
    if not path:
        raise RunError("%s is needed for this pass (apt-get install %s)" % (name, name))
    return path


_TOTALS_RE = re.compile(r"^(?:totals|summary):\s*(\d+)", re.M)


#: Cachegrind's simulated caches for `cachegrind_lines`: 2 KiB first-level caches and a
#: 4 KiB last level, so that nearly every cache line a transaction touches is fetched again
#: by the next one: the count is the working set a transaction brings back in when something
#: else (the server's backends, on the same core) ran in between.
TINY_CACHES = ["--I1=2048,2,64", "--D1=2048,2,64", "--LL=4096,2,64"]


def cachegrind_lines(argv, env, name, valgrind):
    """Runs argv under `valgrind --tool=cachegrind` with `TINY_CACHES`; returns
    (transactions, {"code": lines, "data": lines}): the last-level misses of instruction
    fetches, and of data reads and writes."""
    with tempfile.TemporaryDirectory(prefix="pgrush-cachegrind-") as d:
        out = os.path.join(d, "cachegrind.out")
        cmd = [valgrind, "--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=" + out]
        _, _, stdout, _, _ = _spawn_wait(cmd + TINY_CACHES + argv, env, name)
        events = summary = None
        with open(out, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("events:"):
                    events = line.split()[1:]
                elif line.startswith("summary:"):
                    summary = [int(v) for v in line.split()[1:]]
    tx, _ = parse_report(stdout)
    if not tx or not events or not summary:
        raise RunError("%s under cachegrind: no transaction count or no summary" % name)
    counts = dict(zip(events, summary))
    return tx, {"code": counts["ILmr"], "data": counts["DLmr"] + counts["DLmw"]}


def callgrind_instructions(argv, env, name, valgrind):
    """Runs argv under `valgrind --tool=callgrind`; returns (transactions, instructions).

    Instructions are user-space ones (the kernel's work is not counted), all threads.
    """
    with tempfile.TemporaryDirectory(prefix="pgrush-callgrind-") as d:
        out = os.path.join(d, "callgrind.out")
        cmd = [valgrind, "--tool=callgrind", "--callgrind-out-file=" + out] + argv
        _, _, stdout, _, _ = _spawn_wait(cmd, env, name)
        with open(out, encoding="utf-8", errors="replace") as f:
            m = _TOTALS_RE.search(f.read())
    tx, _ = parse_report(stdout)
    if not tx or not m:
        raise RunError("%s under callgrind: no transaction count or no totals" % name)
    return tx, int(m.group(1))
