//! Errors: server-reported errors (`DbError`), query-time errors (`Error`) and
//! connection-establishment errors (`ConnectError`), rendered as libpq renders them.

use std::fmt;
use std::io;

use crate::encoding::ClientEncoding;
use crate::position::append_error_position;

/// Every field of an ErrorResponse or NoticeResponse message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbError {
    /// Severity, possibly localized (`S`).
    pub severity: String,
    /// Severity, never localized (`V`, servers 9.6+).
    pub severity_nonlocalized: Option<String>,
    /// SQLSTATE code (`C`).
    pub code: String,
    /// Primary message (`M`).
    pub message: String,
    /// Detail (`D`).
    pub detail: Option<String>,
    /// Hint (`H`).
    pub hint: Option<String>,
    /// Cursor position in the original query, 1-based characters (`P`).
    pub position: Option<u32>,
    /// Cursor position in an internally generated query (`p`).
    pub internal_position: Option<u32>,
    /// Internally generated query (`q`).
    pub internal_query: Option<String>,
    /// Context / call stack (`W`).
    pub context: Option<String>,
    /// Schema name (`s`).
    pub schema: Option<String>,
    /// Table name (`t`).
    pub table: Option<String>,
    /// Column name (`c`).
    pub column: Option<String>,
    /// Data type name (`d`).
    pub datatype: Option<String>,
    /// Constraint name (`n`).
    pub constraint: Option<String>,
    /// Source file (`F`).
    pub file: Option<String>,
    /// Source line (`L`).
    pub line: Option<String>,
    /// Source routine (`R`).
    pub routine: Option<String>,
    /// The client encoding the texts were sent in. In UTF8 they were decoded as
    /// UTF-8 (invalid sequences replaced); in any other encoding one character per
    /// byte (U+0000..U+00FF, lossless), which [`DbError::libpq_message_bytes`]
    /// undoes. The encoding also tells how the `LINE n:` display counts characters.
    pub encoding: ClientEncoding,
}

/// Each byte as the character of the same number (ISO-8859-1): lossless, and one
/// character per byte, as libpq counts characters in single-byte encodings.
fn bytewise_decode(b: &[u8]) -> String {
    b.iter().map(|&c| char::from(c)).collect()
}

/// The bytes of text built from [`bytewise_decode`]d parts and ASCII.
fn bytewise_encode(s: &str) -> Vec<u8> {
    s.chars().map(|c| u8::try_from(c).unwrap_or(b'?')).collect()
}

impl DbError {
    /// Parses the body of an ErrorResponse/NoticeResponse (a list of
    /// `code byte, C string` pairs terminated by a zero byte) as UTF-8.
    pub fn parse(body: &[u8]) -> DbError {
        DbError::parse_in(body, ClientEncoding::Utf8)
    }

    /// Parses a body sent in the client encoding `encoding`: as UTF-8 in UTF8, else
    /// byte by byte (see [`DbError::encoding`]).
    pub fn parse_in(body: &[u8], encoding: ClientEncoding) -> DbError {
        let mut e = DbError {
            encoding,
            ..DbError::default()
        };
        for (code, value) in ErrorFields::new(body).iter() {
            let v = if encoding.is_utf8() {
                crate::lossless::from_bytes(value)
            } else {
                bytewise_decode(value)
            };
            match code {
                b'S' => e.severity = v,
                b'V' => e.severity_nonlocalized = Some(v),
                b'C' => e.code = v,
                b'M' => e.message = v,
                b'D' => e.detail = Some(v),
                b'H' => e.hint = Some(v),
                b'P' => e.position = v.trim().parse().ok(),
                b'p' => e.internal_position = v.trim().parse().ok(),
                b'q' => e.internal_query = Some(v),
                b'W' => e.context = Some(v),
                b's' => e.schema = Some(v),
                b't' => e.table = Some(v),
                b'c' => e.column = Some(v),
                b'd' => e.datatype = Some(v),
                b'n' => e.constraint = Some(v),
                b'F' => e.file = Some(v),
                b'L' => e.line = Some(v),
                b'R' => e.routine = Some(v),
                _ => {}
            }
        }
        e
    }

    /// True for the severities libpq treats as errors (shows CONTEXT by default).
    fn is_error(&self) -> bool {
        let sev = self
            .severity_nonlocalized
            .as_deref()
            .unwrap_or(&self.severity);
        matches!(sev, "ERROR" | "FATAL" | "PANIC")
    }

