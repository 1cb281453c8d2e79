//! The little HTTP/1.x the endpoints speak: one request per connection, `GET` (or
//! `HEAD`) answered with what the caller's router gives for the path (a 404 where it
//! has nothing; 405 for other methods); the connection is closed after the answer.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long a scraper may take to send its request, and to take the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest request head read (a scrape's is a few hundred bytes).
const MAX_HEAD: usize = 16 * 1024;

/// A request's head: method, path, query and `Accept` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Request {
    pub(super) method: String,
    /// The path, without the query.
    pub(super) path: String,
    /// What follows the `?`, if anything.
    pub(super) query: Option<String>,
    pub(super) accept: Option<String>,
}

impl Request {
    /// The value of the query parameter `name` (not decoded: the endpoints' own
    /// parameters are numbers).
    pub(super) fn param(&self, name: &str) -> Option<&str> {
        self.query
            .as_deref()?
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}

/// The router's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Reply {
    /// 200 with this content type and body.
    Ok(&'static str, String),
    /// 404.
    NotFound,
}

impl Reply {
    /// 200 with `content_type` and `body`.
    pub(super) fn ok(content_type: &'static str, body: String) -> Reply {
        Reply::Ok(content_type, body)
    }

    /// 404.
    pub(super) fn not_found() -> Reply {
        Reply::NotFound
    }
}

/// Reads one request and answers it with what `route` gives for it.
pub(super) fn answer(mut stream: TcpStream, route: impl FnOnce(&Request) -> Reply) {
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
    let Some(head) = read_head(&mut stream) else {
        return;
    };
    let response = match parse_head(&head) {
        None => response("400 Bad Request", "text/plain", "bad request\n", true),
        Some(r) if r.method != "GET" && r.method != "HEAD" => {
            response("405 Method Not Allowed", "text/plain", "GET only\n", true)
        }
        Some(r) => match route(&r) {
            Reply::Ok(content_type, body) => {
                response("200 OK", content_type, &body, r.method == "GET")
            }
            Reply::NotFound => response("404 Not Found", "text/plain", "not found\n", true),
        },
    };
    let _ = stream.write_all(&response);
    let _ = stream.flush();
}

/// The bytes up to the blank line that ends the head (`None`: closed, too slow or too long).
fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The request line and the `Accept` header (names are case-insensitive).
pub(super) fn parse_head(head: &str) -> Option<Request> {
    let mut lines = head.lines();
    let mut words = lines.next()?.split_whitespace();
    let (method, target) = (words.next()?, words.next()?);
    words.next().filter(|v| v.starts_with("HTTP/"))?;
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q.to_string())),
        None => (target, None),
    };
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.trim().to_string());
    Some(Request {
        method: method.to_string(),
        path: path.to_string(),
        query,
        accept,
    })
}

/// A whole response (`body` only when `with_body`; its length either way).
fn response(status: &str, content_type: &str, body: &str, with_body: bool) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if with_body {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrape_head_gives_its_path_and_accept_header() {
        let head = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nACCEPT: application/openmetrics-text;version=1.0.0\r\n\r\n";
        let r = parse_head(head).expect("parsed");
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/metrics");
        assert_eq!(r.param("x"), Some("1"));
        assert_eq!(r.param("y"), None);
        assert_eq!(
            r.accept.as_deref(),
            Some("application/openmetrics-text;version=1.0.0")
        );
        assert_eq!(parse_head("GET\r\n\r\n"), None);
        assert_eq!(parse_head("GET / FTP\r\n\r\n"), None);
    }

    #[test]
    fn a_head_request_gets_the_length_but_no_body() {
        let r = response("200 OK", "text/plain", "abc", false);
        let text = String::from_utf8(r).expect("utf-8");
        assert!(text.contains("Content-Length: 3\r\n"));
        assert!(text.ends_with("\r\n\r\n"));
    }
}
