//! Reading a response: walk the message headers only, looking for ReadyForQuery (and
//! an ErrorResponse, which ends the run).

use crate::error::FloorError;

/// Where the scan of a response stands.
#[derive(Debug, PartialEq, Eq)]
pub enum Scan {
    /// ReadyForQuery has not arrived yet.
    Incomplete,
    /// The response is complete: ReadyForQuery arrived.
    Ready,
}

/// Bytes received for one response and how far they were scanned.
#[derive(Debug)]
pub struct ResponseBuffer {
    buf: Vec<u8>,
    len: usize,
    scanned: usize,
}

const INITIAL: usize = 16 * 1024;

impl Default for ResponseBuffer {
    fn default() -> Self {
        ResponseBuffer {
            buf: vec![0; INITIAL],
            len: 0,
            scanned: 0,
        }
    }
}

impl ResponseBuffer {
    /// The free space to receive into (doubled when full).
    pub fn spare(&mut self) -> &mut [u8] {
        if self.len == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        &mut self.buf[self.len..]
    }

    /// Records that `n` bytes were received into [`spare`](Self::spare).
    pub fn filled(&mut self, n: usize) {
        self.len += n;
    }

    /// Walks the complete messages not yet scanned. On ReadyForQuery the buffer is
    /// emptied (bytes after it, which a server does not send unasked, are kept).
    pub fn scan(&mut self) -> Result<Scan, FloorError> {
        while self.scanned + 5 <= self.len {
            let at = self.scanned;
            let tag = self.buf[at];
            let body_len = u32::from_be_bytes([
                self.buf[at + 1],
                self.buf[at + 2],
                self.buf[at + 3],
                self.buf[at + 4],
            ]) as usize;
            if body_len < 4 {
                return Err(FloorError::Protocol(format!("message length {body_len}")));
            }
            let end = at + 1 + body_len;
            if end > self.len {
                break;
            }
            match tag {
                b'E' => return Err(FloorError::Server(error_text(&self.buf[at + 5..end]))),
                b'Z' => {
                    if end < self.len {
                        self.buf.copy_within(end..self.len, 0);
                    }
                    self.len -= end;
                    self.scanned = 0;
                    return Ok(Scan::Ready);
                }
                _ => self.scanned = end,
            }
        }
        Ok(Scan::Incomplete)
    }
}

/// The severity and message fields of an ErrorResponse body.
pub fn error_text(body: &[u8]) -> String {
    let mut severity = "";
    let mut message = "";
    for field in body.split(|&b| b == 0) {
        let Some((&code, value)) = field.split_first() else {
            break;
        };
        let value = std::str::from_utf8(value).unwrap_or("?");
        match code {
            b'S' => severity = value,
            b'M' => message = value,
            _ => {}
        }
    }
    format!("{severity}: {message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(r: &mut ResponseBuffer, bytes: &[u8]) {
        r.spare()[..bytes.len()].copy_from_slice(bytes);
        r.filled(bytes.len());
    }

    const RESPONSE: &[u8] = b"2\0\0\0\x04C\0\0\0\x0dSELECT 1\0Z\0\0\0\x05I";

    #[test]
    fn ready_only_after_ready_for_query_in_pieces() {
        let mut r = ResponseBuffer::default();
        for (i, byte) in RESPONSE.iter().enumerate() {
            put(&mut r, &[*byte]);
            let want = if i + 1 == RESPONSE.len() {
                Scan::Ready
            } else {
                Scan::Incomplete
            };
            assert_eq!(r.scan().unwrap(), want, "after {} bytes", i + 1);
        }
        put(&mut r, RESPONSE);
        assert_eq!(r.scan().unwrap(), Scan::Ready);
    }

    #[test]
    fn error_response_is_an_error() {
        let mut r = ResponseBuffer::default();
        put(&mut r, b"E\0\0\0\x16SERROR\0Mno table\0\0Z\0\0\0\x05I");
        match r.scan() {
            Err(FloorError::Server(text)) => assert_eq!(text, "ERROR: no table"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_length_is_an_error_not_a_panic() {
        let mut r = ResponseBuffer::default();
        put(&mut r, b"C\0\0\0\x01xxxx");
        assert!(matches!(r.scan(), Err(FloorError::Protocol(_))));
    }
}
