//! The client certificate and its private key (`sslcert`, `sslkey`, `sslpassword`),
//! with libpq's checks and messages: a missing certificate means none is sent, the
//! key file's permissions, and keys encrypted as PKCS#8 (`ENCRYPTED PRIVATE KEY`,
//! PBES2) or as traditional OpenSSL PEM (`Proc-Type: 4,ENCRYPTED` with `DEK-Info`).
//!
//! Without `sslpassword`, OpenSSL's default callback asks for the passphrase: on the
//! terminal when there is one, else with the prompt on stderr and the answer read
//! from stdin. An empty answer is asked twice (OpenSSL tries two decoders) before
//! `processing error`; a wrong passphrase is `bad decrypt`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use aes::cipher::{BlockDecryptMut, KeyIvInit, block_padding::Pkcs7};
use md5::Digest;
use rustls_pki_types::{
    CertificateDer, PrivateKeyDer, PrivatePkcs1KeyDer, PrivatePkcs8KeyDer, PrivateSec1KeyDer,
};

use super::setup_error::TlsSetupError;
use crate::config::TlsSettings;

/// The client's certificate chain and key.
pub(crate) type Identity = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// Loads the client certificate and key when the certificate file exists.
pub(crate) fn client_identity(settings: &TlsSettings) -> Result<Option<Identity>, TlsSetupError> {
    let Some(cert_path) = settings.cert.as_deref() else {
        return Ok(None);
    };
    let f = match File::open(cert_path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(TlsSetupError(format!(
                "could not open certificate file \"{}\": {}",
                cert_path.display(),
                crate::error::strerror(&e)
            )));
        }
    };
    let certs = rustls_pemfile::certs(&mut BufReader::new(f))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            TlsSetupError(format!(
                "could not read certificate file \"{}\": {e}",
                cert_path.display()
            ))
        })?;
    let missing_key = |path: &Path| {
        TlsSetupError(format!(
            "certificate present, but not private key file \"{}\"",
            path.display()
        ))
    };
    let Some(key_path) = settings.key.as_deref() else {
        return Err(missing_key(cert_path));
    };
    let text = std::fs::read(key_path).map_err(|_| missing_key(key_path))?;
    check_key_permissions(key_path)?;
    let key = load_key(&text, settings.password.as_deref()).map_err(|e| {
        TlsSetupError(format!(
            "could not load private key file \"{}\": {e}",
            key_path.display()
        ))
    })?;
    Ok(Some((certs, key)))
}

