//! Recursive-descent parser that reproduces pgbench's bison grammar: precedence,
//! associativity, accepted forms, and the exact token at which errors are detected
//! (so the caret column matches).
//!
//! # Nesting depth: a model of bison's stack
//!
//! pgbench's parser is an LALR(1) automaton whose state stack starts with 200
//! entries and doubles up to `YYMAXDEPTH` (10000); pushing the 10000th entry fails
//! with `memory exhausted`, reported like a syntax error at the last token read.
//! There is no other limit: a left-associative chain such as `1+1+1+...` is reduced
//! as it goes and never deepens the stack, while `-(-(-(...` or `f(f(f(...` do.
//!
//! The stack of an LALR parse holds the start state plus one entry per grammar symbol
//! that has been shifted (or produced by a reduction) and is not yet part of a larger
//! reduction. This parser builds the same derivation in the same order, so it keeps
//! the same count in `Parser::sp`:
//! * every token the grammar shifts pushes one entry (`Parser::push`, called once
//!   the token is known to be valid there: an invalid token is a `syntax error`);
//! * finishing a construct that began at stack size `base` leaves one `expr` symbol
//!   there (`Parser::reduce`: `sp = base + 1`);
//! * the empty argument list `elist: /* empty */` pushes one entry (a goto with no
//!   symbol popped). bison reduces it by default in the state after `name(` on any
//!   token that cannot start an expression, so it is pushed before such a token is
//!   rejected as a syntax error.
//!
//! While an inner expression is parsed, each enclosing construct therefore holds:
//! `(` 1; unary `+ - ~ NOT` 1; a binary operator with its left operand `expr op` 2
//! (so `1 + 2 * (` holds `expr + expr * (`, 5); a function call `name (` 2 for its
//! first argument and `name ( elist ,` 4 for the others; `CASE WHEN` 2, `CASE WHEN
//! expr THEN` 4, `CASE list WHEN` 3, `CASE list WHEN expr THEN` 5, `CASE list ELSE` 3.
//! The deepest point of a construct is often its closing token: `((1))` peaks at
//! the first `)` with `$start ( ( expr )`, so pgbench accepts 9996 nested
//! parentheses and rejects 9997, with the caret under the first `)`. Tokens that end
//! a construct without an inner expression also count: `x IS NOT NULL` holds
//! `expr IS NOT NULL` (4) when `NULL` is shifted, `f()` holds `name ( elist )`.
//!
//! Recursion here follows the nesting (bounded by the model), and the Rust stack is
//! grown on demand (`stacker`) so that even the deepest accepted expression parses
//! on a small thread stack.

use super::deep::grow;
use super::lexer::{ExprLexer, LexError, Tok};
use super::tree::{Arity, Expr, FUNCTIONS, Func};
use crate::value::Value;
use crate::vars::VarRef;

/// A parse error located at a byte offset of the script buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprParseError {
    /// Message (`syntax error`, `unexpected function name`, ...).
    pub message: String,
    /// Parenthesized detail (script bytes).
    pub detail: Option<Vec<u8>>,
    /// Offset (in the buffer) of the last character of the last lexed token.
    pub offset: usize,
    /// Offset where lexing stopped (after the rest of the line was consumed).
    pub end: usize,
}

/// Result of parsing an expression that ends at a newline.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The expression.
    pub expr: Expr,
    /// Offset just after the terminating newline (or end of input).
    pub end: usize,
}

/// bison's `YYMAXDEPTH`: the state stack may hold at most this many entries minus one.
const YYMAXDEPTH: usize = 10_000;

const PREC_OR: u8 = 1;
const PREC_AND: u8 = 2;
const PREC_NOT: u8 = 3;
const PREC_IS: u8 = 4;
const PREC_CMP: u8 = 5;
const PREC_BIT: u8 = 6;
const PREC_ADD: u8 = 7;
const PREC_MUL: u8 = 8;
const PREC_UNARY: u8 = 9;

