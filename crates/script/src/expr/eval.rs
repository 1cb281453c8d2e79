//! Evaluation with pgbench's semantics: NULL propagation, lazy AND/OR/CASE,
//! int/double overloading, overflow checks and exact error messages.

use super::{Expr, Func};
use crate::error::EvalError;
use crate::prng::{Prng, hash_fnv1a, hash_murmur2, permute};
use crate::strconv::format_f;
use crate::value::Value;
use crate::vars::Variables;

/// Maximum number of evaluated function arguments (pgbench's `MAX_FARGS`).
pub const MAX_FARGS: usize = 16;

/// Everything an evaluation needs from its client.
pub struct EvalContext<'a> {
    /// The client's variables.
    pub vars: &'a Variables,
    /// The client's expression generator.
    pub rng: &'a mut Prng,
    /// Script number (0-based), printed by `debug()`.
    pub script: usize,
    /// Command number (0-based; `debug()` prints it 1-based).
    pub command: usize,
    /// `debug()` output lines (without newline); the engine prints each to stderr.
    pub debug_out: &'a mut Vec<String>,
}

impl Expr {
    /// Evaluate the expression.
    pub fn eval(&self, ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
        match self {
            Expr::Const(v) => Ok(*v),
            Expr::Var(r) => ctx.vars.value_of(r),
            Expr::Func { func, args } => eval_func(*func, args, ctx),
        }
    }
}

fn eval_func(func: Func, args: &[Expr], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    match func {
        Func::And | Func::Or => {
            let a = args[0].eval(ctx)?;
            if a == Value::Null {
                return Ok(Value::Null);
            }
            let ba = a.to_bool()?;
            if (func == Func::And && !ba) || (func == Func::Or && ba) {
                return Ok(Value::Bool(ba));
            }
            let b = args[1].eval(ctx)?;
            if b == Value::Null {
                return Ok(Value::Null);
            }
            Ok(Value::Bool(b.to_bool()?))
        }
        Func::Case => {
            let n = args.len();
            let mut i = 0;
            while i + 1 < n {
                let c = args[i].eval(ctx)?;
                if c.truth() {
                    return args[i + 1].eval(ctx);
                }
                i += 2;
            }
            args[n - 1].eval(ctx)
        }
        // Most functions and every operator take one to three arguments: those are
        // evaluated into an array of their own size.
        _ => match args {
            [a] => {
                let v = [a.eval(ctx)?];
                apply(func, &v, ctx)
            }
            [a, b] => {
                let v = [a.eval(ctx)?, b.eval(ctx)?];
                apply(func, &v, ctx)
            }
            [a, b, c] => {
                let v = [a.eval(ctx)?, b.eval(ctx)?, c.eval(ctx)?];
                apply(func, &v, ctx)
            }
            _ => eval_many(func, args, ctx),
        },
    }
}

/// Evaluates the arguments of a function taking none or more than three (up to
/// [`MAX_FARGS`]; more is an error once the first [`MAX_FARGS`] are evaluated) and
/// applies it.
#[inline(never)]
fn eval_many(func: Func, args: &[Expr], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    let mut vals = [Value::Null; MAX_FARGS];
    let mut n = 0;
    for a in args.iter().take(MAX_FARGS) {
        vals[n] = a.eval(ctx)?;
        n += 1;
    }
    if args.len() > MAX_FARGS {
        return Err(EvalError::TooManyArguments);
    }
    apply(func, &vals[..n], ctx)
}

/// Applies `func` to its evaluated arguments: NULL when one is NULL (except for
/// `IS` and `debug()`, which take NULL).
#[inline]
fn apply(func: Func, v: &[Value], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    if v.iter().any(|x| matches!(x, Value::Null)) && func != Func::Is && func != Func::Debug {
        return Ok(Value::Null);
    }
    standard(func, v, ctx)
}

/// The functions and operators that take evaluated arguments (`v`, none NULL
/// except for `IS` and `debug()`), by family.
#[inline]
fn standard(func: Func, v: &[Value], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    use Func::*;
    match func {
        Add | Sub | Mul | Div | Eq | Ne | Le | Lt if either_double(v) => double_arithmetic(func, v),
        Add | Sub | Mul | Div | Mod | Eq | Ne | Le | Lt => int_arithmetic(func, v),
        BitAnd | BitOr | BitXor | Lshift | Rshift => bitwise(func, v),
        Not => Ok(Value::Bool(!v[0].to_bool()?)),
        Is => Ok(Value::Bool(match (v[0], v[1]) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            _ => false,
        })),
        Abs | Double | Int | Pi | Sqrt | Ln | Exp | Pow => math(func, v),
        Least | Greatest => extremum(func, v),
        Random | RandomGaussian | RandomExponential | RandomZipfian => random(func, v, ctx.rng),
        HashMurmur2 | HashFnv1a => hash(func, v),
        Permute => permute_value(v),
        Debug => debug(v, ctx),
        And | Or | Case => Ok(Value::Null),
    }
}

