//! TLS material for the server: a certificate, its key and an optional CA, given as PEM
//! text or as files, and written into the cluster's own directory.

use std::path::{Path, PathBuf};

use crate::account::Account;
use crate::error::ClusterError;

/// PEM text, or a file to read it from when the cluster is created.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pem {
    Text(Vec<u8>),
    File(PathBuf),
}

impl Pem {
    fn bytes(&self) -> Result<Vec<u8>, ClusterError> {
        match self {
            Pem::Text(text) => Ok(text.clone()),
            Pem::File(path) => std::fs::read(path)
                .map_err(|e| ClusterError::io(format!("read {}", path.display()), e)),
        }
    }
}

/// The server's TLS files: certificate, private key and, optionally, the CA whose
/// client certificates the server accepts (`ssl_ca_file`, needed for `cert`
/// authentication and `clientcert=`).
///
/// The cluster copies them into its own directory (`server.crt`, `server.key` with mode
/// 0600 owned by the server's account, `ca.crt`), so the originals may live anywhere
/// and need not be readable by the server's account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTls {
    cert: Pem,
    key: Pem,
    ca: Option<Pem>,
}

impl ServerTls {
    /// A certificate chain and its private key as PEM text.
    pub fn from_pem(cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> ServerTls {
        ServerTls {
            cert: Pem::Text(cert.into()),
            key: Pem::Text(key.into()),
            ca: None,
        }
    }

    /// A certificate chain and its private key in PEM files (read when the cluster is
    /// created).
    pub fn from_files(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> ServerTls {
        ServerTls {
            cert: Pem::File(cert.into()),
            key: Pem::File(key.into()),
            ca: None,
        }
    }

    /// The CA certificate(s), as PEM text, that client certificates must chain to.
    pub fn ca_pem(mut self, ca: impl Into<Vec<u8>>) -> ServerTls {
        self.ca = Some(Pem::Text(ca.into()));
        self
    }

    /// The CA certificate(s), in a PEM file, that client certificates must chain to.
    pub fn ca_file(mut self, ca: impl Into<PathBuf>) -> ServerTls {
        self.ca = Some(Pem::File(ca.into()));
        self
    }

    /// Writes the files into `dir`.
    pub(crate) fn install(
        &self,
        dir: &Path,
        account: Option<Account>,
    ) -> Result<InstalledTls, ClusterError> {
        let crt = dir.join("server.crt");
        let key = dir.join("server.key");
        write_file(&crt, &self.cert.bytes()?, 0o644)?;
        write_file(&key, &self.key.bytes()?, 0o600)?;
        if let Some(acct) = account {
            acct.chown(&crt)?;
            acct.chown(&key)?;
        }
        let mut settings = vec![
            ("ssl".to_string(), "on".to_string()),
            ("ssl_cert_file".to_string(), crt.display().to_string()),
            ("ssl_key_file".to_string(), key.display().to_string()),
        ];
        let ca_path = match &self.ca {
            Some(ca) => {
                let path = dir.join("ca.crt");
                write_file(&path, &ca.bytes()?, 0o644)?;
                settings.push(("ssl_ca_file".to_string(), path.display().to_string()));
                Some(path)
            }
            None => None,
        };
        Ok(InstalledTls { settings, ca_path })
    }
}

/// The TLS files as written into a cluster's directory.
pub(crate) struct InstalledTls {
    /// The `postgresql.conf` settings that use them (`ssl`, `ssl_cert_file`, ...).
    pub settings: Vec<(String, String)>,
    /// The CA copy's path, when a CA was given.
    pub ca_path: Option<PathBuf>,
}

/// Writes `contents` to `path` (created or truncated) with `mode`.
pub(crate) fn write_file(path: &Path, contents: &[u8], mode: u32) -> Result<(), ClusterError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .map_err(|e| ClusterError::io(format!("create {}", path.display()), e))?;
    file.write_all(contents)
        .map_err(|e| ClusterError::io(format!("write {}", path.display()), e))
}
