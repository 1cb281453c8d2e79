//! pgbench's logging prefixes on stderr: `<prog>: error: `, `<prog>: detail: `,
//! `<prog>: hint: `, and `<prog>: ` for info and debug messages. A single trailing
//! newline of the message is dropped, as PostgreSQL's logging layer does.
//!
//! Each message is written with one `write` call so that lines of concurrent
//! threads do not interleave. Messages are bytes: they may carry a script's or a
//! variable's bytes that are not UTF-8, written as they are (as pgbench does).

use std::io::Write;

fn emit(prog: &str, level: &str, msg: &[u8]) {
    let msg = msg.strip_suffix(b"\n").unwrap_or(msg);
    let mut line = Vec::with_capacity(prog.len() + level.len() + msg.len() + 4);
    line.extend_from_slice(prog.as_bytes());
    line.extend_from_slice(b": ");
    line.extend_from_slice(level.as_bytes());
    line.extend_from_slice(msg);
    line.push(b'\n');
    let stderr = std::io::stderr();
    let mut lock = stderr.lock();
    // Like pgbench's logging: a message that cannot be written is lost, nothing else to do.
    let _lost = lock.write_all(&line);
}

/// `<prog>: error: <msg>`.
pub fn error(prog: &str, msg: &(impl AsRef<[u8]> + ?Sized)) {
    emit(prog, "error: ", msg.as_ref());
}

/// `<prog>: detail: <msg>`.
pub fn detail(prog: &str, msg: &(impl AsRef<[u8]> + ?Sized)) {
    emit(prog, "detail: ", msg.as_ref());
}

/// `<prog>: hint: <msg>`.
pub fn hint(prog: &str, msg: &(impl AsRef<[u8]> + ?Sized)) {
    emit(prog, "hint: ", msg.as_ref());
}

/// `<prog>: warning: <msg>`.
pub fn warning(prog: &str, msg: &(impl AsRef<[u8]> + ?Sized)) {
    emit(prog, "warning: ", msg.as_ref());
}

/// `<prog>: <msg>` (info level).
pub fn info(prog: &str, msg: &(impl AsRef<[u8]> + ?Sized)) {
    emit(prog, "", msg.as_ref());
}

/// `<prog>: <msg>` (debug level, shown with `--debug`).
pub fn debug(prog: &str, msg: &(impl AsRef<[u8]> + ?Sized)) {
    emit(prog, "", msg.as_ref());
}

/// `head` followed by `tail`'s bytes (a message whose end is script bytes).
pub fn concat(head: &str, tail: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(head.len() + tail.len());
    m.extend_from_slice(head.as_bytes());
    m.extend_from_slice(tail);
    m
}