enum Fail {
    Lex(LexError),
    Syntax,
    Semantic(&'static str, Option<Vec<u8>>),
}

struct Parser<'a> {
    lex: ExprLexer<'a>,
    peeked: Option<Tok>,
    /// Entries on the modelled bison stack (the start state included).
    sp: usize,
}

/// Parse an expression starting at `pos` in `buf`, up to and including the newline.
pub fn parse_expression(buf: &[u8], pos: usize) -> Result<Parsed, ExprParseError> {
    let mut p = Parser {
        lex: ExprLexer::new(buf, pos),
        peeked: None,
        sp: 1,
    };
    let r = p.parse_expr(0).and_then(|e| match p.next()? {
        Tok::Eol => Ok(e),
        _ => Err(Fail::Syntax),
    });
    match r {
        Ok(expr) => Ok(Parsed {
            expr,
            end: p.lex.pos,
        }),
        Err(f) => Err(p.report(f)),
    }
}

fn func_expr(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func { func, args }
}

fn binop_prec(t: &Tok) -> Option<(u8, Func, bool)> {
    // (precedence, function, swap arguments)
    Some(match t {
        Tok::Or => (PREC_OR, Func::Or, false),
        Tok::And => (PREC_AND, Func::And, false),
        Tok::Op(op) => match *op {
            "=" => (PREC_CMP, Func::Eq, false),
            "<>" => (PREC_CMP, Func::Ne, false),
            "<" => (PREC_CMP, Func::Lt, false),
            "<=" => (PREC_CMP, Func::Le, false),
            ">" => (PREC_CMP, Func::Lt, true),
            ">=" => (PREC_CMP, Func::Le, true),
            "|" => (PREC_BIT, Func::BitOr, false),
            "#" => (PREC_BIT, Func::BitXor, false),
            "&" => (PREC_BIT, Func::BitAnd, false),
            "<<" => (PREC_BIT, Func::Lshift, false),
            ">>" => (PREC_BIT, Func::Rshift, false),
            "+" => (PREC_ADD, Func::Add, false),
            "-" => (PREC_ADD, Func::Sub, false),
            "*" => (PREC_MUL, Func::Mul, false),
            "/" => (PREC_MUL, Func::Div, false),
            "%" => (PREC_MUL, Func::Mod, false),
            _ => return None,
        },
        _ => return None,
    })
}

/// Whether `t` can begin an expression (the tokens the grammar shifts there).
fn starts_expr(t: &Tok) -> bool {
    match t {
        Tok::Op(op) => matches!(*op, "(" | "+" | "-" | "~"),
        Tok::Not
        | Tok::Null
        | Tok::True
        | Tok::False
        | Tok::Int(_)
        | Tok::Double(_)
        | Tok::Var(_)
        | Tok::Ident(_)
        | Tok::Case => true,
        _ => false,
    }
}

