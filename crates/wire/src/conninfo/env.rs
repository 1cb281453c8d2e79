//! The environment libpq consults: variables, the home directory, the OS user
//! name and files. Behind a trait so tests can supply their own.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// A file's contents plus the facts libpq checks on password files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContents {
    /// Whether it is a regular file (after following symbolic links).
    pub is_regular: bool,
    /// Unix permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// The bytes (empty when not a regular file).
    pub data: Vec<u8>,
}

/// Where connection defaults come from. Only [`Environment::var`],
/// [`Environment::passwd_home`] and [`Environment::os_user_name`] must be
/// provided; file access defaults to the real file system.
pub trait Environment {
    /// An environment variable (`None` when unset).
    fn var(&self, name: &str) -> Option<String>;

    /// The home directory from the password database (used when `HOME` is
    /// unset or empty).
    fn passwd_home(&self) -> Option<PathBuf>;

    /// The effective user's name from the password database, or libpq's
    /// error text when it cannot be found.
    fn os_user_name(&self) -> Result<String, String>;

    /// The home directory as libpq finds it: `$HOME` if non-empty, else the
    /// password database.
    fn home_dir(&self) -> Option<PathBuf> {
        match self.var("HOME") {
            Some(h) if !h.is_empty() => Some(crate::lossless::to_path(&h)),
            _ => self.passwd_home(),
        }
    }

    /// Whether `path` exists (`stat` succeeds).
    fn exists(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok()
    }

    /// Whether `path` is a directory.
    fn is_dir(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|m| m.is_dir())
    }

    /// Opens and reads a file as libpq's `fopen` + `fstat` + reads do: fails
    /// when it cannot be opened; a non-regular file is reported, not read.
    fn read_file(&self, path: &Path) -> io::Result<FileContents> {
        use std::os::unix::fs::PermissionsExt;
        let mut file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        let mut data = Vec::new();
        if meta.is_file() {
            file.read_to_end(&mut data)?;
        }
        Ok(FileContents {
            is_regular: meta.is_file(),
            mode: meta.permissions().mode() & 0o7777,
            data,
        })
    }
}

/// The variables that name a server for pgrush's own defaults: when none is set (or
/// all are empty), subcommands that can start a throwaway cluster (`demo`, `sweep`)
/// start one instead of connecting.
pub const SERVER_VARIABLES: [&str; 3] = ["PGHOST", "PGPORT", "PGDATABASE"];

/// Whether `var` (an environment lookup, `None` when unset) sets one of
/// [`SERVER_VARIABLES`] to a non-empty value.
pub fn names_server(var: &dyn Fn(&str) -> Option<String>) -> bool {
    SERVER_VARIABLES
        .iter()
        .any(|v| var(v).is_some_and(|s| !s.is_empty()))
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnvironment;

impl ProcessEnvironment {
    fn passwd_entry() -> Result<(String, PathBuf), String> {
        use std::ffi::CStr;
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut buf = vec![0 as libc::c_char; 16384];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: all pointers are valid for the given sizes; the strings
        // written into `buf` are read before `buf` is dropped.
        let rc =
            unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
        if rc != 0 {
            let err = io::Error::from_raw_os_error(rc);
            return Err(format!("could not look up local user ID {uid}: {err}"));
        }
        if result.is_null() || pwd.pw_name.is_null() {
            return Err(format!("local user with ID {uid} does not exist"));
        }
        // SAFETY: getpwuid_r succeeded, so pw_name and pw_dir point to
        // NUL-terminated strings inside `buf`.
        let name = crate::lossless::from_bytes(unsafe { CStr::from_ptr(pwd.pw_name) }.to_bytes());
        let dir = if pwd.pw_dir.is_null() {
            PathBuf::new()
        } else {
            use std::os::unix::ffi::OsStrExt;
            // SAFETY: as above.
            let dir = unsafe { CStr::from_ptr(pwd.pw_dir) };
            PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()))
        };
        Ok((name, dir))
    }
}

impl Environment for ProcessEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        {
            use std::os::unix::ffi::OsStrExt;
            std::env::var_os(name).map(|v| crate::lossless::from_bytes(v.as_bytes()))
        }
    }

    fn passwd_home(&self) -> Option<PathBuf> {
        Self::passwd_entry().ok().map(|(_, dir)| dir)
    }

    fn os_user_name(&self) -> Result<String, String> {
        Self::passwd_entry().map(|(name, _)| name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_named_by_a_non_empty_pghost_pgport_or_pgdatabase() {
        let only = |name: &'static str, value: &'static str| {
            move |v: &str| (v == name).then(|| value.to_string())
        };
        assert!(!names_server(&|_| None));
        assert!(!names_server(&only("PGHOST", "")));
        assert!(!names_server(&only("PGUSER", "alice")));
        assert!(names_server(&only("PGHOST", "db1")));
        assert!(names_server(&only("PGPORT", "6543")));
        assert!(names_server(&only("PGDATABASE", "bench")));
    }

    #[test]
    fn process_environment_knows_the_user() {
        let env = ProcessEnvironment;
        let name = env.os_user_name();
        assert!(name.as_ref().is_ok_and(|n| !n.is_empty()), "{name:?}");
        assert!(env.passwd_home().is_some());
    }

    #[test]
    fn read_file_reports_directories_and_modes() {
        let dir = std::env::temp_dir();
        let env = ProcessEnvironment;
        let c = env.read_file(&dir);
        assert!(c.is_ok_and(|c| !c.is_regular && c.data.is_empty()));
        assert!(env.read_file(Path::new("/nonexistent/x/y")).is_err());
    }
}
