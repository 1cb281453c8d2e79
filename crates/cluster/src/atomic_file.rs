//! Files written whole or not at all: [`write_atomically`] writes into a temporary file
//! beside the target, syncs it and renames it over the target, so a reader (or the next
//! run, after a crash) finds the old contents or the new ones, never half of them.
//! [`check_writable`] finds, before any work, a place that cannot be written.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Writes `bytes` to `path` whole or not at all: into a temporary file beside it
/// (`.NAME.pgrush-PID-N.tmp`), synced, then renamed over it. A failed write leaves no
/// temporary file and the previous contents stay; a file that existed keeps its
/// permissions; a symbolic link stays one (its target is replaced). Devices and FIFOs
/// (`/dev/stdout`, `/dev/null`) are written in place.
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

/// Checks that [`write_atomically`] can write `path`: a temporary file is created
/// beside it and removed (so a missing or read-only directory is found now, not after
/// the work), and `path` must not be a directory (`EISDIR`).
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

/// True when `path` names something other than a regular file or a directory (a
/// device, a FIFO): it is written in place, never replaced.
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
    fn a_failed_write_leaves_the_old_contents_and_no_temporary_file() {
        let dir = tempfile::tempdir().expect("dir");
        let missing = dir.path().join("no/such/dir.json");
        assert!(write_atomically(&missing, b"x").is_err());
        let path = dir.path().join("out.json");
        write_atomically(&path, b"old").expect("write");
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).expect("mkdir");
        assert!(write_atomically(&sub, b"x").is_err(), "a directory");
        assert_eq!(std::fs::read(&path).expect("read"), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 2);
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
