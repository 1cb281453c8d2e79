//! The files pgrush promises (`--json`, `--html`, `--junit`, `merge`'s and `report`'s
//! outputs, `ops` results): checked before a run starts, written whole or not at all
//! (through a temporary file in the same directory, renamed over the target), and
//! standard output whose reader went away ends the process as it ends pgbench.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::failure::Failure;

/// A temporary name beside `path`, unique in this process: `.NAME.pgrush-PID-N.tmp`.
fn temporary_beside(path: &Path) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let tmp = format!(
        ".{name}.pgrush-{}-{}.tmp",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

/// True when `path` names something other than a regular file (a device such as
/// `/dev/stdout` or `/dev/null`, a FIFO): it is written in place, never replaced.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The file `path` names: a symbolic link stays one, its target is what is replaced.
fn resolve(path: &Path) -> io::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path),
        _ => Ok(path.to_path_buf()),
    }
}

/// Writes `bytes` to `path` whole or not at all: into a temporary file beside it, then
/// renamed over it (a reader never sees half of it, a failed write leaves no partial
/// file and the previous contents stay). Devices and FIFOs are written in place.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if is_special(path) {
        let mut f = OpenOptions::new().write(true).truncate(true).open(path)?;
        return f.write_all(bytes).and_then(|()| f.flush());
    }
    let resolved = resolve(path)?;
    let previous = std::fs::metadata(&resolved).ok();
    let tmp = temporary_beside(&resolved);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            // A file that existed keeps its permissions.
            if let Some(m) = &previous {
                f.set_permissions(m.permissions())?;
            }
            f.write_all(bytes).and_then(|()| f.sync_data())
        })
        .and_then(|()| std::fs::rename(&tmp, &resolved));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Checks, before anything starts, that [`write_atomically`] can write `path`: a
/// temporary file is created beside it and removed (so a missing or read-only
/// directory is found now, not after the run), and `path` must not be a directory.
pub fn check_writable(path: &Path) -> io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    if is_special(path) {
        return OpenOptions::new().write(true).open(path).map(drop);
    }
    let tmp = temporary_beside(&resolve(path)?);
    OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    std::fs::remove_file(&tmp)
}

/// `could not write file "PATH": REASON`, the message of every output file that cannot
/// be written (before or after the run).
pub fn write_error(path: &str, e: &io::Error) -> String {
    format!(
        "could not write file \"{path}\": {}",
        pgrush_wire::strerror(e)
    )
}

/// Checks every output file given (`-` is standard output: nothing to check); the first
/// that cannot be written fails with [`write_error`]'s message.
pub fn check_outputs<'a>(paths: impl IntoIterator<Item = Option<&'a str>>) -> Result<(), Failure> {
    for path in paths.into_iter().flatten().filter(|p| *p != "-") {
        if let Err(e) = check_writable(Path::new(path)) {
            return Err(Failure::error(write_error(path, &e)));
        }
    }
    Ok(())
}

/// Writes `text` to `path` (`-` = standard output, see [`stdout_failure`]), whole or not
/// at all ([`write_atomically`]).
pub fn write_output(path: &str, text: &str) -> Result<(), Failure> {
    if path == "-" {
        let mut out = io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| stdout_failure(&e));
    }
    write_atomically(Path::new(path), text.as_bytes())
        .map_err(|e| Failure::error(write_error(path, &e)))
}

/// What a failed write to standard output means: when its reader is gone (`EPIPE`),
/// the process dies of SIGPIPE, as pgbench does (a shell shows status 141); otherwise
/// an error with exit status 1 (output was lost).
pub fn stdout_failure(e: &io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        // SAFETY: restoring SIGPIPE's default action (Rust ignores it) and raising it
        // ends the process, as the write would have in a C program.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
        }
    }
    Failure::error(format!(
        "could not write to standard output: {}",
        pgrush_wire::strerror(e)
    ))
}

/// [`stdout_failure`], printed at once; returns the exit status (for commands that
/// still print their errors where they happen).
pub fn stdout_failed(prog: &str, e: &io::Error) -> i32 {
    let failure = stdout_failure(e);
    failure.print(prog, prog);
    failure.status()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_whole_or_absent() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("out.json");
        write_atomically(&path, b"first").expect("write");
        write_atomically(&path, b"second").expect("rewrite");
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.map(|e| e.file_name()))
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // Through a link: the link stays, its target gets the text and keeps its mode.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        write_atomically(&link, b"third").expect("through the link");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("link")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&path).expect("read"), b"third");
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A device is written in place, not replaced.
        write_atomically(Path::new("/dev/null"), b"x").expect("/dev/null");
        assert!(!is_special(&path));
        let full = write_atomically(Path::new("/dev/full"), b"x");
        assert_eq!(full.map_err(|e| e.raw_os_error()), Err(Some(libc::ENOSPC)));
    }

    #[test]
    fn unwritable_places_are_found_before_writing() {
        let dir = tempfile::tempdir().expect("dir");
        assert!(check_writable(&dir.path().join("new.html")).is_ok());
        assert!(!dir.path().join("new.html").exists());
        let missing = check_writable(&dir.path().join("no/such/dir.json"));
        assert_eq!(missing.map_err(|e| e.kind()), Err(io::ErrorKind::NotFound));
        let is_dir = check_writable(dir.path());
        assert_eq!(
            is_dir.map_err(|e| e.raw_os_error()),
            Err(Some(libc::EISDIR))
        );
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
    }
}
