//! Certificate chain verification with OpenSSL's rules, as libpq linked with OpenSSL
//! applies them (`X509_verify_cert` with the `ssl_server` purpose and default flags).
//!
//! What differs from webpki, and why this module exists: a self-signed certificate
//! found in the trust store is a complete chain even when it is `CA:TRUE` or is the
//! server's own certificate; version 1 certificates are accepted as leaves and as
//! self-signed roots; every certificate of the chain, the root included, must be
//! within its validity period. What stays refused: a chain that does not end in a
//! self-signed certificate of the trust store, byte for byte (no partial chains, no
//! same-named stand-ins), an issuer that is not a CA (`CA:FALSE`, a version 1
//! intermediate, a key usage without `keyCertSign`), a broken signature, a path length
//! violation, an unhandled critical extension, and a leaf whose key usage or extended
//! key usage excludes TLS servers (even when it is its own root).
//!
//! Revocation lists ([`super::crl`]) are checked for every certificate of the chain
//! when a [`CrlSet`] is given, before the signatures (OpenSSL's order).
//!
//! Not implemented: name constraints, and signatures other than RSA PKCS#1 and
//! RSASSA-PSS with SHA-2, ECDSA P-256/P-384/P-521 and Ed25519 (refused; SHA-1 and MD5
//! are refused below the trust anchor as OpenSSL's security level 1 and up does). Policies are not checked, as
//! OpenSSL's defaults do not check them either.

use ring::signature::{self, UnparsedPublicKey, VerificationAlgorithm};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::ParsedExtension;
use x509_parser::oid_registry::Oid;

use super::crl::CrlSet;
use super::signature::signature_alg_id;

/// Why a chain was refused (all reported by libpq as `certificate verify failed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChainError {
    /// A certificate could not be parsed.
    Malformed,
    /// No issuer of the last certificate in the trust store nor among those the server
    /// sent (`unable to get local issuer certificate`).
    NoIssuer,
    /// A self-signed certificate not in the trust store ends the chain.
    SelfSignedNotTrusted,
    /// A certificate is expired or not yet valid.
    Time,
    /// An issuer is not a CA.
    InvalidCa,
    /// A path length constraint is exceeded.
    PathLength,
    /// A certificate's extended key usage (or the leaf's key usage) excludes TLS
    /// servers.
    Purpose,
    /// A critical extension OpenSSL does not handle.
    UnhandledCritical,
    /// The chain is longer than OpenSSL's default depth limit.
    TooLong,
    /// A certificate has no current CRL from its issuer, or is revoked.
    Revoked,
    /// A certificate below the trust anchor is signed with SHA-1 or MD5.
    WeakDigest,
    /// A signature does not verify with its issuer's key. libpq reports the first
    /// error OpenSSL queued, given here: the RSA layer's reason for an RSA key, else
    /// `EVP lib`.
    Signature(&'static str),
}

/// OpenSSL's default verification depth (100) plus the leaf and the root.
const MAX_CHAIN: usize = 102;

/// Verifies `leaf` (DER) with the server's `intermediates` against the trust store
/// `roots` (parsed once, see [`parse_roots`]), at `now` (seconds since the epoch),
/// with revocation checks when `crls` is given.
pub(crate) fn verify(
    leaf: &[u8],
    intermediates: &[&[u8]],
    roots: &[Cert],
    crls: Option<&CrlSet>,
    now: i64,
) -> Result<(), ChainError> {
    let leaf_cert = Cert::parse(leaf).ok_or(ChainError::Malformed)?;
    // Unparsable extra certificates are skipped, as OpenSSL skips what it cannot use.
    let untrusted: Vec<Cert> = intermediates
        .iter()
        .filter_map(|d| Cert::parse(d))
        .collect();

    let mut chain: Vec<&Cert> = vec![&leaf_cert];
    loop {
        if chain.len() > MAX_CHAIN {
            return Err(ChainError::TooLong);
        }
        let current = *chain.last().ok_or(ChainError::Malformed)?;
        if current.self_signed {
            // A self-signed certificate ends the chain: it must be in the trust store
            // byte for byte (a same-named stand-in could substitute its key).
            if roots.iter().any(|r| r.der == current.der) {
                break;
            }
            return Err(ChainError::SelfSignedNotTrusted);
        }
        // Trusted first (X509_V_FLAG_TRUSTED_FIRST), then what the server sent.
        let issuer = find_issuer(current, roots, now)
            .or_else(|| find_issuer(current, &untrusted, now))
            .ok_or(ChainError::NoIssuer)?;
        if chain.iter().any(|c| std::ptr::eq(*c, issuer)) {
            return Err(ChainError::NoIssuer);
        }
        chain.push(issuer);
        if issuer.self_signed && roots.iter().any(|r| std::ptr::eq(r, issuer)) {
            break;
        }
    }

    check_chain_extensions(&chain)?;
    if let Some(crls) = crls {
        check_revocation(&chain, crls, now)?;
    }
    check_signatures_and_times(&chain, now)
}

