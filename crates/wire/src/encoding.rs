//! The session's client encoding, as far as a client needs it: how to read the
//! server's texts, and how to split a query's bytes into characters and screen
//! columns for the `LINE n:` cursor display (libpq does the same with its
//! per-encoding character length and display width rules).

/// A multibyte client encoding other than UTF-8 (the Far Eastern encodings and
/// MULE_INTERNAL). Each has its own rule for the length of a character from its
/// first byte, and for how many screen columns it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultibyteEncoding {
    /// EUC_JP and EUC_JIS_2004.
    EucJp,
    /// EUC_CN.
    EucCn,
    /// EUC_KR.
    EucKr,
    /// EUC_TW.
    EucTw,
    /// JOHAB.
    Johab,
    /// SJIS and SHIFT_JIS_2004.
    Sjis,
    /// BIG5.
    Big5,
    /// GBK.
    Gbk,
    /// UHC.
    Uhc,
    /// GB18030.
    Gb18030,
    /// MULE_INTERNAL.
    MuleInternal,
}

/// The client encoding a session reports (`client_encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientEncoding {
    /// UTF8: texts are UTF-8.
    #[default]
    Utf8,
    /// Any single-byte encoding (SQL_ASCII, LATIN1, WIN1252...): one character per byte.
    SingleByte,
    /// A multibyte encoding other than UTF-8.
    Multibyte(MultibyteEncoding),
}

/// Single shift 2: in the EUC encodings, starts a character of a second set.
const SS2: u8 = 0x8e;
/// Single shift 3: in the EUC encodings, starts a character of a third set.
const SS3: u8 = 0x8f;

impl ClientEncoding {
    /// The encoding a `client_encoding` name (as the server reports it) means.
    /// Names the server never reports for a multibyte encoding count as single-byte.
    pub fn from_name(name: &str) -> ClientEncoding {
        use MultibyteEncoding as M;
        let multibyte = match name.to_ascii_uppercase().as_str() {
            "UTF8" | "UNICODE" => return ClientEncoding::Utf8,
            "EUC_JP" | "EUC_JIS_2004" => M::EucJp,
            "EUC_CN" => M::EucCn,
            "EUC_KR" => M::EucKr,
            "EUC_TW" => M::EucTw,
            "JOHAB" => M::Johab,
            "SJIS" | "SHIFT_JIS_2004" => M::Sjis,
            "BIG5" => M::Big5,
            "GBK" => M::Gbk,
            "UHC" => M::Uhc,
            "GB18030" => M::Gb18030,
            "MULE_INTERNAL" => M::MuleInternal,
            _ => return ClientEncoding::SingleByte,
        };
        ClientEncoding::Multibyte(multibyte)
    }

    /// True for UTF8.
    pub fn is_utf8(self) -> bool {
        self == ClientEncoding::Utf8
    }

    /// The character at the start of `s` (not empty): its length in bytes (never
    /// past the end of `s`) and its width in screen columns (at least 1: control
    /// and combining characters count as one column, as libpq counts them).
    pub(crate) fn next_char(self, s: &[u8]) -> (usize, usize) {
        let (len, width) = match self {
            ClientEncoding::SingleByte => (1, 1),
            ClientEncoding::Utf8 => utf8_char(s),
            ClientEncoding::Multibyte(m) => m.char_at(s),
        };
        (len.clamp(1, s.len()), width.max(1))
    }
}

impl MultibyteEncoding {
    /// Length and width of the character starting at `s[0]` (ASCII: 1 and 1).
    fn char_at(self, s: &[u8]) -> (usize, usize) {
        use MultibyteEncoding as M;
        let b = s[0];
        let high = b & 0x80 != 0;
        match self {
            M::EucJp => match b {
                SS2 => (2, 1),
                SS3 => (3, 2),
                _ if high => (2, 2),
                _ => (1, 1),
            },
            M::EucKr | M::Johab => match b {
                SS2 => (2, 2),
                SS3 => (3, 2),
                _ if high => (2, 2),
                _ => (1, 1),
            },
            M::EucCn => match b {
                SS2 | SS3 => (3, 2),
                _ if high => (2, 2),
                _ => (1, 1),
            },
            M::EucTw => match b {
                SS2 => (4, 2),
                SS3 => (3, 2),
                _ if high => (2, 2),
                _ => (1, 1),
            },
            M::Sjis => match b {
                0xa1..=0xdf => (1, 1),
                _ if high => (2, 2),
                _ => (1, 1),
            },
            M::Big5 | M::Gbk | M::Uhc => {
                if high {
                    (2, 2)
                } else {
                    (1, 1)
                }
            }
            M::Gb18030 => match s.get(1) {
                _ if !high => (1, 1),
                Some(0x30..=0x39) => (4, 2),
                _ => (2, 2),
            },
            M::MuleInternal => match b {
                0x81..=0x8d => (2, 1),
                0x9a | 0x9b => (3, 1),
                0x90..=0x99 => (3, 2),
                0x9c | 0x9d => (4, 2),
                _ => (1, 1),
            },
        }
    }
}

