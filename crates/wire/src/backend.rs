//! Zero-copy decoding of backend (server to client) messages.
//!
//! A message borrows its body from the connection's input buffer; nothing is
//! allocated while decoding.

use crate::error::{Error, ErrorFields};

/// Transaction status reported by ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionStatus {
    /// Not in a transaction block (`I`).
    Idle,
    /// In a transaction block (`T`).
    InTransaction,
    /// In a failed transaction block (`E`).
    Failed,
}

/// The transaction status of a ReadyForQuery's status byte (`None`: not one).
#[inline]
fn transaction_status(code: u8) -> Option<TransactionStatus> {
    match code {
        b'I' => Some(TransactionStatus::Idle),
        b'T' => Some(TransactionStatus::InTransaction),
        b'E' => Some(TransactionStatus::Failed),
        _ => None,
    }
}

/// One decoded backend message.
#[derive(Debug, Clone, Copy)]
pub enum BackendMessage<'a> {
    /// `R`: an authentication request (code and the rest of the body).
    Authentication {
        /// Request code (0 = ok, 3 = cleartext, 5 = md5, 10/11/12 = SASL...).
        code: i32,
        /// Bytes after the code.
        data: &'a [u8],
    },
    /// `S`: a run-time parameter report.
    ParameterStatus {
        /// Parameter name.
        name: &'a str,
        /// Parameter value.
        value: &'a str,
    },
    /// `K`: cancellation key.
    BackendKeyData {
        /// Backend process id.
        process_id: i32,
        /// Secret key (4 bytes in protocol 3.0).
        secret_key: &'a [u8],
    },
    /// `Z`: ready for a new query.
    ReadyForQuery(TransactionStatus),
    /// `T`: row description.
    RowDescription(RowDescription<'a>),
    /// `D`: one data row.
    DataRow(DataRow<'a>),
    /// `C`: command complete with its tag (e.g. `SELECT 1`).
    CommandComplete(&'a str),
    /// `I`: empty query string.
    EmptyQueryResponse,
    /// `E`: an error.
    ErrorResponse(ErrorFields<'a>),
    /// `N`: a notice (normally consumed by the connection's notice handler).
    NoticeResponse(ErrorFields<'a>),
    /// `1`
    ParseComplete,
    /// `2`
    BindComplete,
    /// `3`
    CloseComplete,
    /// `n`
    NoData,
    /// `s`
    PortalSuspended,
    /// `t`: parameter type OIDs (raw body).
    ParameterDescription(&'a [u8]),
    /// `G`: the server awaits COPY data.
    CopyInResponse,
    /// `H`: the server will send COPY data.
    CopyOutResponse,
    /// `W`: COPY both ways (replication).
    CopyBothResponse,
    /// `d`: COPY data.
    CopyData(&'a [u8]),
    /// `c`: COPY done.
    CopyDone,
    /// `A`: asynchronous notification.
    NotificationResponse {
        /// Notifying backend's pid.
        process_id: i32,
        /// Channel name.
        channel: &'a str,
        /// Payload.
        payload: &'a str,
    },
    /// `v`: the server does not support the requested protocol minor version/options.
    NegotiateProtocolVersion(&'a [u8]),
    /// `V`: function call result (raw body).
    FunctionCallResponse(&'a [u8]),
}

/// A borrowed RowDescription.
#[derive(Debug, Clone, Copy)]
pub struct RowDescription<'a> {
    count: u16,
    data: &'a [u8],
}

/// One column of a RowDescription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDescription<'a> {
    /// Column name: the server's bytes (in the client encoding, not always UTF-8).
    pub name: &'a [u8],
    /// Table OID (0 if not a table column).
    pub table_oid: u32,
    /// Column attribute number.
    pub column_id: i16,
    /// Data type OID.
    pub type_oid: u32,
    /// Data type size.
    pub type_size: i16,
    /// Type modifier.
    pub type_modifier: i32,
    /// Format code (0 text, 1 binary).
    pub format: i16,
}

impl<'a> RowDescription<'a> {
    /// Number of columns.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True when there are no columns.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Iterates over the columns (stops early on a malformed body).
    pub fn fields(&self) -> impl Iterator<Item = FieldDescription<'a>> + 'a {
        let mut rest = self.data;
        let mut left = self.count;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left -= 1;
            let mut r = Reader(rest);
            let name = r.cstr().ok()?;
            let f = FieldDescription {
                name,
                table_oid: r.u32().ok()?,
                column_id: r.i16().ok()?,
                type_oid: r.u32().ok()?,
                type_size: r.i16().ok()?,
                type_modifier: r.i32().ok()?,
                format: r.i16().ok()?,
            };
            rest = r.0;
            Some(f)
        })
    }
}

/// A borrowed DataRow.
#[derive(Debug, Clone, Copy)]
pub struct DataRow<'a> {
    count: u16,
    data: &'a [u8],
}

impl<'a> DataRow<'a> {
    /// Number of fields.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True when the row has no fields.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Iterates over the fields; `None` is SQL NULL.
    pub fn fields(&self) -> impl Iterator<Item = Option<&'a [u8]>> + 'a {
        let mut rest = self.data;
        let mut left = self.count;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left -= 1;
            let mut r = Reader(rest);
            let len = r.i32().ok()?;
            let v = if len < 0 {
                None
            } else {
                Some(r.take(len as usize).ok()?)
            };
            rest = r.0;
            Some(v)
        })
    }

    /// Field `i` (`None` for NULL or out of range).
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        self.fields().nth(i).flatten()
    }
}