    /// Renders the message with libpq's default verbosity (`PQERRORS_DEFAULT`,
    /// context shown for errors only), without the final newline. `query` is the
    /// statement text that produced the error, used for the `LINE n:` cursor display.
    /// Texts read byte by byte come back as one character per byte.
    pub fn libpq_message(&self, query: Option<&str>) -> String {
        let query = query.map(crate::lossless::to_bytes);
        let bytes = self.libpq_message_bytes(query.as_deref());
        if self.encoding.is_utf8() {
            crate::lossless::from_bytes(&bytes)
        } else {
            bytewise_decode(&bytes)
        }
    }

    /// [`DbError::libpq_message`] as the bytes libpq prints: the server's own bytes
    /// when the error was read in a client encoding other than UTF8, the query's
    /// bytes on the `LINE n:` line.
    pub fn libpq_message_bytes(&self, query: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        self.render(&mut out, query);
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        out
    }

    /// The bytes of one of the texts as the server sent them.
    fn push_text(&self, out: &mut Vec<u8>, text: &str) {
        if self.encoding.is_utf8() {
            out.extend_from_slice(&crate::lossless::to_bytes(text));
        } else {
            out.extend(bytewise_encode(text));
        }
    }

    /// Appends `label` and `text` and a newline.
    fn push_line(&self, out: &mut Vec<u8>, label: &str, text: &str) {
        out.extend_from_slice(label.as_bytes());
        self.push_text(out, text);
        out.push(b'\n');
    }

    /// Appends libpq's default-verbosity rendering, with the final newline.
    fn render(&self, out: &mut Vec<u8>, query: Option<&[u8]>) {
        if !self.severity.is_empty() {
            self.push_text(out, &self.severity);
            out.extend_from_slice(b":  ");
        }
        if self.message.is_empty() {
            out.extend_from_slice(b"missing error text");
        } else {
            self.push_text(out, &self.message);
        }
        let internal_query = self.internal_query.as_ref().map(|q| {
            let mut bytes = Vec::new();
            self.push_text(&mut bytes, q);
            bytes
        });
        let mut cursor: Option<(&[u8], u32)> = None;
        if let Some(pos) = self.position {
            match query {
                Some(q) => cursor = Some((q, pos)),
                None => out.extend_from_slice(format!(" at character {pos}").as_bytes()),
            }
        } else if let Some(pos) = self.internal_position {
            match &internal_query {
                Some(q) => cursor = Some((q, pos)),
                None => out.extend_from_slice(format!(" at character {pos}").as_bytes()),
            }
        }
        out.push(b'\n');
        if let Some((q, pos)) = cursor {
            append_error_position(out, q, pos, self.encoding);
        }
        if let Some(d) = &self.detail {
            self.push_line(out, "DETAIL:  ", d);
        }
        if let Some(h) = &self.hint {
            self.push_line(out, "HINT:  ", h);
        }
        if let Some(q) = &self.internal_query {
            self.push_line(out, "QUERY:  ", q);
        }
        if self.is_error()
            && let Some(c) = &self.context
        {
            self.push_line(out, "CONTEXT:  ", c);
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.libpq_message(None))
    }
}

impl std::error::Error for DbError {}

/// Borrowed view of an ErrorResponse/NoticeResponse body; lets the hot path read
/// the SQLSTATE without allocating.
#[derive(Debug, Clone, Copy)]
pub struct ErrorFields<'a> {
    body: &'a [u8],
}

impl<'a> ErrorFields<'a> {
    /// Wraps a message body.
    pub fn new(body: &'a [u8]) -> Self {
        ErrorFields { body }
    }

    /// Iterates over `(field code, value)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &'a [u8])> + 'a {
        let mut rest = self.body;
        std::iter::from_fn(move || {
            let (&code, tail) = rest.split_first()?;
            if code == 0 {
                return None;
            }
            let end = tail.iter().position(|&b| b == 0)?;
            let value = &tail[..end];
            rest = &tail[end + 1..];
            Some((code, value))
        })
    }

    /// The value of one field.
    pub fn get(&self, code: u8) -> Option<&'a [u8]> {
        self.iter().find(|(c, _)| *c == code).map(|(_, v)| v)
    }

    /// The SQLSTATE code (empty when absent).
    pub fn code(&self) -> &'a [u8] {
        self.get(b'C').unwrap_or(&[])
    }

    /// Whether the server ends the session after this message: its severity
    /// (`V`, else the localized `S`) is `FATAL` or `PANIC`.
    pub fn ends_session(&self) -> bool {
        let severity = self.get(b'V').or_else(|| self.get(b'S'));
        matches!(severity, Some(b"FATAL" | b"PANIC"))
    }

    /// Parses every field into an owned `DbError`.
    pub fn to_db_error(&self) -> DbError {
        DbError::parse(self.body)
    }

    /// Parses every field in the client encoding (see [`DbError::parse_in`]).
    pub fn to_db_error_in(&self, encoding: ClientEncoding) -> DbError {
        DbError::parse_in(self.body, encoding)
    }
}