/// `X509_V_FLAG_CRL_CHECK_ALL`: each certificate needs a current CRL signed by its
/// issuer (the root by itself) that does not list its serial number.
fn check_revocation(chain: &[&Cert], crls: &CrlSet, now: i64) -> Result<(), ChainError> {
    for (i, cert) in chain.iter().enumerate() {
        let issuer = chain.get(i + 1).copied().unwrap_or(cert);
        if !issuer.crl_sign {
            return Err(ChainError::Revoked);
        }
        let crl = crls.pick(&cert.issuer, now).ok_or(ChainError::Revoked)?;
        // OpenSSL's check_crl: the signature (its failure queues the key's reason
        // first, as for a certificate), then the dates.
        if !signature_valid(&crl.signature_alg, &crl.tbs, &crl.signature, issuer) {
            return Err(ChainError::Signature(signature_failure(
                &crl.signature,
                issuer,
            )));
        }
        if !crl.current_at(now) {
            return Err(ChainError::Revoked);
        }
        if crl.revokes(&cert.serial) {
            return Err(ChainError::Revoked);
        }
    }
    Ok(())
}

/// The trust store's certificates, parsed; unparsable ones are left out.
pub(crate) fn parse_roots<'a>(ders: impl IntoIterator<Item = &'a [u8]>) -> Vec<Cert> {
    ders.into_iter().filter_map(Cert::parse).collect()
}

/// OpenSSL's `check_chain_extensions` from the leaf up: unhandled critical
/// extensions, CA-ness, path lengths, the leaf's purpose.
fn check_chain_extensions(chain: &[&Cert]) -> Result<(), ChainError> {
    let mut plen = 0u32;
    for (i, cert) in chain.iter().enumerate() {
        if cert.unhandled_critical {
            return Err(ChainError::UnhandledCritical);
        }
        if i > 0 {
            if !cert.is_ca() {
                return Err(ChainError::InvalidCa);
            }
            if i > 1
                && let Some(max) = cert.path_len
                && plen > max
            {
                return Err(ChainError::PathLength);
            }
            if !cert.self_issued {
                plen += 1;
            }
        }
        // The leaf must allow a TLS server, even when it is its own trust anchor; a
        // CA's extended key usage too, but for the trust anchor (self-signed, from the
        // store), trusted for any purpose (OpenSSL's trust_compat).
        if i + 1 < chain.len() && WEAK_SIGNATURES.contains(&cert.signature_alg.as_str()) {
            return Err(ChainError::WeakDigest);
        }
        let purpose_ok = if i == 0 {
            cert.server_purpose()
        } else {
            i + 1 == chain.len() || cert.eku_server.unwrap_or(true)
        };
        if !purpose_ok {
            return Err(ChainError::Purpose);
        }
    }
    Ok(())
}

/// OpenSSL's `internal_verify` from the root down: signatures, validity periods.
fn check_signatures_and_times(chain: &[&Cert], now: i64) -> Result<(), ChainError> {
    // The trust anchor's own signature is not checked (no X509_V_FLAG_CHECK_SS_SIGNATURE).
    for (i, cert) in chain.iter().enumerate().rev() {
        if let Some(issuer) = chain.get(i + 1)
            && !verify_signature(cert, issuer)
        {
            return Err(ChainError::Signature(signature_failure(
                &cert.signature,
                issuer,
            )));
        }
        if !cert.valid_at(now) {
            return Err(ChainError::Time);
        }
    }
    Ok(())
}

/// The issuer of `cert` in `pool` as OpenSSL's `get_issuer` picks it: names, key
/// identifiers and key usage match (the signature is checked later), and one within
/// its validity period is preferred.
fn find_issuer<'a>(cert: &Cert, pool: &'a [Cert], now: i64) -> Option<&'a Cert> {
    let mut candidates = pool.iter().filter(|c| c.issued(cert));
    let first = candidates.next()?;
    if first.valid_at(now) {
        return Some(first);
    }
    Some(candidates.find(|c| c.valid_at(now)).unwrap_or(first))
}

