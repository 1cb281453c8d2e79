//! PostgreSQL's strict base64 decoding (for `scram_client_key` / `scram_server_key`).

/// PostgreSQL's strict base64 decoder (no whitespace, padding only at the end
/// of a quantum).
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buf: u32 = 0;
    let mut pos = 0;
    let mut end = 0;
    for c in text.bytes() {
        let b = match c {
            b'=' => {
                if end == 0 {
                    end = match pos {
                        2 => 1,
                        3 => 2,
                        _ => return None,
                    };
                }
                0
            }
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        buf = (buf << 6) + b;
        pos += 1;
        if pos == 4 {
            out.push((buf >> 16) as u8);
            if end != 1 {
                out.push((buf >> 8) as u8);
            }
            if end == 0 || end > 2 {
                out.push(buf as u8);
            }
            buf = 0;
            pos = 0;
        }
    }
    if pos != 0 {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_postgres() {
        assert_eq!(base64_decode("AAEC").as_deref(), Some(&[0u8, 1, 2][..]));
        assert_eq!(base64_decode("AAE=").as_deref(), Some(&[0u8, 1][..]));
        assert_eq!(base64_decode("AA==").as_deref(), Some(&[0u8][..]));
        assert_eq!(base64_decode("AA").as_deref(), None);
        assert_eq!(base64_decode("A===").as_deref(), None);
        assert_eq!(base64_decode("AA E").as_deref(), None);
    }
}
