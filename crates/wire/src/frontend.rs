//! Frontend messages whose text is bytes: Query and Parse carry SQL as the caller
//! gives it (a script's bytes in any client encoding), where `postgres-protocol`'s
//! builders take `&str`. Both append to the output buffer without intermediate copies.

use bytes::{BufMut, BytesMut};

use crate::error::Error;

/// Appends `s` and its terminating NUL; a NUL inside cannot be sent.
fn put_cstr(buf: &mut BytesMut, s: &[u8]) -> Result<(), Error> {
    if s.contains(&0) {
        return Err(Error::Usage("string contains embedded null".to_string()));
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
    let Ok(len) = i32::try_from(buf.len() - start - 1) else {
        buf.truncate(start);
        return Err(Error::Usage("value too large to transmit".to_string()));
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
