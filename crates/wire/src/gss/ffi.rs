//! The few GSSAPI (RFC 2744) C declarations pgrush uses, resolved at run time
//! from the system library with `dlopen` (`libloading`), so that the binary
//! runs on machines without it.

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// `OM_uint32`.
pub(crate) type OmUint32 = u32;

/// `gss_buffer_desc`.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct BufferDesc {
    pub(crate) length: usize,
    pub(crate) value: *mut c_void,
}

impl BufferDesc {
    /// `GSS_C_EMPTY_BUFFER`.
    pub(crate) fn empty() -> Self {
        BufferDesc {
            length: 0,
            value: std::ptr::null_mut(),
        }
    }
}

/// `gss_OID_desc`.
#[repr(C)]
pub(crate) struct OidDesc {
    _length: OmUint32,
    _elements: *mut c_void,
}

/// `gss_OID`.
pub(crate) type Oid = *mut OidDesc;
/// `gss_name_t` (opaque).
pub(crate) type Name = *mut c_void;
/// `gss_ctx_id_t` (opaque).
pub(crate) type Ctx = *mut c_void;
/// `gss_cred_id_t` (opaque).
pub(crate) type Cred = *mut c_void;

/// `GSS_S_COMPLETE`.
pub(crate) const S_COMPLETE: OmUint32 = 0;
/// `GSS_S_CONTINUE_NEEDED`.
pub(crate) const S_CONTINUE_NEEDED: OmUint32 = 1;
/// `GSS_C_GSS_CODE`.
pub(crate) const C_GSS_CODE: c_int = 1;
/// `GSS_C_MECH_CODE`.
pub(crate) const C_MECH_CODE: c_int = 2;
/// `GSS_C_INITIATE`.
pub(crate) const C_INITIATE: c_int = 1;
/// `GSS_C_DELEG_FLAG`.
pub(crate) const C_DELEG_FLAG: OmUint32 = 1;
/// `GSS_C_MUTUAL_FLAG`.
pub(crate) const C_MUTUAL_FLAG: OmUint32 = 2;
/// `GSS_C_REPLAY_FLAG`.
pub(crate) const C_REPLAY_FLAG: OmUint32 = 4;
/// `GSS_C_SEQUENCE_FLAG`.
pub(crate) const C_SEQUENCE_FLAG: OmUint32 = 8;
/// `GSS_C_CONF_FLAG`.
pub(crate) const C_CONF_FLAG: OmUint32 = 16;
/// `GSS_C_INTEG_FLAG`.
pub(crate) const C_INTEG_FLAG: OmUint32 = 32;

/// `GSS_ERROR(x)`: a calling or routine error (the supplementary bits aside).
pub(crate) fn is_error(major: OmUint32) -> bool {
    major & 0xffff_0000 != 0
}

type ImportName = unsafe extern "C" fn(*mut OmUint32, *mut BufferDesc, Oid, *mut Name) -> OmUint32;
type InitSecContext = unsafe extern "C" fn(
    *mut OmUint32,
    Cred,
    *mut Ctx,
    Name,
    Oid,
    OmUint32,
    OmUint32,
    *mut c_void,
    *mut BufferDesc,
    *mut Oid,
    *mut BufferDesc,
    *mut OmUint32,
    *mut OmUint32,
) -> OmUint32;
type Wrap = unsafe extern "C" fn(
    *mut OmUint32,
    Ctx,
    c_int,
    OmUint32,
    *mut BufferDesc,
    *mut c_int,
    *mut BufferDesc,
) -> OmUint32;
type Unwrap = unsafe extern "C" fn(
    *mut OmUint32,
    Ctx,
    *mut BufferDesc,
    *mut BufferDesc,
    *mut c_int,
    *mut OmUint32,
) -> OmUint32;
type WrapSizeLimit =
    unsafe extern "C" fn(*mut OmUint32, Ctx, c_int, OmUint32, OmUint32, *mut OmUint32) -> OmUint32;
