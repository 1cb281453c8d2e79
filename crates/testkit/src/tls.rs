//! Test certificates made with `rcgen`: a private CA, server certificates for a
//! [`pgrush_cluster::Cluster`] and client certificates.
//!
//! ```no_run
//! use pgrush_cluster::Cluster;
//! use pgrush_testkit::tls::{CertNames, TlsCluster};
//! let c = TlsCluster::start(Cluster::builder(), CertNames::Alternative).unwrap();
//! let (crt, key) = c.client_cert("postgres").unwrap();
//! println!("sslrootcert={} sslcert={} sslkey={}",
//!     c.ca_cert().unwrap().display(), crt.display(), key.display());
//! ```

use std::ops::Deref;
use std::path::{Path, PathBuf};

use pgrush_cluster::{Cluster, ClusterBuilder, ClusterError, ServerTls};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tempfile::TempDir;

/// Which names a server certificate carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertNames {
    /// `CN=localhost` and subjectAltNames `localhost`, `127.0.0.1` and `::1`.
    Alternative,
    /// `CN=localhost` alone, no subjectAltName (libpq's common-name fallback).
    CommonNameOnly,
}

/// A certificate authority with a directory for the files it issues (removed on drop).
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    cert_pem: String,
    dir: TempDir,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa")
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

impl TestCa {
    /// Creates a CA named `pgrush sandbox CA` and writes its certificate to
    /// [`TestCa::cert_path`].
    pub fn new() -> Result<TestCa, String> {
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
        let dir = tempfile::Builder::new()
            .prefix("pgrush-test-ca-")
            .tempdir()
            .map_err(|e| format!("create a temp dir: {e}"))?;
        let cert_pem = cert.pem();
        write_file(&dir.path().join("ca.crt"), &cert_pem, 0o644)?;
        Ok(TestCa {
            issuer: Issuer::new(params, key),
            cert_pem,
            dir,
        })
    }

    /// The CA certificate's file.
    pub fn cert_path(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    /// The CA certificate as PEM text.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// A server certificate for `localhost` issued by this CA, with this CA as the one
    /// client certificates must chain to.
    pub fn server_tls(&self, names: CertNames) -> Result<ServerTls, String> {
        let (cert, key) = self.server_pem(names)?;
        Ok(ServerTls::from_pem(cert, key).ca_pem(self.cert_pem.clone()))
    }

    /// A server certificate for `localhost` issued by this CA, as PEM text:
    /// (certificate, private key).
    pub fn server_pem(&self, names: CertNames) -> Result<(String, String), String> {
        let sans = match names {
            CertNames::Alternative => {
                vec!["localhost".into(), "127.0.0.1".into(), "::1".into()]
            }
            CertNames::CommonNameOnly => Vec::new(),
        };
        self.issue("localhost", sans, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// Issues a client certificate for `user` (CN = user); returns the certificate and
    /// key files (`<user>.crt`, `<user>.key` with mode 0600) in the CA's directory.
    pub fn client_cert(&self, user: &str) -> Result<(PathBuf, PathBuf), String> {
        if user.is_empty() || user.contains(['/', '\0']) {
            return Err(format!("client certificate user {user:?}"));
        }
        let (cert, key) = self.issue(user, Vec::new(), ExtendedKeyUsagePurpose::ClientAuth)?;
        let crt_path = self.dir.path().join(format!("{user}.crt"));
        let key_path = self.dir.path().join(format!("{user}.key"));
        write_file(&crt_path, &cert, 0o644)?;
        write_file(&key_path, &key, 0o600)?;
        Ok((crt_path, key_path))
    }

    /// Issues a certificate; returns (certificate PEM, key PEM).
    fn issue(
        &self,
        common_name: &str,
        sans: Vec<String>,
        usage: ExtendedKeyUsagePurpose,
    ) -> Result<(String, String), String> {
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
}

/// A cluster started with TLS from its own [`TestCa`]; derefs to the [`Cluster`].
#[derive(Debug)]
pub struct TlsCluster {
    cluster: Cluster,
    ca: TestCa,
}

impl TlsCluster {
    /// Makes a CA, a server certificate with `names`, and starts `builder`'s cluster
    /// with them.
    pub fn start(builder: ClusterBuilder, names: CertNames) -> Result<TlsCluster, ClusterError> {
        let ca = TestCa::new().map_err(ClusterError::Invalid)?;
        let tls = ca.server_tls(names).map_err(ClusterError::Invalid)?;
        let cluster = builder.tls(tls).start()?;
        Ok(TlsCluster { cluster, ca })
    }

    /// The CA that issued the server's certificate.
    pub fn ca(&self) -> &TestCa {
        &self.ca
    }

    /// Issues a client certificate for `user` from the cluster's CA (see
    /// [`TestCa::client_cert`]).
    pub fn client_cert(&self, user: &str) -> Result<(PathBuf, PathBuf), String> {
        self.ca.client_cert(user)
    }
}

impl Deref for TlsCluster {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        &self.cluster
    }
}

fn tls_err(e: rcgen::Error) -> String {
    format!("TLS certificate generation failed: {e}")
}

/// Writes `contents` to `path` with `mode`.
fn write_file(path: &Path, contents: &str, mode: u32) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .map_err(|e| format!("create {}: {e}", path.display()))?;
    file.write_all(contents.as_bytes())
        .map_err(|e| format!("write {}: {e}", path.display()))
}
