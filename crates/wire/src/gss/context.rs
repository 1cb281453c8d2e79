//! Safe owners of GSSAPI objects (buffers, names, credentials, security
//! contexts) and libpq's rendering of GSSAPI status codes.

use std::ffi::{c_int, c_void};

use super::ffi::{self, Api, BufferDesc, OmUint32};

/// A GSSAPI error in libpq's words: `PREFIX: major texts: minor texts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GssError(pub(crate) String);

impl std::fmt::Display for GssError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// libpq's `pg_GSS_error` text: the prefix, a colon, each major status text
/// after a space, a colon, each minor status text after a space.
pub(crate) fn status_error(
    api: &'static Api,
    prefix: &str,
    major: OmUint32,
    minor: OmUint32,
) -> GssError {
    let mut text = format!("{prefix}:");
    append_status(api, &mut text, major, ffi::C_GSS_CODE);
    text.push(':');
    append_status(api, &mut text, minor, ffi::C_MECH_CODE);
    GssError(text)
}

fn append_status(api: &'static Api, text: &mut String, status: OmUint32, kind: c_int) {
    let mut context: OmUint32 = 0;
    loop {
        let mut minor = 0;
        let mut out = Buffer::new(api);
        // SAFETY: valid out-pointers; the buffer is released by its owner.
        let major = unsafe {
            (api.display_status)(
                &mut minor,
                status,
                kind,
                std::ptr::null_mut(),
                &mut context,
                &mut out.desc,
            )
        };
        if major != ffi::S_COMPLETE {
            break;
        }
        text.push(' ');
        text.push_str(&String::from_utf8_lossy(out.bytes()));
        if context == 0 {
            break;
        }
    }
}

/// A buffer the library allocated (released on drop).
pub(crate) struct Buffer {
    api: &'static Api,
    pub(crate) desc: BufferDesc,
}

impl Buffer {
    pub(crate) fn new(api: &'static Api) -> Self {
        Buffer {
            api,
            desc: BufferDesc::empty(),
        }
    }