type ReleaseBuffer = unsafe extern "C" fn(*mut OmUint32, *mut BufferDesc) -> OmUint32;
type ReleaseName = unsafe extern "C" fn(*mut OmUint32, *mut Name) -> OmUint32;
type DeleteSecContext = unsafe extern "C" fn(*mut OmUint32, *mut Ctx, *mut BufferDesc) -> OmUint32;
type DisplayStatus = unsafe extern "C" fn(
    *mut OmUint32,
    OmUint32,
    c_int,
    Oid,
    *mut OmUint32,
    *mut BufferDesc,
) -> OmUint32;
type AcquireCred = unsafe extern "C" fn(
    *mut OmUint32,
    Name,
    OmUint32,
    *mut c_void,
    c_int,
    *mut Cred,
    *mut c_void,
    *mut OmUint32,
) -> OmUint32;
type ReleaseCred = unsafe extern "C" fn(*mut OmUint32, *mut Cred) -> OmUint32;

/// The library's entry points (and the `GSS_C_NT_HOSTBASED_SERVICE` OID).
pub(crate) struct Api {
    /// Keeps the library mapped (never dropped: the table lives in a static).
    _library: libloading::Library,
    pub(crate) import_name: ImportName,
    pub(crate) init_sec_context: InitSecContext,
    pub(crate) wrap: Wrap,
    pub(crate) unwrap: Unwrap,
    pub(crate) wrap_size_limit: WrapSizeLimit,
    pub(crate) release_buffer: ReleaseBuffer,
    pub(crate) release_name: ReleaseName,
    pub(crate) delete_sec_context: DeleteSecContext,
    pub(crate) display_status: DisplayStatus,
    pub(crate) acquire_cred: AcquireCred,
    pub(crate) release_cred: ReleaseCred,
    pub(crate) nt_hostbased_service: Oid,
}

// SAFETY: the table holds function pointers and a pointer to a constant OID
// inside the library, which stays loaded for the life of the process; the
// GSSAPI functions themselves are thread-safe in MIT Kerberos.
unsafe impl Send for Api {}
// SAFETY: as above; nothing in the table is ever mutated.
unsafe impl Sync for Api {}

/// The library loaded when `PGRUSH_GSSAPI_LIBRARY` names no other one.
pub const DEFAULT_LIBRARY: &str = "libgssapi_krb5.so.2";

/// The environment variable naming another GSSAPI library (a path or a
/// soname), e.g. Heimdal's `libgssapi.so.3`.
pub const LIBRARY_VARIABLE: &str = "PGRUSH_GSSAPI_LIBRARY";

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The GSSAPI library, loaded on first use; the error is `dlopen`'s (or
/// `dlsym`'s) message.
pub(crate) fn api() -> Result<&'static Api, &'static str> {
    API.get_or_init(load).as_ref().map_err(String::as_str)
}

fn load() -> Result<Api, String> {
    let name = std::env::var_os(LIBRARY_VARIABLE)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| DEFAULT_LIBRARY.into());
    // SAFETY: loading a GSSAPI library runs only its own initialisers.
    let library = unsafe { libloading::Library::new(&name) }.map_err(|e| dl_text(&e))?;
    /// Copies one function pointer out of the library.
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol is the RFC 2744 function with the declared type.
            *unsafe { library.get($name) }.map_err(|e| dl_text(&e))?
        };
    }
    // SAFETY: GSS_C_NT_HOSTBASED_SERVICE is an exported `gss_OID` variable.
    let nt_hostbased_service: Oid = unsafe {
        let var: libloading::Symbol<'_, *const Oid> = library
            .get(b"GSS_C_NT_HOSTBASED_SERVICE\0")
            .map_err(|e| dl_text(&e))?;
        **var
    };
    Ok(Api {
        import_name: sym!(b"gss_import_name\0"),
        init_sec_context: sym!(b"gss_init_sec_context\0"),
        wrap: sym!(b"gss_wrap\0"),
        unwrap: sym!(b"gss_unwrap\0"),
        wrap_size_limit: sym!(b"gss_wrap_size_limit\0"),
        release_buffer: sym!(b"gss_release_buffer\0"),
        release_name: sym!(b"gss_release_name\0"),
        delete_sec_context: sym!(b"gss_delete_sec_context\0"),
        display_status: sym!(b"gss_display_status\0"),
        acquire_cred: sym!(b"gss_acquire_cred\0"),
        release_cred: sym!(b"gss_release_cred\0"),
        nt_hostbased_service,
        _library: library,
    })
}

/// `dlerror()`'s text without libloading's own words around it.
fn dl_text(e: &libloading::Error) -> String {
    use std::error::Error;
    match e.source() {
        Some(inner) => inner.to_string(),
        None => e.to_string(),
    }
}
