//! GSSAPI (Kerberos) for connections, as libpq does it: encryption of the whole
//! connection (`gssencmode`) and GSSAPI authentication, through the system's
//! GSSAPI library loaded with `dlopen` only when a connection needs it.
//!
//! - [`ffi`]: the C declarations, resolved from `libgssapi_krb5.so.2` (or the
//!   library named by `PGRUSH_GSSAPI_LIBRARY`).
//! - [`context`]: owners of names, credentials, buffers and security contexts,
//!   and libpq's rendering of status codes.
//! - [`stream`]: wrapping and unwrapping the byte stream once encryption is set up.
//!
//! Whether a credential cache exists is first checked without the library
//! ([`cache_may_exist`]): with the default `gssencmode=prefer`, connections on
//! machines without Kerberos tickets never load it.
//!
//! Choices where libpq gives no answer:
//! - `gssencmode` defaults to `prefer`, as in a libpq built with GSSAPI (pgbench
//!   18 from the wheel is built without it and defaults to `disable`); as libpq
//!   does, it is tried only on TCP and only when a credential cache exists, so
//!   without Kerberos tickets nothing changes.
//! - When the library cannot be loaded, pgrush behaves as a libpq without
//!   GSSAPI, with the loader's reason after libpq's words:
//!   `gssencmode value "require" invalid when GSSAPI support is not available:
//!   REASON` (libpq: `... is not compiled in`) and `GSSAPI authentication not
//!   supported: REASON`.

mod context;
pub(crate) mod ffi;
mod stream;

use std::path::Path;
use std::sync::OnceLock;

pub(crate) use context::{Credential, GssError, SecurityContext, TargetName};
pub use ffi::{DEFAULT_LIBRARY, LIBRARY_VARIABLE};
pub(crate) use stream::GssStream;

/// The GSSAPI library, loaded on first use; the error is the loader's message.
pub(crate) fn library() -> Result<&'static ffi::Api, &'static str> {
    ffi::api()
}

/// Whether a Kerberos credential cache may exist, judged without loading the
/// library: `KRB5CCNAME` naming a file that exists or a cache of another type
/// (keyring, KCM, directory...), or else the default file cache
/// `/tmp/krb5cc_UID`, or a Kerberos configuration naming a default cache.
pub(crate) fn cache_may_exist() -> bool {
    if let Some(name) = std::env::var_os("KRB5CCNAME").filter(|n| !n.is_empty()) {
        let name = name.to_string_lossy().into_owned();
        return match file_cache_path(&name) {
            Some(path) => Path::new(path).exists(),
            None => true,
        };
    }
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    if Path::new(&format!("/tmp/krb5cc_{uid}")).exists() {
        return true;
    }
    config_names_a_cache()
}

/// Whether the Kerberos configuration (`KRB5_CONFIG`, else `/etc/krb5.conf`)
/// sets `default_ccache_name`; read once per process.
fn config_names_a_cache() -> bool {
    static NAMES_A_CACHE: OnceLock<bool> = OnceLock::new();
    *NAMES_A_CACHE.get_or_init(|| {
        let configs = std::env::var("KRB5_CONFIG").unwrap_or_else(|_| "/etc/krb5.conf".into());
        configs.split(':').any(|file| {
            std::fs::read_to_string(file).is_ok_and(|text| text.contains("default_ccache_name"))
        })
    })
}

/// The file of a `FILE:` cache name (or of a name with no type); `None` for
/// other cache types.
fn file_cache_path(name: &str) -> Option<&str> {
    if let Some(path) = name.strip_prefix("FILE:") {
        return Some(path);
    }
    match name.split_once(':') {
        // A type prefix is letters only (KEYRING, KCM, DIR, MEMORY, API...).
        Some((kind, _)) if !kind.is_empty() && kind.chars().all(|c| c.is_ascii_alphabetic()) => {
            None
        }
        _ => Some(name),
    }
}

/// libpq's `pg_GSS_have_cred_cache` behind the cheap check: the default
/// initiator credential, when the library loads and the cache has one.
pub(crate) fn credential() -> Option<Credential> {
    if !cache_may_exist() {
        return None;
    }
    Credential::acquire(library().ok()?)
}

/// Flags for a context that encrypts the connection (mutual authentication,
/// replay and sequence detection, confidentiality, integrity).
pub(crate) const ENCRYPTION_FLAGS: u32 = ffi::C_MUTUAL_FLAG
    | ffi::C_REPLAY_FLAG
    | ffi::C_SEQUENCE_FLAG
    | ffi::C_CONF_FLAG
    | ffi::C_INTEG_FLAG;

/// Flags for GSSAPI authentication alone.
pub(crate) const AUTH_FLAGS: u32 = ffi::C_MUTUAL_FLAG;

/// `GSS_C_DELEG_FLAG` (`gssdelegation=1`).
pub(crate) const DELEGATION_FLAG: u32 = ffi::C_DELEG_FLAG;

/// The client's side of one context establishment: the target, the
/// credential (if any) and the context, stepped with the server's tokens.
pub(crate) struct Initiator {
    target: TargetName,
    cred: Option<Credential>,
    ctx: SecurityContext,
    flags: u32,
}

impl Initiator {
    /// Imports `service@host` (libpq: `GSSAPI name import error` on failure).
    pub(crate) fn new(
        service: &str,
        host: &str,
        cred: Option<Credential>,
        flags: u32,
    ) -> Result<Self, GssError> {
        let api = library().map_err(|e| GssError(e.to_string()))?;
        Ok(Initiator {
            target: TargetName::import(api, service, host)?,
            cred,
            ctx: SecurityContext::new(api),
            flags,
        })
    }

    /// One `gss_init_sec_context` step; errors are prefixed with `prefix`.
    /// Returns the token to send and whether the context is complete.
    pub(crate) fn step(
        &mut self,
        server_token: Option<&[u8]>,
        prefix: &str,
    ) -> Result<(Vec<u8>, bool), GssError> {
        let step = self.ctx.step(
            self.cred.as_ref(),
            &self.target,
            self.flags,
            server_token,
            prefix,
        )?;
        Ok((step.token, step.complete))
    }

    /// The established context, for encryption.
    pub(crate) fn into_stream(self) -> Result<GssStream, GssError> {
        GssStream::new(self.ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_names() {
        assert_eq!(file_cache_path("FILE:/tmp/x"), Some("/tmp/x"));
        assert_eq!(file_cache_path("/tmp/krb5cc_0"), Some("/tmp/krb5cc_0"));
        assert_eq!(file_cache_path("KEYRING:persistent:0"), None);
        assert_eq!(file_cache_path("KCM:"), None);
        assert_eq!(file_cache_path("DIR:/run/user/0/krb5cc"), None);
    }
}
