//! A journal file: what to undo, written before each change to something that is not
//! ours (a user's cluster, a server's settings) and read back by the next run when this
//! one never got to undo it (`SIGKILL`, a crash, a power cut).
//!
//! The record is JSON (any serde type); each write replaces the whole file atomically
//! ([`crate::write_atomically`]), so a reader finds either the old
//! record or the new one, never half of one.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A journal file at a fixed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    path: PathBuf,
}

impl Journal {
    /// The journal at `path` (nothing is read or written yet).
    pub fn at(path: impl Into<PathBuf>) -> Journal {
        Journal { path: path.into() }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The record left by an earlier run: `None` when there is no journal or it does
    /// not parse as a `T`.
    pub fn read<T: DeserializeOwned>(&self) -> Option<T> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Replaces the record with `record`, durably (synced before it counts).
    pub fn write<T: Serialize>(&self, record: &T) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)?;
        text.push('\n');
        crate::write_atomically(&self.path, text.as_bytes())
    }

    /// Removes the journal: everything it recorded has been undone.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_record_written_is_read_back_until_removed() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::at(dir.path().join("j.json"));
        assert_eq!(journal.read::<BTreeMap<String, u32>>(), None);
        let record = BTreeMap::from([("a".to_string(), 1u32)]);
        journal.write(&record).unwrap();
        assert_eq!(journal.read::<BTreeMap<String, u32>>(), Some(record));
        assert_eq!(journal.read::<Vec<String>>(), None, "another type");
        journal.remove();
        assert!(!journal.path().exists());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "no temporary file left");
    }
}
