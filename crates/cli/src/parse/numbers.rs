//! PostgreSQL's `option_parse_int`, which pgbench uses for its integer options
//! (the others go through C's `atoi`/`atof`, from `pgrush_cconv`).

/// Why [`option_parse_int`] rejected a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOptionError {
    /// Something other than trailing whitespace follows the number.
    Invalid,
    /// The number is outside the allowed range (or empty).
    OutOfRange,
}

/// PostgreSQL's `option_parse_int` (fe_utils/option_utils.c): `strtoint`, only
/// white space may follow, then a range check. An empty value is no syntax
/// error here (it reads as 0 and fails the range check), which is where it
/// differs from libpq's integer connection options.
pub fn option_parse_int(s: &[u8], min: i32, max: i32) -> Result<i32, IntOptionError> {
    let r = pgrush_cconv::strtoint(s);
    if !r.rest_is_space(s) {
        return Err(IntOptionError::Invalid);
    }
    if r.out_of_range || r.value < min || r.value > max {
        return Err(IntOptionError::OutOfRange);
    }
    Ok(r.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_int_rules() {
        assert_eq!(option_parse_int(b" 2 ", 1, i32::MAX), Ok(2));
        assert_eq!(option_parse_int(b"+3", 1, i32::MAX), Ok(3));
        assert_eq!(
            option_parse_int(b"", 1, i32::MAX),
            Err(IntOptionError::OutOfRange)
        );
        assert_eq!(
            option_parse_int(b"  ", 1, i32::MAX),
            Err(IntOptionError::OutOfRange)
        );
        assert_eq!(
            option_parse_int(b"0x1", 1, i32::MAX),
            Err(IntOptionError::Invalid)
        );
        assert_eq!(
            option_parse_int(b"5x", 1, i32::MAX),
            Err(IntOptionError::Invalid)
        );
        assert_eq!(
            option_parse_int(b"99999999999", 1, i32::MAX),
            Err(IntOptionError::OutOfRange)
        );
        assert_eq!(
            option_parse_int(b"-1", 0, i32::MAX),
            Err(IntOptionError::OutOfRange)
        );
        assert_eq!(option_parse_int(b"0", 0, i32::MAX), Ok(0));
    }
}
