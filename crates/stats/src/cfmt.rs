//! Number formatting compatible with C `printf` as PostgreSQL's `snprintf` port does it.
//!
//! PostgreSQL prints non-finite values itself (`NaN`, `Infinity`, `-Infinity`, never `-nan`)
//! and hands finite values to the C library, which rounds the exact binary value
//! (round-half-even on exact ties). Rust's `{:.N}` formatting rounds the exact value the
//! same way, so finite values are delegated to it.
//!
//! The `push_*` functions append to a caller-owned `String`; `push_fixed*` and `push_int_width`
//! never allocate once it has capacity (`push_general` uses small temporaries).

use std::fmt::Write;

/// Appends `x` formatted as C `%.{prec}f` (e.g. `prec = 6` for `%f`, `3` for `%.3f`).
pub fn push_fixed(out: &mut String, x: f64, prec: usize) {
    if !push_nonfinite(out, x) {
        // Writing into a String cannot fail.
        let _ = write!(out, "{x:.prec$}");
    }
}

/// Appends `x` as C `%{width}.{prec}f`: right-aligned in at least `width` characters.
pub fn push_fixed_width(out: &mut String, x: f64, width: usize, prec: usize) {
    let start = out.len();
    push_fixed(out, x, prec);
    pad_left(out, start, width);
}

/// Appends `v` right-aligned in at least `width` characters (C `%{width}ld`).
pub fn push_int_width(out: &mut String, v: i64, width: usize) {
    let start = out.len();
    let _ = write!(out, "{v}");
    pad_left(out, start, width);
}

/// Returns `x` formatted as C `%.{prec}f`.
pub fn fixed(x: f64, prec: usize) -> String {
    let mut s = String::new();
    push_fixed(&mut s, x, prec);
    s
}

/// Appends `x` formatted as C `%.{prec}g` (`prec = 15` gives pgbench's `%.15g`).
pub fn push_general(out: &mut String, x: f64, prec: usize) {
    if push_nonfinite(out, x) {
        return;
    }
    let p = prec.max(1);
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // Round to p significant digits first; the exponent of the rounded value decides the style.
    let mut sci = String::with_capacity(32);
    let _ = write!(sci, "{:.*e}", p - 1, x);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let p_i = i32::try_from(p).unwrap_or(i32::MAX);
    if exp < -4 || exp >= p_i {
        out.push_str(strip_fraction_zeros(mantissa));
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exp.unsigned_abs());
    } else {
        let decimals = usize::try_from(p_i - 1 - exp).unwrap_or(0);
        let mut fixed_s = String::with_capacity(32);
        let _ = write!(fixed_s, "{x:.decimals$}");
        out.push_str(strip_fraction_zeros(&fixed_s));
    }
}

/// Returns `x` formatted as C `%.{prec}g`.
pub fn general(x: f64, prec: usize) -> String {
    let mut s = String::new();
    push_general(&mut s, x, prec);
    s
}

fn strip_fraction_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Writes PostgreSQL's spelling of NaN and infinities; returns whether `x` was non-finite.
fn push_nonfinite(out: &mut String, x: f64) -> bool {
    if x.is_nan() {
        out.push_str("NaN");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        return false;
    }
    true
}

fn pad_left(out: &mut String, start: usize, width: usize) {
    let len = out.len() - start;
    if len < width {
        let pad = width - len;
        for _ in 0..pad {
            out.insert(start, ' ');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_basics() {
        assert_eq!(fixed(1.0, 6), "1.000000");
        assert_eq!(fixed(0.2225, 3), "0.223"); // 0.2225 is slightly above the tie in binary
        assert_eq!(fixed(2.5, 0), "2");
        assert_eq!(fixed(3.5, 0), "4");
        assert_eq!(fixed(-0.0001, 3), "-0.000");
        assert_eq!(fixed(f64::NAN, 3), "NaN");
        assert_eq!(fixed(-f64::NAN, 3), "NaN");
        assert_eq!(fixed(f64::INFINITY, 6), "Infinity");
        assert_eq!(fixed(f64::NEG_INFINITY, 1), "-Infinity");
    }

    #[test]
    fn widths() {
        let mut s = String::new();
        push_fixed_width(&mut s, 0.5, 11, 3);
        assert_eq!(s, "      0.500");
        s.clear();
        push_int_width(&mut s, 15, 10);
        assert_eq!(s, "        15");
        s.clear();
        push_fixed_width(&mut s, f64::NAN, 11, 3);
        assert_eq!(s, "        NaN");
        s.clear();
        push_int_width(&mut s, 12_345_678_901, 10);
        assert_eq!(s, "12345678901");
    }

    #[test]
    fn general_15() {
        assert_eq!(general(0.0, 15), "0");
        assert_eq!(general(1.5, 15), "1.5");
        assert_eq!(general(100.0, 15), "100");
        assert_eq!(general(0.1, 15), "0.1");
        assert_eq!(general(1e15, 15), "1e+15");
        assert_eq!(general(123456789012345.0, 15), "123456789012345");
        assert_eq!(general(0.0001, 15), "0.0001");
        assert_eq!(general(0.00001, 15), "1e-05");
        assert_eq!(general(1.0 / 3.0, 15), "0.333333333333333");
        assert_eq!(general(-2.5e-300, 15), "-2.5e-300");
        assert_eq!(general(f64::NAN, 15), "NaN");
        assert_eq!(general(999999999999999.9, 15), "1e+15");
    }
}
