//! The expression tree ([`Expr`]), the built-in functions ([`Func`]) and the table of
//! function names the parser looks names up in.

use crate::value::Value;
use crate::vars::VarRef;

/// A built-in function or operator (operators are functions internally, as in pgbench).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%` and `mod()`
    Mod,
    /// `abs()`
    Abs,
    /// `least()`
    Least,
    /// `greatest()`
    Greatest,
    /// `debug()`
    Debug,
    /// `pi()`
    Pi,
    /// `sqrt()`
    Sqrt,
    /// `ln()`
    Ln,
    /// `exp()`
    Exp,
    /// `int()`
    Int,
    /// `double()`
    Double,
    /// `random()`
    Random,
    /// `random_gaussian()`
    RandomGaussian,
    /// `random_exponential()`
    RandomExponential,
    /// `random_zipfian()`
    RandomZipfian,
    /// `pow()`, `power()`
    Pow,
    /// `AND` (lazy)
    And,
    /// `OR` (lazy)
    Or,
    /// `NOT`
    Not,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `#`
    BitXor,
    /// `<<`
    Lshift,
    /// `>>`
    Rshift,
    /// `=`
    Eq,
    /// `<>`, `!=`
    Ne,
    /// `<=` (and `>=` with swapped arguments)
    Le,
    /// `<` (and `>` with swapped arguments)
    Lt,
    /// `IS`
    Is,
    /// `CASE` (args: when, then, ..., else; lazy)
    Case,
    /// `hash()`, `hash_murmur2()`
    HashMurmur2,
    /// `hash_fnv1a()`
    HashFnv1a,
    /// `permute()`
    Permute,
}

/// Argument count rule of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arity {
    Exact(usize),
    AtLeastOne,
    /// 1 or 2 (hash functions; `:default_seed` appended when 1).
    Hash,
    /// 2 or 3 (permute; `:default_seed` appended when 2).
    Permute,
}

/// Callable function names (lower case) and their arity.
pub(super) const FUNCTIONS: &[(&str, Func, Arity)] = &[
    ("mod", Func::Mod, Arity::Exact(2)),
    ("abs", Func::Abs, Arity::Exact(1)),
    ("least", Func::Least, Arity::AtLeastOne),
    ("greatest", Func::Greatest, Arity::AtLeastOne),
    ("debug", Func::Debug, Arity::Exact(1)),
    ("pi", Func::Pi, Arity::Exact(0)),
    ("sqrt", Func::Sqrt, Arity::Exact(1)),
    ("ln", Func::Ln, Arity::Exact(1)),
    ("exp", Func::Exp, Arity::Exact(1)),
    ("int", Func::Int, Arity::Exact(1)),
    ("double", Func::Double, Arity::Exact(1)),
    ("random", Func::Random, Arity::Exact(2)),
    ("random_gaussian", Func::RandomGaussian, Arity::Exact(3)),
    (
        "random_exponential",
        Func::RandomExponential,
        Arity::Exact(3),
    ),
    ("random_zipfian", Func::RandomZipfian, Arity::Exact(3)),
    ("pow", Func::Pow, Arity::Exact(2)),
    ("power", Func::Pow, Arity::Exact(2)),
    ("hash", Func::HashMurmur2, Arity::Hash),
    ("hash_murmur2", Func::HashMurmur2, Arity::Hash),
    ("hash_fnv1a", Func::HashFnv1a, Arity::Hash),
    ("permute", Func::Permute, Arity::Permute),
];

/// An expression tree.
///
/// Trees can be deeper than any thread stack allows to recurse naively (pgbench
/// accepts `1+1+...+1` of any length and nesting up to its parser's stack limit):
/// `Drop`, `Clone`, `Debug` and `PartialEq` are written to cope with any depth, and
/// [`Expr::eval`] recurses once per level, so its thread needs a stack of
/// [`eval_stack_bytes`]`(`[`Expr::depth`]`)` (the engine sizes its worker threads so).
pub enum Expr {
    /// A constant.
    Const(Value),
    /// A variable reference.
    Var(VarRef),
    /// A function or operator application.
    Func {
        /// Which function.
        func: Func,
        /// Arguments, evaluated in order.
        args: Vec<Expr>,
    },
}
