#!/usr/bin/env python3
"""Runs a command with PGHOST/PGPORT/PGUSER/PGDATABASE naming a throwaway cluster.

    bench/lib/with_cluster.py [--scale N] [--pg-bin DIR] [--setting NAME=VALUE]... -- COMMAND...

The cluster (see pgcluster.py) is initialized with `pgbench -i -s N` (pgbench 18; N=10 by
default, 0 skips it) and removed when the command ends (also on Ctrl-C). Used for profiling
runs, e.g. `valgrind --tool=callgrind target/release/pgrush -n -S -M prepared -t 2000 ...`.
"""

import argparse
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pgcluster  # noqa: E402


def _sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    p = argparse.ArgumentParser(prog="with_cluster.py")
    p.add_argument("--scale", type=int, default=10)
    p.add_argument("--pg-bin", default=None)
    p.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        p.error("no command given")
    settings = dict(s.split("=", 1) for s in args.setting if "=" in s)
    signal.signal(signal.SIGTERM, _sigterm)
    cluster = pgcluster.Cluster(pgcluster.find_server_bin(args.pg_bin), settings)
    try:
        cluster.start()
        env = dict(os.environ, PGHOST=cluster.socket_dir, PGPORT=str(cluster.port),
                   PGUSER=pgcluster.SUPERUSER, PGDATABASE="postgres")
        if args.scale > 0:
            pgbench = pgcluster.find_pgbench18()
            if not pgbench:
                p.error("pgbench 18 not found (set PGRUSH_PGBENCH18)")
            init = [pgbench, "-i", "-q", "-s", str(args.scale)]
            done = subprocess.run(init, env=pgcluster.env_for(os.path.dirname(pgbench), env),
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(done.stdout + done.stderr, file=sys.stderr, end="")
                return 1
        return subprocess.run(cmd, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 130
    except pgcluster.ClusterError as e:
        print("with_cluster.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