/// Cursor over a message body.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.0.len() < n {
            return Err(Error::protocol("insufficient data left in message"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }
    fn i16(&mut self) -> Result<i16, Error> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }
    fn i32(&mut self) -> Result<i32, Error> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u32(&mut self) -> Result<u32, Error> {
        Ok(self.i32()? as u32)
    }
    fn cstr(&mut self) -> Result<&'a [u8], Error> {
        let end = self
            .0
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| Error::protocol("unterminated string in message"))?;
        let s = &self.0[..end];
        self.0 = &self.0[end + 1..];
        Ok(s)
    }
    fn cstr_utf8(&mut self) -> Result<&'a str, Error> {
        // Non-UTF-8 names (e.g. LATIN1 client encoding) are reported as empty
        // rather than failing the whole message.
        Ok(text(self.cstr()?))
    }
}

/// `bytes` as text, `""` when not UTF-8. Command tags (one per statement) are short ASCII
/// words: the word-at-a-time ASCII check is much cheaper than full UTF-8 validation.
#[inline]
fn text(bytes: &[u8]) -> &str {
    if bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    } else {
        std::str::from_utf8(bytes).unwrap_or("")
    }
}

/// Decodes one message given its type byte and body (without the length word).
pub fn decode(tag: u8, body: &[u8]) -> Result<BackendMessage<'_>, Error> {
    let mut r = Reader(body);
    let msg = match tag {
        b'R' => BackendMessage::Authentication {
            code: r.i32()?,
            data: r.0,
        },
        b'S' => BackendMessage::ParameterStatus {
            name: r.cstr_utf8()?,
            value: r.cstr_utf8()?,
        },
        b'K' => BackendMessage::BackendKeyData {
            process_id: r.i32()?,
            secret_key: r.0,
        },
        b'Z' => {
            let code = r.u8()?;
            let status = transaction_status(code).ok_or_else(|| {
                Error::Protocol(format!(
                    "unexpected transaction status \"{}\"",
                    code as char
                ))
            })?;
            BackendMessage::ReadyForQuery(status)
        }
        b'T' => BackendMessage::RowDescription(RowDescription {
            count: r.i16()? as u16,
            data: r.0,
        }),
        b'D' => BackendMessage::DataRow(DataRow {
            count: r.i16()? as u16,
            data: r.0,
        }),
        b'C' => BackendMessage::CommandComplete(r.cstr_utf8()?),
        b'I' => BackendMessage::EmptyQueryResponse,
        b'E' => BackendMessage::ErrorResponse(ErrorFields::new(body)),
        b'N' => BackendMessage::NoticeResponse(ErrorFields::new(body)),
        b'1' => BackendMessage::ParseComplete,
        b'2' => BackendMessage::BindComplete,
        b'3' => BackendMessage::CloseComplete,
        b'n' => BackendMessage::NoData,
        b's' => BackendMessage::PortalSuspended,
        b't' => BackendMessage::ParameterDescription(body),
        b'G' => BackendMessage::CopyInResponse,
        b'H' => BackendMessage::CopyOutResponse,
        b'W' => BackendMessage::CopyBothResponse,
        b'd' => BackendMessage::CopyData(body),
        b'c' => BackendMessage::CopyDone,
        b'A' => BackendMessage::NotificationResponse {
            process_id: r.i32()?,
            channel: r.cstr_utf8()?,
            payload: r.cstr_utf8()?,
        },
        b'v' => BackendMessage::NegotiateProtocolVersion(body),
        b'V' => BackendMessage::FunctionCallResponse(body),
        other => {
            return Err(Error::Protocol(format!(
                "unexpected response from server; first received character was \"{}\"",
                other as char
            )));
        }
    };
    Ok(msg)
}

