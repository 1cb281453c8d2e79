#!/usr/bin/env python3
"""Steady-state user-space instructions per transaction by function group, from two
callgrind profiles of the same client with different transaction counts.

    bench/lib/with_cluster.py -- sh -c '
      valgrind --tool=callgrind --callgrind-out-file=short.cg CLIENT -n -S -M prepared -c 4 -j 2 -t 500
      valgrind --tool=callgrind --callgrind-out-file=long.cg  CLIENT -n -S -M prepared -c 4 -j 2 -t 2500'
    bench/lib/callgrind_groups.py short.cg long.cg 8000 [TOP]

The third argument is the difference of the transaction counts (4 x (2500 - 500)): per
function, the long run's instructions minus the short run's, divided by it, cancel the
start-up, connections and report. A function counts in the group of the source file it
is in (crates/wire, crates/engine, ...); code inlined from std, core or a registry crate
counts in the group of the function it was inlined into. TOP (default 25) functions are
listed after the groups.
"""

import collections
import re
import subprocess
import sys

_LINE = re.compile(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*)$")

# (group, pattern matched against the file, then the function), first match wins.
RULES = [
    ("wire (frame, decode, encode)", r"crates/wire|pgrush_wire|postgres_protocol"),
    ("engine (client state machine, event loop)", r"crates/engine|pgrush_engine"),
    ("stats/histograms", r"crates/stats|pgrush_stats|hdrhistogram"),
    ("timing", r"crates/timing|pgrush_timing"),
    ("script (variables, expressions)", r"crates/script|pgrush_script"),
    ("mio", r"/mio-"),
    ("libc system-call wrappers (send, recv, epoll_wait, cancellation points)",
     r"(send|recv|recvfrom|sendto|epoll_wait|epoll_ctl|cancellation)\.c|epoll"),
    ("clock (clock_gettime)", r"clock_gettime|vdso"),
    ("malloc, free, memcpy (libc)", r"malloc|free|memmove|memcpy|memset|memcmp"),
    ("floor client", r"pgrush_floor|bench/floor"),
]


def functions(path):
    """{file:function: instructions} from `callgrind_annotate`."""
    out = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    counts = collections.Counter()
    started = False
    for line in out.splitlines():
        if "file:function" in line:
            started = True
            continue
        m = _LINE.match(line) if started else None
        if m:
            counts[m.group(2)] += int(m.group(1).replace(",", ""))
    return counts


def group(name):
    file, _, func = name.partition(":")
    for target in (file, func):
        for label, pattern in RULES:
            if re.search(pattern, target):
                return label
    return "std (inlined elsewhere: Instant arithmetic, ...)" if "/rustc/" in file else "other"


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    short, long_ = functions(argv[0]), functions(argv[1])
    tx = int(argv[2])
    top = int(argv[3]) if len(argv) == 4 else 25
    per_function = {k: long_[k] - short[k] for k in set(short) | set(long_)}
    groups = collections.Counter()
    for name, n in per_function.items():
        groups[group(name)] += n
    total = sum(groups.values())
    print("%.0f instructions/tx in all" % (total / tx))
    for label, n in groups.most_common():
        print("%7.0f  %5.1f%%  %s" % (n / tx, 100.0 * n / total, label))
    print("-- functions")
    for name, n in sorted(per_function.items(), key=lambda kv: -kv[1])[:top]:
        print("%7.0f  %s" % (n / tx, name[:150]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
