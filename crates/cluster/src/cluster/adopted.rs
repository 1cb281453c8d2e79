//! What an adopted cluster ([`Cluster::adopt`](crate::Cluster::adopt)) keeps to be
//! handed back as found; written to the journal before the first change.

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A configuration file and its contents (`None`: it did not exist).
pub(crate) type SavedFile = (PathBuf, Option<Vec<u8>>);

/// What an adopted cluster remembers to hand it back as found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Adopted {
    /// Whether the server ran when adopted.
    pub was_running: bool,
    /// The postmaster's arguments (after the program).
    pub server_args: Vec<OsString>,
    /// The regular file the running server's standard output and error went to.
    pub log: Option<PathBuf>,
    /// Each configuration file and its contents at adoption (`None`: it did not exist).
    pub saved: Vec<SavedFile>,
    /// The private directories made for the adoption, removed at hand back.
    pub dirs: Vec<PathBuf>,
}
