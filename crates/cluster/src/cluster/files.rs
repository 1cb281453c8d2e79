//! Files beside the data directory: scratch directories the server account owns, and
//! replacing the data directory with a copy of a base backup (point-in-time recovery).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{Cluster, append, chmod, setting_line};
use crate::error::ClusterError;

impl Cluster {
    /// Creates (if missing) the directory `name` in the cluster's base directory, owned
    /// by the account the server runs under, and returns its path: a place the server
    /// itself writes to (a WAL archive for `archive_command`). A throwaway cluster
    /// deletes it with everything else.
    pub fn server_dir(&self, name: &str) -> Result<PathBuf, ClusterError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(ClusterError::Invalid(format!("directory name {name:?}")));
        }
        let dir = self.base_path.join(name);
        if !dir.is_dir() {
            std::fs::create_dir(&dir)
                .map_err(|e| ClusterError::io(format!("mkdir {}", dir.display()), e))?;
        }
        chmod(&dir, 0o700)?;
        if let Some(acct) = self.account {
            acct.chown(&dir)?;
        }
        Ok(dir)
    }

    /// Replaces the data directory of the stopped server with a copy of `source` (for
    /// example a `pg_basebackup` directory), owned by the server account, and points
    /// its socket at this cluster's socket directory; this cluster's `pg_hba.conf`
    /// replaces the copy's. Settings written afterwards with
    /// [`Cluster::write_setting`] apply to the copy; the next [`Cluster::start_server`]
    /// starts from it (with `recovery.signal` in it: archive recovery).
    pub fn replace_data_dir(&self, source: &Path) -> Result<(), ClusterError> {
        if self.is_running() {
            return Err(ClusterError::AlreadyRunning);
        }
        if !source.join("PG_VERSION").is_file() {
            return Err(ClusterError::Invalid(format!(
                "{} is not a data directory (no PG_VERSION)",
                source.display()
            )));
        }
        // This cluster's own pg_hba.conf stays: the copy's may not let us in.
        let hba_path = self.data_dir.join("pg_hba.conf");
        let hba = std::fs::read(&hba_path)
            .map_err(|e| ClusterError::io(format!("read {}", hba_path.display()), e))?;
        std::fs::remove_dir_all(&self.data_dir)
            .map_err(|e| ClusterError::io(format!("remove {}", self.data_dir.display()), e))?;
        self.copy_tree(source, &self.data_dir)?;
        chmod(&self.data_dir, 0o700)?;
        let _ = std::fs::remove_file(self.data_dir.join("postmaster.pid"));
        super::overwrite(&hba_path, &hba)?;
        append(
            &self.data_dir.join("postgresql.conf"),
            &setting_line(
                "unix_socket_directories",
                &self.socket_dir.display().to_string(),
            ),
        )
    }

    /// Makes `name` the role [`Cluster::psql`] and [`Cluster::env`] connect as: after
    /// [`Cluster::replace_data_dir`] with another cluster's base backup, whose
    /// bootstrap superuser may not be `postgres`.
    pub fn set_superuser(&mut self, name: impl Into<String>) {
        self.superuser = name.into();
    }

    /// Copies the directory tree `from` to `to` (which must not exist), giving every
    /// entry to the server account.
    fn copy_tree(&self, from: &Path, to: &Path) -> Result<(), ClusterError> {
        let io =
            |what: &str, path: &Path, e| ClusterError::io(format!("{what} {}", path.display()), e);
        std::fs::create_dir(to).map_err(|e| io("mkdir", to, e))?;
        let mode = std::fs::metadata(from)
            .map_err(|e| io("stat", from, e))?
            .permissions()
            .mode();
        chmod(to, mode & 0o7777)?;
        if let Some(acct) = self.account {
            acct.chown(to)?;
        }
        for entry in std::fs::read_dir(from).map_err(|e| io("read", from, e))? {
            let entry = entry.map_err(|e| io("read", from, e))?;
            let src = entry.path();
            let dst = to.join(entry.file_name());
            let kind = entry.file_type().map_err(|e| io("stat", &src, e))?;
            if kind.is_dir() {
                self.copy_tree(&src, &dst)?;
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&src).map_err(|e| io("readlink", &src, e))?;
                std::os::unix::fs::symlink(&target, &dst).map_err(|e| io("symlink", &dst, e))?;
            } else {
                std::fs::copy(&src, &dst).map_err(|e| io("copy", &src, e))?;
                if let Some(acct) = self.account {
                    acct.chown(&dst)?;
                }
            }
        }
        Ok(())
    }
}
