#!/usr/bin/env python3
"""Where a client's CPU time goes, from a `perf record -e cpu-clock -c PERIOD_NS -g` profile.

    perf record -e cpu-clock -c 100000 -g -o client.perf CLIENT...
    bench/lib/perf_split.py client.perf TRANSACTIONS 100000

Each sample is PERIOD_NS of CPU time of the profiled client (a fixed period, -c, not a
frequency); it is put in the group of
the system call its kernel stack is in (sendto, recvfrom, epoll_wait, ...), "kernel,
outside a system call" (interrupts, softirqs, scheduling on return to user space), or
"user"; the table gives each group's microseconds per transaction (samples x PERIOD_NS /
TRANSACTIONS) and share. Sampling is statistical: a 5 s run gives some thousands of
samples, about a percent of error per group. User-space instructions by function are
`bench/lib/callgrind_groups.py`'s job (exact, stable).
"""

import collections
import re
import subprocess
import sys

_SYSCALL = re.compile(r"\b__(?:x64|se|do)_sys_(\w+)")


def classify(frames):
    """The group of one sample from its call chain (innermost frame first)."""
    if not frames or "[kernel.kallsyms]" not in frames[0]:
        return "user"
    for frame in frames:
        m = _SYSCALL.search(frame)
        if m:
            return "kernel: %s" % m.group(1)
    return "kernel, outside a system call"


def samples(path):
    """Yields the call chain (list of frame lines) of each sample in the profile."""
    out = subprocess.run(["perf", "script", "-i", path], capture_output=True, text=True,
                         check=True).stdout
    frames = None
    for line in out.splitlines():
        if not line.strip():
            if frames is not None:
                yield frames
            frames = None
        elif line[0] in " \t":
            if frames is not None:
                frames.append(line.strip())
        else:
            frames = []
    if frames is not None:
        yield frames


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, tx, period_ns = argv[0], int(argv[1]), float(argv[2])
    hz = 1e9 / period_ns
    groups = collections.Counter(classify(f) for f in samples(path))
    total = sum(groups.values())
    print("%d samples, %.2f us/tx in all" % (total, total / hz / tx * 1e6))
    for name, n in groups.most_common():
        print("%8.2f us/tx  %5.1f%%  %s" % (n / hz / tx * 1e6, 100.0 * n / total, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