/// What chain building needs from one certificate.
#[derive(Debug)]
pub(crate) struct Cert {
    der: Vec<u8>,
    subject: Vec<u8>,
    issuer: Vec<u8>,
    version1: bool,
    basic_ca: Option<bool>,
    path_len: Option<u32>,
    /// Key usage bits when the extension is present: (keyCertSign, TLS server use).
    key_usage: Option<(bool, bool)>,
    /// Whether the key may sign CRLs (no key usage extension, or `cRLSign`).
    crl_sign: bool,
    /// The serial number, without leading zeros.
    serial: Vec<u8>,
    /// Extended key usage when present: whether it allows a TLS server.
    eku_server: Option<bool>,
    skid: Option<Vec<u8>>,
    akid: Option<Vec<u8>>,
    unhandled_critical: bool,
    not_before: i64,
    not_after: i64,
    tbs: Vec<u8>,
    signature_alg: String,
    signature: Vec<u8>,
    key_alg: String,
    key_curve: Option<String>,
    public_key: Vec<u8>,
    /// An RSA key's modulus, without leading zeros.
    rsa_modulus: Option<Vec<u8>>,
    self_issued: bool,
    self_signed: bool,
}

/// Extensions OpenSSL handles when critical (`X509_supported_extension`).
const SUPPORTED_CRITICAL: &[&str] = &[
    "2.16.840.1.113730.1.1", // netscape cert type
    "2.5.29.15",             // key usage
    "2.5.29.17",             // subject alternative name
    "2.5.29.19",             // basic constraints
    "2.5.29.32",             // certificate policies
    "2.5.29.37",             // extended key usage
    "2.5.29.36",             // policy constraints
    "1.3.6.1.5.5.7.1.14",    // proxy certificate information
    "2.5.29.30",             // name constraints
    "2.5.29.33",             // policy mappings
    "2.5.29.54",             // inhibit any policy
    "1.3.6.1.5.5.7.1.7",     // IP address delegation
    "1.3.6.1.5.5.7.1.8",     // AS identifiers
];

impl Cert {
    /// Parses DER; `None` when it is not a certificate.
    pub(crate) fn parse(der: &[u8]) -> Option<Cert> {
        let (_, x) = x509_parser::parse_x509_certificate(der).ok()?;
        Some(Cert::from_x509(der, &x))
    }

    fn from_x509(der: &[u8], x: &X509Certificate<'_>) -> Cert {
        let mut skid = None;
        let mut akid = None;
        let mut unhandled_critical = false;
        for ext in x.extensions() {
            match ext.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(k) => skid = Some(k.0.to_vec()),
                ParsedExtension::AuthorityKeyIdentifier(a) => {
                    akid = a.key_identifier.as_ref().map(|k| k.0.to_vec());
                }
                _ => {}
            }
            if ext.critical && !SUPPORTED_CRITICAL.contains(&ext.oid.to_id_string().as_str()) {
                unhandled_critical = true;
            }
        }
        let bc = x.basic_constraints().ok().flatten();
        let ku = x.key_usage().ok().flatten().map(|k| {
            let k = k.value;
            (
                k.key_cert_sign(),
                k.digital_signature() || k.key_encipherment() || k.key_agreement(),
            )
        });
        let crl_sign = x
            .key_usage()
            .ok()
            .flatten()
            .is_none_or(|k| k.value.crl_sign());
        let eku = x.extended_key_usage().ok().flatten().map(|e| {
            let e = e.value;
            // serverAuth, or the Netscape/Microsoft server gated crypto purposes.
            e.server_auth
                || e.other.iter().any(|o| {
                    let s = o.to_id_string();
                    s == "2.16.840.1.113730.4.1" || s == "1.3.6.1.4.1.311.10.3.3"
                })
        });
        let spki = x.public_key();
        let subject = x.subject().as_raw().to_vec();
        let issuer = x.issuer().as_raw().to_vec();
        // OpenSSL's EXFLAG_SI: same names and, when both are present, AKID == SKID.
        let self_issued = subject == issuer
            && match (&akid, &skid) {
                (Some(a), Some(s)) => a == s,
                _ => true,
            };
        // EXFLAG_SS (OpenSSL 3): self-issued; the key usage does not matter.
        let self_signed = self_issued;
        let rsa_modulus = match spki.parsed() {
            Ok(x509_parser::public_key::PublicKey::RSA(rsa)) => {
                Some(strip_zeros(rsa.modulus).to_vec())
            }
            _ => None,
        };
        Cert {
            der: der.to_vec(),
            subject,
            issuer,
            version1: x.version().0 == 0,
            basic_ca: bc.as_ref().map(|b| b.value.ca),
            path_len: bc.and_then(|b| b.value.path_len_constraint),
            key_usage: ku,
            crl_sign,
            serial: strip_zeros(x.raw_serial()).to_vec(),
            eku_server: eku,
            skid,
            akid,
            unhandled_critical,
            not_before: x.validity().not_before.timestamp(),
            not_after: x.validity().not_after.timestamp(),
            tbs: x.tbs_certificate.as_ref().to_vec(),
            signature_alg: signature_alg_id(&x.signature_algorithm),
            signature: x.signature_value.data.to_vec(),
            key_alg: spki.algorithm.algorithm.to_id_string(),
            key_curve: spki
                .algorithm
                .parameters
                .as_ref()
                .and_then(|p| p.as_oid().ok())
                .map(|o: Oid<'_>| o.to_id_string()),
            public_key: spki.subject_public_key.data.to_vec(),
            rsa_modulus,
            self_issued,
            self_signed,
        }
    }

