//! Word lexer for meta-command arguments (whitespace separated, `\`-newline
//! continues, newline ends).

/// A word and its buffer offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text (the script's bytes).
    pub text: Vec<u8>,
    /// Offset of its first byte in the script buffer.
    pub offset: usize,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | 0x0c | 0x0b)
}

/// Read the next word at `*pos`; `None` at the end of the line (the newline is
/// consumed) or of the input.
pub fn next_word(buf: &[u8], pos: &mut usize) -> Option<Word> {
    loop {
        let p = *pos;
        let c = *buf.get(p)?;
        if is_space(c) {
            *pos += 1;
            continue;
        }
        if c == b'\\' {
            if buf.get(p + 1) == Some(&b'\n') {
                *pos += 2;
                continue;
            }
            if buf.get(p + 1) == Some(&b'\r') && buf.get(p + 2) == Some(&b'\n') {
                *pos += 3;
                continue;
            }
        }
        if c == b'\n' {
            *pos += 1;
            return None;
        }
        let mut e = p;
        while e < buf.len() && !is_space(buf[e]) && buf[e] != b'\n' {
            e += 1;
        }
        // "word\" followed by a newline: the backslash is a continuation marker.
        let mut end = e;
        let mut next = e;
        if e > p + 1 && buf[e - 1] == b'\\' {
            if buf.get(e) == Some(&b'\n') {
                end = e - 1;
                next = e + 1;
            } else if buf.get(e) == Some(&b'\r') && buf.get(e + 1) == Some(&b'\n') {
                end = e - 1;
                next = e + 2;
            }
        }
        *pos = next;
        return Some(Word {
            text: buf[p..end].to_vec(),
            offset: p,
        });
    }
}
