//! The little HTTP/1.x the endpoint speaks: one request per connection, `GET` (or
//! `HEAD`) `/metrics` answered with the page, anything else with a 404 (405 for other
//! methods); the connection is closed after the answer.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long a scraper may take to send its request, and to take the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest request head read (a scrape's is a few hundred bytes).
const MAX_HEAD: usize = 16 * 1024;

/// A request's head: method, path (without a query) and `Accept` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Request {
    pub(super) method: String,
    pub(super) path: String,
    pub(super) accept: Option<String>,
}

/// Reads one request and answers it; `page` gives the content type and body of
/// `/metrics` for the request's `Accept` header.
pub(super) fn answer(
    mut stream: TcpStream,
    page: impl FnOnce(Option<&str>) -> (&'static str, String),
) {
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
        Some(r) if r.path != "/metrics" => response(
            "404 Not Found",
            "text/plain",
            "not found: try /metrics\n",
            true,
        ),
        Some(r) => {
            let (content_type, body) = page(r.accept.as_deref());
            response("200 OK", content_type, &body, r.method == "GET")
        }
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
    let path = target.split('?').next().unwrap_or(target);
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.trim().to_string());
    Some(Request {
        method: method.to_string(),
        path: path.to_string(),
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