    /// The bytes (empty when the library left it empty).
    pub(crate) fn bytes(&self) -> &[u8] {
        if self.desc.value.is_null() || self.desc.length == 0 {
            return &[];
        }
        // SAFETY: the library filled value/length with an allocation it owns.
        unsafe { std::slice::from_raw_parts(self.desc.value as *const u8, self.desc.length) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if !self.desc.value.is_null() {
            let mut minor = 0;
            // SAFETY: a buffer filled by the library, released once.
            unsafe { (self.api.release_buffer)(&mut minor, &mut self.desc) };
        }
    }
}

/// A borrowed byte slice as an input `gss_buffer_desc`.
fn input(bytes: &[u8]) -> BufferDesc {
    BufferDesc {
        length: bytes.len(),
        value: bytes.as_ptr() as *mut c_void,
    }
}

/// An imported service principal name (`SERVICE@HOST`, host-based).
pub(crate) struct TargetName {
    api: &'static Api,
    raw: ffi::Name,
}

impl TargetName {
    /// `gss_import_name` of `service@host` as `GSS_C_NT_HOSTBASED_SERVICE`.
    pub(crate) fn import(api: &'static Api, service: &str, host: &str) -> Result<Self, GssError> {
        let text = format!("{service}@{host}");
        let mut buf = input(text.as_bytes());
        let mut raw: ffi::Name = std::ptr::null_mut();
        let mut minor = 0;
        // SAFETY: the input buffer borrows `text` for the call only.
        let major =
            unsafe { (api.import_name)(&mut minor, &mut buf, api.nt_hostbased_service, &mut raw) };
        if major != ffi::S_COMPLETE {
            return Err(status_error(api, "GSSAPI name import error", major, minor));
        }
        Ok(TargetName { api, raw })
    }
}

impl Drop for TargetName {
    fn drop(&mut self) {
        let mut minor = 0;
        // SAFETY: a name from gss_import_name, released once.
        unsafe { (self.api.release_name)(&mut minor, &mut self.raw) };
    }
}

/// Initiator credentials from the default credential cache.
pub(crate) struct Credential {
    api: &'static Api,
    raw: ffi::Cred,
}

impl Credential {
    /// libpq's `pg_GSS_have_cred_cache`: the default initiator credential,
    /// or `None` when the cache holds none.
    pub(crate) fn acquire(api: &'static Api) -> Option<Self> {
        let mut raw: ffi::Cred = std::ptr::null_mut();
        let mut minor = 0;
        // SAFETY: null name/mechanisms ask for the defaults; out-pointers valid.
        let major = unsafe {
            (api.acquire_cred)(
                &mut minor,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                ffi::C_INITIATE,
                &mut raw,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        (major == ffi::S_COMPLETE && !raw.is_null()).then_some(Credential { api, raw })
    }
}

impl Drop for Credential {
    fn drop(&mut self) {
        let mut minor = 0;
        // SAFETY: a credential from gss_acquire_cred, released once.
        unsafe { (self.api.release_cred)(&mut minor, &mut self.raw) };
    }
}

/// What one `gss_init_sec_context` step produced.
pub(crate) struct Step {
    /// The token to send (may be empty).
    pub(crate) token: Vec<u8>,
    /// Whether the context is established.
    pub(crate) complete: bool,
}

/// An initiator security context (deleted on drop).
pub(crate) struct SecurityContext {
    api: &'static Api,
    raw: ffi::Ctx,
}

// SAFETY: a context is used by one thread at a time (its owner, behind
// `&mut`); MIT Kerberos contexts are not tied to the thread that made them.
unsafe impl Send for SecurityContext {}

impl SecurityContext {
    /// A context not yet started.
    pub(crate) fn new(api: &'static Api) -> Self {
        SecurityContext {
            api,
            raw: std::ptr::null_mut(),
        }
    }

    /// One `gss_init_sec_context` call with the server's token (`None` on the
    /// first call); the error carries `prefix` in libpq's format.
    pub(crate) fn step(
        &mut self,
        cred: Option<&Credential>,
        target: &TargetName,
        flags: OmUint32,
        server_token: Option<&[u8]>,
        prefix: &str,
    ) -> Result<Step, GssError> {
        let api = self.api;
        let mut minor = 0;
        let mut out = Buffer::new(api);
        let mut token = server_token.map(input);
        let token_ptr = token
            .as_mut()
            .map_or(std::ptr::null_mut(), |t| t as *mut BufferDesc);
        // SAFETY: all pointers are valid for the call; the input token borrows
        // `server_token`; the output buffer is released by its owner.
        let major = unsafe {
            (api.init_sec_context)(
                &mut minor,
                cred.map_or(std::ptr::null_mut(), |c| c.raw),
                &mut self.raw,
                target.raw,
                std::ptr::null_mut(),
                flags,
                0,
                std::ptr::null_mut(),
                token_ptr,
                std::ptr::null_mut(),
                &mut out.desc,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if ffi::is_error(major) {
            return Err(status_error(api, prefix, major, minor));
        }
        Ok(Step {
            token: out.bytes().to_vec(),
            complete: (major & ffi::S_CONTINUE_NEEDED) == 0,
        })
    }

    /// The largest plaintext whose wrapped form fits in `output` bytes.
    pub(crate) fn wrap_size_limit(&self, output: u32) -> Result<usize, GssError> {
        let api = self.api;
        let (mut minor, mut max) = (0, 0);
        // SAFETY: an established context; out-pointers valid.
        let major = unsafe { (api.wrap_size_limit)(&mut minor, self.raw, 1, 0, output, &mut max) };
        if ffi::is_error(major) {
            return Err(status_error(api, "GSSAPI size check error", major, minor));
        }
        Ok(max as usize)
    }

    /// `gss_wrap` with confidentiality; refuses a token without it.
    pub(crate) fn wrap(&mut self, plain: &[u8]) -> Result<Buffer, GssError> {
        let api = self.api;
        let (mut minor, mut conf) = (0, 0);
        let mut input = input(plain);
        let mut out = Buffer::new(api);
        // SAFETY: established context; input borrows `plain`.
        let major = unsafe {
            (api.wrap)(
                &mut minor,
                self.raw,
                1,
                0,
                &mut input,
                &mut conf,
                &mut out.desc,
            )
        };
        if major != ffi::S_COMPLETE {
            return Err(status_error(api, "GSSAPI wrap error", major, minor));
        }
        if conf == 0 {
            return Err(GssError(
                "outgoing GSSAPI message would not use confidentiality".into(),
            ));
        }
        Ok(out)
    }

    /// `gss_unwrap`; refuses a token that was not encrypted.
    pub(crate) fn unwrap(&mut self, token: &[u8]) -> Result<Buffer, GssError> {
        let api = self.api;
        let (mut minor, mut conf) = (0, 0);
        let mut input = input(token);
        let mut out = Buffer::new(api);
        // SAFETY: established context; input borrows `token`.
        let major = unsafe {
            (api.unwrap)(
                &mut minor,
                self.raw,
                &mut input,
                &mut out.desc,
                &mut conf,
                std::ptr::null_mut(),
            )
        };
        if major != ffi::S_COMPLETE {
            return Err(status_error(api, "GSSAPI unwrap error", major, minor));
        }
        if conf == 0 {
            return Err(GssError(
                "incoming GSSAPI message did not use confidentiality".into(),
            ));
        }
        Ok(out)
    }
}

impl Drop for SecurityContext {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            let mut minor = 0;
            // SAFETY: a context from gss_init_sec_context, deleted once.
            unsafe {
                (self.api.delete_sec_context)(&mut minor, &mut self.raw, std::ptr::null_mut())
            };
        }
    }
}
