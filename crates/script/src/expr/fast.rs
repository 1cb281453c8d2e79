//! A fast path for the expressions of the builtin scripts (`random(1, 100000 *
//! :scale)`, `:x + 1`, ...): integer constants, variables holding integers, `+ - *`
//! of those that do not overflow, and `random()` over such bounds.
//!
//! [`Expr::compile_fast`] turns such an expression, once at load time, into a
//! [`FastExpr`]: a small tree of integer operations with nothing left to look up
//! but the variables. Everything else, and every case that would fail at run time
//! (an undefined or text variable, an overflow, an empty or too large range), is
//! left to the general evaluator, which then gives pgbench's result or error:
//! [`FastExpr::eval`] answers `None` and has changed nothing. Its results equal
//! [`Expr::eval`]'s, generator included (both draw one `random()` from it).

use super::{Expr, Func};
use crate::prng::Prng;
use crate::value::Value;
use crate::vars::{VarId, VarValue, Variables};

/// An expression of the fast path, compiled by [`Expr::compile_fast`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FastExpr {
    /// `random(low, high)`.
    Random(IntExpr, IntExpr),
    /// An integer expression.
    Int(IntExpr),
}

/// An integer expression without side effects: what the fast path computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntExpr {
    /// An integer constant.
    Const(i64),
    /// A variable, when it holds an integer value.
    Var(VarId),
    /// `+`, `-` or `*` of two integer expressions, when it does not overflow.
    Arith(Arith, Box<(IntExpr, IntExpr)>),
}

/// The operators of [`IntExpr::Arith`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
}

/// How deep [`Expr::compile_fast`] follows nested arithmetic: deeper trees go to
/// the general evaluator, which copes with any depth ([`IntExpr::eval`] recurses).
const MAX_FAST_DEPTH: u32 = 16;

impl Expr {
    /// The expression compiled for [`FastExpr::eval`], when the fast path covers
    /// its form; `None` for any other expression.
    pub fn compile_fast(&self) -> Option<FastExpr> {
        match self {
            Expr::Func {
                func: Func::Random,
                args,
            } => match &args[..] {
                [low, high] => Some(FastExpr::Random(
                    low.compile_int(MAX_FAST_DEPTH)?,
                    high.compile_int(MAX_FAST_DEPTH)?,
                )),
                _ => None,
            },
            other => other.compile_int(MAX_FAST_DEPTH).map(FastExpr::Int),
        }
    }

    /// An integer constant, a variable, or `+ - *` of those, at most `depth` deep.
    fn compile_int(&self, depth: u32) -> Option<IntExpr> {
        match self {
            Expr::Const(Value::Int(i)) => Some(IntExpr::Const(*i)),
            Expr::Var(r) => Some(IntExpr::Var(r.id)),
            Expr::Func { func, args } if depth > 0 => {
                let op = match func {
                    Func::Add => Arith::Add,
                    Func::Sub => Arith::Sub,
                    Func::Mul => Arith::Mul,
                    _ => return None,
                };
                let [a, b] = &args[..] else {
                    return None;
                };
                let operands = (a.compile_int(depth - 1)?, b.compile_int(depth - 1)?);
                Some(IntExpr::Arith(op, Box::new(operands)))
            }
            _ => None,
        }
    }
}

impl FastExpr {
    /// The expression's value, drawing from `rng` as [`Expr::eval`] would; `None`
    /// (nothing drawn, nothing changed) where the general evaluator must decide:
    /// a variable that is undefined or not an integer, an overflow, an empty or
    /// too large `random()` range.
    #[inline]
    pub fn eval(&self, vars: &Variables, rng: &mut Prng) -> Option<Value> {
        match self {
            FastExpr::Random(low, high) => {
                let lb = low.eval(vars)?;
                let ub = high.eval(vars)?;
                // The general path's errors: an empty or too large range.
                if lb > ub || ub.checked_sub(lb)?.checked_add(1).is_none() {
                    return None;
                }
                Some(Value::Int(rng.random(lb, ub)))
            }
            FastExpr::Int(e) => e.eval(vars).map(Value::Int),
        }
    }
}

impl IntExpr {
    /// The value, or `None` on an overflow or a variable that is not an integer.
    /// Always in line: the recursion goes through [`IntExpr::eval_nested`].
    #[inline(always)]
    fn eval(&self, vars: &Variables) -> Option<i64> {
        match self {
            IntExpr::Const(i) => Some(*i),
            IntExpr::Var(id) => int_var(vars, *id),
            IntExpr::Arith(op, operands) => {
                let (a, b) = &**operands;
                let (a, b) = (a.eval_leaf(vars)?, b.eval_leaf(vars)?);
                match op {
                    Arith::Add => a.checked_add(b),
                    Arith::Sub => a.checked_sub(b),
                    Arith::Mul => a.checked_mul(b),
                }
            }
        }
    }

    /// [`IntExpr::eval`] with the leaves handled in line (the builtin scripts'
    /// `100000 * :scale`); nested arithmetic goes through the recursive call.
    #[inline(always)]
    fn eval_leaf(&self, vars: &Variables) -> Option<i64> {
        match self {
            IntExpr::Const(i) => Some(*i),
            IntExpr::Var(id) => int_var(vars, *id),
            nested => nested.eval_nested(vars),
        }
    }

