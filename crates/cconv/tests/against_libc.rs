//! Property tests: every conversion agrees with the C library's own function
//! (glibc's `strtol`, `strtoul`, `strtod`, `atoi`, `atof`) on value, end
//! pointer and `errno`, for strings shaped like numbers and for arbitrary bytes.

use pgrush_cconv::{
    WholeNumber, atof, atoi, strtod, strtodouble, strtoint, strtoint64, strtol, strtoul,
};
use proptest::prelude::*;
use std::ffi::CString;

/// Calls `f` on `s` as a C string and returns its result, the number of bytes
/// consumed and whether errno became ERANGE.
fn call_c<T>(
    s: &[u8],
    f: impl FnOnce(*const libc::c_char, *mut *mut libc::c_char) -> T,
) -> (T, usize, bool) {
    let c = CString::new(s).expect("no NUL in generated input");
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `c` is a valid C string for the duration of the call, `end` a
    // valid out pointer; errno is thread-local.
    unsafe {
        *libc::__errno_location() = 0;
        let value = f(c.as_ptr(), &mut end);
        let range = *libc::__errno_location() == libc::ERANGE;
        (value, end.offset_from(c.as_ptr()) as usize, range)
    }
}

/// Strings that look like numbers: white space, signs, digits, a tail.
fn numberish() -> impl Strategy<Value = Vec<u8>> {
    "[ \t\n\x0b\x0c\r]{0,2}[-+]{0,2}[0-9]{0,24}[.]?[0-9]{0,4}([eE][-+]?[0-9]{0,4})?[ a-z0-9x.]{0,3}"
        .prop_map(String::into_bytes)
}

/// Any bytes but NUL (which a C string cannot hold).
fn any_c_string() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(1u8..=255, 0..16)
}

fn either() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![numberish(), any_c_string()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn strtol_matches_libc(s in either()) {
        // SAFETY: valid pointers from call_c.
        let (value, consumed, range) = call_c(&s, |p, e| unsafe { libc::strtol(p, e, 10) });
        let ours = strtol(&s);
        prop_assert_eq!((ours.value, ours.consumed, ours.out_of_range), (value, consumed, range));
    }

    #[test]
    fn strtoul_matches_libc(s in either()) {
        // SAFETY: valid pointers from call_c.
        let (value, consumed, range) = call_c(&s, |p, e| unsafe { libc::strtoul(p, e, 10) });
        let ours = strtoul(&s);
        prop_assert_eq!((ours.value, ours.consumed, ours.out_of_range), (value, consumed, range));
    }

    #[test]
    fn strtod_matches_libc(s in either()) {
        // SAFETY: valid pointers from call_c.
        let (value, consumed, range) = call_c(&s, |p, e| unsafe { libc::strtod(p, e) });
        let ours = strtod(&s);
        prop_assert_eq!(ours.value.to_bits(), value.to_bits());
        prop_assert_eq!((ours.consumed, ours.out_of_range), (consumed, range));
    }

    #[test]
    fn atoi_and_atof_match_libc(s in either()) {
        let c = CString::new(s.clone()).expect("no NUL");
        // SAFETY: `c` is a valid C string.
        let (i, f) = unsafe { (libc::atoi(c.as_ptr()), libc::atof(c.as_ptr())) };
        prop_assert_eq!(atoi(&s), i);
        prop_assert_eq!(atof(&s).to_bits(), f.to_bits());
    }

    #[test]
    fn strtoint_is_strtol_narrowed_to_int(s in either()) {
        // PostgreSQL's strtoint: strtol, and ERANGE when the value is not an int.
        // SAFETY: valid pointers from call_c.
        let (value, consumed, range) = call_c(&s, |p, e| unsafe { libc::strtol(p, e, 10) });
        let ours = strtoint(&s);
        let narrowed = value as i32;
        let expected_range = range || i64::from(narrowed) != value;
        prop_assert_eq!((ours.value, ours.consumed, ours.out_of_range), (narrowed, consumed, expected_range));
    }

    #[test]
    fn whole_string_conversions_follow_libc(s in either()) {
        // pgbench's strtoint64 and strtodouble: ERANGE first, then end != s && *end == '\0'.
        // SAFETY: valid pointers from call_c.
        let (int, int_end, int_range) = call_c(&s, |p, e| unsafe { libc::strtol(p, e, 10) });
        let expected = match (int_range, int_end > 0 && int_end == s.len()) {
            (true, _) => WholeNumber::Range,
            (false, true) => WholeNumber::Ok(int),
            (false, false) => WholeNumber::Syntax,
        };
        prop_assert_eq!(strtoint64(&s), expected);
        // SAFETY: valid pointers from call_c.
        let (dbl, dbl_end, dbl_range) = call_c(&s, |p, e| unsafe { libc::strtod(p, e) });
        let expected = match (dbl_range, dbl_end > 0 && dbl_end == s.len()) {
            (true, _) => WholeNumber::Range,
            (false, true) => WholeNumber::Ok(dbl.to_bits()),
            (false, false) => WholeNumber::Syntax,
        };
        let ours = match strtodouble(&s) {
            WholeNumber::Ok(v) => WholeNumber::Ok(v.to_bits()),
            WholeNumber::Range => WholeNumber::Range,
            WholeNumber::Syntax => WholeNumber::Syntax,
        };
        prop_assert_eq!(ours, expected);
    }
}