impl Parser<'_> {
    fn peek(&mut self) -> Result<&Tok, Fail> {
        if self.peeked.is_none() {
            let t = self.lex.next_token().map_err(Fail::Lex)?;
            self.peeked = Some(t);
        }
        Ok(self.peeked.as_ref().unwrap_or(&Tok::Eol))
    }

    fn next(&mut self) -> Result<Tok, Fail> {
        self.peek()?;
        Ok(self.peeked.take().unwrap_or(Tok::Eol))
    }

    /// Push one entry on the modelled bison stack: a token just shifted, or the
    /// goto after reducing the empty argument list.
    fn push(&mut self) -> Result<(), Fail> {
        self.sp += 1;
        if self.sp >= YYMAXDEPTH {
            return Err(Fail::Semantic("memory exhausted", None));
        }
        Ok(())
    }

    /// Consume the next token, which must be `tok`, and shift it.
    fn expect(&mut self, tok: Tok) -> Result<(), Fail> {
        if self.next()? != tok {
            return Err(Fail::Syntax);
        }
        self.push()
    }

    /// Reduce the construct that began at stack size `base` to one symbol.
    fn reduce(&mut self, base: usize) {
        self.sp = base + 1;
    }

    fn report(&mut self, f: Fail) -> ExprParseError {
        let (mut message, mut detail) = match f {
            Fail::Lex(e) => (e.message.to_string(), Some(e.more)),
            Fail::Syntax => ("syntax error".to_string(), None),
            Fail::Semantic(m, d) => (m.to_string(), d),
        };
        let mut offset = self.lex.pos.saturating_sub(1);
        // pgbench lexes the rest of the line to echo it; a lexical error found
        // there replaces the first error.
        if !self.lex.last_was_newline {
            loop {
                match self.lex.next_token() {
                    Ok(Tok::Eol) => break,
                    Ok(_) => {}
                    Err(e) => {
                        message = e.message.to_string();
                        detail = Some(e.more);
                        offset = self.lex.pos.saturating_sub(1);
                    }
                }
            }
        }
        ExprParseError {
            message,
            detail,
            offset,
            end: self.lex.pos,
        }
    }

    /// Parse an expression whose operators bind at least as tightly as `min`.
    /// Enters with the stack at some `base` and leaves it at `base + 1`.
    fn parse_expr(&mut self, min: u8) -> Result<Expr, Fail> {
        grow(|| self.parse_expr_inner(min))
    }

    fn parse_expr_inner(&mut self, min: u8) -> Result<Expr, Fail> {
        let base = self.sp;
        let mut lhs = self.parse_prefix()?;
        loop {
            let t = self.peek()?;
            if matches!(t, Tok::IsNull | Tok::NotNull | Tok::Is) {
                if PREC_IS < min {
                    return Ok(lhs);
                }
                lhs = self.parse_is(lhs)?;
                self.reduce(base);
                continue;
            }
            let Some((prec, func, swap)) = binop_prec(t) else {
                return Ok(lhs);
            };
            if prec < min {
                return Ok(lhs);
            }
            self.next()?;
            self.push()?;
            let rhs = self.parse_expr(prec + 1)?;
            lhs = if swap {
                func_expr(func, vec![rhs, lhs])
            } else {
                func_expr(func, vec![lhs, rhs])
            };
            self.reduce(base);
            if prec == PREC_CMP {
                // Comparison operators are non-associative.
                if let Some((PREC_CMP, _, _)) = binop_prec(self.peek()?) {
                    return Err(Fail::Syntax);
                }
            }
        }
    }

    /// `expr ISNULL`, `expr NOTNULL`, `expr IS [NOT] NULL|TRUE|FALSE`.
    fn parse_is(&mut self, lhs: Expr) -> Result<Expr, Fail> {
        let t = self.next()?;
        self.push()?;
        Ok(match t {
            Tok::IsNull => is_expr(lhs, Value::Null, false),
            Tok::NotNull => is_expr(lhs, Value::Null, true),
            _ => {
                let mut negate = false;
                let mut t2 = self.next()?;
                if t2 == Tok::Not {
                    self.push()?;
                    negate = true;
                    t2 = self.next()?;
                }
                let v = match t2 {
                    Tok::Null => Value::Null,
                    Tok::True => Value::Bool(true),
                    Tok::False => Value::Bool(false),
                    _ => return Err(Fail::Syntax),
                };
                self.push()?;
                is_expr(lhs, v, negate)
            }
        })
    }

    /// A primary expression or a prefix operator applied to one; leaves one
    /// symbol on the stack.
    fn parse_prefix(&mut self) -> Result<Expr, Fail> {
        let base = self.sp;
        let t = self.next()?;
        if !starts_expr(&t) {
            return Err(Fail::Syntax);
        }
        self.push()?;
        let e = match t {
            Tok::Op("(") => {
                let e = self.parse_expr(0)?;
                self.expect(Tok::Op(")"))?;
                e
            }
            Tok::Op("+") => self.parse_expr(PREC_UNARY)?,
            Tok::Op("-") => {
                if *self.peek()? == Tok::MaxIntPlusOne {
                    self.next()?;
                    self.push()?;
                    Expr::Const(Value::Int(i64::MIN))
                } else {
                    let e = self.parse_expr(PREC_UNARY)?;
                    func_expr(Func::Sub, vec![Expr::Const(Value::Int(0)), e])
                }
            }
            Tok::Op("~") => {
                let e = self.parse_expr(PREC_BIT + 1)?;
                func_expr(Func::BitXor, vec![e, Expr::Const(Value::Int(-1))])
            }
            Tok::Not => {
                let e = self.parse_expr(PREC_NOT + 1)?;
                func_expr(Func::Not, vec![e])
            }
            Tok::Null => Expr::Const(Value::Null),
            Tok::True => Expr::Const(Value::Bool(true)),
            Tok::False => Expr::Const(Value::Bool(false)),
            Tok::Int(i) => Expr::Const(Value::Int(i)),
            Tok::Double(d) => Expr::Const(Value::Double(d)),
            Tok::Var(name) => Expr::Var(VarRef::new(&name)),
            Tok::Ident(name) => self.parse_call(base, name)?,
            Tok::Case => self.parse_case(base)?,
            _ => return Err(Fail::Syntax),
        };
        self.reduce(base);
        Ok(e)
    }

    /// `name ( elist )`, the name already shifted at stack size `base + 1`.
    fn parse_call(&mut self, base: usize, name: Vec<u8>) -> Result<Expr, Fail> {
        let lower = name.to_ascii_lowercase();
        let Some(&(fname, func, arity)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.as_bytes() == lower.as_slice())
        else {
            return Err(Fail::Semantic("unexpected function name", Some(name)));
        };
        self.expect(Tok::Op("("))?;
        // elist: empty | expr | elist ',' expr  (so a leading comma is accepted)
        let mut args = Vec::new();
        if starts_expr(self.peek()?) {
            args.push(self.parse_expr(0)?);
        } else {
            // The empty list, reduced whatever the token (then checked).
            self.push()?;
        }
        loop {
            // Stack: name ( elist
            match self.next()? {
                Tok::Op(")") => {
                    self.push()?;
                    break;
                }
                Tok::Op(",") => {
                    self.push()?;
                    args.push(self.parse_expr(0)?);
                    self.reduce(base + 2);
                }
                _ => return Err(Fail::Syntax),
            }
        }
        let n = args.len();
        match arity {
            Arity::Exact(k) if k != n => {
                return Err(Fail::Semantic(
                    "unexpected number of arguments",
                    Some(fname.as_bytes().to_vec()),
                ));
            }
            Arity::AtLeastOne if n == 0 => {
                return Err(Fail::Semantic(
                    "at least one argument expected",
                    Some(fname.as_bytes().to_vec()),
                ));
            }
            Arity::Hash | Arity::Permute => {
                let (lo, hi) = if arity == Arity::Hash { (1, 2) } else { (2, 3) };
                if n < lo || n > hi {
                    return Err(Fail::Semantic(
                        "unexpected number of arguments",
                        Some(fname.as_bytes().to_vec()),
                    ));
                }
                if n == lo {
                    args.push(Expr::Var(VarRef::new("default_seed")));
                }
            }
            _ => {}
        }
        Ok(func_expr(func, args))
    }

    /// `CASE when_then_list [ELSE expr] END`, `CASE` already shifted at stack size
    /// `base + 1`.
    fn parse_case(&mut self, base: usize) -> Result<Expr, Fail> {
        let mut args = Vec::new();
        // Stack: CASE, then CASE when_then_list once the first pair is reduced.
        let mut keyword = self.next()?;
        loop {
            match keyword {
                Tok::When => {
                    self.push()?;
                    args.push(self.parse_expr(0)?);
                    self.expect(Tok::Then)?;
                    args.push(self.parse_expr(0)?);
                    self.reduce(base + 1);
                }
                Tok::Else if !args.is_empty() => {
                    self.push()?;
                    args.push(self.parse_expr(0)?);
                    self.expect(Tok::End)?;
                    break;
                }
                Tok::End if !args.is_empty() => {
                    self.push()?;
                    args.push(Expr::Const(Value::Null));
                    break;
                }
                _ => return Err(Fail::Syntax),
            }
            keyword = self.next()?;
        }
        Ok(func_expr(Func::Case, args))
    }
}

