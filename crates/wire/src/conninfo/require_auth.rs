//! `require_auth`: which authentication requests the client accepts.

use super::error::ConninfoError;

/// Authentication request codes (the `AuthenticationXXX` message subtypes).
mod auth_request {
    /// AuthenticationCleartextPassword.
    pub const PASSWORD: u32 = 3;
    /// AuthenticationMD5Password.
    pub const MD5: u32 = 5;
    /// AuthenticationGSS.
    pub const GSS: u32 = 7;
    /// AuthenticationGSSContinue.
    pub const GSS_CONT: u32 = 8;
    /// AuthenticationSSPI.
    pub const SSPI: u32 = 9;
    /// AuthenticationSASL.
    pub const SASL: u32 = 10;
    /// AuthenticationSASLContinue.
    pub const SASL_CONT: u32 = 11;
    /// AuthenticationSASLFinal.
    pub const SASL_FIN: u32 = 12;
}

/// SASL mechanism families `require_auth` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SaslMechanism {
    /// SCRAM-SHA-256 and SCRAM-SHA-256-PLUS (`scram-sha-256`).
    Scram,
    /// OAUTHBEARER (`oauth`).
    OAuth,
}

const ALL_MECHANISMS: [SaslMechanism; 2] = [SaslMechanism::Scram, SaslMechanism::OAuth];

const fn bit(code: u32) -> u32 {
    1 << code
}

const SASL_BITS: u32 =
    bit(auth_request::SASL) | bit(auth_request::SASL_CONT) | bit(auth_request::SASL_FIN);

/// The parsed `require_auth` setting, as libpq's `pqConnectOptions2` builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequireAuth {
    configured: bool,
    auth_required: bool,
    allowed_methods: u32,
    mechanisms: Vec<SaslMechanism>,
}

impl Default for RequireAuth {
    fn default() -> Self {
        RequireAuth {
            configured: false,
            auth_required: false,
            allowed_methods: u32::MAX,
            mechanisms: ALL_MECHANISMS.to_vec(),
        }
    }
}

impl RequireAuth {
    /// Parses a `require_auth` list (`password,md5`, `!password`, `none`, ...);
    /// an empty string means no restriction.
    pub fn parse(spec: &str) -> Result<Self, ConninfoError> {
        if spec.is_empty() {
            return Ok(RequireAuth::default());
        }
        let mut ra = RequireAuth {
            configured: true,
            auth_required: true,
            allowed_methods: 0,
            mechanisms: Vec::new(),
        };
        let mut negated = false;
        for (index, part) in spec.split(',').enumerate() {
            let method = if let Some(rest) = part.strip_prefix('!') {
                if index == 0 {
                    ra.auth_required = false;
                    ra.allowed_methods = u32::MAX;
                    ra.mechanisms = ALL_MECHANISMS.to_vec();
                } else if !negated {
                    return Err(ConninfoError::RequireAuthNegativeMixed(part.to_string()));
                }
                negated = true;
                rest
            } else {
                if negated {
                    return Err(ConninfoError::RequireAuthPositiveMixed(part.to_string()));
                }
                part
            };
            let duplicate = || ConninfoError::RequireAuthDuplicate(part.to_string());
            let (bits, mech) = match method {
                "password" => (bit(auth_request::PASSWORD), None),
                "md5" => (bit(auth_request::MD5), None),
                "gss" => (bit(auth_request::GSS) | bit(auth_request::GSS_CONT), None),
                "sspi" => (bit(auth_request::SSPI) | bit(auth_request::GSS_CONT), None),
                "scram-sha-256" => (0, Some(SaslMechanism::Scram)),
                "oauth" => (0, Some(SaslMechanism::OAuth)),
                "none" => {
                    // "!none" demands authentication, "none" allows its absence.
                    if ra.auth_required == negated {
                        return Err(duplicate());
                    }
                    ra.auth_required = negated;
                    continue;
                }
                _ => {
                    return Err(ConninfoError::InvalidValue {
                        option: "require_auth",
                        value: method.to_string(),
                    });
                }
            };
            if let Some(mech) = mech {
                let present = ra.mechanisms.contains(&mech);
                if negated {
                    if !present {
                        return Err(duplicate());
                    }
                    ra.mechanisms.retain(|m| *m != mech);
                } else {
                    if present {
                        return Err(duplicate());
                    }
                    ra.mechanisms.push(mech);
                }
            } else if negated {
                if ra.allowed_methods & bits == 0 {
                    return Err(duplicate());
                }
                ra.allowed_methods &= !bits;
            } else {
                if ra.allowed_methods & bits == bits {
                    return Err(duplicate());
                }
                ra.allowed_methods |= bits;
            }
        }
        let any_mechanism = !ra.mechanisms.is_empty();
        if !negated && any_mechanism {
            ra.allowed_methods |= SASL_BITS;
        } else if negated && !any_mechanism {
            ra.allowed_methods &= !SASL_BITS;
        }
        Ok(ra)
    }

