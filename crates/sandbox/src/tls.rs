//! Test certificates: a private CA, a server certificate and client certificates.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use crate::error::SandboxError;

/// A certificate authority kept for the life of a cluster.
pub(crate) struct Authority {
    issuer: Issuer<'static, KeyPair>,
    cert_path: PathBuf,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority")
            .field("cert_path", &self.cert_path)
            .finish_non_exhaustive()
    }
}

fn tls_err(e: rcgen::Error) -> SandboxError {
    SandboxError::Tls(e.to_string())
}

/// Writes `contents` to `path` with `mode`.
pub(crate) fn write_file(path: &Path, contents: &str, mode: u32) -> Result<(), SandboxError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .map_err(|e| SandboxError::io(format!("create {}", path.display()), e))?;
    file.write_all(contents.as_bytes())
        .map_err(|e| SandboxError::io(format!("write {}", path.display()), e))
}

impl Authority {
    /// Creates a CA and writes its certificate to `dir/ca.crt`.
    pub fn create(dir: &Path) -> Result<Authority, SandboxError> {
        let mut params = CertificateParams::new(Vec::new()).map_err(tls_err)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "pgrush sandbox CA");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().map_err(tls_err)?;
        let cert = params.self_signed(&key).map_err(tls_err)?;
        let cert_path = dir.join("ca.crt");
        write_file(&cert_path, &cert.pem(), 0o644)?;
        Ok(Authority {
            issuer: Issuer::new(params, key),
            cert_path,
        })
    }

    /// The CA certificate's path.
    pub fn cert_path(&self) -> &Path {
        &self.cert_path
    }

    /// Issues a certificate; returns (certificate PEM, key PEM).
    fn issue(
        &self,
        common_name: &str,
        sans: Vec<String>,
        usage: ExtendedKeyUsagePurpose,
    ) -> Result<(String, String), SandboxError> {
        let mut params = CertificateParams::new(sans).map_err(tls_err)?;
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().map_err(tls_err)?;
        let cert = params.signed_by(&key, &self.issuer).map_err(tls_err)?;
        Ok((cert.pem(), key.serialize_pem()))
    }

    /// Writes `server.crt` and `server.key` (mode 0600) into `dir`; with `cn_only` the
    /// certificate names `localhost` in its CN alone, without subjectAltName.
    pub fn write_server(
        &self,
        dir: &Path,
        cn_only: bool,
    ) -> Result<(PathBuf, PathBuf), SandboxError> {
        let sans = if cn_only {
            Vec::new()
        } else {
            vec!["localhost".into(), "127.0.0.1".into(), "::1".into()]
        };
        let (cert, key) = self.issue("localhost", sans, ExtendedKeyUsagePurpose::ServerAuth)?;
        let crt_path = dir.join("server.crt");
        let key_path = dir.join("server.key");
        write_file(&crt_path, &cert, 0o644)?;
        write_file(&key_path, &key, 0o600)?;
        Ok((crt_path, key_path))
    }

    /// Writes a client certificate for `user` (CN = user) as `dir/<user>.crt` and
    /// `dir/<user>.key` (mode 0600, owned by the caller).
    pub fn write_client(&self, dir: &Path, user: &str) -> Result<(PathBuf, PathBuf), SandboxError> {
        if user.is_empty() || user.contains(['/', '\0']) {
            return Err(SandboxError::Invalid(format!(
                "client certificate user {user:?}"
            )));
        }
        let (cert, key) = self.issue(user, Vec::new(), ExtendedKeyUsagePurpose::ClientAuth)?;
        let crt_path = dir.join(format!("{user}.crt"));
        let key_path = dir.join(format!("{user}.key"));
        write_file(&crt_path, &cert, 0o644)?;
        write_file(&key_path, &key, 0o600)?;
        Ok((crt_path, key_path))
    }
}