/// An error while running a query on an established connection.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server reported an error.
    #[error("{0}")]
    Db(Box<DbError>),
    /// Writing to the socket failed.
    #[error("could not send data to server: {}", strerror(.0))]
    Send(io::Error),
    /// Reading from the socket failed.
    #[error("could not receive data from server: {}", strerror(.0))]
    Recv(io::Error),
    /// The server closed the connection.
    #[error(
        "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n\tbefore or while processing the request."
    )]
    Closed,
    /// The server reported an error (typically FATAL) and then closed the connection.
    #[error(
        "{}\nserver closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n\tbefore or while processing the request.",
        .0.libpq_message(None)
    )]
    Lost(Box<DbError>),
    /// The server sent something that does not follow the protocol.
    #[error("{0}")]
    Protocol(String),
    /// A TLS-level failure on an established connection.
    #[error("SSL error: {0}")]
    Tls(String),
    /// The API was used in a way the connection state does not allow.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// libpq's default-verbosity `PQerrorMessage` text without the final newline;
    /// `query` enables the `LINE n:` cursor display for errors with a position.
    pub fn libpq_message(&self, query: Option<&str>) -> String {
        match self {
            Error::Db(db) => db.libpq_message(query),
            Error::Lost(db) => format!("{}\n{}", db.libpq_message(query), Error::Closed),
            other => other.to_string(),
        }
    }

    /// [`Error::libpq_message`] as the bytes libpq prints: a server error read in a
    /// client encoding other than UTF8 keeps the server's bytes (see
    /// [`DbError::libpq_message_bytes`]), the query's bytes echoed on `LINE n:`.
    pub fn libpq_message_bytes(&self, query: Option<&[u8]>) -> Vec<u8> {
        match self {
            Error::Db(db) => db.libpq_message_bytes(query),
            Error::Lost(db) => {
                let mut m = db.libpq_message_bytes(query);
                m.push(b'\n');
                m.extend_from_slice(Error::Closed.to_string().as_bytes());
                m
            }
            other => other.to_string().into_bytes(),
        }
    }

    /// The server error, if this is one.
    pub fn as_db(&self) -> Option<&DbError> {
        match self {
            Error::Db(db) | Error::Lost(db) => Some(db),
            _ => None,
        }
    }

    /// The SQLSTATE of a server error.
    pub fn code(&self) -> Option<&str> {
        self.as_db().map(|d| d.code.as_str())
    }

    pub(crate) fn protocol(msg: impl Into<String>) -> Error {
        Error::Protocol(msg.into())
    }

    /// A read failure after the server already reported `pending`: libpq shows both.
    pub(crate) fn after(self, pending: &Option<DbError>) -> Error {
        match (self, pending) {
            (Error::Closed | Error::Recv(_), Some(db)) => Error::Lost(Box::new(db.clone())),
            (e, _) => e,
        }
    }
}

impl From<DbError> for Error {
    fn from(e: DbError) -> Self {
        Error::Db(Box::new(e))
    }
}

/// Failure to establish a connection. `Display` is libpq's `PQerrorMessage` text
/// (every attempted host, in order) without its final newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectError {
    message: String,
    sqlstate: Option<String>,
    needs_password: bool,
    server_reached: bool,
}

impl ConnectError {
    pub(crate) fn new(mut message: String, sqlstate: Option<String>) -> Self {
        while message.ends_with('\n') {
            message.pop();
        }
        ConnectError {
            message,
            sqlstate,
            needs_password: false,
            server_reached: true,
        }
    }

    pub(crate) fn with_needs_password(mut self, needed: bool) -> Self {
        self.needs_password = needed;
        self
    }

    pub(crate) fn with_server_reached(mut self, reached: bool) -> Self {
        self.server_reached = reached;
        self
    }

    /// Whether some attempt reached a server (the socket connected). False when every
    /// address refused, had no socket, was unreachable or timed out, or no host name
    /// resolved: no PostgreSQL server answered at all.
    pub fn server_reached(&self) -> bool {
        self.server_reached
    }

