//! `Password: ` prompting as PostgreSQL's `simple_prompt` does it: on the
//! controlling terminal with echo off, or, without a terminal, the prompt on
//! stderr and the answer from stdin; a newline ends the prompt line afterwards.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;

/// Asks for a password; `None` when nothing could be read.
pub fn password(prompt: &str) -> Option<String> {
    match OpenOptions::new().read(true).write(true).open("/dev/tty") {
        Ok(tty) => from_tty(tty, prompt),
        Err(_) => {
            let mut err = std::io::stderr();
            let _ = err.write_all(prompt.as_bytes());
            let _ = err.flush();
            let mut line = String::new();
            let read = std::io::stdin().lock().read_line(&mut line);
            // The typed newline was not echoed: end the prompt line.
            let _ = err.write_all(b"\n");
            let _ = err.flush();
            read.ok()?;
            Some(trim_newline(line))
        }
    }
}

fn trim_newline(mut s: String) -> String {
    while s.ends_with('\n') || s.ends_with('\r') {
        s.pop();
    }
    s
}

fn from_tty(tty: std::fs::File, prompt: &str) -> Option<String> {
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data; tcgetattr fills it for a valid fd.
    let mut saved: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and pointer.
    let have_termios = unsafe { libc::tcgetattr(fd, &mut saved) } == 0;
    if have_termios {
        let mut quiet = saved;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: valid fd and termios value.
        unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &quiet) };
    }
    let mut w = &tty;
    let _ = w.write_all(prompt.as_bytes());
    let _ = w.flush();
    let mut line = String::new();
    let read = BufReader::new(&tty).read_line(&mut line);
    if have_termios {
        // SAFETY: restoring the settings read above.
        unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &saved) };
    }
    // The typed newline was not echoed: end the prompt line.
    let _ = w.write_all(b"\n");
    let _ = w.flush();
    read.ok()?;
    Some(trim_newline(line))
}
