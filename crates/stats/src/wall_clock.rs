//! The wall clock as results carry it: Unix time in microseconds.

/// Microseconds since the Unix epoch (0 if the system clock is before it).
pub fn unix_time_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn unix_time_is_after_2020_and_does_not_go_backwards_between_two_reads() {
        let a = super::unix_time_us();
        let b = super::unix_time_us();
        assert!(a > 1_577_836_800_000_000, "{a}");
        assert!(b >= a);
    }
}
