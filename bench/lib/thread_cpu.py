#!/usr/bin/env python3
"""CPU time of each thread of a command, by thread name, from the kernel's own accounting.

    bench/lib/thread_cpu.py OUT.json -- COMMAND...

Runs COMMAND (its output passes through) and reads /proc/PID/task/*/schedstat (time on a
CPU, in ns) and stat (user time, in clock ticks) every 50 ms until it exits; OUT.json
gets {thread name: {"cpu": seconds, "user": seconds}}, the threads of one name added
(pgrush-worker-0, pgrush-worker-1, ... stay apart). A thread's last
reading is at most 50 ms before it ended: a thread that runs all along (a worker, the
metrics endpoint) is missed by at most its last 50 ms. Used by bench/metrics-overhead to
tell the time-driven threads (the metrics endpoint, the samplers) from the workers.
"""

import json
import os
import subprocess
import sys
import time


TICK = os.sysconf("SC_CLK_TCK")


def read_tasks(pid, seen):
    """Updates {tid: (name, ns, user ticks)} with the latest reading of every thread."""
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"{base}/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"{base}/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"{base}/{tid}/stat") as f:
                # The fields after the name (which may hold spaces) start at state.
                ticks = int(f.read().rsplit(")", 1)[1].split()[11])
        except (OSError, ValueError, IndexError):
            continue
        seen[tid] = (name, ns, ticks)


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        sys.exit(__doc__)
    out, command = argv[0], argv[2:]
    proc = subprocess.Popen(command)
    seen = {}
    while proc.poll() is None:
        read_tasks(proc.pid, seen)
        time.sleep(0.05)
    by_name = {}
    for name, ns, ticks in seen.values():
        t = by_name.setdefault(name, {"cpu": 0.0, "user": 0.0})
        t["cpu"] += ns / 1e9
        t["user"] += ticks / TICK
    with open(out, "w") as f:
        json.dump(by_name, f, indent=1, sort_keys=True)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