/// Splits a complete frame off the front of `buf`: returns `(tag, body range end)`
/// as `(tag, total length)` when the whole message is present.
pub(crate) fn frame_len(buf: &[u8]) -> Result<Option<(u8, usize)>, Error> {
    if buf.len() < 5 {
        return Ok(None);
    }
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if len < 4 {
        return Err(Error::protocol("invalid message length"));
    }
    let total = 1 + len;
    if buf.len() < total {
        return Ok(None);
    }
    Ok(Some((buf[0], total)))
}

/// Effects of the messages [`scan_plain`] consumed, as a result without `\gset`/`\aset`
/// reads them: rows counted, whether a RowDescription started the current result, and
/// how many results ended (CommandComplete or EmptyQueryResponse).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlainTally {
    /// DataRows since the last RowDescription (0 after a result's end).
    pub rows: u64,
    /// Whether the current result had a RowDescription (false after its end).
    pub tuples: bool,
    /// CommandComplete and EmptyQueryResponse messages consumed.
    pub completed: u32,
}

impl PlainTally {
    /// A result ended (CommandComplete or EmptyQueryResponse): the next one starts
    /// with no rows and no RowDescription.
    #[inline]
    pub fn end_result(&mut self) {
        self.rows = 0;
        self.tuples = false;
    }
}

/// Where [`scan_plain`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainStop {
    /// The buffer ends before the next complete message: read more.
    NeedMore,
    /// A ReadyForQuery with this status was consumed (the scan stops after it).
    Ready(TransactionStatus),
    /// The next message is one the scan leaves to [`decode`] (an error, a notice, a
    /// parameter report, COPY, a malformed or unknown message...); it is not consumed.
    Other,
}

