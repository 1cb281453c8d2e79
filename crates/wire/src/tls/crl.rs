//! Certificate revocation lists (`sslcrl`, `sslcrldir`, `~/.postgresql/root.crl`) as
//! libpq loads them into OpenSSL's store, and OpenSSL's check with the flags libpq
//! sets (`X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL`): every certificate of
//! the chain needs a current CRL from its issuer that does not list it.
//!
//! Loading follows `X509_STORE_load_locations(file, dir)`: the file (PEM) must hold at
//! least one certificate or CRL, else nothing is checked (libpq ignores the failure,
//! the directory too); a directory is always accepted, even a missing or empty one,
//! and then every certificate needs a CRL from it. In the directory, OpenSSL looks up
//! `<issuer name hash>.r<n>`; here every file named like that (eight hex digits, `.r`,
//! a number) is read and matched by issuer name, so a CRL under another name's hash
//! is found too (a deviation only for misnamed files).

use std::path::Path;

use x509_parser::revocation_list::CertificateRevocationList;

/// One CRL: what the check needs.
#[derive(Debug)]
pub(crate) struct Crl {
    /// The issuer name (DER), compared with a certificate's issuer.
    pub(crate) issuer: Vec<u8>,
    this_update: i64,
    next_update: Option<i64>,
    /// Revoked serial numbers, without leading zeros.
    revoked: Vec<Vec<u8>>,
    /// The signed part, its signature algorithm (OID) and signature.
    pub(crate) tbs: Vec<u8>,
    pub(crate) signature_alg: String,
    pub(crate) signature: Vec<u8>,
}

impl Crl {
    /// Parses DER; `None` when it is not a CRL.
    fn parse(der: &[u8]) -> Option<Crl> {
        let (_, crl): (_, CertificateRevocationList<'_>) = x509_parser::parse_x509_crl(der).ok()?;
        Some(Crl {
            issuer: crl.issuer().as_raw().to_vec(),
            this_update: crl.last_update().timestamp(),
            next_update: crl.next_update().map(|t| t.timestamp()),
            revoked: crl
                .iter_revoked_certificates()
                .map(|r| strip_zeros(r.raw_serial()).to_vec())
                .collect(),
            tbs: crl.tbs_cert_list.as_ref().to_vec(),
            signature_alg: super::signature::signature_alg_id(&crl.signature_algorithm),
            signature: crl.signature_value.data.to_vec(),
        })
    }

    /// Whether the CRL is current at `now` (OpenSSL's `check_crl_time`).
    pub(crate) fn current_at(&self, now: i64) -> bool {
        self.this_update <= now && self.next_update.is_none_or(|next| now <= next)
    }

    /// Whether `serial` (without leading zeros) is listed.
    pub(crate) fn revokes(&self, serial: &[u8]) -> bool {
        self.revoked.iter().any(|r| r == strip_zeros(serial))
    }
}

/// `bytes` without leading zero bytes.
fn strip_zeros(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    &bytes[start..]
}

/// The CRLs of a store with revocation checking on (`None` from [`load`] when off).
#[derive(Debug, Default)]
pub(crate) struct CrlSet {
    crls: Vec<Crl>,
}

impl CrlSet {
    /// The CRL OpenSSL picks for a certificate issued by `issuer` (DER name): among
    /// those of that issuer (file and directory alike), a current one first, then
    /// the latest `thisUpdate`, then the first.
    pub(crate) fn pick(&self, issuer: &[u8], now: i64) -> Option<&Crl> {
        let mut best: Option<&Crl> = None;
        for crl in self.crls.iter().filter(|c| c.issuer == issuer) {
            let better = match best {
                None => true,
                Some(b) => {
                    (crl.current_at(now), crl.this_update) > (b.current_at(now), b.this_update)
                }
            };
            if better {
                best = Some(crl);
            }
        }
        best
    }
}

/// Loads `file` and `dir` as libpq does; `None` when revocation checking stays off
/// (neither given, or the file holds no certificate nor CRL, or cannot be read).
pub(crate) fn load(file: Option<&Path>, dir: Option<&Path>) -> Option<CrlSet> {
    if file.is_none() && dir.is_none() {
        return None;
    }
    let mut set = CrlSet::default();
    if let Some(file) = file {
        let (crls, certs) = read_pem(file)?;
        if crls.is_empty() && certs == 0 {
            return None;
        }
        set.crls = crls;
    }
    if let Some(dir) = dir {
        set.crls.extend(read_hashed_dir(dir));
    }
    Some(set)
}

/// The CRLs of a PEM file and how many certificates it holds besides; `None` when it
/// cannot be read.
fn read_pem(path: &Path) -> Option<(Vec<Crl>, usize)> {
    let bytes = std::fs::read(path).ok()?;
    let mut crls = Vec::new();
    let mut certs = 0;
    let mut reader = bytes.as_slice();
    loop {
        match rustls_pemfile::read_one(&mut reader) {
            Ok(Some(rustls_pemfile::Item::Crl(der))) => crls.extend(Crl::parse(der.as_ref())),
            Ok(Some(rustls_pemfile::Item::X509Certificate(_))) => certs += 1,
            Ok(Some(_)) => {}
            Ok(None) => break,
            // OpenSSL stops at the first broken PEM block, keeping what it loaded.
            Err(_) => break,
        }
    }
    Some((crls, certs))
}

/// Every `<8 hex digits>.r<n>` file of `dir`, parsed (unreadable ones skipped).
fn read_hashed_dir(dir: &Path) -> Vec<Crl> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_hashed_crl_name)
        })
        .collect();
    names.sort();
    names
        .iter()
        .filter_map(|p| read_pem(p))
        .flat_map(|(crls, _)| crls)
        .collect()
}

/// `hhhhhhhh.rN`: the names OpenSSL's hashed directory lookup reads CRLs from.
fn is_hashed_crl_name(name: &str) -> bool {
    let Some((hash, n)) = name.split_once(".r") else {
        return false;
    };
    hash.len() == 8
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names() {
        assert!(is_hashed_crl_name("a1c079ef.r0"));
        assert!(is_hashed_crl_name("A1C079EF.r12"));
        assert!(!is_hashed_crl_name("a1c079ef.0"));
        assert!(!is_hashed_crl_name("a1c079e.r0"));
        assert!(!is_hashed_crl_name("a1c079ef.r"));
        assert!(!is_hashed_crl_name("revoked.crl"));
    }

    #[test]
    fn a_file_without_crls_or_certificates_turns_checking_off() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not pem\n").expect("write");
        assert!(load(Some(&empty), None).is_none());
        assert!(load(Some(&dir.path().join("missing")), Some(dir.path())).is_none());
        assert!(load(None, Some(&dir.path().join("missing"))).is_some());
        assert!(load(None, None).is_none());
    }
}
