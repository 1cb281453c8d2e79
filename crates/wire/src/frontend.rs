//! Frontend messages whose text is bytes: Query and Parse carry SQL as the caller
//! gives it (a script's bytes in any client encoding), where `postgres-protocol`'s
//! builders take `&str`. Both append to the output buffer without intermediate copies.
//!
//! The messages of each execution have a direct encoder too:
//! [`Connection::queue_bind_execute`](crate::Connection::queue_bind_execute) writes
//! Bind (text parameters written straight into the output buffer), Describe, Execute
//! and Sync in one pass. The Bind starts with a [`BindHead`], the statement's part
//! checked and encoded once, so what is done per execution is one copy of it and the
//! parameters.

use bytes::{BufMut, BytesMut};

use crate::error::Error;
use crate::spare::{Appender, ParamBuf, append};

/// Describe of the unnamed portal and Execute of it with no row limit: the messages
/// that follow a Bind.
const DESCRIBE_EXECUTE: [u8; 17] = *b"D\0\0\0\x06P\0E\0\0\0\x09\0\0\0\0\0";

/// Sync.
const SYNC: [u8; 5] = *b"S\0\0\0\x04";

/// Why the encoder refuses a message: text the protocol cannot carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EncodeRefusal {
    /// A NUL byte inside a NUL-terminated string (a name, a query).
    #[error("string contains embedded null")]
    EmbeddedNull,
    /// A length or count larger than the protocol's field for it.
    #[error("value too large to transmit")]
    TooLarge,
}

impl From<EncodeRefusal> for Error {
    fn from(refusal: EncodeRefusal) -> Error {
        Error::Usage(refusal.to_string())
    }
}

/// The error for a length or count the protocol cannot carry.
#[cold]
fn too_large() -> Error {
    EncodeRefusal::TooLarge.into()
}

/// The error for a NUL byte inside a NUL-terminated string.
#[cold]
fn embedded_null() -> Error {
    EncodeRefusal::EmbeddedNull.into()
}

/// Whether `s` holds a NUL byte (which a C string on the wire cannot). A name
/// (checked on every Bind) is short: a few overlapping loads of fixed size cover
/// it, where `memchr`'s dispatch costs more; a statement's text takes `memchr`'s
/// vectorized search.
#[inline]
fn has_nul(s: &[u8]) -> bool {
    let n = s.len();
    match n {
        0 => false,
        1..=3 => s[0] == 0 || s[n / 2] == 0 || s[n - 1] == 0,
        4..=8 => {
            let word = |at: usize| u32::from_ne_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]]);
            has_zero_byte(u64::from(word(0)) | 0xffff_ffff_0000_0000)
                || has_zero_byte(u64::from(word(n - 4)) | 0xffff_ffff_0000_0000)
        }
        9..=16 => {
            let word = |at: usize| {
                let mut bytes = [0; 8];
                bytes.copy_from_slice(&s[at..at + 8]);
                u64::from_ne_bytes(bytes)
            };
            has_zero_byte(word(0)) || has_zero_byte(word(n - 8))
        }
        _ => memchr::memchr(0, s).is_some(),
    }
}

/// Whether one of the 8 bytes of `word` is zero (the classic bit trick: exact for
/// whether there is one, if not for where).
#[inline]
fn has_zero_byte(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    word.wrapping_sub(ONES) & !word & HIGHS != 0
}

/// Appends `s` and its terminating NUL; a NUL inside cannot be sent.
fn put_cstr(buf: &mut BytesMut, s: &[u8]) -> Result<(), Error> {
    if has_nul(s) {
        return Err(embedded_null());
    }
    buf.put_slice(s);
    buf.put_u8(0);
    Ok(())
}

/// Writes message `tag` with the body `body` writes, filling in the length; on an
/// error the buffer is left as it was.
fn message(
    tag: u8,
    buf: &mut BytesMut,
    body: impl FnOnce(&mut BytesMut) -> Result<(), Error>,
) -> Result<(), Error> {
    let start = buf.len();
    buf.put_u8(tag);
    buf.put_i32(0);
    if let Err(e) = body(buf) {
        buf.truncate(start);
        return Err(e);
    }
    patch_length(buf, start)
}

