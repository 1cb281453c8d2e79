//! TLS client configuration with libpq's `sslmode` semantics, certificate checks with
//! libpq's messages, and the `tls-server-end-point` channel binding data.
//!
//! Parts: [`chain`] verifies the server's chain with OpenSSL's rules, [`crl`] loads
//! and applies revocation lists, [`client_key`] loads the client certificate and its
//! (possibly encrypted) key, [`signature`] and [`p521_kx`] add what OpenSSL has and
//! ring lacks (RSA-PSS keys, P-521).

use std::fs::File;
use std::io::BufReader;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rustls::client::ResolvesClientCert;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{
    CryptoProvider, verify_tls12_signature, verify_tls13_signature,
    verify_tls13_signature_with_raw_key,
};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, SubjectPublicKeyInfoDer, UnixTime};

use crate::config::{SslMode, TlsSettings};

mod chain;
mod client_key;
mod crl;
mod p521_kx;
mod setup_error;
mod signature;

use setup_error::TlsSetupError;

/// How much of the server certificate to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Accept any certificate (handshake signatures are still verified).
    Nothing,
    /// Chain up to a trusted root.
    Chain,
    /// Chain and host name.
    Full,
}

/// The verifier: the chain with OpenSSL's rules ([`chain`]), the host name with
/// libpq's rules (SAN, CN fallback, wildcards).
#[derive(Debug)]
struct PgVerifier {
    check: Check,
    /// The trust store: `sslrootcert`'s certificates or the system's, parsed.
    roots: Vec<chain::Cert>,
    /// The revocation lists when CRL checking is on.
    crls: Option<crl::CrlSet>,
    host: String,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PgVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if self.check == Check::Nothing {
            return Ok(ServerCertVerified::assertion());
        }
        let intermediates: Vec<&[u8]> = intermediates.iter().map(|c| c.as_ref()).collect();
        let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        match chain::verify(
            end_entity.as_ref(),
            &intermediates,
            &self.roots,
            self.crls.as_ref(),
            now,
        ) {
            Ok(()) => {}
            // libpq reports the first error in OpenSSL's queue, which a failed
            // signature check (a same-named wrong issuer) leaves there.
            Err(chain::ChainError::Signature(reason)) => {
                return Err(rustls::Error::General(format!("SSL error: {reason}")));
            }
            Err(_) => {
                return Err(rustls::Error::General(
                    "SSL error: certificate verify failed".to_string(),
                ));
            }
        }
        if self.check == Check::Full {
            check_host_name(end_entity.as_ref(), &self.host).map_err(rustls::Error::General)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        if let Some(result) = verify_extra(message, cert, dss) {
            return result;
        }
        let algs = &self.provider.signature_verification_algorithms;
        match verify_tls12_signature(message, cert, dss, algs) {
            Err(e) if unparsable_by_webpki(&e) => {
                // As rustls does: every algorithm of the scheme, until one verifies.
                let (_, key) = leaf_public_key(cert)?;
                let candidates = algs
                    .mapping
                    .iter()
                    .filter(|(scheme, _)| *scheme == dss.scheme)
                    .flat_map(|(_, algs)| algs.iter());
                for alg in candidates {
                    if alg.verify_signature(&key, message, dss.signature()).is_ok() {
                        return Ok(HandshakeSignatureValid::assertion());
                    }
                }
                Err(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::BadSignature,
                ))
            }
            other => other,
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        if let Some(result) = verify_extra(message, cert, dss) {
            return result;
        }
        let algs = &self.provider.signature_verification_algorithms;
        match verify_tls13_signature(message, cert, dss, algs) {
            Err(e) if unparsable_by_webpki(&e) => {
                let (spki, _) = leaf_public_key(cert)?;
                verify_tls13_signature_with_raw_key(
                    message,
                    &SubjectPublicKeyInfoDer::from(spki.as_slice()),
                    dss,
                    algs,
                )
            }
            other => other,
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        let mut schemes = self
            .provider
            .signature_verification_algorithms
            .supported_schemes();
        schemes.extend(signature::extra_schemes());
        schemes
    }
}

/// A handshake signature ring cannot verify ([`signature::verify_extra_scheme`]);
/// `None` for the others.
fn verify_extra(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
) -> Option<Result<HandshakeSignatureValid, rustls::Error>> {
    let (key, p521) = match leaf_key_and_curve(cert) {
        Ok(k) => k,
        Err(e) => return Some(Err(e)),
    };
    let verified =
        signature::verify_extra_scheme(dss.scheme, &key, p521, message, dss.signature())?;
    Some(if verified {
        Ok(HandshakeSignatureValid::assertion())
    } else {
        Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::BadSignature,
        ))
    })
}