/// OpenSSL's checks of the key against the certificate, in libpq's messages: a key of
/// another type than the certificate's is stored beside it and found missing
/// (`no certificate assigned`); one of the same type must be the certificate's.
pub(crate) fn check_key_matches(
    cert: &CertificateDer<'_>,
    key: &dyn rustls::sign::SigningKey,
    path: &Path,
) -> Result<(), TlsSetupError> {
    let Ok((_, x)) = x509_parser::parse_x509_certificate(cert.as_ref()) else {
        return Ok(());
    };
    let spki = x.public_key();
    let cert_type = match spki.algorithm.algorithm.to_id_string().as_str() {
        "1.2.840.113549.1.1.1" => rustls::SignatureAlgorithm::RSA,
        "1.2.840.10045.2.1" => rustls::SignatureAlgorithm::ECDSA,
        "1.3.101.112" => rustls::SignatureAlgorithm::ED25519,
        _ => return Ok(()),
    };
    if key.algorithm() != cert_type {
        return Err(TlsSetupError(format!(
            "certificate does not match private key file \"{}\": no certificate assigned",
            path.display()
        )));
    }
    match key.public_key() {
        Some(public) if public.as_ref() != spki.raw => Err(TlsSetupError(format!(
            "could not load private key file \"{}\": key values mismatch",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// libpq refuses a key file that others may read: a file owned by root may be
/// readable by its group (0640), any other file must be 0600 or less.
fn check_key_permissions(path: &Path) -> Result<(), TlsSetupError> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let forbidden = if meta.uid() == 0 { 0o037 } else { 0o077 };
    if meta.mode() & forbidden != 0 {
        return Err(TlsSetupError(format!(
            "private key file \"{}\" has group or world access; file must have permissions u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r (0640) or less if owned by root",
            path.display()
        )));
    }
    Ok(())
}

/// Why a key could not be loaded, in OpenSSL's reason strings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum KeyError {
    /// A wrong passphrase.
    #[error("bad decrypt")]
    BadDecrypt,
    /// No passphrase was given.
    #[error("processing error")]
    NoPassphrase,
    /// An encryption OpenSSL knows but this loader does not.
    #[error("unsupported")]
    Unsupported,
    /// No key in the file.
    #[error("no private key found")]
    NoKey,
}

/// A PEM block: label, encapsulated headers (`Proc-Type`, `DEK-Info`), DER.
struct PemBlock {
    label: String,
    headers: Vec<(String, String)>,
    der: Vec<u8>,
}

/// The PEM blocks of `text` (RFC 1421 headers allowed); broken blocks are skipped.
fn pem_blocks(text: &[u8]) -> Vec<PemBlock> {
    use base64ct::{Base64, Encoding};
    let mut blocks = Vec::new();
    // The block being read and its base64 text.
    let mut current: Option<(PemBlock, String)> = None;
    for line in text.lines().map_while(Result::ok) {
        let line = line.trim_end();
        if let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        {
            current = Some((
                PemBlock {
                    label: label.to_string(),
                    headers: Vec::new(),
                    der: Vec::new(),
                },
                String::new(),
            ));
        } else if line.starts_with("-----END ") {
            if let Some((mut block, body)) = current.take()
                && let Ok(der) = Base64::decode_vec(&body)
            {
                block.der = der;
                blocks.push(block);
            }
        } else if let Some((block, body)) = current.as_mut() {
            match line.split_once(':') {
                Some((k, v)) if body.is_empty() => {
                    block
                        .headers
                        .push((k.trim().to_string(), v.trim().to_string()));
                }
                _ => body.push_str(line.trim()),
            }
        }
    }
    blocks
}

/// The first private key of `text`, decrypted with `password` (or a prompted one)
/// when it is encrypted.
fn load_key(text: &[u8], password: Option<&str>) -> Result<PrivateKeyDer<'static>, KeyError> {
    let block = pem_blocks(text)
        .into_iter()
        .find(|b| b.label.ends_with("PRIVATE KEY"))
        .ok_or(KeyError::NoKey)?;
    let encrypted = block.label == "ENCRYPTED PRIVATE KEY"
        || block
            .headers
            .iter()
            .any(|(k, v)| k == "Proc-Type" && v.ends_with("ENCRYPTED"));
    if !encrypted {
        return plain_key(&block.label, block.der);
    }
    match password {
        Some(p) => decrypt(&block, p.as_bytes()),
        None => {
            // OpenSSL's decoders ask until one gets an answer.
            for _ in 0..2 {
                let answer = prompt_passphrase();
                if !answer.is_empty() {
                    return decrypt(&block, answer.as_bytes());
                }
            }
            Err(KeyError::NoPassphrase)
        }
    }
}

/// An unencrypted key block by its label.
fn plain_key(label: &str, der: Vec<u8>) -> Result<PrivateKeyDer<'static>, KeyError> {
    Ok(match label {
        "PRIVATE KEY" => PrivatePkcs8KeyDer::from(der).into(),
        "RSA PRIVATE KEY" => PrivatePkcs1KeyDer::from(der).into(),
        "EC PRIVATE KEY" => PrivateSec1KeyDer::from(der).into(),
        _ => return Err(KeyError::NoKey),
    })
}

/// Decrypts an encrypted key block with `pass`.
fn decrypt(block: &PemBlock, pass: &[u8]) -> Result<PrivateKeyDer<'static>, KeyError> {
    if block.label == "ENCRYPTED PRIVATE KEY" {
        let info = pkcs8::EncryptedPrivateKeyInfo::try_from(block.der.as_slice())
            .map_err(|_| KeyError::NoKey)?;
        // A padding error is a wrong passphrase; a wrong passphrase that leaves valid
        // padding by chance gives bytes no decoder takes (OpenSSL: `unsupported`).
        let doc = info.decrypt(pass).map_err(|e| match e {
            // pkcs5 0.7 reports a bad padding as `EncryptFailed`.
            pkcs8::Error::EncryptedPrivateKey(
                pkcs8::pkcs5::Error::DecryptFailed | pkcs8::pkcs5::Error::EncryptFailed,
            ) => KeyError::BadDecrypt,
            _ => KeyError::Unsupported,
        })?;
        return Ok(PrivatePkcs8KeyDer::from(doc.as_bytes().to_vec()).into());
    }
    let dek = block
        .headers
        .iter()
        .find(|(k, _)| k == "DEK-Info")
        .map(|(_, v)| v.as_str())
        .ok_or(KeyError::NoKey)?;
    let der = decrypt_traditional(dek, &block.der, pass)?;
    // A wrong passphrase may leave valid padding by chance: the bytes must be one
    // whole DER sequence, else no decoder takes them (OpenSSL: `unsupported`).
    let whole_sequence = matches!(
        x509_parser::der_parser::parse_der(&der),
        Ok((rest, obj)) if rest.is_empty() && obj.as_sequence().is_ok()
    );
    if !whole_sequence {
        return Err(KeyError::Unsupported);
    }
    plain_key(&block.label, der)
}