    /// libpq's `PQconnectionNeedsPassword`: the server asked for a password and none
    /// was available (pgbench then prompts and retries).
    pub fn needs_password(&self) -> bool {
        self.needs_password
    }

    /// The full message (same as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// SQLSTATE of the last server error seen, if the failure came from the server.
    pub fn sqlstate(&self) -> Option<&str> {
        self.sqlstate.as_deref()
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConnectError {}

/// `strerror()` text of an I/O error (std's rendering without ` (os error N)`).
pub fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    match (e.raw_os_error(), s.rfind(" (os error ")) {
        (Some(_), Some(i)) => s[..i].to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(fields: &[(u8, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (c, v) in fields {
            b.push(*c);
            b.extend_from_slice(v.as_bytes());
            b.push(0);
        }
        b.push(0);
        b
    }

    #[test]
    fn parses_and_renders_default_verbosity() {
        let b = body(&[
            (b'S', "ERROR"),
            (b'V', "ERROR"),
            (b'C', "22012"),
            (b'M', "division by zero"),
            (b'D', "some detail"),
            (b'H', "a hint"),
            (b'W', "PL/pgSQL function f()"),
        ]);
        let e = DbError::parse(&b);
        assert_eq!(e.code, "22012");
        assert_eq!(ErrorFields::new(&b).code(), b"22012");
        assert_eq!(
            e.libpq_message(None),
            "ERROR:  division by zero\nDETAIL:  some detail\nHINT:  a hint\nCONTEXT:  PL/pgSQL function f()"
        );
    }

    #[test]
    fn single_byte_client_encoding_keeps_bytes_and_counts_one_char_per_byte() {
        let mut b = Vec::new();
        for (c, v) in [
            (b'S', &b"ERROR"[..]),
            (b'M', b"column \"caf\xe9\" does not exist"),
            (b'P', b"13"),
        ] {
            b.push(c);
            b.extend_from_slice(v);
            b.push(0);
        }
        b.push(0);
        let query: &[u8] = b"select '\xe9', caf\xe9";
        let e = ErrorFields::new(&b).to_db_error_in(ClientEncoding::SingleByte);
        assert!(!e.encoding.is_utf8());
        assert_eq!(
            e.libpq_message_bytes(Some(query)),
            b"ERROR:  column \"caf\xe9\" does not exist\nLINE 1: select '\xe9', caf\xe9\n                    ^"
                .to_vec()
        );
        // Read as UTF-8, bytes that are not UTF-8 still come back as the server
        // sent them (as libpq prints them); the query is echoed as it was sent.
        let utf8 = ErrorFields::new(&b).to_db_error_in(ClientEncoding::Utf8);
        assert!(utf8.encoding.is_utf8());
        let text = utf8.libpq_message_bytes(Some(query));
        assert!(text.starts_with(b"ERROR:  column \"caf\xe9\""));
        assert!(text.windows(query.len()).any(|w| w == query));
    }

    #[test]
    fn fatal_and_panic_end_the_session() {
        let ends = |fields: &[(u8, &str)]| ErrorFields::new(&body(fields)).ends_session();
        assert!(ends(&[(b'S', "FATAL"), (b'V', "FATAL"), (b'C', "57P01")]));
        assert!(ends(&[(b'S', "PANIC")]));
        // The non-localized severity decides (the localized one may be translated).
        assert!(ends(&[(b'S', "SCHWERWIEGEND"), (b'V', "FATAL")]));
        assert!(!ends(&[(b'S', "ERROR"), (b'V', "ERROR"), (b'C', "57P01")]));
        assert!(!ends(&[(b'C', "57P01")]));
    }

    #[test]
    fn notice_hides_context_and_position_without_query() {
        let b = body(&[
            (b'S', "NOTICE"),
            (b'V', "NOTICE"),
            (b'M', "hello"),
            (b'P', "8"),
            (b'W', "ctx"),
        ]);
        let e = DbError::parse(&b);
        assert_eq!(e.libpq_message(None), "NOTICE:  hello at character 8");
    }

    #[test]
    fn position_with_query_shows_caret() {
        let b = body(&[
            (b'S', "ERROR"),
            (b'M', "syntax error at or near \"selec\""),
            (b'P', "1"),
        ]);
        let e = DbError::parse(&b);
        assert_eq!(
            e.libpq_message(Some("selec 1")),
            "ERROR:  syntax error at or near \"selec\"\nLINE 1: selec 1\n        ^"
        );
    }

    #[test]
    fn strerror_strips_os_error_suffix() {
        let e = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(strerror(&e), "Connection refused");
    }
}
