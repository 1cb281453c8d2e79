//! Running the server under an unprivileged account when the harness runs as root.
//!
//! PostgreSQL refuses to run as root, so as root every server program (`initdb`,
//! `postgres`) is started as the system user `postgres` (created with `useradd` when
//! missing), and the files it must own are `chown`ed to it.

use std::ffi::CString;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use crate::error::ClusterError;

/// The name of the account servers run under when the harness is root.
pub(crate) const SERVER_USER: &str = "postgres";

/// A Unix account: numeric user and group ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Account {
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
}

impl Account {
    /// Makes `cmd` run as this account.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.uid(self.uid).gid(self.gid);
        cmd.env("USER", SERVER_USER).env("LOGNAME", SERVER_USER);
    }

    /// Gives `path` to this account.
    pub fn chown(&self, path: &Path) -> Result<(), ClusterError> {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
            .map_err(|e| ClusterError::io(format!("chown {}", path.display()), e))
    }

    /// Whether this account can search (traverse) every directory from `/` down to `dir`.
    pub fn can_reach(&self, dir: &Path) -> bool {
        let mut cur = Some(dir);
        while let Some(d) = cur {
            let Ok(meta) = std::fs::metadata(d) else {
                return false;
            };
            let mode = meta.mode();
            let ok = if meta.uid() == self.uid {
                mode & 0o100 != 0
            } else if meta.gid() == self.gid {
                mode & 0o010 != 0
            } else {
                mode & 0o001 != 0
            };
            if !ok {
                return false;
            }
            cur = d.parent();
        }
        true
    }
}

/// Whether this process runs as root.
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The account servers must run under: `None` when not root (run as ourselves).
pub(crate) fn server_account() -> Result<Option<Account>, ClusterError> {
    if !is_root() {
        return Ok(None);
    }
    static ACCOUNT: OnceLock<Result<Account, String>> = OnceLock::new();
    let found = ACCOUNT.get_or_init(|| {
        if let Some(acct) = lookup(SERVER_USER) {
            return Ok(acct);
        }
        create_user()?;
        lookup(SERVER_USER).ok_or_else(|| format!("user {SERVER_USER} still missing after useradd"))
    });
    match found {
        Ok(acct) => Ok(Some(*acct)),
        Err(msg) => Err(ClusterError::Account(msg.clone())),
    }
}

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The name of the user with id `uid`, from the password database.
pub(crate) fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: passwd is plain old data; zeroed is a valid (empty) value.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer refers to live memory of the advertised size; getpwuid_r
    // writes only into `pwd` and `buf` and sets `result` to null or to `&pwd`.
    let rc = unsafe {
        libc::getpwuid_r(
            uid,
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: pw_name points into `buf`, a NUL-terminated string getpwuid_r wrote.
    let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
    Some(name.to_string_lossy().into_owned())
}

/// Looks a user up in the password database.
fn lookup(name: &str) -> Option<Account> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: passwd is plain old data; zeroed is a valid (empty) value.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer refers to live memory of the advertised size; getpwnam_r
    // writes only into `pwd` and `buf` and sets `result` to null or to `&pwd`.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        return None;
    }
    Some(Account {
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
    })
}

/// Creates the system user (and its group) with `useradd`.
fn create_user() -> Result<(), String> {
    let out = Command::new("useradd")
        .args(["--system", "--user-group", "--no-create-home"])
        .args(["--shell", "/usr/sbin/nologin", SERVER_USER])
        .output()
        .map_err(|e| format!("cannot run useradd: {e}"))?;
    if out.status.success() || lookup(SERVER_USER).is_some() {
        Ok(())
    } else {
        Err(format!(
            "useradd failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