    fn valid_at(&self, now: i64) -> bool {
        self.not_before <= now && now <= self.not_after
    }

    /// OpenSSL's `X509_check_issued` without the signature: names, key identifiers and
    /// the issuer's key usage.
    fn issued(&self, child: &Cert) -> bool {
        if self.subject != child.issuer {
            return false;
        }
        if let (Some(a), Some(s)) = (&child.akid, &self.skid)
            && a != s
        {
            return false;
        }
        self.key_usage.is_none_or(|(sign, _)| sign)
    }

    /// OpenSSL's `check_ca`: basic constraints decide when present; else a version 1
    /// self-signed root, or a key usage allowing certificate signing.
    fn is_ca(&self) -> bool {
        if self.key_usage.is_some_and(|(sign, _)| !sign) {
            return false;
        }
        match self.basic_ca {
            Some(ca) => ca,
            None => (self.version1 && self.self_signed) || self.key_usage.is_some(),
        }
    }

    /// OpenSSL's `check_purpose_ssl_server` for a leaf.
    fn server_purpose(&self) -> bool {
        self.eku_server.unwrap_or(true) && self.key_usage.is_none_or(|(_, tls)| tls)
    }
}

/// Signatures with digests OpenSSL's default security level refuses (SHA-1, MD5):
/// `X509_V_ERR_CA_MD_TOO_WEAK` / `EE_MD_TOO_WEAK` below the trust anchor.
const WEAK_SIGNATURES: &[&str] = &[
    "1.2.840.113549.1.1.4", // md5WithRSAEncryption
    "1.2.840.113549.1.1.5", // sha1WithRSAEncryption
    "1.2.840.10045.4.1",    // ecdsa-with-SHA1
    "1.3.14.3.2.29",        // sha1WithRSA (OIW)
    "1.2.840.10040.4.3",    // dsa-with-sha1
];

/// `bytes` without leading zero bytes.
fn strip_zeros(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    &bytes[start..]
}

/// The reason OpenSSL queues first when `issuer`'s key does not verify `signature` (a
/// certificate's or a CRL's): for
/// RSA, `rsa_ossl_public_decrypt`'s checks in order (length, magnitude, padding).
fn signature_failure(signature: &[u8], issuer: &Cert) -> &'static str {
    let Some(modulus) = &issuer.rsa_modulus else {
        return "EVP lib";
    };
    if signature.len() > modulus.len() {
        return "data greater than mod len";
    }
    let sig = strip_zeros(signature);
    if (sig.len(), sig) >= (modulus.len(), modulus.as_slice()) {
        return "data too large for modulus";
    }
    "invalid padding"
}

/// Whether `issuer`'s key verifies `cert`'s signature.
fn verify_signature(cert: &Cert, issuer: &Cert) -> bool {
    signature_valid(&cert.signature_alg, &cert.tbs, &cert.signature, issuer)
}

