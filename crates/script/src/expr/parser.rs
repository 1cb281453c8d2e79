//! Recursive-descent parser that reproduces pgbench's bison grammar: precedence,
//! associativity, accepted forms, and the exact token at which errors are detected
//! (so the caret column matches).

use super::lexer::{ExprLexer, LexError, Tok};
use super::{Arity, Expr, FUNCTIONS, Func};
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

/// Bound on expression nesting (tree depth stays below twice this), so that
/// parsing, evaluation and drop never exhaust a thread's stack.
const MAX_DEPTH: usize = 256;

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
    depth: usize,
}

/// Parse an expression starting at `pos` in `buf`, up to and including the newline.
pub fn parse_expression(buf: &[u8], pos: usize) -> Result<Parsed, ExprParseError> {
    let mut p = Parser {
        lex: ExprLexer::new(buf, pos),
        peeked: None,
        depth: 0,
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

    fn parse_expr(&mut self, min: u8) -> Result<Expr, Fail> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            // Guard against stack exhaustion (bison reports "memory exhausted" when its
            // own stack overflows; pgbench would exhaust the C stack at evaluation).
            return Err(Fail::Semantic("memory exhausted", None));
        }
        let r = self.parse_expr_inner(min);
        self.depth -= 1;
        r
    }

    fn parse_expr_inner(&mut self, min: u8) -> Result<Expr, Fail> {
        let mut lhs = self.parse_prefix()?;
        let mut chain = 0usize;
        loop {
            chain += 1;
            if self.depth + chain > MAX_DEPTH {
                return Err(Fail::Semantic("memory exhausted", None));
            }
            let t = self.peek()?.clone();
            match t {
                Tok::IsNull | Tok::NotNull | Tok::Is => {
                    if PREC_IS < min {
                        return Ok(lhs);
                    }
                    self.next()?;
                    lhs = match t {
                        Tok::IsNull => is_expr(lhs, Value::Null, false),
                        Tok::NotNull => is_expr(lhs, Value::Null, true),
                        _ => {
                            let mut negate = false;
                            let mut t2 = self.next()?;
                            if t2 == Tok::Not {
                                negate = true;
                                t2 = self.next()?;
                            }
                            let v = match t2 {
                                Tok::Null => Value::Null,
                                Tok::True => Value::Bool(true),
                                Tok::False => Value::Bool(false),
                                _ => return Err(Fail::Syntax),
                            };
                            is_expr(lhs, v, negate)
                        }
                    };
                }
                _ => {
                    let Some((prec, func, swap)) = binop_prec(&t) else {
                        return Ok(lhs);
                    };
                    if prec < min {
                        return Ok(lhs);
                    }
                    self.next()?;
                    let rhs = self.parse_expr(prec + 1)?;
                    lhs = if swap {
                        func_expr(func, vec![rhs, lhs])
                    } else {
                        func_expr(func, vec![lhs, rhs])
                    };
                    if prec == PREC_CMP {
                        // Comparison operators are non-associative.
                        if let Some((PREC_CMP, _, _)) = binop_prec(self.peek()?) {
                            return Err(Fail::Syntax);
                        }
                    }
                }
            }
        }
    }

    fn parse_prefix(&mut self) -> Result<Expr, Fail> {
        let t = self.next()?;
        Ok(match t {
            Tok::Op("(") => {
                let e = self.parse_expr(0)?;
                match self.next()? {
                    Tok::Op(")") => e,
                    _ => return Err(Fail::Syntax),
                }
            }
            Tok::Op("+") => self.parse_expr(PREC_UNARY)?,
            Tok::Op("-") => {
                if *self.peek()? == Tok::MaxIntPlusOne {
                    self.next()?;
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
            Tok::Ident(name) => self.parse_call(name)?,
            Tok::Case => self.parse_case()?,
            _ => return Err(Fail::Syntax),
        })
    }

    fn parse_call(&mut self, name: Vec<u8>) -> Result<Expr, Fail> {
        let lower = name.to_ascii_lowercase();
        let Some(&(fname, func, arity)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.as_bytes() == lower.as_slice())
        else {
            return Err(Fail::Semantic("unexpected function name", Some(name)));
        };
        if self.next()? != Tok::Op("(") {
            return Err(Fail::Syntax);
        }
        // elist: empty | expr | elist ',' expr  (so a leading comma is accepted)
        let mut args = Vec::new();
        loop {
            match self.peek()? {
                Tok::Op(")") => {
                    self.next()?;
                    break;
                }
                Tok::Op(",") => {
                    self.next()?;
                    args.push(self.parse_expr(0)?);
                }
                _ if args.is_empty() => args.push(self.parse_expr(0)?),
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

    fn parse_case(&mut self) -> Result<Expr, Fail> {
        let mut args = Vec::new();
        if self.next()? != Tok::When {
            return Err(Fail::Syntax);
        }
        loop {
            args.push(self.parse_expr(0)?);
            if self.next()? != Tok::Then {
                return Err(Fail::Syntax);
            }
            args.push(self.parse_expr(0)?);
            match self.next()? {
                Tok::When => continue,
                Tok::Else => {
                    args.push(self.parse_expr(0)?);
                    if self.next()? != Tok::End {
                        return Err(Fail::Syntax);
                    }
                    break;
                }
                Tok::End => {
                    args.push(Expr::Const(Value::Null));
                    break;
                }
                _ => return Err(Fail::Syntax),
            }
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

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}1{}\n", "(".repeat(5000), ")".repeat(5000));
        let e = parse_expression(deep.as_bytes(), 0).unwrap_err();
        assert_eq!(e.message, "memory exhausted");
        let chain = format!("1{}\n", "+1".repeat(100_000));
        assert!(parse_expression(chain.as_bytes(), 0).is_err());
        let ok = format!("1{}\n", "+1".repeat(200));
        assert!(parse_expression(ok.as_bytes(), 0).is_ok());
        let unary = format!("{}1\n", "-".repeat(100_000));
        assert!(parse_expression(unary.as_bytes(), 0).is_err());
    }
}
