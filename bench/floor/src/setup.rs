//! Opening a connection with blocking I/O before the run: startup, trust
//! authentication, the scale query and the Parse messages of prepared mode.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::error::FloorError;
use crate::options::Connection;

/// A connected socket, either kind.
#[derive(Debug)]
pub enum Socket {
    /// Over a Unix-domain socket.
    Unix(UnixStream),
    /// Over TCP (Nagle off, as libpq does).
    Tcp(TcpStream),
}

impl Socket {
    fn stream(&mut self) -> &mut dyn ReadWrite {
        match self {
            Socket::Unix(s) => s,
            Socket::Tcp(s) => s,
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// The resolved connection settings (options, then `PG*` variables, then defaults).
#[derive(Debug, Clone)]
pub struct Target {
    host: String,
    port: u16,
    user: String,
    dbname: String,
}

impl Target {
    /// Resolves `conn` against the environment.
    pub fn resolve(conn: &Connection) -> Result<Target, FloorError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let host = conn.host.clone().or_else(|| env("PGHOST"));
        let port = match (conn.port, env("PGPORT")) {
            (Some(p), _) => p,
            (None, Some(p)) => p
                .parse()
                .map_err(|_| FloorError::Usage(format!("invalid PGPORT \"{p}\"")))?,
            (None, None) => 5432,
        };
        let user = conn
            .user
            .clone()
            .or_else(|| env("PGUSER"))
            .or_else(|| env("USER"))
            .ok_or_else(|| FloorError::Usage("no user name: give -U".into()))?;
        let dbname = conn
            .dbname
            .clone()
            .or_else(|| env("PGDATABASE"))
            .unwrap_or_else(|| user.clone());
        Ok(Target {
            host: host.unwrap_or_else(|| "/tmp".into()),
            port,
            user,
            dbname,
        })
    }

    /// Connects, authenticates and waits for the first ReadyForQuery.
    pub fn connect(&self) -> Result<Socket, FloorError> {
        let mut socket = if self.host.starts_with('/') {
            let path = format!("{}/.s.PGSQL.{}", self.host, self.port);
            Socket::Unix(
                UnixStream::connect(&path)
                    .map_err(|e| FloorError::io(format!("connecting to {path}"), e))?,
            )
        } else {
            let addr = format!("{}:{}", self.host, self.port);
            let s = TcpStream::connect(&addr)
                .map_err(|e| FloorError::io(format!("connecting to {addr}"), e))?;
            s.set_nodelay(true)
                .map_err(|e| FloorError::io("setting TCP_NODELAY", e))?;
            Socket::Tcp(s)
        };
        let mut buf = BytesMut::new();
        let params = [
            ("user", self.user.as_str()),
            ("database", self.dbname.as_str()),
            ("application_name", "pgrush-floor"),
        ];
        frontend::startup_message(params, &mut buf)
            .map_err(|e| FloorError::Protocol(format!("encoding the startup message: {e}")))?;
        send(&mut socket, &buf)?;
        until_ready(&mut socket, |tag, body| match (tag, body.get(..4)) {
            (b'R', Some([0, 0, 0, 0])) => Ok(()),
            (b'R', _) => Err(FloorError::Protocol(
                "the server asks for a password: the floor client supports trust only".into(),
            )),
            _ => Ok(()),
        })?;
        Ok(socket)
    }
}

/// Sends all of `bytes` (blocking).
pub fn send(socket: &mut Socket, bytes: &[u8]) -> Result<(), FloorError> {
    socket
        .stream()
        .write_all(bytes)
        .map_err(|e| FloorError::io("sending", e))
}

/// Reads messages until ReadyForQuery, handing each other one to `each`; an
/// ErrorResponse is returned as an error (after its ReadyForQuery, when one follows).
/// Reads are buffered (one `read` takes whatever has arrived): the server sends nothing
/// after ReadyForQuery unasked, so nothing is left behind for the event loop.
pub fn until_ready<F>(socket: &mut Socket, each: F) -> Result<(), FloorError>
where
    F: FnMut(u8, &[u8]) -> Result<(), FloorError>,
{
    until_message(socket, b'Z', each)
}

/// Reads messages until one tagged `stop` (ReadyForQuery, or CopyInResponse after a
/// COPY FROM STDIN), as [`until_ready`] does; a ReadyForQuery before `stop` ends it with
/// the server's error, or a protocol error when there was none.
pub fn until_message<F>(socket: &mut Socket, stop: u8, mut each: F) -> Result<(), FloorError>
where
    F: FnMut(u8, &[u8]) -> Result<(), FloorError>,
{
    let mut error = None;
    let mut buf = vec![0u8; 8192];
    let (mut start, mut end) = (0, 0);
    loop {
        while end - start >= 5 {
            let head = &buf[start..start + 5];
            let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
            if !(4..=1 << 30).contains(&len) {
                return Err(FloorError::Protocol(format!("message length {len}")));
            }
            if end - start < 1 + len {
                break;
            }
            let (tag, body) = (buf[start], &buf[start + 5..start + 1 + len]);
            start += 1 + len;
            match tag {
                t if (t == stop || t == b'Z') && start == end => {
                    return match error {
                        Some(e) => Err(e),
                        None if t == stop => Ok(()),
                        None => Err(FloorError::Protocol(format!(
                            "ReadyForQuery instead of message {}",
                            char::from(stop)
                        ))),
                    };
                }
                t if t == stop || t == b'Z' => {
                    return Err(FloorError::Protocol(format!(
                        "data after message {}",
                        char::from(t)
                    )));
                }
                b'E' => {
                    let e = FloorError::Server(crate::response::error_text(body));
                    error = error.or(Some(e));
                }
                _ => each(tag, body)?,
            }
        }
        // Keep the partial message at the front, with room for all of it.
        buf.copy_within(start..end, 0);
        (start, end) = (0, end - start);
        let wanted = if end >= 5 {
            1 + u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize
        } else {
            5
        };
        if buf.len() < wanted.max(end + 1) {
            buf.resize(wanted.max(end + 1).next_power_of_two(), 0);
        }
        // A server that refuses the connection sends its ErrorResponse and closes.
        match socket.stream().read(&mut buf[end..]) {
            Ok(0) => {
                let closed = FloorError::closed();
                return Err(error.unwrap_or(closed));
            }
            Ok(n) => end += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(error.unwrap_or(FloorError::io("receiving", e))),
        }
    }
}

/// Runs `sql` (one statement returning one integer) and returns that integer.
pub fn query_integer(socket: &mut Socket, sql: &str) -> Result<u64, FloorError> {
    let mut buf = BytesMut::new();
    frontend::query(sql, &mut buf)
        .map_err(|e| FloorError::Protocol(format!("encoding Query: {e}")))?;
    send(socket, &buf)?;
    let mut value = None;
    until_ready(socket, |tag, body| {
        if tag == b'D' && value.is_none() {
            value = Some(first_column(body)?);
        }
        Ok(())
    })?;
    let text = value.ok_or_else(|| FloorError::Protocol(format!("no row from: {sql}")))?;
    text.trim()
        .parse()
        .map_err(|_| FloorError::Protocol(format!("not an integer from {sql}: {text}")))
}

/// The first column of a DataRow body, as text.
fn first_column(body: &[u8]) -> Result<String, FloorError> {
    let bad = || FloorError::Protocol("malformed DataRow".into());
    let len = body.get(2..6).ok_or_else(bad)?;
    let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
    let len = usize::try_from(len).map_err(|_| bad())?;
    let value = body.get(6..6 + len).ok_or_else(bad)?;
    Ok(String::from_utf8_lossy(value).into_owned())
}
