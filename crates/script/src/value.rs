//! Expression values and pgbench's coercion rules.

use bytes::BufMut;

use crate::error::EvalError;
use crate::strconv::{format_f, format_g15, write_g15};

/// A typed value of pgbench's expression language.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// SQL-like NULL.
    Null,
    /// Boolean.
    Bool(bool),
    /// 64-bit integer.
    Int(i64),
    /// Double precision float.
    Double(f64),
}

impl Value {
    /// pgbench's name of the value's type (`null`, `boolean`, `int`, `double`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    /// Truthiness used by `\if` and `CASE`: NULL is false, numbers are true when non-zero.
    pub fn truth(&self) -> bool {
        match *self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// Coerce to int: doubles are rounded half to even; overflow and NaN are errors.
    pub fn to_int(&self) -> Result<i64, EvalError> {
        match *self {
            Value::Int(i) => Ok(i),
            Value::Double(d) => double_to_int(d),
            other => Err(EvalError::Coerce {
                from: other.type_name(),
                to: "int",
            }),
        }
    }

    /// Coerce to double.
    pub fn to_double(&self) -> Result<f64, EvalError> {
        match *self {
            Value::Int(i) => Ok(i as f64),
            Value::Double(d) => Ok(d),
            other => Err(EvalError::Coerce {
                from: other.type_name(),
                to: "double",
            }),
        }
    }

    /// Coerce to boolean (only booleans are accepted).
    pub fn to_bool(&self) -> Result<bool, EvalError> {
        match *self {
            Value::Bool(b) => Ok(b),
            other => Err(EvalError::Coerce {
                from: other.type_name(),
                to: "boolean",
            }),
        }
    }

    /// The string form pgbench substitutes into SQL (`NULL`, `true`, `%ld`, `%.15g`),
    /// appended to `out` (a `Vec<u8>`, or a connection's output buffer).
    #[inline]
    pub fn write_text<B: BufMut>(&self, out: &mut B) {
        match *self {
            Value::Null => out.put_slice(b"NULL"),
            Value::Bool(b) => out.put_slice(if b { b"true" } else { b"false" }),
            Value::Int(i) => write_i64(out, i),
            Value::Double(d) => write_g15(out, d),
        }
    }

    /// The string form pgbench substitutes into SQL.
    pub fn to_text(&self) -> String {
        let mut s = Vec::new();
        self.write_text(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    }

    /// The text `debug()` prints after its `debug(script=..,command=..): ` prefix.
    pub fn debug_text(&self) -> String {
        match *self {
            Value::Null => "null".to_string(),
            Value::Bool(b) => format!("boolean {}", if b { "true" } else { "false" }),
            Value::Int(i) => format!("int {i}"),
            Value::Double(d) => format!("double {}", format_g15(d)),
        }
    }
}

/// Appends the decimal form of `i` (`%ld`), without the formatting machinery.
#[inline]
pub fn write_i64<B: BufMut>(out: &mut B, i: i64) {
    out.put_slice(itoa::Buffer::new().format(i).as_bytes());
}

/// pgbench's double to int conversion: `rint`, then a range check.
pub fn double_to_int(d: f64) -> Result<i64, EvalError> {
    let r = d.round_ties_even();
    if r.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
        return Err(EvalError::DoubleToInt(format_f(r)));
    }
    Ok(r as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_format_like_printf() {
        for i in [
            0,
            7,
            -7,
            10,
            -10,
            99_999,
            1_000_000,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
            -1,
        ] {
            let mut s = b"x".to_vec();
            Value::Int(i).write_text(&mut s);
            assert_eq!(s, format!("x{i}").into_bytes());
        }
    }

    proptest::proptest! {
        /// With room for the longest form or with less, an integer's text is
        /// printf's, appended after what was there.
        #[test]
        fn integers_written_in_place_or_not_are_printfs(
            i in proptest::prelude::any::<i64>(),
            digits in 1u32..19,
            before in 0usize..40,
        ) {
            let small = i % 10i64.pow(digits);
            for i in [i, small] {
                let mut roomy = Vec::with_capacity(64);
                roomy.resize(before, b'x');
                let mut tight = bytes::BytesMut::with_capacity(before + 3);
                tight.resize(before, b'x');
                Value::Int(i).write_text(&mut roomy);
                Value::Int(i).write_text(&mut tight);
                let expected = [vec![b'x'; before], i.to_string().into_bytes()].concat();
                proptest::prop_assert_eq!(&roomy, &expected);
                proptest::prop_assert_eq!(&tight[..], &expected[..]);
            }
        }
    }
}