fn is_expr(e: Expr, v: Value, negate: bool) -> Expr {
    let is = func_expr(Func::Is, vec![e, Expr::Const(v)]);
    if negate {
        func_expr(Func::Not, vec![is])
    } else {
        is
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Parsed, ExprParseError> {
        parse_expression(format!("{text}\n").as_bytes(), 0)
    }

    /// Check that `shape(n)` parses and `shape(n + 1)` fails with `memory exhausted`.
    fn limit(shape: impl Fn(usize) -> String, n: usize) {
        assert!(parse(&shape(n)).is_ok(), "{}", n);
        let e = parse(&shape(n + 1)).unwrap_err();
        assert_eq!(e.message, "memory exhausted", "{}", n + 1);
    }

    #[test]
    fn nesting_limits_follow_the_bison_stack() {
        let wrap = |open: &'static str, inner: &'static str, close: &'static str| {
            move |n: usize| format!("{}{inner}{}", open.repeat(n), close.repeat(n))
        };
        // $start ( ... ( expr ) at the first `)`: n + 3 entries.
        limit(wrap("(", "1", ")"), 9996);
        // $start - ... - 1: n + 2.
        limit(wrap("- ", "1", ""), 9997);
        limit(wrap("NOT ", "true", ""), 9997);
        // Two entries per `-(` / `abs(` level, 3 more at the first `)`.
        limit(wrap("-(", "1", ")"), 4998);
        limit(wrap("abs(", "1", ")"), 4998);
        // `name ( elist )` with the empty list: 4 entries at the innermost `)`.
        limit(wrap("abs(", "pi()", ")"), 4997);
        // expr + ( per level.
        limit(wrap("1+(", "1", ")"), 3332);
        // name ( elist , ( per level.
        limit(wrap("greatest(1, 2, (", "1", "))"), 1999);
        // CASE WHEN expr THEN per level.
        limit(wrap("CASE WHEN true THEN ", "1", " END"), 2499);
    }

    #[test]
    fn memory_exhausted_is_reported_at_the_shifted_token() {
        let n = 9997;
        let text = format!("{}1{}\n", "(".repeat(n), ")".repeat(n));
        let e = parse_expression(text.as_bytes(), 0).unwrap_err();
        assert_eq!(e.message, "memory exhausted");
        assert_eq!(e.detail, None);
        // The caret is under the first `)`; the whole line was lexed.
        assert_eq!(e.offset, n + 1);
        assert_eq!(e.end, text.len());
    }

    #[test]
    fn left_associative_chains_have_no_limit() {
        let chain = format!("1{}", "+1".repeat(100_000));
        let p = parse(&chain).expect("parses");
        assert_eq!(p.expr.depth(), 100_001);
        let mixed = format!("1{}", " * 2 - 3 AND 4 = 5 OR -6 IS NULL".repeat(20_000));
        assert!(parse(&mixed).is_ok());
    }

    #[test]
    fn deepest_nesting_parses_on_a_small_stack() {
        let t = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(|| {
                let text = format!("{}1{}", "abs(-(".repeat(2499), "))".repeat(2499));
                let p = parse(&text).expect("parses");
                assert_eq!(p.expr.depth(), 2 * 2499 + 1);
            })
            .expect("spawn");
        t.join().expect("no overflow");
    }
}
