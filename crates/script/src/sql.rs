//! SQL commands: `:var` references, simple-mode substitution and `$n` text.

use bytes::BufMut;

use crate::vars::{VarRef, VarValue, Variables};

/// Maximum number of parameters of one SQL command in extended/prepared mode.
pub const MAX_PARAMS: usize = 255;

/// `\gset` or `\aset` after an SQL command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GsetKind {
    /// `\gset`: the last result must have exactly one row.
    Gset,
    /// `\aset`: every non-empty result stores its last row.
    Aset,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    /// Literal byte range of `text`.
    Lit(usize, usize),
    /// `:name` reference covering this byte range of `text`.
    Var(VarRef, usize, usize),
}

/// An SQL command of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlCommand {
    /// The command text as stored, the script's bytes (what simple mode sends after
    /// substitution).
    pub text: Vec<u8>,
    segs: Vec<Seg>,
    /// The text with every `:name` replaced by `$1`, `$2`, ... (extended/prepared).
    pub extended_text: Vec<u8>,
    params: Vec<VarRef>,
    /// `\gset`/`\aset` with its variable prefix (script bytes, empty when none given).
    pub gset: Option<(GsetKind, Vec<u8>)>,
    /// Whether the command contains `\;` (a compound statement sent as one query).
    pub compound: bool,
    /// Whether `text` holds a NUL byte (which no query on the wire can).
    text_has_nul: bool,
}

fn name_start(c: u8) -> bool {
    c >= 0x80 || c.is_ascii_alphabetic() || c == b'_'
}

fn name_cont(c: u8) -> bool {
    name_start(c) || c.is_ascii_digit()
}

impl SqlCommand {
    /// Analyze `text` for variable references.
    pub fn new(text: Vec<u8>, compound: bool) -> SqlCommand {
        let b = &text[..];
        let mut segs = Vec::new();
        let mut extended_text = Vec::with_capacity(text.len());
        let mut params = Vec::new();
        let mut lit_start = 0;
        let mut i = 0;
        while i < b.len() {
            if b[i] != b':' {
                i += 1;
                continue;
            }
            if i + 1 < b.len() && name_start(b[i + 1]) {
                let mut e = i + 2;
                while e < b.len() && name_cont(b[e]) {
                    e += 1;
                }
                if lit_start < i {
                    segs.push(Seg::Lit(lit_start, i));
                }
                extended_text.extend_from_slice(&text[lit_start..i]);
                let r = VarRef::new(&text[i + 1..e]);
                params.push(r.clone());
                extended_text.push(b'$');
                extended_text.extend_from_slice(params.len().to_string().as_bytes());
                segs.push(Seg::Var(r, i, e));
                i = e;
                lit_start = e;
            } else {
                while i < b.len() && b[i] == b':' {
                    i += 1;
                }
            }
        }
        if lit_start < b.len() {
            segs.push(Seg::Lit(lit_start, b.len()));
        }
        extended_text.extend_from_slice(&text[lit_start..]);
        SqlCommand {
            text_has_nul: text.contains(&0),
            text,
            segs,
            extended_text,
            params,
            gset: None,
            compound,
        }
    }

    /// Append the simple-mode text: defined variables substituted by their string
    /// form, undefined references left as `:name`. Returns whether what it wrote
    /// holds a NUL byte (which no query on the wire can): known from the command's
    /// text, and from a text variable's value when one is substituted, where
    /// searching the whole text after writing it would cost more.
    pub fn write_simple<B: BufMut>(&self, vars: &Variables, out: &mut B) -> bool {
        // Every byte of `text` outside the references is written; a reference's
        // name holds no NUL; numbers, booleans and NULL are written without one.
        let mut has_nul = self.text_has_nul;
        for s in &self.segs {
            match s {
                Seg::Lit(a, b) => put_piece(out, &self.text[*a..*b]),
                Seg::Var(r, a, b) => match vars.get(r.id) {
                    Some(v) => {
                        has_nul |= matches!(v, VarValue::Text(t) if t.contains(&0));
                        v.write_text(out);
                    }
                    None => put_piece(out, &self.text[*a..*b]),
                },
            }
        }
        has_nul
    }

    /// The variables bound to `$1..$n` in extended/prepared mode, in order.
    pub fn params(&self) -> &[VarRef] {
        &self.params
    }

    /// Append parameter `i`'s text to `out`; false when the variable is undefined
    /// (the parameter is then SQL NULL).
    #[inline]
    pub fn write_param<B: BufMut>(&self, vars: &Variables, i: usize, out: &mut B) -> bool {
        match self.params.get(i).and_then(|r| vars.get(r.id)) {
            Some(v) => {
                v.write_text(out);
                true
            }
            None => false,
        }
    }

    /// Whether the command exceeds [`MAX_PARAMS`] references (an error in
    /// extended/prepared mode).
    pub fn too_many_params(&self) -> bool {
        self.params.len() > MAX_PARAMS
    }
}

/// Appends `piece` of a command's text. The pieces between references are often
/// a byte or two (`;`, `, `, `)`): those go byte by byte, where `put_slice` is a
/// `memcpy` call.
#[inline(always)]
fn put_piece<B: BufMut>(out: &mut B, piece: &[u8]) {
    if piece.len() <= 2 {
        for &b in piece {
            out.put_u8(b);
        }
    } else {
        out.put_slice(piece);
    }
}

/// The `-r` report / error text of an SQL command: its first line, at most 127
/// bytes (cut as pgbench cuts it, even inside a multibyte character).
pub fn sql_first_line(text: &[u8]) -> Vec<u8> {
    let s = &text[..text.len().min(127)];
    let cut = s
        .iter()
        .position(|&c| c == b'\n' || c == b'\r')
        .unwrap_or(s.len());
    s[..cut].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;
    use proptest::prelude::*;

    /// Text made of pieces that matter here: references to the variables
    /// `t`, `n` and `u` (undefined), colons, NUL bytes and other text.
    fn sql_text() -> impl Strategy<Value = Vec<u8>> {
        const PIECES: &[&[u8]] = &[
            b":t", b":n", b":u", b"::t", b":", b"\0", b"select ", b"x\0y", b"\xe9",
        ];
        proptest::collection::vec(proptest::sample::select(PIECES), 0..8).prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn write_simple_tells_whether_it_wrote_a_nul(
            text in sql_text(),
            t in proptest::collection::vec(proptest::sample::select(&b"a\0"[..]), 0..4),
            n in any::<i64>(),
        ) {
            let mut vars = Variables::new();
            vars.put_text("test", "t", &t).unwrap();
            vars.put_value("test", "n", Value::Int(n)).unwrap();
            let sql = SqlCommand::new(text, false);
            let mut out = b"\0before".to_vec();
            let has_nul = sql.write_simple(&vars, &mut out);
            prop_assert_eq!(has_nul, out[7..].contains(&0), "{:?}", out);
        }
    }
}