    /// Whether `require_auth` was set at all.
    pub fn is_configured(&self) -> bool {
        self.configured
    }

    /// Whether the server must request some authentication (a bare
    /// AuthenticationOk is refused).
    pub fn auth_required(&self) -> bool {
        self.auth_required
    }

    /// Whether an authentication request code (see [`auth_request`]) is allowed.
    pub fn allows_request(&self, code: u32) -> bool {
        !self.configured || (code < 32 && self.allowed_methods & bit(code) != 0)
    }

    /// Whether a SASL mechanism family is allowed.
    pub fn allows_mechanism(&self, mech: SaslMechanism) -> bool {
        !self.configured || self.mechanisms.contains(&mech)
    }
}

#[cfg(test)]
mod tests {
    use super::auth_request as ar;
    use super::*;

    fn err(s: &str) -> String {
        RequireAuth::parse(s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn positive_list() {
        let ra = RequireAuth::parse("password,scram-sha-256").unwrap_or_default();
        assert!(ra.is_configured() && ra.auth_required());
        assert!(ra.allows_request(ar::PASSWORD));
        assert!(!ra.allows_request(ar::MD5));
        assert!(ra.allows_request(ar::SASL));
        assert!(ra.allows_mechanism(SaslMechanism::Scram));
        assert!(!ra.allows_mechanism(SaslMechanism::OAuth));
    }

    #[test]
    fn negative_list() {
        let ra = RequireAuth::parse("!password,!scram-sha-256,!oauth").unwrap_or_default();
        assert!(!ra.auth_required());
        assert!(!ra.allows_request(ar::PASSWORD));
        assert!(ra.allows_request(ar::MD5));
        assert!(!ra.allows_request(ar::SASL));
        let none = RequireAuth::parse("!none").unwrap_or_default();
        assert!(none.auth_required() && none.allows_request(ar::MD5));
    }

    #[test]
    fn unrestricted_by_default() {
        let ra = RequireAuth::parse("").unwrap_or_default();
        assert!(!ra.is_configured() && ra.allows_request(ar::PASSWORD));
        assert!(!ra.auth_required());
    }

    #[test]
    fn errors() {
        assert_eq!(
            err("md5,!password"),
            "negative require_auth method \"!password\" cannot be mixed with non-negative methods"
        );
        assert_eq!(
            err("!md5,password"),
            "require_auth method \"password\" cannot be mixed with negative methods"
        );
        assert_eq!(
            err("md5,md5"),
            "require_auth method \"md5\" is specified more than once"
        );
        assert_eq!(
            err("!none,!none"),
            "require_auth method \"!none\" is specified more than once"
        );
        assert_eq!(
            err("none,none"),
            "require_auth method \"none\" is specified more than once"
        );
        assert_eq!(err("kerberos"), "invalid require_auth value: \"kerberos\"");
        assert_eq!(err(""), "");
    }
}
