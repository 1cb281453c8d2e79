//! Reading a response: walk the message headers only, looking for ReadyForQuery (and
//! an ErrorResponse, which ends the run); where the workload reads values (the TPC-C
//! New-Order's order id and prices), the first DataRow of each response is kept.

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
    /// Whether the first DataRow of each response is kept.
    capture_rows: bool,
    /// The first DataRow's body of the response being scanned (`row_seen`: there was one).
    pending_row: Vec<u8>,
    row_seen: bool,
    /// The first DataRow's body of the last complete response (empty: none).
    last_row: Vec<u8>,
}

const INITIAL: usize = 16 * 1024;

impl Default for ResponseBuffer {
    fn default() -> Self {
        ResponseBuffer {
            buf: vec![0; INITIAL],
            len: 0,
            scanned: 0,
            capture_rows: false,
            pending_row: Vec::new(),
            row_seen: false,
            last_row: Vec::new(),
        }
    }
}

impl ResponseBuffer {
    /// A buffer that keeps the first DataRow of each response ([`Self::last_row`]).
    pub fn capturing_rows() -> ResponseBuffer {
        ResponseBuffer {
            capture_rows: true,
            ..ResponseBuffer::default()
        }
    }

    /// The body of the first DataRow of the last complete response (empty when it had
    /// none, or rows are not captured).
    pub fn last_row(&self) -> &[u8] {
        &self.last_row
    }

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
                b'D' if self.capture_rows && !self.row_seen => {
                    self.pending_row.clear();
                    self.pending_row.extend_from_slice(&self.buf[at + 5..end]);
                    self.row_seen = true;
                    self.scanned = end;
                }
                b'Z' => {
                    if self.capture_rows {
                        if self.row_seen {
                            std::mem::swap(&mut self.pending_row, &mut self.last_row);
                        } else {
                            self.last_row.clear();
                        }
                        self.row_seen = false;
                    }
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

/// Field `index` of a DataRow body (`None` for SQL NULL or a short row).
pub fn row_field(row: &[u8], index: usize) -> Option<&[u8]> {
    let count = usize::from(u16::from_be_bytes(row.get(..2)?.try_into().ok()?));
    if index >= count {
        return None;
    }
    let mut at = 2;
    for i in 0..=index {
        let len = i32::from_be_bytes(row.get(at..at + 4)?.try_into().ok()?);
        at += 4;
        let len = usize::try_from(len).ok();
        if i == index {
            return row.get(at..at + len?);
        }
        at += len.unwrap_or(0);
    }
    None
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
    fn the_first_data_row_is_kept_when_asked() {
        let row = b"D\0\0\0\x15\0\x03\0\0\0\x0212\xff\xff\xff\xff\0\0\0\x01x";
        let mut plain = ResponseBuffer::default();
        let mut kept = ResponseBuffer::capturing_rows();
        for r in [&mut plain, &mut kept] {
            put(r, row);
            put(r, b"Z\0\0\0\x05T");
            assert_eq!(r.scan().unwrap(), Scan::Ready);
        }
        assert_eq!(plain.last_row(), b"");
        let fields: Vec<_> = (0..4).map(|i| row_field(kept.last_row(), i)).collect();
        assert_eq!(fields, [Some(&b"12"[..]), None, Some(&b"x"[..]), None]);
        put(&mut kept, RESPONSE);
        assert_eq!(kept.scan().unwrap(), Scan::Ready);
        assert_eq!(kept.last_row(), b"", "a response without rows");
    }

    #[test]
    fn bad_length_is_an_error_not_a_panic() {
        let mut r = ResponseBuffer::default();
        put(&mut r, b"C\0\0\0\x01xxxx");
        assert!(matches!(r.scan(), Err(FloorError::Protocol(_))));
    }
}