/// Whether `issuer`'s key verifies `signature` (algorithm OID `alg`) over `signed`.
fn signature_valid(alg: &str, signed: &[u8], signature: &[u8], issuer: &Cert) -> bool {
    if issuer.key_curve.as_deref() == Some(super::signature::P521) {
        return super::signature::verify_p521(&issuer.public_key, alg, signed, signature);
    }
    if let Some(params) = alg.strip_prefix("1.2.840.113549.1.1.10/") {
        let rsa_key =
            ["1.2.840.113549.1.1.1", "1.2.840.113549.1.1.10"].contains(&issuer.key_alg.as_str());
        return rsa_key
            && super::signature::verify_rsa_pss(&issuer.public_key, params, signed, signature);
    }
    let Some(alg) = algorithm(alg, &issuer.key_alg, issuer.key_curve.as_deref()) else {
        return false;
    };
    UnparsedPublicKey::new(alg, &issuer.public_key)
        .verify(signed, signature)
        .is_ok()
}

/// The ring algorithm for a signature algorithm OID and an issuer key.
fn algorithm(
    sig: &str,
    key: &str,
    curve: Option<&str>,
) -> Option<&'static dyn VerificationAlgorithm> {
    const RSA: &str = "1.2.840.113549.1.1.1";
    const EC: &str = "1.2.840.10045.2.1";
    const P256: &str = "1.2.840.10045.3.1.7";
    const P384: &str = "1.3.132.0.34";
    Some(match (sig, key, curve) {
        ("1.2.840.113549.1.1.11", RSA, _) => &signature::RSA_PKCS1_2048_8192_SHA256,
        ("1.2.840.113549.1.1.12", RSA, _) => &signature::RSA_PKCS1_2048_8192_SHA384,
        ("1.2.840.113549.1.1.13", RSA, _) => &signature::RSA_PKCS1_2048_8192_SHA512,
        ("1.2.840.10045.4.3.2", EC, Some(P256)) => &signature::ECDSA_P256_SHA256_ASN1,
        ("1.2.840.10045.4.3.3", EC, Some(P256)) => &signature::ECDSA_P256_SHA384_ASN1,
        ("1.2.840.10045.4.3.2", EC, Some(P384)) => &signature::ECDSA_P384_SHA256_ASN1,
        ("1.2.840.10045.4.3.3", EC, Some(P384)) => &signature::ECDSA_P384_SHA384_ASN1,
        ("1.3.101.112", "1.3.101.112", _) => &signature::ED25519,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };

    /// A CA named `name`: (certificate DER, issuer).
    fn ca(name: &str) -> (Vec<u8>, Issuer<'static, KeyPair>) {
        let mut p = CertificateParams::new(Vec::new()).expect("params");
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("key");
        let cert = p.self_signed(&key).expect("self-signed");
        (cert.der().to_vec(), Issuer::new(p, key))
    }

    fn leaf(issuer: &Issuer<'_, KeyPair>) -> Vec<u8> {
        let mut p = CertificateParams::new(vec!["localhost".into()]).expect("params");
        p.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().expect("key");
        p.signed_by(&key, issuer).expect("sign").der().to_vec()
    }

    const NOW: i64 = 1_800_000_000;

    #[test]
    fn key_identifiers_pick_the_issuer() {
        let (root, issuer) = ca("Same Name");
        let (other, _) = ca("Same Name");
        let leaf = leaf(&issuer);
        let store = |ders: &[&Vec<u8>]| parse_roots(ders.iter().map(|d| d.as_slice()));
        assert_eq!(verify(&leaf, &[], &store(&[&root]), None, NOW), Ok(()));
        assert_eq!(
            verify(&leaf, &[], &store(&[&other]), None, NOW),
            Err(ChainError::NoIssuer)
        );
        // The right root found after a same-named wrong one.
        assert_eq!(
            verify(&leaf, &[], &store(&[&other, &root]), None, NOW),
            Ok(())
        );
        // A self-signed CA is its own chain when trusted, and only then (a
        // same-named stand-in is not enough); as a leaf its key usage must allow TLS.
        assert_eq!(
            verify(&root, &[], &store(&[&root]), None, NOW),
            Err(ChainError::Purpose)
        );
        assert_eq!(
            verify(&root, &[], &store(&[&other]), None, NOW),
            Err(ChainError::SelfSignedNotTrusted)
        );
        // The server sends its root too: it must still be the trusted one.
        assert_eq!(verify(&leaf, &[&root], &store(&[&root]), None, NOW), Ok(()));
        assert_eq!(
            verify(&leaf, &[&root], &store(&[&other]), None, NOW),
            Err(ChainError::SelfSignedNotTrusted)
        );
    }
}
