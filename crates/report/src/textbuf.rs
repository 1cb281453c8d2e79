//! [`TextBuf`]: text output built as bytes, for the lines that echo script bytes (script
//! names, command texts) next to formatted numbers.

use pgrush_stats::cfmt::{push_fixed, push_fixed_width, push_int_width};
use std::fmt;

/// Output being built: bytes, written to with `write!` for text and numbers, and
/// [`TextBuf::bytes`] for script bytes (printed raw, as pgbench prints them).
#[derive(Default)]
pub(crate) struct TextBuf {
    /// What was written.
    pub(crate) out: Vec<u8>,
    /// Scratch for the C-style number formatting (which appends to a `String`).
    num: String,
}

impl TextBuf {
    /// Appends text.
    pub(crate) fn str(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    /// Appends bytes as they are.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    /// Appends what `f` writes into the number scratch.
    fn num_with(&mut self, f: impl FnOnce(&mut String)) {
        self.num.clear();
        f(&mut self.num);
        self.out.extend_from_slice(self.num.as_bytes());
    }

    /// C `%.{prec}f`.
    pub(crate) fn fixed(&mut self, x: f64, prec: usize) {
        self.num_with(|s| push_fixed(s, x, prec));
    }

    /// C `%{width}.{prec}f`.
    pub(crate) fn fixed_width(&mut self, x: f64, width: usize, prec: usize) {
        self.num_with(|s| push_fixed_width(s, x, width, prec));
    }

    /// C `%{width}ld`.
    pub(crate) fn int_width(&mut self, v: i64, width: usize) {
        self.num_with(|s| push_int_width(s, v, width));
    }
}

impl fmt::Write for TextBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.str(s);
        Ok(())
    }
}

/// `bytes` as text, invalid UTF-8 replaced by U+FFFD (without a copy when valid).
pub(crate) fn into_lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}