/// Whether either operand of a binary operator is a double (`+ - * /` and
/// the comparisons `= <> <= <` are then computed in doubles, `%` never is;
/// `>` and `>=` are parsed as swapped `<` and `<=`).
#[inline]
fn either_double(v: &[Value]) -> bool {
    matches!(v[0], Value::Double(_)) || matches!(v[1], Value::Double(_))
}

/// Arithmetic and comparisons of two doubles.
#[inline]
fn double_arithmetic(func: Func, v: &[Value]) -> Result<Value, EvalError> {
    use Func::*;
    let l = v[0].to_double()?;
    let r = v[1].to_double()?;
    Ok(match func {
        Add => Value::Double(l + r),
        Sub => Value::Double(l - r),
        Mul => Value::Double(l * r),
        Div => Value::Double(l / r),
        Eq => Value::Bool(l == r),
        Ne => Value::Bool(l != r),
        Le => Value::Bool(l <= r),
        _ => Value::Bool(l < r),
    })
}

/// Arithmetic (`%` included) and comparisons of two bigints, with pgbench's
/// overflow and division-by-zero errors.
#[inline]
fn int_arithmetic(func: Func, v: &[Value]) -> Result<Value, EvalError> {
    use Func::*;
    let l = v[0].to_int()?;
    let r = v[1].to_int()?;
    Ok(match func {
        Add => Value::Int(l.checked_add(r).ok_or(EvalError::BigintOverflow("add"))?),
        Sub => Value::Int(l.checked_sub(r).ok_or(EvalError::BigintOverflow("sub"))?),
        Mul => Value::Int(l.checked_mul(r).ok_or(EvalError::BigintOverflow("mul"))?),
        Eq => Value::Bool(l == r),
        Ne => Value::Bool(l != r),
        Le => Value::Bool(l <= r),
        Lt => Value::Bool(l < r),
        _ => return int_division(func == Div, l, r),
    })
}

/// `l / r` (`divide`) or `l % r`, as pgbench computes them: division by zero
/// is an error, and a divisor of -1 is handled without the CPU's overflow trap.
#[inline]
fn int_division(divide: bool, l: i64, r: i64) -> Result<Value, EvalError> {
    if r == 0 {
        return Err(EvalError::DivisionByZero);
    }
    if r == -1 {
        if divide {
            if l == i64::MIN {
                return Err(EvalError::BigintOverflow("div"));
            }
            return Ok(Value::Int(-l));
        }
        return Ok(Value::Int(0));
    }
    Ok(Value::Int(if divide { l / r } else { l % r }))
}

/// `& | # << >>` on bigints.
#[inline]
fn bitwise(func: Func, v: &[Value]) -> Result<Value, EvalError> {
    use Func::*;
    let l = v[0].to_int()?;
    let r = v[1].to_int()?;
    Ok(Value::Int(match func {
        BitAnd => l & r,
        BitOr => l | r,
        BitXor => l ^ r,
        // x86-64 masks the shift count to 6 bits.
        Lshift => l.wrapping_shl(r as u32),
        _ => l.wrapping_shr(r as u32),
    }))
}

/// `abs()`, the casts `double()` and `int()`, `pi()`, `sqrt()`, `ln()`, `exp()`
/// and `pow()`.
#[inline]
fn math(func: Func, v: &[Value]) -> Result<Value, EvalError> {
    use Func::*;
    Ok(match func {
        Abs => match v[0] {
            Value::Int(i) => Value::Int(i.wrapping_abs()),
            Value::Double(d) => Value::Double(if d < 0.0 { -d } else { d }),
            // pgbench reads the boolean's storage as a double here.
            Value::Bool(b) => Value::Double(f64::from_bits(u64::from(b))),
            Value::Null => Value::Null,
        },
        Double => Value::Double(v[0].to_double()?),
        Int => Value::Int(v[0].to_int()?),
        Pi => Value::Double(std::f64::consts::PI),
        Sqrt => Value::Double(v[0].to_double()?.sqrt()),
        Ln => Value::Double(v[0].to_double()?.ln()),
        Exp => Value::Double(v[0].to_double()?.exp()),
        _ => {
            let a = v[0].to_double()?;
            let b = v[1].to_double()?;
            Value::Double(a.powf(b))
        }
    })
}

/// `least()` and `greatest()`: in doubles when any argument is one, else in
/// bigints.
#[inline]
fn extremum(func: Func, v: &[Value]) -> Result<Value, EvalError> {
    let least = func == Func::Least;
    if v.iter().any(|x| matches!(x, Value::Double(_))) {
        let mut ext = v[0].to_double()?;
        for x in &v[1..] {
            let d = x.to_double()?;
            ext = if least {
                if ext < d { ext } else { d }
            } else if ext > d {
                ext
            } else {
                d
            };
        }
        Ok(Value::Double(ext))
    } else {
        let mut ext = v[0].to_int()?;
        for x in &v[1..] {
            let d = x.to_int()?;
            ext = if least { ext.min(d) } else { ext.max(d) };
        }
        Ok(Value::Int(ext))
    }
}

