//! Splitting script text into SQL commands the way psql's lexer does for pgbench:
//! quotes, dollar quotes, comments, parentheses, `\;` and `\:`, and the
//! `CREATE FUNCTION ... BEGIN ATOMIC ... END` heuristic.

/// Why [`SqlScanner::scan`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A terminating `;` (included in the text).
    Semicolon,
    /// A backslash starting a meta command; `pos` is just after it.
    Backslash,
    /// End of input.
    Eof,
}

/// One chunk of SQL text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The collected text (the script's bytes).
    pub text: Vec<u8>,
    /// Buffer offset of the first collected byte (if any).
    pub first: Option<usize>,
    /// Whether a `\;` was seen.
    pub compound: bool,
    /// Why scanning stopped.
    pub stop: Stop,
}

/// Lexer state kept across chunks (as psql's scan state is).
pub struct SqlScanner<'a> {
    buf: &'a [u8],
    /// Current offset.
    pub pos: usize,
    paren_depth: usize,
    begin_depth: usize,
    identifier_count: usize,
    identifiers: [u8; 4],
}

fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn ident_cont(c: u8) -> bool {
    ident_start(c) || c.is_ascii_digit() || c == b'$'
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0c | 0x0b)
}

impl<'a> SqlScanner<'a> {
    /// Scanner over the whole script.
    pub fn new(buf: &'a [u8]) -> Self {
        SqlScanner {
            buf,
            pos: 0,
            paren_depth: 0,
            begin_depth: 0,
            identifier_count: 0,
            identifiers: [0; 4],
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.buf.get(i).copied().unwrap_or(0)
    }

    /// Collect SQL text until `;`, a backslash command or the end.
    pub fn scan(&mut self) -> Chunk {
        let mut out: Vec<u8> = Vec::new();
        let mut first = None;
        let mut compound = false;
        let b = self.buf;
        macro_rules! emit {
            ($from:expr, $to:expr) => {{
                if first.is_none() {
                    first = Some($from);
                }
                out.extend_from_slice(&b[$from..$to]);
            }};
        }
        let stop = loop {
            let p = self.pos;
            if p >= b.len() {
                break Stop::Eof;
            }
            let c = b[p];
            // whitespace and "--" comments are dropped while nothing was collected
            if let Some(e) = self.blank_end(p, c) {
                if !out.is_empty() {
                    emit!(p, e);
                }
                self.pos = e;
                continue;
            }
            match c {
                b';' => {
                    emit!(p, p + 1);
                    self.pos = p + 1;
                    if self.paren_depth == 0 && self.begin_depth == 0 {
                        self.identifier_count = 0;
                        break Stop::Semicolon;
                    }
                }
                b'\\' => {
                    let n = self.at(p + 1);
                    if n == b';' || n == b':' {
                        emit!(p + 1, p + 2);
                        if n == b';' {
                            self.identifier_count = 0;
                            compound = true;
                        }
                        self.pos = p + 2;
                        continue;
                    }
                    self.pos = p + 1;
                    break Stop::Backslash;
                }
                _ => {
                    let e = self.token_end(p, c);
                    emit!(p, e);
                    self.pos = e;
                }
            }
        };
        Chunk {
            text: out,
            first,
            compound,
            stop,
        }
    }

    /// If a run of whitespace or a `--` comment (up to its newline) starts at
    /// `p` (whose byte is `c`), where it ends.
    fn blank_end(&self, p: usize, c: u8) -> Option<usize> {
        let b = self.buf;
        let mut e = p;
        if is_space(c) {
            while e < b.len() && is_space(b[e]) {
                e += 1;
            }
        } else if c == b'-' && self.at(p + 1) == b'-' {
            while e < b.len() && b[e] != b'\n' {
                e += 1;
            }
        } else {
            return None;
        }
        Some(e)
    }

    /// The end of the token starting at `p` (whose byte is `c`, neither blank
    /// nor `;` nor a backslash): a comment, a quoted string or identifier, a
    /// dollar-quoted string or parameter, a parenthesis (tracked), a word
    /// (watched for `BEGIN ATOMIC`), a number or any other single byte.
    fn token_end(&mut self, p: usize, c: u8) -> usize {
        let b = self.buf;
        match c {
            b'/' if self.at(p + 1) == b'*' => self.skip_comment(p),
            b'\'' => self.skip_quoted(p + 1, b'\'', false),
            b'"' => self.skip_quoted(p + 1, b'"', false),
            b'e' | b'E' if self.at(p + 1) == b'\'' => self.skip_quoted(p + 2, b'\'', true),
            b'b' | b'B' | b'x' | b'X' | b'n' | b'N' if self.at(p + 1) == b'\'' => {
                self.skip_quoted(p + 2, b'\'', false)
            }
            b'u' | b'U' if self.at(p + 1) == b'&' && matches!(self.at(p + 2), b'\'' | b'"') => {
                self.skip_quoted(p + 3, self.at(p + 2), false)
            }
            b'$' => self.skip_dollar(p),
            b'(' => {
                self.paren_depth += 1;
                p + 1
            }
            b')' => {
                self.paren_depth = self.paren_depth.saturating_sub(1);
                p + 1
            }
            c if ident_start(c) => {
                let mut e = p;
                while e < b.len() && ident_cont(b[e]) {
                    e += 1;
                }
                self.identifier(&b[p..e]);
                e
            }
            c if c.is_ascii_digit() => {
                let mut e = p;
                while e < b.len() && (b[e].is_ascii_digit() || b[e] == b'.') {
                    e += 1;
                }
                e
            }
            _ => p + 1,
        }
    }

    fn skip_comment(&self, p: usize) -> usize {
        let b = self.buf;
        let mut depth = 0usize;
        let mut i = p;
        while i < b.len() {
            if b[i] == b'/' && self.at(i + 1) == b'*' {
                depth += 1;
                i += 2;
            } else if b[i] == b'*' && self.at(i + 1) == b'/' {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            } else {
                i += 1;
            }
        }
        b.len()
    }

    fn skip_quoted(&self, mut i: usize, q: u8, backslash_escapes: bool) -> usize {
        let b = self.buf;
        while i < b.len() {
            let c = b[i];
            if backslash_escapes && c == b'\\' {
                i += 2;
                continue;
            }
            if c == q {
                if self.at(i + 1) == q {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            i += 1;
        }
        b.len()
    }

    fn skip_dollar(&self, p: usize) -> usize {
        let b = self.buf;
        let mut e = p + 1;
        if e < b.len() && ident_start(b[e]) {
            while e < b.len() && (ident_start(b[e]) || b[e].is_ascii_digit()) {
                e += 1;
            }
        }
        if self.at(e) != b'$' || e >= b.len() {
            // `$1` parameters or a lone `$`
            let mut e = p + 1;
            while e < b.len() && b[e].is_ascii_digit() {
                e += 1;
            }
            return e;
        }
        let tag = &b[p..=e];
        let body = e + 1;
        match b[body.min(b.len())..]
            .windows(tag.len())
            .position(|w| w == tag)
        {
            Some(i) => body + i + tag.len(),
            None => b.len(),
        }
    }

    fn identifier(&mut self, word: &[u8]) {
        if self.identifier_count == 0 {
            self.identifiers = [0; 4];
        }
        let lower = word.to_ascii_lowercase();
        let lw = lower.as_slice();
        if matches!(
            lw,
            b"create" | b"function" | b"procedure" | b"or" | b"replace"
        ) && self.identifier_count < self.identifiers.len()
        {
            self.identifiers[self.identifier_count] = lw[0];
        }
        self.identifier_count += 1;
        let ids = self.identifiers;
        if ids[0] == b'c'
            && (ids[1] == b'f'
                || ids[1] == b'p'
                || (ids[1] == b'o' && ids[2] == b'r' && (ids[3] == b'f' || ids[3] == b'p')))
            && self.paren_depth == 0
        {
            match lw {
                b"begin" => self.begin_depth += 1,
                b"case" if self.begin_depth >= 1 => self.begin_depth += 1,
                b"end" if self.begin_depth > 0 => self.begin_depth -= 1,
                _ => {}
            }
        }
    }
}