/// Fills in the length of the message starting at `start` (its tag), which runs to
/// the end of the buffer; a message too long for the protocol is removed.
#[inline]
fn patch_length(buf: &mut BytesMut, start: usize) -> Result<(), Error> {
    patch_length_to(buf, start, buf.len())
}

/// Fills in the length of the message from `start` (its tag) to `end`; a message
/// too long for the protocol is removed with everything after it.
#[inline]
fn patch_length_to(buf: &mut BytesMut, start: usize, end: usize) -> Result<(), Error> {
    let Ok(len) = i32::try_from(end - start - 1) else {
        buf.truncate(start);
        return Err(too_large());
    };
    buf[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Query (`Q`): one NUL-terminated query string.
pub(crate) fn query(sql: &[u8], buf: &mut BytesMut) -> Result<(), Error> {
    written_query(sql, has_nul(sql), buf)
}

/// [`query`] of text whose caller knows whether it holds a NUL byte (`holds_nul`),
/// having written it.
pub(crate) fn written_query(sql: &[u8], holds_nul: bool, buf: &mut BytesMut) -> Result<(), Error> {
    if holds_nul {
        return Err(embedded_null());
    }
    // The length word counts itself, the text and its NUL.
    let Ok(len) = i32::try_from(sql.len() + 5) else {
        return Err(too_large());
    };
    append(buf, sql.len() + 6, |a| {
        a.put_array([b'Q']);
        a.put_array(len.to_be_bytes());
        a.put(sql);
        a.put_array([0]);
    });
    Ok(())
}

/// Parse (`P`): statement name, query, and no parameter types.
pub(crate) fn parse(name: &[u8], sql: &[u8], buf: &mut BytesMut) -> Result<(), Error> {
    message(b'P', buf, |b| {
        put_cstr(b, name)?;
        put_cstr(b, sql)?;
        b.put_i16(0);
        Ok(())
    })
}

/// The fixed start of a Bind (`B`) with text parameters: tag, length placeholder, the
/// portal's and the statement's names, no parameter format codes, the parameter
/// count. Checked and encoded once (per prepared statement, for instance); each Bind
/// copies it and appends the parameters
/// ([`Connection::queue_bind_execute`](crate::Connection::queue_bind_execute)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindHead {
    bytes: Box<[u8]>,
    n_params: usize,
    statement: Box<str>,
}

impl BindHead {
    /// The head of a Bind of statement `stmt` ("" = unnamed) to the unnamed portal
    /// with `n_params` text parameters; refused for a NUL byte in the name or more
    /// parameters than the protocol counts.
    pub fn new(stmt: &str, n_params: usize) -> Result<BindHead, EncodeRefusal> {
        let count = head_count("", stmt, n_params)?;
        let mut bytes = BytesMut::new();
        append(&mut bytes, head_len("", stmt), |a| {
            put_head(a, "", stmt, count)
        });
        Ok(BindHead {
            bytes: bytes.to_vec().into(),
            n_params,
            statement: stmt.into(),
        })
    }

    /// The statement's name.
    pub fn statement(&self) -> &str {
        &self.statement
    }

    /// How many parameters each Bind carries.
    pub fn n_params(&self) -> usize {
        self.n_params
    }
}

/// The parameter count of a Bind head, after checking that the names can go on the
/// wire (no NUL byte) and the count fits the protocol's 16 bits.
fn head_count(portal: &str, stmt: &str, n_params: usize) -> Result<u16, EncodeRefusal> {
    if has_nul(stmt.as_bytes()) || has_nul(portal.as_bytes()) {
        return Err(EncodeRefusal::EmbeddedNull);
    }
    u16::try_from(n_params).map_err(|_| EncodeRefusal::TooLarge)
}

/// The length of a Bind head.
fn head_len(portal: &str, stmt: &str) -> usize {
    portal.len() + stmt.len() + 11
}

/// Writes a Bind head: tag, length placeholder, the names, no parameter format
/// codes, the parameter count.
#[inline(always)]
fn put_head(a: &mut Appender<'_>, portal: &str, stmt: &str, count: u16) {
    a.put_array([b'B', 0, 0, 0, 0]);
    a.put(portal.as_bytes());
    a.put_array([0]);
    a.put(stmt.as_bytes());
    let [hi, lo] = count.to_be_bytes();
    a.put_array([0, 0, 0, hi, lo]);
}

/// Room reserved for each parameter of a Bind: its length word and a value as long
/// as an integer's text (a longer one grows the buffer as it is written).
const PARAM_ROOM: usize = 4 + 20;

/// Appends the `n_params` parameters of the Bind starting at `start` (its head
/// written): `param(i, buf)` appends parameter `i`'s text and returns true, or
/// appends nothing and returns false for NULL, called in order. On an error the
/// buffer is cut back to `start`.
#[inline(always)]
fn put_params(
    buf: &mut BytesMut,
    start: usize,
    n_params: usize,
    mut param: impl FnMut(usize, &mut ParamBuf<'_>) -> bool,
) -> Result<(), Error> {
    for i in 0..n_params {
        let at = buf.len();
        append(buf, 4, |a| a.put_array((-1i32).to_be_bytes()));
        if param(i, &mut ParamBuf::new(buf)) {
            let Ok(len) = i32::try_from(buf.len() - at - 4) else {
                buf.truncate(start);
                return Err(too_large());
            };
            buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
    }
    Ok(())
}

/// Bind (`B`) of statement `stmt` to `portal` ("" = unnamed for both) with
/// `n_params` text parameters (`param` as for [`put_params`]), no parameter format
/// codes and text results: the bytes of `postgres_protocol`'s `bind`. On an error
/// the buffer is left as it was.
pub(crate) fn bind(
    buf: &mut BytesMut,
    portal: &str,
    stmt: &str,
    n_params: usize,
    param: impl FnMut(usize, &mut ParamBuf<'_>) -> bool,
) -> Result<(), Error> {
    let count = head_count(portal, stmt, n_params)?;
    let start = buf.len();
    let room = head_len(portal, stmt) + PARAM_ROOM * n_params + 2;
    append(buf, room, |a| put_head(a, portal, stmt, count));
    put_params(buf, start, n_params, param)?;
    append(buf, 2, |a| a.put_array([0, 0]));
    patch_length(buf, start)
}

/// The Bind of `head` with its parameters (see [`put_params`]), then Describe and
/// Execute of the unnamed portal and, with `sync`, Sync: the bytes of
/// `postgres_protocol`'s `bind`, `describe`, `execute` and `sync`. On an error the
/// buffer is left as it was. In line: it is the body of
/// [`Connection::queue_bind_execute`](crate::Connection::queue_bind_execute), which
/// its callers run on every transaction.
#[inline(always)]
pub(crate) fn bind_execute(
    buf: &mut BytesMut,
    head: &BindHead,
    param: impl FnMut(usize, &mut ParamBuf<'_>) -> bool,
    sync: bool,
) -> Result<(), Error> {
    let tail = DESCRIBE_EXECUTE.len() + if sync { SYNC.len() } else { 0 };
    let start = buf.len();
    // Room for the whole message and what follows, reserved with its head.
    let room = head.bytes.len() + PARAM_ROOM * head.n_params + 2 + tail;
    append(buf, room, |a| a.put(&head.bytes));
    put_params(buf, start, head.n_params, param)?;
    // The Bind ends with its result-format count, before the constant tail.
    let bind_end = buf.len() + 2;
    append(buf, 2 + tail, |a| {
        a.put_array([0, 0]);
        a.put_array(DESCRIBE_EXECUTE);
        if sync {
            a.put_array(SYNC);
        }
    });
    patch_length_to(buf, start, bind_end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use postgres_protocol::message::frontend as pp;

    #[test]
    fn same_bytes_as_postgres_protocol_for_text() {
        let (mut ours, mut theirs) = (BytesMut::new(), BytesMut::new());
        query(b"select 1", &mut ours).unwrap();
        pp::query("select 1", &mut theirs).unwrap();
        parse(b"P_0", b"select $1", &mut ours).unwrap();
        pp::parse("P_0", "select $1", std::iter::empty::<u32>(), &mut theirs).unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn latin1_bytes_pass_through_and_nul_is_refused() {
        let mut buf = BytesMut::new();
        query(b"select '\xe9'", &mut buf).unwrap();
        assert_eq!(&buf[..], b"Q\0\0\0\x0fselect '\xe9'\0");
        let before = buf.clone();
        assert!(query(b"a\0b", &mut buf).is_err());
        assert!(parse(b"", b"a\0b", &mut buf).is_err());
        assert_eq!(buf, before);
    }
}

#[cfg(test)]
mod direct_encoder_tests {
    use super::*;
    use postgres_protocol::IsNull;
    use postgres_protocol::message::frontend as pp;
    use proptest::prelude::*;

    /// `postgres_protocol`'s Bind of `stmt` to `portal` with `params` as text.
    fn pp_bind(buf: &mut BytesMut, portal: &str, stmt: &str, params: &[Option<Vec<u8>>]) {
        pp::bind(
            portal,
            stmt,
            std::iter::empty::<i16>(),
            params.iter().map(Option::as_deref),
            |v, b| match v {
                Some(bytes) => {
                    b.extend_from_slice(bytes);
                    Ok(IsNull::No)
                }
                None => Ok(IsNull::Yes),
            },
            std::iter::empty::<i16>(),
            buf,
        )
        .unwrap_or_else(|_| panic!("bind of {stmt:?}"));
    }

    /// What the general path (`postgres_protocol`'s writers) queues for a Bind to the
    /// unnamed portal and what follows it.
    fn general(buf: &mut BytesMut, stmt: &str, params: &[Option<Vec<u8>>], sync: bool) {
        pp_bind(buf, "", stmt, params);
        pp::describe(b'P', "", buf).unwrap();
        pp::execute("", 0, buf).unwrap();
        if sync {
            pp::sync(buf);
        }
    }

    fn direct(
        buf: &mut BytesMut,
        stmt: &str,
        params: &[Option<Vec<u8>>],
        sync: bool,
    ) -> Result<(), Error> {
        let head = BindHead::new(stmt, params.len())?;
        bind_execute(
            buf,
            &head,
            |i, b| match &params[i] {
                Some(v) => {
                    b.put_slice(v);
                    true
                }
                None => false,
            },
            sync,
        )
    }

    proptest! {
        #[test]
        fn bind_execute_writes_the_general_paths_bytes(
            prefix in proptest::collection::vec(any::<u8>(), 0..8),
            stmt in "[A-Za-z0-9_]{0,40}",
            params in proptest::collection::vec(
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)), 0..20),
            sync in any::<bool>(),
        ) {
            let mut ours = BytesMut::from(&prefix[..]);
            let mut theirs = ours.clone();
            direct(&mut ours, &stmt, &params, sync).unwrap();
            general(&mut theirs, &stmt, &params, sync);
            prop_assert_eq!(ours, theirs);
        }
    }

    proptest! {
        #[test]
        fn bind_to_a_named_portal_writes_postgres_protocols_bytes(
            portal in "[A-Za-z0-9_]{0,24}",
            stmt in "[A-Za-z0-9_]{0,40}",
            params in proptest::collection::vec(
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)), 0..20),
        ) {
            let mut ours = BytesMut::new();
            bind(&mut ours, &portal, &stmt, params.len(), |i, b| {
                match &params[i] {
                    Some(v) => {
                        b.put_slice(v);
                        true
                    }
                    None => false,
                }
            })
            .unwrap();
            let mut theirs = BytesMut::new();
            pp_bind(&mut theirs, &portal, &stmt, &params);
            prop_assert_eq!(ours, theirs);
        }
    }

    proptest! {
        #[test]
        fn a_nul_anywhere_in_a_name_is_refused_and_nothing_is_queued(
            name in "[A-Za-z0-9_]{0,40}",
            at in any::<proptest::sample::Index>(),
            in_portal in any::<bool>(),
        ) {
            let mut name = name;
            name.insert(at.index(name.len() + 1), '\0');
            let mut buf = BytesMut::from(&b"kept"[..]);
            let e = if in_portal {
                bind(&mut buf, &name, "P_1", 1, |_, b| {
                    b.put_slice(b"1");
                    true
                })
                .unwrap_err()
            } else {
                BindHead::new(&name, 1).unwrap_err().into()
            };
            prop_assert_eq!(e.to_string(), "string contains embedded null");
            prop_assert_eq!(&buf[..], b"kept");
        }

        #[test]
        fn query_writes_postgres_protocols_bytes_or_refuses_a_nul(
            prefix in proptest::collection::vec(any::<u8>(), 0..8),
            sql in "(\\PC|\\x00){0,80}",
        ) {
            let mut ours = BytesMut::from(&prefix[..]);
            let mut written = ours.clone();
            let direct = query(sql.as_bytes(), &mut ours);
            let told = written_query(sql.as_bytes(), sql.contains('\0'), &mut written);
            prop_assert_eq!(&ours, &written);
            if sql.contains('\0') {
                prop_assert_eq!(direct.unwrap_err().to_string(), "string contains embedded null");
                prop_assert_eq!(told.unwrap_err().to_string(), "string contains embedded null");
                prop_assert_eq!(&ours[..], &prefix[..]);
            } else {
                direct.unwrap();
                told.unwrap();
                let mut theirs = BytesMut::from(&prefix[..]);
                pp::query(&sql, &mut theirs).unwrap();
                prop_assert_eq!(ours, theirs);
            }
        }
    }

    proptest! {
        #[test]
        fn has_nul_finds_a_nul_in_any_place(
            bytes in proptest::collection::vec(1u8.., 0..40),
            at in any::<proptest::sample::Index>(),
        ) {
            prop_assert!(!has_nul(&bytes));
            let mut with = bytes;
            with.insert(at.index(with.len() + 1), 0);
            prop_assert!(has_nul(&with));
        }
    }

    #[test]
    fn bind_refuses_a_nul_in_the_portal_name() {
        let mut buf = BytesMut::from(&b"kept"[..]);
        let e = bind(&mut buf, "p\0", "P_1", 0, |_, _| false).unwrap_err();
        assert_eq!(e.to_string(), "string contains embedded null");
        assert_eq!(&buf[..], b"kept");
    }

    #[test]
    fn bind_execute_refuses_a_nul_in_the_statement_name() {
        let mut buf = BytesMut::from(&b"kept"[..]);
        let e = direct(&mut buf, "P\0_1", &[Some(b"1".to_vec())], true).unwrap_err();
        assert_eq!(e.to_string(), "string contains embedded null");
        assert_eq!(&buf[..], b"kept");
    }

    #[test]
    fn bind_head_refuses_more_parameters_than_the_protocol_counts() {
        assert_eq!(BindHead::new("", 70_000), Err(EncodeRefusal::TooLarge));
        let e = Error::from(EncodeRefusal::TooLarge);
        assert_eq!(e.to_string(), "value too large to transmit");
        let head = BindHead::new("P_3", 65_535).unwrap();
        assert_eq!((head.statement(), head.n_params()), ("P_3", 65_535));
    }

    #[test]
    fn bind_execute_constants_are_describe_execute_and_sync() {
        let mut buf = BytesMut::new();
        pp::describe(b'P', "", &mut buf).unwrap();
        pp::execute("", 0, &mut buf).unwrap();
        assert_eq!(&buf[..], DESCRIBE_EXECUTE);
        buf.clear();
        pp::sync(&mut buf);
        assert_eq!(&buf[..], SYNC);
    }
}