/// `random()`, `random_gaussian()`, `random_exponential()` and
/// `random_zipfian()` from the client's generator, with pgbench's range and
/// parameter checks.
#[inline]
fn random(func: Func, v: &[Value], rng: &mut Prng) -> Result<Value, EvalError> {
    use Func::*;
    let lb = v[0].to_int()?;
    let ub = v[1].to_int()?;
    if lb > ub {
        return Err(EvalError::EmptyRange);
    }
    if ub.checked_sub(lb).and_then(|d| d.checked_add(1)).is_none() {
        return Err(EvalError::RangeTooLarge);
    }
    if func == Random {
        return Ok(Value::Int(rng.random(lb, ub)));
    }
    let p = v[2].to_double()?;
    Ok(Value::Int(match func {
        RandomGaussian => {
            if p < 2.0 {
                return Err(EvalError::Gaussian(format_f(p)));
            }
            rng.gaussian(lb, ub, p)
        }
        RandomZipfian => {
            // NaN passes pgbench's check and then loops forever; reject it.
            if !(1.001..=1000.0).contains(&p) {
                return Err(EvalError::Zipfian(format_f(p)));
            }
            rng.zipfian(lb, ub, p)
        }
        _ => {
            if p <= 0.0 {
                return Err(EvalError::Exponential(format_f(p)));
            }
            rng.exponential(lb, ub, p)
        }
    }))
}

/// `hash_murmur2()` (also `hash()`) and `hash_fnv1a()`.
#[inline]
fn hash(func: Func, v: &[Value]) -> Result<Value, EvalError> {
    let val = v[0].to_int()?;
    let seed = v[1].to_int()?;
    Ok(Value::Int(if func == Func::HashMurmur2 {
        hash_murmur2(val, seed)
    } else {
        hash_fnv1a(val, seed)
    }))
}

/// `permute(i, size, seed)`; the size must be positive.
#[inline]
fn permute_value(v: &[Value]) -> Result<Value, EvalError> {
    let val = v[0].to_int()?;
    let size = v[1].to_int()?;
    let seed = v[2].to_int()?;
    if size <= 0 {
        return Err(EvalError::PermuteSize);
    }
    Ok(Value::Int(permute(val, size, seed)))
}

/// `debug(x)`: records the line pgbench prints to stderr and returns `x`.
fn debug(v: &[Value], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    ctx.debug_out.push(format!(
        "debug(script={},command={}): {}",
        ctx.script,
        ctx.command + 1,
        v[0].debug_text()
    ));
    Ok(v[0])
}

/// Runs `f` with an evaluation context over `vars` and a generator starting at
/// `rng` (script 0, command 0); returns its result, the generator afterwards and
/// the `debug()` lines (tests of the evaluators).
#[cfg(test)]
pub(super) fn with_context<R>(
    vars: &Variables,
    rng: Prng,
    f: impl FnOnce(&mut EvalContext<'_>) -> R,
) -> (R, Prng, Vec<String>) {
    let mut rng = rng;
    let mut debug_out = Vec::new();
    let mut ctx = EvalContext {
        vars,
        rng: &mut rng,
        script: 0,
        command: 0,
        debug_out: &mut debug_out,
    };
    let r = f(&mut ctx);
    (r, rng, debug_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse_expression;
    use crate::vars::VarRef;

    /// Evaluates `func(args)` through `path`, returning the result, the generator
    /// afterwards and the `debug()` lines.
    fn run(
        path: fn(Func, &[Expr], &mut EvalContext<'_>) -> Result<Value, EvalError>,
        func: Func,
        args: &[Expr],
        vars: &Variables,
    ) -> (Result<Value, EvalError>, Prng, Vec<String>) {
        with_context(vars, Prng::from_seed(3), |ctx| path(func, args, ctx))
    }

    #[test]
    fn small_argument_arrays_give_what_the_sixteen_slot_path_gives() {
        let mut vars = Variables::new();
        vars.set_value("set", &VarRef::new("eval_i"), Value::Int(7))
            .unwrap();
        for text in [
            "abs(-3)",
            "abs(null)",
            "debug(null)",
            "null is null",
            "1 + null",
            "5 % 0",
            "least(:eval_i, 2.5)",
            "greatest(1, null, 3)",
            "least(3, 1, 2)",
            "random(1, :eval_i)",
            "random_gaussian(1, 10, 2.5)",
            "random_zipfian(1, 10, 0.5)",
            "permute(1, 10, 3)",
            "hash(:eval_i, 5)",
            "int(:eval_undefined)",
            "debug(1 + debug(2)) * debug(3)",
        ] {
            let parsed = parse_expression(format!("{text}\n").as_bytes(), 0).unwrap();
            let Expr::Func { func, args } = &parsed.expr else {
                panic!("{text} is not a function");
            };
            assert_eq!(
                run(eval_func, *func, args, &vars),
                run(eval_many, *func, args, &vars),
                "{text}"
            );
        }
    }
}
