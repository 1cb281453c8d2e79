//! `cfmt` must print exactly what C's printf prints for finite values.

use pgrush_stats::cfmt::{fixed, general};
use std::ffi::CString;

fn c_format(fmt: &str, x: f64) -> String {
    let mut buf = vec![0u8; 512];
    let cfmt = CString::new(fmt).unwrap_or_default();
    // SAFETY: the buffer is 512 bytes, the format takes exactly one double.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), cfmt.as_ptr(), x) };
    buf.truncate(usize::try_from(n).unwrap_or(0));
    String::from_utf8_lossy(&buf).into_owned()
}

/// A small deterministic generator (xorshift) so the test needs no extra crate.
fn values() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        0.5,
        1.5,
        2.5,
        -2.5,
        0.125,
        0.0005,
        0.0015,
        0.2225,
        1e-7,
        123456.789,
        4475.2741105,
        1e15,
        1e16,
        1e21,
        9.9999999999999e14,
        0.1,
        0.3,
        2.0 / 3.0,
        1e-5,
        99999.95,
        1e300,
        -1e-300,
    ];
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..3000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let mantissa = (s >> 11) as f64 / (1u64 << 53) as f64;
        let exp = ((s & 0x3f) as i32) - 20;
        let sign = if s & 0x40 == 0 { 1.0 } else { -1.0 };
        v.push(sign * mantissa * 10f64.powi(exp));
        // Exact ties at several precisions.
        v.push(((s % 100_000) as f64 + 0.5) / 1000.0);
    }
    v
}

#[test]
fn fixed_matches_printf() {
    for x in values() {
        for prec in [0usize, 1, 3, 6] {
            assert_eq!(
                fixed(x, prec),
                c_format(&format!("%.{prec}f"), x),
                "x={x:e}"
            );
        }
    }
}

#[test]
fn general_matches_printf() {
    for x in values() {
        assert_eq!(general(x, 15), c_format("%.15g", x), "x={x:e}");
        assert_eq!(general(x, 6), c_format("%.6g", x), "x={x:e}");
    }
}
