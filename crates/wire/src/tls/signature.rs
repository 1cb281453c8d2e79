//! Signatures OpenSSL verifies that ring (rustls' provider) does not: ECDSA on P-521
//! (certificates and the `ecdsa_secp521r1_sha512` handshake scheme) and RSASSA-PSS
//! keys (`openssl req -newkey rsa-pss`: the `rsa_pss_pss_*` handshake schemes).

use p521::ecdsa::signature::hazmat::PrehashVerifier;
use ring::signature::{self, UnparsedPublicKey};
use rustls::SignatureScheme;

/// The P-521 curve's OID.
pub(crate) const P521: &str = "1.3.132.0.35";

/// `rsa_pss_pss_sha256`, `_sha384`, `_sha512` (RFC 8446), absent from rustls' names.
const PSS_PSS: [u16; 3] = [0x0809, 0x080a, 0x080b];

/// The handshake schemes added to what the provider verifies.
pub(crate) fn extra_schemes() -> [SignatureScheme; 4] {
    [
        SignatureScheme::ECDSA_NISTP521_SHA512,
        SignatureScheme::Unknown(PSS_PSS[0]),
        SignatureScheme::Unknown(PSS_PSS[1]),
        SignatureScheme::Unknown(PSS_PSS[2]),
    ]
}

/// Verifies a handshake signature that ring cannot: one of [`extra_schemes`], or any
/// ECDSA scheme with a P-521 server key (`p521_key`; TLS 1.2's ECDSA schemes name the
/// hash only). `key` is the SubjectPublicKey bits. `None` for the others.
pub(crate) fn verify_extra_scheme(
    scheme: SignatureScheme,
    key: &[u8],
    p521_key: bool,
    message: &[u8],
    sig: &[u8],
) -> Option<bool> {
    let ecdsa_hash = match scheme {
        SignatureScheme::ECDSA_NISTP256_SHA256 => Some(&ring::digest::SHA256),
        SignatureScheme::ECDSA_NISTP384_SHA384 => Some(&ring::digest::SHA384),
        SignatureScheme::ECDSA_NISTP521_SHA512 => Some(&ring::digest::SHA512),
        _ => None,
    };
    match scheme {
        _ if p521_key => {
            let digest = ring::digest::digest(ecdsa_hash?, message);
            Some(verify_p521_prehash(key, digest.as_ref(), sig))
        }
        SignatureScheme::ECDSA_NISTP521_SHA512 => Some(false),
        SignatureScheme::Unknown(code) if PSS_PSS.contains(&code) => {
            let alg = match code {
                0x0809 => &signature::RSA_PSS_2048_8192_SHA256,
                0x080a => &signature::RSA_PSS_2048_8192_SHA384,
                _ => &signature::RSA_PSS_2048_8192_SHA512,
            };
            Some(
                UnparsedPublicKey::new(alg, key)
                    .verify(message, sig)
                    .is_ok(),
            )
        }
        _ => None,
    }
}

/// Verifies a certificate or CRL signature (`sig_alg`: its OID) made with a P-521 key.
pub(crate) fn verify_p521(key: &[u8], sig_alg: &str, signed: &[u8], sig: &[u8]) -> bool {
    let digest = match sig_alg {
        "1.2.840.10045.4.3.2" => &ring::digest::SHA256,
        "1.2.840.10045.4.3.3" => &ring::digest::SHA384,
        "1.2.840.10045.4.3.4" => &ring::digest::SHA512,
        _ => return false,
    };
    verify_p521_prehash(key, ring::digest::digest(digest, signed).as_ref(), sig)
}

/// ECDSA P-521 over a digest; `key` is the SEC1 point, `sig` DER.
fn verify_p521_prehash(key: &[u8], digest: &[u8], sig: &[u8]) -> bool {
    let Ok(vk) = p521::ecdsa::VerifyingKey::from_sec1_bytes(key) else {
        return false;
    };
    let Ok(sig) = p521::ecdsa::Signature::from_der(sig) else {
        return false;
    };
    // A digest shorter than the field is taken as a number (ECDSA's bits2int); the
    // ecdsa crate wants at least half the field, so it gets leading zeros instead.
    let mut padded = [0u8; 66];
    let Some(start) = padded.len().checked_sub(digest.len()) else {
        return vk.verify_prehash(digest, &sig).is_ok();
    };
    padded[start..].copy_from_slice(digest);
    vk.verify_prehash(&padded, &sig).is_ok()
}

/// RSASSA-PSS as certificates and CRLs use it, with any salt length: `params` is
/// `<hash OID>/<salt length>` (see [`signature_alg_id`]), `key` an RSAPublicKey.
pub(crate) fn verify_rsa_pss(key: &[u8], params: &str, signed: &[u8], sig: &[u8]) -> bool {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use sha2_10::{Digest, Sha256, Sha384, Sha512};
    let Some((hash, salt)) = params.split_once('/') else {
        return false;
    };
    let Ok(salt) = salt.parse::<usize>() else {
        return false;
    };
    let Ok(key) = rsa::RsaPublicKey::from_pkcs1_der(key) else {
        return false;
    };
    let (scheme, digest) = match hash {
        "2.16.840.1.101.3.4.2.1" => (
            rsa::Pss::new_with_salt::<Sha256>(salt),
            Sha256::digest(signed).to_vec(),
        ),
        "2.16.840.1.101.3.4.2.2" => (
            rsa::Pss::new_with_salt::<Sha384>(salt),
            Sha384::digest(signed).to_vec(),
        ),
        "2.16.840.1.101.3.4.2.3" => (
            rsa::Pss::new_with_salt::<Sha512>(salt),
            Sha512::digest(signed).to_vec(),
        ),
        _ => return false,
    };
    key.verify(scheme, &digest, sig).is_ok()
}

/// A signature algorithm as `chain::signature_valid` looks it up: its OID, and for
/// RSASSA-PSS the hash's OID and the salt length after slashes.
pub(crate) fn signature_alg_id(alg: &x509_parser::x509::AlgorithmIdentifier<'_>) -> String {
    use x509_parser::signature_algorithm::SignatureAlgorithm;
    let oid = alg.algorithm.to_id_string();
    match SignatureAlgorithm::try_from(alg) {
        Ok(SignatureAlgorithm::RSASSA_PSS(params)) => {
            format!(
                "{oid}/{}/{}",
                params.hash_algorithm_oid().to_id_string(),
                params.salt_length()
            )
        }
        _ => oid,
    }
}