    /// Nested arithmetic, out of line so that the common case stays small.
    #[inline(never)]
    fn eval_nested(&self, vars: &Variables) -> Option<i64> {
        self.eval(vars)
    }
}

/// The integer held by variable `id`, if it holds one.
#[inline]
fn int_var(vars: &Variables, id: VarId) -> Option<i64> {
    match vars.get(id) {
        Some(VarValue::Value(Value::Int(i))) => Some(*i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::EvalError;
    use crate::expr::eval::with_context;
    use crate::expr::parse_expression;
    use crate::vars::VarRef;
    use proptest::prelude::*;

    fn parse(text: &str) -> Expr {
        parse_expression(format!("{text}\n").as_bytes(), 0)
            .unwrap()
            .expr
    }

    /// The general evaluator's result, and its generator afterwards.
    fn general(expr: &Expr, vars: &Variables, rng: Prng) -> (Result<Value, EvalError>, Prng) {
        let (r, rng, _) = with_context(vars, rng, |ctx| expr.eval(ctx));
        (r, rng)
    }

    /// Checks the fast path against the general one on `text`: the same value and
    /// generator state, or `None` with the generator untouched. Returns whether
    /// the fast path answered.
    fn same_as_general(text: &str, vars: &Variables, seed: u64) -> bool {
        let expr = parse(text);
        let start = Prng::from_seed(seed);
        let (want, after) = general(&expr, vars, start);
        let mut rng = start;
        match expr.compile_fast().and_then(|f| f.eval(vars, &mut rng)) {
            Some(v) => {
                assert_eq!(Ok(v), want, "{text}");
                assert_eq!(rng, after, "{text}");
                true
            }
            None => {
                assert_eq!(rng, start, "{text}: the fallback must not draw");
                false
            }
        }
    }

    fn vars_with(ints: &[(&str, i64)]) -> Variables {
        let mut vars = Variables::new();
        for (name, i) in ints {
            vars.set_value("set", &VarRef::new(name), Value::Int(*i))
                .unwrap();
        }
        vars
    }

    #[test]
    fn builtin_script_expressions_take_the_fast_path() {
        let vars = vars_with(&[("fast_scale", 10)]);
        for text in [
            "random(1, 100000 * :fast_scale)",
            "random(1, 1 * :fast_scale)",
            "random(1, 10 * :fast_scale)",
            "random(-5000, 5000)",
            ":fast_scale + 1",
            ":fast_scale - 2 * 3",
            "42",
        ] {
            assert!(same_as_general(text, &vars, 7), "{text}");
        }
    }

    #[test]
    fn everything_else_falls_back_to_the_general_path() {
        let mut vars = vars_with(&[("fast_big", i64::MAX), ("fast_one", 1)]);
        vars.put_text("option", "fast_text", "12").unwrap();
        vars.set_value("set", &VarRef::new("fast_dbl"), Value::Double(2.5))
            .unwrap();
        for text in [
            // Errors: overflow, empty and too large ranges, undefined variable.
            ":fast_big + 1",
            ":fast_big * 2",
            "-:fast_big - 2",
            "random(5, 1)",
            "random(-9223372036854775808, 9223372036854775807)",
            "random(1, :fast_undefined)",
            // Values the fast path does not cover.
            ":fast_text + 1",
            ":fast_dbl * 2",
            "random(1, :fast_dbl)",
            "1.5",
            "true",
            "random(1, random(1, 10))",
            "random_gaussian(1, 10, 2.5)",
            "debug(:fast_one)",
            "5 / :fast_one",
            "abs(-3)",
        ] {
            assert!(!same_as_general(text, &vars, 11), "{text}");
        }
    }

    #[test]
    fn compiles_the_builtin_forms_and_leaves_deep_trees_to_the_general_path() {
        let scale = VarRef::new("fast_scale").id;
        assert_eq!(
            parse("random(1, 100000 * :fast_scale)").compile_fast(),
            Some(FastExpr::Random(
                IntExpr::Const(1),
                IntExpr::Arith(
                    Arith::Mul,
                    Box::new((IntExpr::Const(100000), IntExpr::Var(scale)))
                )
            ))
        );
        let sum = |n: usize| vec!["1"; n].join(" + ");
        let vars = Variables::new();
        let mut rng = Prng::from_seed(1);
        let within = parse(&sum(MAX_FAST_DEPTH as usize + 1)).compile_fast();
        assert_eq!(
            within.and_then(|f| f.eval(&vars, &mut rng)),
            Some(Value::Int(i64::from(MAX_FAST_DEPTH) + 1))
        );
        assert_eq!(
            parse(&sum(MAX_FAST_DEPTH as usize + 2)).compile_fast(),
            None
        );
    }

    proptest! {
        #[test]
        fn fast_and_general_paths_agree(
            a in any::<i64>(),
            b in -1_000_000i64..1_000_000,
            c in any::<i64>(),
            k in -100i64..100,
            seed in any::<u64>(),
        ) {
            let vars = vars_with(&[("fast_a", a), ("fast_b", b), ("fast_c", c)]);
            for text in [
                "random(:fast_b, :fast_b + 1000)".to_string(),
                format!("random({k}, :fast_b * {k})"),
                "random(:fast_a, :fast_c)".to_string(),
                format!(":fast_a * {k} + :fast_b - :fast_c"),
                "random(1, :fast_a * :fast_c)".to_string(),
            ] {
                same_as_general(&text, &vars, seed);
            }
        }
    }
}
