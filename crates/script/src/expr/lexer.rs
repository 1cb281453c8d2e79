//! Tokenizer of pgbench's expression language, working in place on the script buffer
//! so that error columns can be computed exactly as pgbench does.

/// An expression token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// Integer constant.
    Int(i64),
    /// The literal `9223372036854775808` (valid only after unary minus).
    MaxIntPlusOne,
    /// Double constant.
    Double(f64),
    /// `:name` (the script's bytes: names may hold bytes >= 0x80).
    Var(Vec<u8>),
    /// Identifier that is not a keyword (the script's bytes).
    Ident(Vec<u8>),
    /// `AND`.
    And,
    /// `OR`.
    Or,
    /// `NOT`.
    Not,
    /// `IS`.
    Is,
    /// `ISNULL`.
    IsNull,
    /// `NOTNULL`.
    NotNull,
    /// `NULL`.
    Null,
    /// `TRUE`.
    True,
    /// `FALSE`.
    False,
    /// `CASE`.
    Case,
    /// `WHEN`.
    When,
    /// `THEN`.
    Then,
    /// `ELSE`.
    Else,
    /// `END`.
    End,
    /// Operator or punctuation (`+`, `<=`, `(`, ...).
    Op(&'static str),
    /// End of the expression (newline or end of input).
    Eol,
}

/// A lexical error (reported like a syntax error, at the token).
#[derive(Debug, Clone, PartialEq)]
pub struct LexError {
    /// Message.
    pub message: &'static str,
    /// The offending text (script bytes).
    pub more: Vec<u8>,
}

/// In-place lexer over the script bytes.
pub struct ExprLexer<'a> {
    buf: &'a [u8],
    /// Current offset (just after the last lexed token).
    pub pos: usize,
    /// Whether the last token was the terminating newline.
    pub last_was_newline: bool,
}

fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_alnum(c: u8) -> bool {
    is_alpha(c) || c.is_ascii_digit()
}

impl<'a> ExprLexer<'a> {
    /// Start lexing at `pos`.
    pub fn new(buf: &'a [u8], pos: usize) -> Self {
        ExprLexer {
            buf,
            pos,
            last_was_newline: false,
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.buf.get(i).copied().unwrap_or(0)
    }

    /// Read the next token.
    pub fn next_token(&mut self) -> Result<Tok, LexError> {
        loop {
            let Some(&c) = self.buf.get(self.pos) else {
                return Ok(Tok::Eol);
            };
            match c {
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'\\' if self.at(self.pos + 1) == b'\n' => self.pos += 2,
                b'\\' if self.at(self.pos + 1) == b'\r' && self.at(self.pos + 2) == b'\n' => {
                    self.pos += 3
                }
                b'\n' => {
                    self.pos += 1;
                    self.last_was_newline = true;
                    return Ok(Tok::Eol);
                }
                _ => break,
            }
        }
        let start = self.pos;
        let c = self.buf[start];
        let two = [c, self.at(start + 1)];
        let op2 = match &two {
            b"<>" | b"!=" => Some("<>"),
            b"<=" => Some("<="),
            b">=" => Some(">="),
            b"<<" => Some("<<"),
            b">>" => Some(">>"),
            _ => None,
        };
        if let Some(op) = op2 {
            self.pos += 2;
            return Ok(Tok::Op(op));
        }
        let op1 = match c {
            b'+' => Some("+"),
            b'-' => Some("-"),
            b'*' => Some("*"),
            b'/' => Some("/"),
            b'%' => Some("%"),
            b'(' => Some("("),
            b')' => Some(")"),
            b',' => Some(","),
            b'&' => Some("&"),
            b'|' => Some("|"),
            b'#' => Some("#"),
            b'~' => Some("~"),
            b'=' => Some("="),
            b'<' => Some("<"),
            b'>' => Some(">"),
            _ => None,
        };
        if let Some(op) = op1 {
            self.pos += 1;
            return Ok(Tok::Op(op));
        }
        if c == b':' && is_alnum(self.at(start + 1)) {
            let mut e = start + 1;
            while e < self.buf.len() && is_alnum(self.buf[e]) {
                e += 1;
            }
            self.pos = e;
            return Ok(Tok::Var(self.buf[start + 1..e].to_vec()));
        }
        if is_alpha(c) {
            let mut e = start;
            while e < self.buf.len() && is_alnum(self.buf[e]) {
                e += 1;
            }
            self.pos = e;
            let word = self.buf[start..e].to_vec();
            let kw = match word.to_ascii_lowercase().as_slice() {
                b"and" => Tok::And,
                b"or" => Tok::Or,
                b"not" => Tok::Not,
                b"is" => Tok::Is,
                b"isnull" => Tok::IsNull,
                b"notnull" => Tok::NotNull,
                b"null" => Tok::Null,
                b"true" => Tok::True,
                b"false" => Tok::False,
                b"case" => Tok::Case,
                b"when" => Tok::When,
                b"then" => Tok::Then,
                b"else" => Tok::Else,
                b"end" => Tok::End,
                _ => Tok::Ident(word),
            };
            return Ok(kw);
        }
        if c.is_ascii_digit() || (c == b'.' && self.at(start + 1).is_ascii_digit()) {
            return self.number(start);
        }
        // Any other single byte (or a UTF-8 sequence start never reaches here).
        self.pos += 1;
        Err(LexError {
            message: "unexpected character",
            more: self.buf[start..start + 1].to_vec(),
        })
    }

    fn number(&mut self, start: usize) -> Result<Tok, LexError> {
        let b = self.buf;
        let mut e = start;
        while e < b.len() && b[e].is_ascii_digit() {
            e += 1;
        }
        let int_end = e;
        let mut is_double = false;
        if self.at(e) == b'.' {
            is_double = true;
            e += 1;
            while e < b.len() && b[e].is_ascii_digit() {
                e += 1;
            }
        }
        if matches!(self.at(e), b'e' | b'E') {
            let mut f = e + 1;
            if matches!(self.at(f), b'+' | b'-') {
                f += 1;
            }
            if self.at(f).is_ascii_digit() {
                while f < b.len() && b[f].is_ascii_digit() {
                    f += 1;
                }
                e = f;
                is_double = true;
            }
        }
        let text = b[start..e].to_vec();
        self.pos = e;
        if !is_double {
            debug_assert_eq!(int_end, e);
            if text == b"9223372036854775808" {
                return Ok(Tok::MaxIntPlusOne);
            }
            return match pgrush_cconv::strtoint64(&text) {
                pgrush_cconv::WholeNumber::Ok(v) => Ok(Tok::Int(v)),
                _ => Err(LexError {
                    message: "bigint constant overflow",
                    more: text,
                }),
            };
        }
        match pgrush_cconv::strtodouble(&text) {
            pgrush_cconv::WholeNumber::Ok(d) => Ok(Tok::Double(d)),
            _ => Err(LexError {
                message: "double constant overflow",
                more: text,
            }),
        }
    }
}