/// The fast path of reading a plain result: consumes, in one pass over the frames at
/// the front of `buf`, the messages such a result is made of (ParseComplete,
/// BindComplete, CloseComplete, NoData, RowDescription, DataRow, CommandComplete,
/// EmptyQueryResponse), adding their effects to `tally`, and stops after a
/// ReadyForQuery, before any other message, or where the buffer ends. Returns the
/// bytes consumed and why it stopped.
///
/// A message is consumed only when [`decode`] would accept it; anything it would
/// refuse, or that is not in the list (including a frame whose length is invalid),
/// stops the scan so that the general path reports it exactly as before.
pub fn scan_plain(buf: &[u8], tally: &mut PlainTally) -> (usize, PlainStop) {
    // `rest` is what follows the messages consumed: two length checks a message,
    // one for the header and one for the body (and the length word's validity).
    let mut rest = buf;
    loop {
        let consumed = buf.len() - rest.len();
        let Some((&[tag, l0, l1, l2, l3], after_header)) = rest.split_first_chunk::<5>() else {
            return (consumed, PlainStop::NeedMore);
        };
        let len = u32::from_be_bytes([l0, l1, l2, l3]) as usize;
        // An invalid length (under 4) wraps to a body longer than any buffer: the
        // body's check catches it, and only then is it told from a partial body.
        let Some((body, after)) = after_header.split_at_checked(len.wrapping_sub(4)) else {
            let stop = if len < 4 {
                PlainStop::Other
            } else {
                PlainStop::NeedMore
            };
            return (consumed, stop);
        };
        match tag {
            b'1' | b'2' | b'3' | b'n' => {}
            b'T' if body.len() >= 2 => {
                tally.tuples = true;
                tally.rows = 0;
            }
            b'D' if body.len() >= 2 => tally.rows += 1,
            // `decode` reads a tag up to its NUL, normally the last byte.
            b'C' if body.last() == Some(&0) || body.contains(&0) => {
                tally.end_result();
                tally.completed += 1;
            }
            b'I' => {
                tally.end_result();
                tally.completed += 1;
            }
            b'Z' => match body.first().and_then(|&code| transaction_status(code)) {
                Some(status) => return (buf.len() - after.len(), PlainStop::Ready(status)),
                None => return (consumed, PlainStop::Other),
            },
            _ => return (consumed, PlainStop::Other),
        }
        rest = after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_row_fields_and_nulls() {
        let mut body = Vec::new();
        body.extend_from_slice(&3i16.to_be_bytes());
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(b"ab");
        body.extend_from_slice(&(-1i32).to_be_bytes());
        body.extend_from_slice(&0i32.to_be_bytes());
        match decode(b'D', &body) {
            Ok(BackendMessage::DataRow(row)) => {
                let v: Vec<_> = row.fields().collect();
                assert_eq!(v, vec![Some(&b"ab"[..]), None, Some(&b""[..])]);
                assert_eq!(row.get(0), Some(&b"ab"[..]));
                assert_eq!(row.len(), 3);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn ready_and_complete() {
        assert!(matches!(
            decode(b'Z', b"T"),
            Ok(BackendMessage::ReadyForQuery(
                TransactionStatus::InTransaction
            ))
        ));
        assert!(matches!(
            decode(b'C', b"SELECT 1\0"),
            Ok(BackendMessage::CommandComplete("SELECT 1"))
        ));
        assert!(decode(b'Z', b"").is_err());
        assert!(decode(b'C', b"no terminator").is_err());
        // Non-ASCII text is still validated: UTF-8 kept, anything else reported as empty.
        assert!(matches!(
            decode(b'C', "SÉLECT 2\0".as_bytes()),
            Ok(BackendMessage::CommandComplete("SÉLECT 2"))
        ));
        assert!(matches!(
            decode(b'C', b"SEL\xc9CT 2\0"),
            Ok(BackendMessage::CommandComplete(""))
        ));
    }

    #[test]
    fn frames() {
        assert_eq!(frame_len(b"Z\0\0\0").ok().flatten(), None);
        assert_eq!(frame_len(b"Z\0\0\0\x05I").ok().flatten(), Some((b'Z', 6)));
        assert_eq!(frame_len(b"Z\0\0\0\x05").ok().flatten(), None);
        assert!(frame_len(b"Z\0\0\0\x02").is_err());
    }
}

#[cfg(test)]
mod plain_scan_tests {
    use super::*;
    use proptest::prelude::*;

    /// The general path's reading of the same bytes, for a result without `\gset`:
    /// `frame_len` and `decode` message by message, notices, parameter reports and
    /// notifications left to the connection (as `Connection::frame` absorbs them), and
    /// the engine's effects of each message the fast path claims to handle.
    fn general(buf: &[u8], tally: &mut PlainTally) -> (usize, PlainStop) {
        let mut at = 0;
        loop {
            let (tag, total) = match frame_len(&buf[at..]) {
                Ok(Some(frame)) => frame,
                Ok(None) => return (at, PlainStop::NeedMore),
                Err(_) => return (at, PlainStop::Other),
            };
            if matches!(tag, b'N' | b'S' | b'A') {
                return (at, PlainStop::Other);
            }
            match decode(tag, &buf[at + 5..at + total]) {
                Ok(
                    BackendMessage::ParseComplete
                    | BackendMessage::BindComplete
                    | BackendMessage::CloseComplete
                    | BackendMessage::NoData,
                ) => {}
                Ok(BackendMessage::RowDescription(_)) => {
                    tally.tuples = true;
                    tally.rows = 0;
                }
                Ok(BackendMessage::DataRow(_)) => tally.rows += 1,
                Ok(BackendMessage::CommandComplete(_) | BackendMessage::EmptyQueryResponse) => {
                    tally.rows = 0;
                    tally.tuples = false;
                    tally.completed += 1;
                }
                Ok(BackendMessage::ReadyForQuery(status)) => {
                    return (at + total, PlainStop::Ready(status));
                }
                Ok(_) | Err(_) => return (at, PlainStop::Other),
            }
            at += total;
        }
    }

    /// One frame: `tag`, the length word (`len`, or the right one), `body`.
    fn frame(tag: u8, body: &[u8], len: Option<u32>) -> Vec<u8> {
        let mut out = vec![tag];
        let len = len.unwrap_or(body.len() as u32 + 4);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(body);
        out
    }

    /// What a prepared select-only transaction receives.
    fn select_only() -> Vec<u8> {
        let mut rd = 1i16.to_be_bytes().to_vec();
        rd.extend_from_slice(b"abalance\0");
        rd.extend_from_slice(&[0; 18]);
        let mut row = 1i16.to_be_bytes().to_vec();
        row.extend_from_slice(&1i32.to_be_bytes());
        row.push(b'0');
        [
            frame(b'2', b"", None),
            frame(b'T', &rd, None),
            frame(b'D', &row, None),
            frame(b'C', b"SELECT 1\0", None),
            frame(b'Z', b"I", None),
        ]
        .concat()
    }

    fn scan(buf: &[u8]) -> (usize, PlainStop, PlainTally) {
        let mut tally = PlainTally::default();
        let (used, stop) = scan_plain(buf, &mut tally);
        let mut expected = PlainTally::default();
        assert_eq!(general(buf, &mut expected), (used, stop), "{buf:?}");
        assert_eq!(tally, expected, "{buf:?}");
        (used, stop, tally)
    }

    #[test]
    fn a_whole_transaction_in_one_pass() {
        let buf = select_only();
        let (used, stop, tally) = scan(&buf);
        assert_eq!(
            (used, stop),
            (buf.len(), PlainStop::Ready(TransactionStatus::Idle))
        );
        assert_eq!(tally.completed, 1);
        assert!(!tally.tuples);
        // Stops right after the ReadyForQuery, leaving what follows.
        let twice = [buf.clone(), buf.clone()].concat();
        assert_eq!(scan(&twice).0, buf.len());
    }

    #[test]
    fn a_partial_buffer_waits_for_more() {
        let buf = select_only();
        for cut in 0..buf.len() {
            let (used, stop, _) = scan(&buf[..cut]);
            assert_eq!(stop, PlainStop::NeedMore, "cut at {cut}");
            assert!(used <= cut);
        }
        let (_, _, tally) = scan(&buf[..buf.len() - 6]);
        assert_eq!(tally.completed, 1);
        let rows_only = &buf[..buf.len() - 6 - 14];
        let (_, _, tally) = scan(rows_only);
        assert_eq!((tally.rows, tally.tuples, tally.completed), (1, true, 0));
    }

    #[test]
    fn anything_unusual_is_left_to_the_general_path() {
        let head = frame(b'2', b"", None);
        let unusual: [Vec<u8>; 11] = [
            frame(b'E', b"SERROR\0\0", None),
            frame(b'N', b"SNOTICE\0\0", None),
            frame(b'S', b"a\0b\0", None),
            frame(b'A', b"\0\0\0\x01c\0p\0", None),
            frame(b'G', b"\0\0\0", None),
            frame(b'Z', b"X", None),
            frame(b'Z', b"", None),
            frame(b'C', b"SELECT 1", None),
            frame(b'C', b"", None),
            frame(b'T', b"\0", None),
            frame(b'D', b"", Some(3)),
        ];
        for bad in unusual {
            let buf = [head.clone(), bad.clone(), select_only()].concat();
            let (used, stop, _) = scan(&buf);
            assert_eq!((used, stop), (head.len(), PlainStop::Other), "{bad:?}");
        }
    }

    /// Tags the scan handles, others the general path reads, and some it refuses.
    const TAGS: &[u8] = b"123nTDCIZZZENSAGHtsKRv\x00";

    /// A frame with a tag from [`TAGS`] (or any byte), a short body from an alphabet
    /// that makes valid and invalid bodies alike, and now and then a wrong length.
    fn any_frame() -> impl Strategy<Value = Vec<u8>> {
        let tag = prop_oneof![
            9 => proptest::sample::select(TAGS),
            1 => any::<u8>(),
        ];
        let body = proptest::collection::vec(proptest::sample::select(&b"\0\0ITEx\x01"[..]), 0..8);
        let len = prop_oneof![9 => Just(None), 1 => (0u32..12).prop_map(Some)];
        (tag, body, len).prop_map(|(t, b, l)| frame(t, &b, l))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_fast_path_reads_what_the_general_path_reads(
            frames in proptest::collection::vec(any_frame(), 0..12),
            cut in any::<proptest::sample::Index>(),
        ) {
            let buf = frames.concat();
            let cut = cut.index(buf.len() + 1);
            scan(&buf);
            scan(&buf[..cut]);
        }
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn decoding_arbitrary_bytes_never_panics(tag in any::<u8>(), body in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(msg) = decode(tag, &body) {
                match msg {
                    BackendMessage::DataRow(r) => {
                        prop_assert!(r.fields().count() <= r.len());
                    }
                    BackendMessage::RowDescription(d) => {
                        prop_assert!(d.fields().count() <= d.len());
                    }
                    BackendMessage::ErrorResponse(f) | BackendMessage::NoticeResponse(f) => {
                        let _ = f.to_db_error().libpq_message(Some("SELECT 1"));
                    }
                    _ => {}
                }
            }
            let _ = frame_len(&body);
        }

        #[test]
        fn caret_display_never_panics(query in "\\PC{0,80}", pos in 0u32..100) {
            for encoding in ["UTF8", "LATIN1", "EUC_JP", "SJIS", "GB18030", "MULE_INTERNAL"] {
                let mut out = Vec::new();
                let encoding = crate::encoding::ClientEncoding::from_name(encoding);
                crate::position::append_error_position(&mut out, query.as_bytes(), pos, encoding);
                prop_assert!(out.is_empty() || out.ends_with(b"^\n"));
            }
        }
    }
}
