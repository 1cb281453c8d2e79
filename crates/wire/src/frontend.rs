//! Frontend messages whose text is bytes: Query and Parse carry SQL as the caller
//! gives it (a script's bytes in any client encoding), where `postgres-protocol`'s
//! builders take `&str`. Both append to the output buffer without intermediate copies.
//!
//! The messages of each execution have a direct encoder too:
//! [`Connection::queue_bind_execute`] writes Bind (text parameters written straight
//! into the output buffer), Describe, Execute and Sync in one pass.

use bytes::{BufMut, BytesMut};

use crate::conn::Connection;
use crate::error::Error;

/// Describe of the unnamed portal, Execute of it with no row limit, and Sync: the
/// messages that follow a Bind.
const DESCRIBE_EXECUTE_SYNC: &[u8] = b"D\0\0\0\x06P\0E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04";

/// [`DESCRIBE_EXECUTE_SYNC`] without the Sync.
const DESCRIBE_EXECUTE: &[u8] = DESCRIBE_EXECUTE_SYNC
    .split_at(DESCRIBE_EXECUTE_SYNC.len() - 5)
    .0;

/// The error for a length or count the protocol cannot carry.
fn too_large() -> Error {
    Error::Usage("value too large to transmit".to_string())
}

/// The error for a NUL byte inside a NUL-terminated string.
fn embedded_null() -> Error {
    Error::Usage("string contains embedded null".to_string())
}

/// Whether `s` holds a NUL byte (which a C string on the wire cannot). `memchr`'s
/// vectorized search: a statement's text is checked on every send.
#[inline]
fn has_nul(s: &[u8]) -> bool {
    memchr::memchr(0, s).is_some()
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
    let Ok(len) = i32::try_from(buf.len() - start - 1) else {
        buf.truncate(start);
        return Err(too_large());
    };
    buf[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Query (`Q`): one NUL-terminated query string.
pub(crate) fn query(sql: &[u8], buf: &mut BytesMut) -> Result<(), Error> {
    message(b'Q', buf, |b| put_cstr(b, sql))
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

/// Bind (`B`) of statement `stmt` to `portal` ("" = unnamed for both) with
/// `n_params` text parameters (`param(i, buf)` appends parameter `i`'s text and
/// returns true, or appends nothing and returns false for NULL, called in order),
/// no parameter format codes and text results: the bytes of `postgres_protocol`'s
/// `bind`. On an error the buffer is left as it was.
pub(crate) fn bind(
    buf: &mut BytesMut,
    portal: &[u8],
    stmt: &[u8],
    n_params: usize,
    mut param: impl FnMut(usize, &mut BytesMut) -> bool,
) -> Result<(), Error> {
    if has_nul(stmt) || has_nul(portal) {
        return Err(embedded_null());
    }
    let Ok(count) = u16::try_from(n_params) else {
        return Err(too_large());
    };
    // Tag, length, portal, name, format count, parameter count, parameter lengths
    // and short values, result formats, and room for the Describe, Execute and
    // Sync that usually follow.
    buf.reserve(portal.len() + stmt.len() + 16 + 12 * n_params + DESCRIBE_EXECUTE_SYNC.len());
    let start = buf.len();
    if portal.is_empty() {
        buf.put_slice(&[b'B', 0, 0, 0, 0, 0]);
    } else {
        buf.put_slice(&[b'B', 0, 0, 0, 0]);
        buf.put_slice(portal);
        buf.put_u8(0);
    }
    buf.put_slice(stmt);
    let [hi, lo] = count.to_be_bytes();
    buf.put_slice(&[0, 0, 0, hi, lo]);
    for i in 0..n_params {
        let at = buf.len();
        buf.put_i32(-1);
        if param(i, buf) {
            let Ok(len) = i32::try_from(buf.len() - at - 4) else {
                buf.truncate(start);
                return Err(too_large());
            };
            buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
    }
    buf.put_slice(&[0, 0]);
    patch_length(buf, start)
}

/// [`bind`] of statement `stmt` to the unnamed portal, then Describe and Execute of
/// the portal and, with `sync`, Sync: the bytes of `postgres_protocol`'s `bind`,
/// `describe`, `execute` and `sync`. On an error the buffer is left as it was.
pub(crate) fn bind_execute(
    buf: &mut BytesMut,
    stmt: &[u8],
    n_params: usize,
    param: impl FnMut(usize, &mut BytesMut) -> bool,
    sync: bool,
) -> Result<(), Error> {
    bind(buf, b"", stmt, n_params, param)?;
    buf.put_slice(if sync {
        DESCRIBE_EXECUTE_SYNC
    } else {
        DESCRIBE_EXECUTE
    });
    Ok(())
}

impl Connection {
    /// Queues Bind of statement `stmt` ("" = unnamed) to the unnamed portal with
    /// `n_params` text parameters and text results, Describe of the portal, Execute
    /// (all rows) and, with `sync`, Sync: the messages of [`Connection::queue_bind`],
    /// [`Connection::queue_describe_portal`], [`Connection::queue_execute`] and
    /// [`Connection::queue_sync`], byte for byte, in one pass. `param(i, buf)`
    /// appends parameter `i`'s text to `buf` and returns true, or appends nothing
    /// and returns false for NULL. On an error nothing is queued.
    #[inline]
    pub fn queue_bind_execute(
        &mut self,
        stmt: &str,
        n_params: usize,
        param: impl FnMut(usize, &mut BytesMut) -> bool,
        sync: bool,
    ) -> Result<(), Error> {
        bind_execute(self.out_buf(), stmt.as_bytes(), n_params, param, sync)
    }
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
        bind_execute(
            buf,
            stmt.as_bytes(),
            params.len(),
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
            stmt in "[A-Za-z0-9_]{0,12}",
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
            portal in "[A-Za-z0-9_]{0,8}",
            stmt in "[A-Za-z0-9_]{0,12}",
            params in proptest::collection::vec(
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)), 0..20),
        ) {
            let mut ours = BytesMut::new();
            bind(&mut ours, portal.as_bytes(), stmt.as_bytes(), params.len(), |i, b| {
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

    #[test]
    fn bind_refuses_a_nul_in_the_portal_name() {
        let mut buf = BytesMut::from(&b"kept"[..]);
        let e = bind(&mut buf, b"p\0", b"P_1", 0, |_, _| false).unwrap_err();
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
    fn bind_execute_refuses_more_parameters_than_the_protocol_counts() {
        let mut buf = BytesMut::from(&b"kept"[..]);
        let e = bind_execute(&mut buf, b"", 70_000, |_, _| false, false).unwrap_err();
        assert_eq!(e.to_string(), "value too large to transmit");
        assert_eq!(&buf[..], b"kept");
    }

    #[test]
    fn bind_execute_constants_are_describe_execute_and_sync() {
        let mut buf = BytesMut::new();
        pp::describe(b'P', "", &mut buf).unwrap();
        pp::execute("", 0, &mut buf).unwrap();
        assert_eq!(&buf[..], DESCRIBE_EXECUTE);
        pp::sync(&mut buf);
        assert_eq!(&buf[..], DESCRIBE_EXECUTE_SYNC);
    }
}
