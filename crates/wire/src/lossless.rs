//! Byte strings carried in `String`s without loss.
//!
//! libpq's connection parameters are C strings: bytes in whatever encoding the
//! user's terminal, files and server use, not necessarily UTF-8. pgrush keeps them
//! in `String`s (the conninfo parser, messages and settings are text), so bytes
//! that are not UTF-8 are escaped, in the manner of Python's `surrogateescape`:
//! each such byte becomes one character of the last 256 code points of Unicode's
//! plane 16 private use area (U+10FF00 + byte). Valid UTF-8 is kept as it is, so
//! converting twice does no harm (`from_bytes(s.as_bytes()) == s`), and
//! [`to_bytes`] gives back exactly the bytes [`from_bytes`] was given, with one
//! exception: those 256 private-use characters themselves, written as UTF-8 in
//! the input, come back as the bytes they stand for (no text uses them).
//!
//! Convert at the edges: [`from_bytes`] where bytes come in (arguments, the
//! environment, files, the server's texts), [`to_bytes`] where they go out (the
//! startup packet, passwords, socket paths, anything printed).

use std::borrow::Cow;

/// First code point of the escapes: U+10FF00 stands for byte 0x00.
const ESCAPE_BASE: u32 = 0x10_FF00;

/// The escape character of one byte.
fn escape(byte: u8) -> char {
    char::from_u32(ESCAPE_BASE + u32::from(byte)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The byte an escape character stands for, if `c` is one.
fn unescape(c: char) -> Option<u8> {
    u32::from(c)
        .checked_sub(ESCAPE_BASE)
        .and_then(|b| u8::try_from(b).ok())
}

/// `bytes` as a `String`: UTF-8 kept, every other byte escaped.
pub fn from_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(chunk.invalid().iter().copied().map(escape));
    }
    out
}

/// The bytes a [`from_bytes`] string stands for (borrowed when nothing was escaped).
pub fn to_bytes(s: &str) -> Cow<'_, [u8]> {
    // Escapes are not ASCII: an ASCII text (any query text of pgrush's own) is its bytes,
    // found without decoding it character by character.
    if s.is_ascii() || !s.chars().any(|c| unescape(c).is_some()) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match unescape(c) {
            Some(b) => out.push(b),
            None => {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    Cow::Owned(out)
}

/// A file system path from a [`from_bytes`] string.
pub fn to_path(s: &str) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(&to_bytes(s)).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn utf8_is_kept_and_other_bytes_are_escaped() {
        assert_eq!(from_bytes("café".as_bytes()), "café");
        let s = from_bytes(b"caf\xe9");
        assert_eq!(s.chars().count(), 4);
        assert_eq!(&*to_bytes(&s), b"caf\xe9");
        assert!(matches!(to_bytes("café"), Cow::Borrowed(_)));
    }

    #[test]
    fn converting_twice_changes_nothing() {
        let once = from_bytes(b"r\xf4le \xff");
        assert_eq!(from_bytes(once.as_bytes()), once);
    }

    proptest! {
        #[test]
        fn round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            // The escape characters themselves are the documented exception.
            prop_assume!(!String::from_utf8_lossy(&bytes).chars().any(|c| unescape(c).is_some()));
            let text = from_bytes(&bytes);
            prop_assert_eq!(&*to_bytes(&text), &bytes[..]);
        }
    }
}