/// The server certificate's key bits and whether the key is on P-521.
fn leaf_key_and_curve(cert: &CertificateDer<'_>) -> Result<(Vec<u8>, bool), rustls::Error> {
    let (_, x) = x509_parser::parse_x509_certificate(cert.as_ref())
        .map_err(|_| rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding))?;
    let spki = x.public_key();
    let p521 = spki
        .algorithm
        .parameters
        .as_ref()
        .and_then(|p| p.as_oid().ok())
        .is_some_and(|o| o.to_id_string() == signature::P521);
    Ok((spki.subject_public_key.data.to_vec(), p521))
}

/// Whether rustls refused a certificate that webpki cannot parse but OpenSSL takes
/// (a version 1 certificate): its key is then read with x509-parser.
fn unparsable_by_webpki(e: &rustls::Error) -> bool {
    matches!(
        e,
        rustls::Error::InvalidCertificate(rustls::CertificateError::Other(_))
            | rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding)
    )
}

/// The server certificate's SubjectPublicKeyInfo (DER) and its key bits.
fn leaf_public_key(cert: &CertificateDer<'_>) -> Result<(Vec<u8>, Vec<u8>), rustls::Error> {
    let (_, x) = x509_parser::parse_x509_certificate(cert.as_ref())
        .map_err(|_| rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding))?;
    let spki = x.public_key();
    Ok((spki.raw.to_vec(), spki.subject_public_key.data.to_vec()))
}

/// Case-insensitive name match with a leading `*.` wildcard covering exactly one label.
fn name_matches(pattern: &str, host: &str) -> bool {
    if pattern.eq_ignore_ascii_case(host) {
        return true;
    }
    if let Some(suffix) = pattern.strip_prefix('*')
        && suffix.starts_with('.')
        && host.len() > suffix.len()
    {
        let split = host.len() - suffix.len();
        if let (Some(head), Some(tail)) = (host.get(..split), host.get(split..)) {
            return tail.eq_ignore_ascii_case(suffix) && !head.contains('.');
        }
    }
    false
}

/// libpq's host name check against the certificate (DER).
pub(crate) fn check_host_name(der: &[u8], host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("host name must be specified for a verified SSL connection".to_string());
    }
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|_| "could not get server's host name from server certificate".to_string())?;
    let host_ip: Option<IpAddr> = host.parse().ok();
    let mut examined = 0usize;
    let mut first: Option<String> = None;
    let mut has_dns = false;
    let mut has_ip = false;
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                x509_parser::extensions::GeneralName::DNSName(dns) => {
                    has_dns = true;
                    examined += 1;
                    first.get_or_insert_with(|| dns.to_string());
                    if name_matches(dns, host) {
                        return Ok(());
                    }
                }
                x509_parser::extensions::GeneralName::IPAddress(bytes) => {
                    let ip = match bytes.len() {
                        4 => <[u8; 4]>::try_from(*bytes).ok().map(IpAddr::from),
                        16 => <[u8; 16]>::try_from(*bytes).ok().map(IpAddr::from),
                        _ => None,
                    };
                    if let Some(ip) = ip {
                        has_ip = true;
                        examined += 1;
                        first.get_or_insert_with(|| ip.to_string());
                        if host_ip == Some(ip) {
                            return Ok(());
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // Only a SAN of the host's own type (DNS name or IP address) rules out the CN.
    let check_cn = if host_ip.is_some() { !has_ip } else { !has_dns };
    if check_cn
        && let Some(cn) = cert
            .subject()
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
    {
        examined += 1;
        first.get_or_insert_with(|| cn.to_string());
        if name_matches(cn, host) {
            return Ok(());
        }
    }
    match (examined, first) {
        (0, _) | (_, None) => {
            Err("could not get server's host name from server certificate".to_string())
        }
        (1, Some(name)) => Err(format!(
            "server certificate for \"{name}\" does not match host name \"{host}\""
        )),
        (n, Some(name)) => Err(format!(
            "server certificate for \"{name}\" (and {} other name{}) does not match host name \"{host}\"",
            n - 1,
            if n - 1 == 1 { "" } else { "s" }
        )),
    }
}

/// `sslkeylogfile`: NSS key log lines appended to a file created with mode 0600.
#[derive(Debug)]
struct KeyLogFile(std::path::PathBuf);

impl rustls::KeyLog for KeyLogFile {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        use std::fmt::Write as _;
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt;
        let mut line = format!("{label} ");
        for b in client_random {
            let _ = write!(line, "{b:02x}");
        }
        line.push(' ');
        for b in secret {
            let _ = write!(line, "{b:02x}");
        }
        line.push('\n');
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.0);
        match file {
            Ok(mut f) => {
                let _ = f.write_all(line.as_bytes());
            }
            Err(e) => eprintln!(
                "WARNING: could not open SSL key logging file \"{}\": {}",
                self.0.display(),
                crate::error::strerror(&e)
            ),
        }
    }
}

fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let f = File::open(path).map_err(|e| {
        format!(
            "could not read root certificate file \"{}\": {}",
            path.display(),
            crate::error::strerror(&e)
        )
    })?;
    rustls_pemfile::certs(&mut BufReader::new(f))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            format!(
                "could not read root certificate file \"{}\": {e}",
                path.display()
            )
        })
}

/// What the verifier checks the server against.
struct TrustStore {
    check: Check,
    roots: Vec<CertificateDer<'static>>,
    crls: Option<crl::CrlSet>,
}

/// The trust store as libpq sets it up: `sslrootcert` (a file, or `system`), its
/// existence deciding what `sslmode` checks, and the CRLs loaded with the file.
fn trust_store(settings: &TlsSettings) -> Result<TrustStore, TlsSetupError> {
    let system = settings.rootcert.as_deref() == Some("system");
    let mut check = match settings.mode {
        SslMode::VerifyFull => Check::Full,
        SslMode::VerifyCa => Check::Chain,
        _ => Check::Nothing,
    };
    if system {
        check = Check::Full;
    }
    let mut roots = Vec::new();
    let mut crls = None;
    if system {
        roots = rustls_native_certs::load_native_certs().certs;
    } else {
        let path = settings.rootcert.as_deref().filter(|p| !p.is_empty());
        let exists = path.is_some_and(|p| Path::new(p).exists());
        match (check, exists) {
            // libpq verifies the chain in every mode once a root file exists.
            (Check::Nothing, true) => check = Check::Chain,
            (Check::Chain | Check::Full, false) => {
                return Err(TlsSetupError(match path {
                    Some(p) => format!(
                        "root certificate file \"{p}\" does not exist\nEither provide the file, use the system's trusted roots with sslrootcert=system, or change sslmode to disable server certificate verification."
                    ),
                    None => "could not get home directory to locate root certificate file\nEither provide the file, use the system's trusted roots with sslrootcert=system, or change sslmode to disable server certificate verification.".to_string(),
                }));
            }
            _ => {}
        }
        if check != Check::Nothing
            && let Some(p) = path
        {
            roots = load_certs(Path::new(p)).map_err(TlsSetupError)?;
            if roots.is_empty() {
                // OpenSSL's X509_load_cert_crl_file finds nothing to load.
                return Err(TlsSetupError(format!(
                    "could not read root certificate file \"{p}\": no certificate or crl found"
                )));
            }
            // libpq loads the CRLs into the store of the root file, and only then.
            crls = crl::load(settings.crl.as_deref(), settings.crldir.as_deref());
        }
    }
    Ok(TrustStore { check, roots, crls })
}

