//! pgbench's expression language: AST, parser and evaluator.

mod deep;
mod eval;
mod fast;
mod lexer;
mod parser;
mod tree;

pub use deep::eval_stack_bytes;
pub use eval::EvalContext;
pub use fast::{Arith, FastExpr, IntExpr};
pub use parser::parse_expression;
pub use tree::{Expr, Func};