/// Length (from the first byte's high bits, whatever follows) and width of a
/// UTF-8 character; an invalid first byte is one byte wide.
fn utf8_char(s: &[u8]) -> (usize, usize) {
    let b = s[0];
    let (len, lead_bits) = match b {
        _ if b & 0x80 == 0 => return (1, 1),
        _ if b & 0xe0 == 0xc0 => (2, u32::from(b & 0x1f)),
        _ if b & 0xf0 == 0xe0 => (3, u32::from(b & 0x0f)),
        _ if b & 0xf8 == 0xf0 => (4, u32::from(b & 0x07)),
        _ => return (1, 1),
    };
    // Bytes missing at the end read as zero, as past the end of a C string.
    let code = (1..len).fold(lead_bits, |acc, i| {
        (acc << 6) | u32::from(s.get(i).copied().unwrap_or(0) & 0x3f)
    });
    (len, code_point_width(code))
}

/// Screen width of a Unicode code point: East Asian wide characters take two
/// columns, everything else one.
pub(crate) fn code_point_width(u: u32) -> usize {
    let wide = matches!(u,
        0x1100..=0x115F
        | 0x2E80..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE6F
        | 0xFF00..=0xFF5F
        | 0xFFE0..=0xFFE6
        | 0x20000..=0x2FFFD
        | 0x30000..=0x3FFFD)
        && u != 0x303F;
    if wide { 2 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(enc: ClientEncoding, mut s: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        while !s.is_empty() {
            let c = enc.next_char(s);
            out.push(c);
            s = &s[c.0..];
        }
        out
    }

    #[test]
    fn names() {
        assert_eq!(ClientEncoding::from_name("utf8"), ClientEncoding::Utf8);
        assert_eq!(
            ClientEncoding::from_name("SHIFT_JIS_2004"),
            ClientEncoding::Multibyte(MultibyteEncoding::Sjis)
        );
        assert_eq!(
            ClientEncoding::from_name("LATIN1"),
            ClientEncoding::SingleByte
        );
    }

    #[test]
    fn euc_jp_half_width_kana_is_one_column() {
        let enc = ClientEncoding::from_name("EUC_JP");
        // "日" (2 bytes, 2 columns), half-width "ｱ" (SS2, 1 column), "a", a JIS X 0212 character (SS3).
        let s = b"\xc6\xfc\x8e\xb1a\x8f\xb0\xa1";
        assert_eq!(chars(enc, s), vec![(2, 2), (2, 1), (1, 1), (3, 2)]);
    }

    #[test]
    fn sjis_kana_range_is_single_byte() {
        let enc = ClientEncoding::from_name("SJIS");
        assert_eq!(chars(enc, b"\x93\xfa\xb1x"), vec![(2, 2), (1, 1), (1, 1)]);
    }

    #[test]
    fn gb18030_four_byte_form() {
        let enc = ClientEncoding::from_name("GB18030");
        assert_eq!(
            chars(enc, b"\x81\x30\x81\x30\xc8\xd5"),
            vec![(4, 2), (2, 2)]
        );
    }

    #[test]
    fn truncated_character_stops_at_the_end() {
        let enc = ClientEncoding::from_name("EUC_TW");
        assert_eq!(chars(enc, b"a\x8e\xa1"), vec![(1, 1), (2, 2)]);
        assert_eq!(chars(ClientEncoding::Utf8, b"\xe6\x97"), vec![(2, 2)]);
    }

    #[test]
    fn utf8_widths() {
        assert_eq!(
            chars(ClientEncoding::Utf8, "é日\u{301}".as_bytes()),
            vec![(2, 1), (3, 2), (2, 1)]
        );
        assert_eq!(
            chars(ClientEncoding::Utf8, b"\xff\x80"),
            vec![(1, 1), (1, 1)]
        );
    }
}