/// Builds the client configuration for `settings` when connecting to `host`, and the
/// record of what happened to the client certificate during the handshake.
pub(crate) fn client_config(
    settings: &TlsSettings,
    host: &str,
) -> Result<(Arc<ClientConfig>, CertRecord), TlsSetupError> {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.kx_groups.push(&p521_kx::P521Group);
    let provider = Arc::new(provider);
    let TrustStore { check, roots, crls } = trust_store(settings)?;
    let verifier = Arc::new(PgVerifier {
        check,
        roots: chain::parse_roots(roots.iter().map(|c| c.as_ref())),
        crls,
        host: host.to_string(),
        provider: provider.clone(),
    });
    let versions: &[&'static rustls::SupportedProtocolVersion] =
        match (settings.max_tls12, settings.min_tls13) {
            (true, true) => {
                return Err(TlsSetupError(
                    "invalid SSL protocol version range".to_string(),
                ));
            }
            (true, false) => &[&rustls::version::TLS12],
            (false, true) => &[&rustls::version::TLS13],
            (false, false) => &[&rustls::version::TLS13, &rustls::version::TLS12],
        };
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| TlsSetupError(format!("SSL error: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let identity = if settings.no_client_cert {
        None
    } else {
        client_key::client_identity(settings)?
    };
    let key = match identity {
        // Not `CertifiedKey::from_der`: webpki cannot parse the version 1 certificates
        // `openssl x509 -req` makes, which OpenSSL sends all the same.
        Some((certs, key)) => {
            let key = provider
                .key_provider
                .load_private_key(key)
                .map_err(|e| TlsSetupError(format!("SSL error: {e}")))?;
            if let (Some(cert), Some(path)) = (certs.first(), settings.key.as_deref()) {
                client_key::check_key_matches(cert, key.as_ref(), path)?;
            }
            Some(Arc::new(CertifiedKey::new(certs, key)))
        }
        None => None,
    };
    if below_tls12(&settings.protocol_range.1) {
        // rustls speaks TLS 1.2 and 1.3 only; a server with PostgreSQL's default
        // minimum (TLSv1.2) refuses the older versions this way.
        return Err(TlsSetupError(protocol_version_alert(settings)));
    }
    let record = CertRecord::default();
    let mut config = builder.with_client_cert_resolver(Arc::new(RecordingResolver {
        key,
        record: record.clone(),
    }));
    config.enable_sni = settings.sni;
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    if let Some(path) = &settings.keylog_file {
        config.key_log = Arc::new(KeyLogFile(path.clone()));
    }
    Ok((Arc::new(config), record))
}

/// Whether an `ssl_max_protocol_version` value is below TLSv1.2.
fn below_tls12(max: &str) -> bool {
    max.eq_ignore_ascii_case("TLSv1") || max.eq_ignore_ascii_case("TLSv1.1")
}

/// OpenSSL's message for the server's `protocol_version` alert and libpq's hint.
fn protocol_version_alert(settings: &TlsSettings) -> String {
    let (min, max) = &settings.protocol_range;
    format!(
        "SSL error: tlsv1 alert protocol version\nThis may indicate that the server does not support any SSL protocol version between {min} and {max}."
    )
}

/// A failed handshake in libpq's words.
pub(crate) fn handshake_error_text(e: &rustls::Error, settings: &TlsSettings) -> String {
    match e {
        rustls::Error::General(msg) => msg.clone(),
        rustls::Error::AlertReceived(rustls::AlertDescription::ProtocolVersion) => {
            protocol_version_alert(settings)
        }
        other => format!("SSL error: {other}"),
    }
}

/// What happened to the client certificate in the handshake, for `sslcertmode=require`
/// (shared with the resolver that rustls asks when the server requests one).
#[derive(Debug, Clone, Default)]
pub(crate) struct CertRecord(Arc<AtomicU8>);

const CERT_REQUESTED: u8 = 1;
const CERT_SENT: u8 = 2;

impl CertRecord {
    /// libpq's `sslcertmode=require` failure once authentication succeeded, if any
    /// (`None` for the record of a connection without TLS).
    pub(crate) fn require_failure(record: Option<&CertRecord>) -> Option<&'static str> {
        let bits = record.map_or(0, |r| r.0.load(Ordering::Relaxed));
        if bits & CERT_REQUESTED == 0 {
            Some("server did not request an SSL certificate")
        } else if bits & CERT_SENT == 0 {
            Some("server accepted connection without a valid SSL certificate")
        } else {
            None
        }
    }
}

/// Offers the client certificate (if any) when the server asks, and records it.
#[derive(Debug)]
struct RecordingResolver {
    key: Option<Arc<CertifiedKey>>,
    record: CertRecord,
}

impl ResolvesClientCert for RecordingResolver {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.record.0.fetch_or(CERT_REQUESTED, Ordering::Relaxed);
        let key = self.key.as_ref()?;
        key.key.choose_scheme(sigschemes)?;
        self.record.0.fetch_or(CERT_SENT, Ordering::Relaxed);
        Some(key.clone())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// The server name given to rustls: the host when it is a DNS name or IP, else the hostaddr.
pub(crate) fn server_name(host: &str, hostaddr: Option<&str>) -> ServerName<'static> {
    if let Ok(n) = ServerName::try_from(host.to_string()) {
        return n;
    }
    if let Some(ip) = hostaddr.and_then(|a| a.parse::<IpAddr>().ok()) {
        return ServerName::IpAddress(ip.into());
    }
    ServerName::IpAddress(IpAddr::from([127, 0, 0, 1]).into())
}

/// `tls-server-end-point` channel binding data: the certificate hashed with its
/// signature hash (SHA-256 for MD5/SHA-1 and unknown algorithms).
pub(crate) fn server_end_point(cert_der: &[u8]) -> Vec<u8> {
    let oid = x509_parser::parse_x509_certificate(cert_der)
        .map(|(_, c)| c.signature_algorithm.algorithm.to_id_string())
        .unwrap_or_default();
    let alg = match oid.as_str() {
        "1.2.840.113549.1.1.12" | "1.2.840.10045.4.3.3" => &ring::digest::SHA384,
        "1.2.840.113549.1.1.13" | "1.2.840.10045.4.3.4" => &ring::digest::SHA512,
        _ => &ring::digest::SHA256,
    };
    ring::digest::digest(alg, cert_der).as_ref().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(name_matches("*.example.com", "db.example.com"));
        assert!(name_matches("DB.example.com", "db.EXAMPLE.com"));
        assert!(!name_matches("*.example.com", "a.b.example.com"));
        assert!(!name_matches("*.example.com", "example.com"));
        assert!(!name_matches("localhost", "127.0.0.1"));
    }

    /// A certificate with `CN=localhost` and `sans` (DER).
    fn cert_with(sans: &[&str]) -> Vec<u8> {
        let mut p =
            rcgen::CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .expect("params");
        p.distinguished_name
            .push(rcgen::DnType::CommonName, "localhost");
        let key = rcgen::KeyPair::generate().expect("key");
        p.self_signed(&key).expect("self-signed").der().to_vec()
    }

    #[test]
    fn only_a_san_of_the_host_type_rules_out_the_cn() {
        // An IP host and DNS names only: the CN is examined too (libpq's NSS-like rule).
        let dns = cert_with(&["localhost"]);
        assert_eq!(
            check_host_name(&dns, "127.0.0.1"),
            Err("server certificate for \"localhost\" (and 1 other name) does not match host name \"127.0.0.1\"".to_string())
        );
        assert_eq!(check_host_name(&dns, "localhost"), Ok(()));
        // A DNS host and IP addresses only: the CN matches.
        let ip = cert_with(&["127.0.0.1"]);
        assert_eq!(check_host_name(&ip, "localhost"), Ok(()));
        assert_eq!(check_host_name(&ip, "127.0.0.1"), Ok(()));
        assert_eq!(
            check_host_name(&ip, "::1"),
            Err(
                "server certificate for \"127.0.0.1\" does not match host name \"::1\"".to_string()
            )
        );
    }

    #[test]
    fn missing_root_file_message() {
        let s = TlsSettings {
            mode: SslMode::VerifyCa,
            rootcert: Some("/nonexistent/root.crt".into()),
            ..Default::default()
        };
        let e = client_config(&s, "localhost").err().map(|e| e.0);
        assert_eq!(
            e.as_deref(),
            Some(
                "root certificate file \"/nonexistent/root.crt\" does not exist\nEither provide the file, use the system's trusted roots with sslrootcert=system, or change sslmode to disable server certificate verification."
            )
        );
        let s = TlsSettings {
            mode: SslMode::Require,
            rootcert: Some("/nonexistent/root.crt".into()),
            ..Default::default()
        };
        assert!(client_config(&s, "localhost").is_ok());
    }
}
