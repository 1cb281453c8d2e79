//! C-compatible number formatting (`%.15g`, `%f`, with PostgreSQL's `snprintf`
//! spelling of infinities and NaN) and the C double-to-int64 cast. Parsing
//! numbers is `pgrush_cconv`'s.

use std::io::Write;

use bytes::BufMut;

/// C cast of a double to int64 as x86-64 does it (`cvttsd2si`): truncation toward
/// zero, and `INT64_MIN` for NaN and out-of-range values.
pub fn c_double_to_i64(d: f64) -> i64 {
    if d.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// `%.15g` as PostgreSQL's `snprintf` prints it (`Infinity`, `-Infinity`, `NaN`).
pub fn format_g15(x: f64) -> String {
    let mut s = Vec::new();
    write_g15(&mut s, x);
    String::from_utf8_lossy(&s).into_owned()
}

/// Append `%.15g` of `x` to `out` (a `Vec<u8>`, or a connection's output buffer).
pub fn write_g15<B: BufMut>(out: &mut B, x: f64) {
    if x.is_nan() {
        out.put_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        out.put_slice(if x < 0.0 { b"-Infinity" } else { b"Infinity" });
        return;
    }
    if x == 0.0 {
        out.put_slice(if x.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    const P: i32 = 15;
    let sci = format!("{:.*e}", (P - 1) as usize, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..P).contains(&exp) {
        let mant = strip_zeros(mant);
        let _ = write!(
            out.writer(),
            "{}e{}{:02}",
            mant,
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        );
    } else {
        let prec = (P - 1 - exp).max(0) as usize;
        let fixed = format!("{:.*}", prec, x);
        out.put_slice(strip_zeros(&fixed).as_bytes());
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `%f` as PostgreSQL's `snprintf` prints it.
pub fn format_f(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x < 0.0 {
            "-Infinity".to_string()
        } else {
            "Infinity".to_string()
        }
    } else {
        format!("{:.6}", x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g15_matches_c() {
        assert_eq!(format_g15(1.0 / 3.0), "0.333333333333333");
        assert_eq!(format_g15(1e300), "1e+300");
        assert_eq!(format_g15(1e-5), "1e-05");
        assert_eq!(format_g15(1e20), "1e+20");
        assert_eq!(format_g15(1234567.0 * 1e9), "1.234567e+15");
        assert_eq!(format_g15(100000000000000.5), "100000000000000");
        assert_eq!(format_g15(123_456_789.123_456_79), "123456789.123457");
        assert_eq!(format_g15(f64::from_bits(1)), "4.94065645841247e-324");
        assert_eq!(format_g15(3.0), "3");
        assert_eq!(format_g15(-0.0), "-0");
        assert_eq!(format_g15(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(format_g15(0.0001), "0.0001");
        assert_eq!(format_g15(999999999999999.9), "1e+15");
    }

    #[test]
    fn double_to_int64_like_x86() {
        assert_eq!(c_double_to_i64(f64::NAN), i64::MIN);
        assert_eq!(c_double_to_i64(-3.9), -3);
    }
}
