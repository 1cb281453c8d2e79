//! A fast path for the expressions of the builtin scripts (`random(1, 100000 *
//! :scale)`, `:x + 1`, ...): integer constants, variables holding integers, `+ - *`
//! of those that do not overflow, and `random()` over such bounds.
//!
//! Everything else, and every case that would fail (an undefined or text variable,
//! an overflow, an empty or too large range), is left to the general evaluator,
//! which then gives pgbench's result or error: [`Expr::eval_fast`] answers `None`
//! and has changed nothing. Its results equal [`Expr::eval`]'s, generator
//! included (both draw one `random()` from it).

use super::{Expr, Func};
use crate::prng::Prng;
use crate::value::Value;
use crate::vars::{VarValue, Variables};

impl Expr {
    /// The value of an expression the fast path covers, drawing from `rng` as
    /// [`Expr::eval`] would; `None` (nothing drawn, nothing changed) for any other
    /// expression: evaluate it with [`Expr::eval`].
    #[inline]
    pub fn eval_fast(&self, vars: &Variables, rng: &mut Prng) -> Option<Value> {
        match self {
            Expr::Func {
                func: Func::Random,
                args,
            } => match &args[..] {
                [low, high] => {
                    let lb = low.pure_int(vars)?;
                    let ub = high.pure_int(vars)?;
                    // The general path's errors: an empty or too large range.
                    if lb > ub || ub.checked_sub(lb)?.checked_add(1).is_none() {
                        return None;
                    }
                    Some(Value::Int(rng.random(lb, ub)))
                }
                _ => None,
            },
            other => other.pure_int(vars).map(Value::Int),
        }
    }

    /// The integer an expression without side effects evaluates to without an
    /// error: an integer constant, a variable holding an integer value, or `+ - *`
    /// of those (`None` on overflow, and for anything else).
    #[inline]
    fn pure_int(&self, vars: &Variables) -> Option<i64> {
        match self {
            Expr::Const(Value::Int(i)) => Some(*i),
            Expr::Var(r) => match vars.get(r.id) {
                Some(VarValue::Value(Value::Int(i))) => Some(*i),
                _ => None,
            },
            Expr::Func { func, args } => pure_arithmetic(*func, args, vars),
            _ => None,
        }
    }
}

/// `+ - *` of two pure integer expressions (see [`Expr::pure_int`]); `None` on
/// overflow and for any other function.
fn pure_arithmetic(func: Func, args: &[Expr], vars: &Variables) -> Option<i64> {
    let (Func::Add | Func::Sub | Func::Mul, [a, b]) = (func, args) else {
        return None;
    };
    let (a, b) = (a.pure_int(vars)?, b.pure_int(vars)?);
    match func {
        Func::Add => a.checked_add(b),
        Func::Sub => a.checked_sub(b),
        _ => a.checked_mul(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::EvalError;
    use crate::expr::{EvalContext, parse_expression};
    use crate::vars::VarRef;
    use proptest::prelude::*;

    fn parse(text: &str) -> Expr {
        parse_expression(format!("{text}\n").as_bytes(), 0)
            .unwrap()
            .expr
    }

    /// The general evaluator's result, and its generator afterwards.
    fn general(expr: &Expr, vars: &Variables, rng: Prng) -> (Result<Value, EvalError>, Prng) {
        let mut rng = rng;
        let mut debug_out = Vec::new();
        let mut ctx = EvalContext {
            vars,
            rng: &mut rng,
            script: 0,
            command: 0,
            debug_out: &mut debug_out,
        };
        let r = expr.eval(&mut ctx);
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
        match expr.eval_fast(vars, &mut rng) {
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
