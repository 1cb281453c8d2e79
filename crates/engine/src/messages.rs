//! pgbench's logging prefixes on stderr: `<prog>: error: `, `<prog>: detail: `,
//! `<prog>: hint: `, and `<prog>: ` for info and debug messages. A single trailing
//! newline of the message is dropped, as PostgreSQL's logging layer does.
//!
//! Each message is written with one `write` call so that lines of concurrent
//! threads do not interleave.

use std::io::Write;

fn emit(prog: &str, level: &str, msg: &str) {
    let msg = msg.strip_suffix('\n').unwrap_or(msg);
    let mut line = String::with_capacity(prog.len() + level.len() + msg.len() + 4);
    line.push_str(prog);
    line.push_str(": ");
    line.push_str(level);
    line.push_str(msg);
    line.push('\n');
    let stderr = std::io::stderr();
    let mut lock = stderr.lock();
    let _ = lock.write_all(line.as_bytes());
}

/// `<prog>: error: <msg>`.
pub fn error(prog: &str, msg: &str) {
    emit(prog, "error: ", msg);
}

/// `<prog>: detail: <msg>`.
pub fn detail(prog: &str, msg: &str) {
    emit(prog, "detail: ", msg);
}

/// `<prog>: hint: <msg>`.
pub fn hint(prog: &str, msg: &str) {
    emit(prog, "hint: ", msg);
}

/// `<prog>: warning: <msg>`.
pub fn warning(prog: &str, msg: &str) {
    emit(prog, "warning: ", msg);
}

/// `<prog>: <msg>` (info level).
pub fn info(prog: &str, msg: &str) {
    emit(prog, "", msg);
}

/// `<prog>: <msg>` (debug level, shown with `--debug`).
pub fn debug(prog: &str, msg: &str) {
    emit(prog, "", msg);
}