/// OpenSSL's traditional PEM encryption: `DEK-Info: CIPHER,IV (hex)`, the key from
/// `EVP_BytesToKey` with MD5, one iteration, the IV's first 8 bytes as salt.
fn decrypt_traditional(dek: &str, data: &[u8], pass: &[u8]) -> Result<Vec<u8>, KeyError> {
    let (cipher, iv_hex) = dek.split_once(',').ok_or(KeyError::Unsupported)?;
    let iv = decode_hex(iv_hex.trim()).ok_or(KeyError::Unsupported)?;
    let salt = iv.get(..8).ok_or(KeyError::Unsupported)?;
    let key_len = match cipher.trim() {
        "AES-128-CBC" => 16,
        "AES-192-CBC" => 24,
        "AES-256-CBC" => 32,
        "DES-EDE3-CBC" => 24,
        _ => return Err(KeyError::Unsupported),
    };
    let key = bytes_to_key(pass, salt, key_len);
    let mut buf = data.to_vec();
    let plain = match cipher.trim() {
        "AES-128-CBC" => cbc_decrypt::<aes::Aes128>(&key, &iv, &mut buf),
        "AES-192-CBC" => cbc_decrypt::<aes::Aes192>(&key, &iv, &mut buf),
        "AES-256-CBC" => cbc_decrypt::<aes::Aes256>(&key, &iv, &mut buf),
        _ => cbc_decrypt::<des::TdesEde3>(&key, &iv, &mut buf),
    }?;
    Ok(plain)
}

/// CBC decryption with PKCS#7 padding; a padding error is a wrong passphrase.
fn cbc_decrypt<C>(key: &[u8], iv: &[u8], buf: &mut [u8]) -> Result<Vec<u8>, KeyError>
where
    C: aes::cipher::BlockDecryptMut + aes::cipher::BlockCipher + aes::cipher::KeyInit,
{
    let dec = cbc::Decryptor::<C>::new_from_slices(key, iv).map_err(|_| KeyError::Unsupported)?;
    dec.decrypt_padded_mut::<Pkcs7>(buf)
        .map(<[u8]>::to_vec)
        .map_err(|_| KeyError::BadDecrypt)
}

/// `EVP_BytesToKey(MD5, salt, pass, count = 1)`, key bytes only.
fn bytes_to_key(pass: &[u8], salt: &[u8], len: usize) -> Vec<u8> {
    let mut key = Vec::with_capacity(len + 16);
    let mut prev: Vec<u8> = Vec::new();
    while key.len() < len {
        let mut h = md5::Md5::new();
        h.update(&prev);
        h.update(pass);
        h.update(salt);
        prev = h.finalize().to_vec();
        key.extend_from_slice(&prev);
    }
    key.truncate(len);
    key
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// OpenSSL's `PEM_def_callback`: "Enter PEM pass phrase:" on the terminal, else on
/// stderr with the answer from stdin (the newline after it echoed to stderr). An
/// unreadable answer is empty.
fn prompt_passphrase() -> String {
    const PROMPT: &str = "Enter PEM pass phrase:";
    if let Ok(p) = rpassword::prompt_password(PROMPT) {
        return p;
    }
    eprint!("{PROMPT}");
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    eprintln!();
    line.trim_end_matches(['\n', '\r']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_to_key_matches_openssl() {
        // `openssl enc -aes-256-cbc -k secret -S 0102030405060708 -P -md md5`.
        let key = bytes_to_key(b"secret", &[1, 2, 3, 4, 5, 6, 7, 8], 32);
        let hex: String = key.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(
            hex,
            "C9E5A1BD216DBE1317E230CEF48F38EE7F0E17AD64022144BCCEC4A1AA2879AB"
        );
    }

    #[test]
    fn pem_headers_are_read() {
        let text = b"junk\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\nAAEC\n-----END RSA PRIVATE KEY-----\n";
        let blocks = pem_blocks(text);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].label, "RSA PRIVATE KEY");
        assert_eq!(blocks[0].headers.len(), 2);
        assert_eq!(blocks[0].der, vec![0, 1, 2]);
        assert_eq!(load_key(b"nothing", Some("x")), Err(KeyError::NoKey));
    }
}
