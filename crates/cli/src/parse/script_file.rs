//! `-f FILE`: pgbench reads and parses script files while it reads the options,
//! so open, read and syntax errors come in command-line order. The same checks
//! run here, and the text read is kept for the run (the file is read once).

use super::diag::{Diag, cat};
use pgrush_script::RawMessage;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;

/// Opens, reads and parses the script at `path`, printing pgbench's message on
/// failure, and returns the text read. Pipes and devices are only opened (`None`:
/// reading them here would take data away from the later load); standard input
/// (`-`) is not looked at.
pub fn check(path: &[u8], weight: u32, diag: &mut Diag<'_>) -> Result<Option<Vec<u8>>, i32> {
    let mut file = match std::fs::File::open(OsStr::from_bytes(path)) {
        Ok(f) => f,
        Err(e) => return Err(io_error(diag, b"could not open file", path, &e)),
    };
    let kind = file.metadata().map(|m| m.file_type());
    let readable_twice = kind.as_ref().is_ok_and(|t| t.is_file() || t.is_dir());
    if !readable_twice {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.read_to_end(&mut bytes) {
        return Err(io_error(diag, b"could not read file", path, &e));
    }
    match pgrush_script::load_script(path, &bytes, weight) {
        Ok(_) => Ok(Some(bytes)),
        Err(e) => {
            diag.error(&e.to_bytes());
            Err(1)
        }
    }
}

/// `<what> "<path>": <strerror>`; returns the exit status.
fn io_error(diag: &mut Diag<'_>, what: &[u8], path: &[u8], e: &std::io::Error) -> i32 {
    let message = pgrush_wire::strerror(e);
    diag.error(&cat(&[what, b" \"", path, b"\": ", message.as_bytes()]));
    1
}
