//! A TLS configuration failure ([`TlsSetupError`]).

/// A TLS configuration failure (already in libpq's wording).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsSetupError(pub String);
