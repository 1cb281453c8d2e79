//! TPC-C's random value rules (§2.1.5, §2.1.6, §4.3.2): uniform numbers, NURand, a- and
//! n-strings, last names from syllables, zip codes and the "ORIGINAL" mark, drawn from
//! pgbench's generator so that one seed always gives the same data.

use pgrush_script::Prng;

/// The ten syllables of C_LAST (§4.3.2.3), indexed by digit.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The C constant of NURand(255, 0, 999) used for C_LAST while loading (§2.1.6.1). A run
/// chooses its own C_LAST constant at a distance from this one that the specification
/// allows ([`run_c_last`]).
pub const C_LAST_LOAD: i64 = 157;

/// The 62 characters of an a-string.
const ALPHANUMERIC: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The word placed in 10% of I_DATA and S_DATA values.
pub const ORIGINAL: &[u8] = b"ORIGINAL";

/// The tables whose rows come from their own generator streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// ITEM (one stream).
    Item,
    /// WAREHOUSE, one per warehouse.
    Warehouse,
    /// DISTRICT, one per warehouse.
    District,
    /// CUSTOMER, one per warehouse.
    Customer,
    /// HISTORY, one per warehouse.
    History,
    /// ORDER (customer permutation, line counts, carriers), one per warehouse.
    Orders,
    /// ORDER-LINE, one per warehouse.
    OrderLine,
    /// STOCK, one per warehouse.
    Stock,
}

/// The generator for one table and warehouse: the data of a warehouse never depends on
/// how the warehouses are split among loading connections.
pub fn stream(seed: u64, table: Stream, warehouse: i64) -> TpccRng {
    let code = table as u64 + 1;
    let key = seed
        ^ code.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (warehouse as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    TpccRng(Prng::from_seed(key))
}

/// A generator with TPC-C's value rules.
#[derive(Debug, Clone)]
pub struct TpccRng(Prng);

impl TpccRng {
    /// Uniform in `[lo, hi]`, inclusive.
    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        self.0.random(lo, hi)
    }

    /// `NURand(A, x, y)` with constant `c` (§2.1.6).
    pub fn nurand(&mut self, a: i64, x: i64, y: i64, c: i64) -> i64 {
        nurand_from(self.uniform(0, a), self.uniform(x, y), c, x, y)
    }

    /// Appends an a-string of a length uniform in `[lo, hi]`.
    pub fn push_a_string(&mut self, buf: &mut Vec<u8>, lo: i64, hi: i64) {
        let mut left = self.uniform(lo, hi) as usize;
        // Up to ten characters from one draw: 62^10 < 2^63.
        while left > 0 {
            let n = left.min(10);
            let mut r = self.uniform(0, 62i64.pow(n as u32) - 1);
            for _ in 0..n {
                buf.push(ALPHANUMERIC[(r % 62) as usize]);
                r /= 62;
            }
            left -= n;
        }
    }

    /// Appends an n-string of exactly `len` digits.
    pub fn push_n_string(&mut self, buf: &mut Vec<u8>, len: usize) {
        for _ in 0..len {
            buf.push(b'0' + self.uniform(0, 9) as u8);
        }
    }

    /// Appends a zip code: 4 random digits and `11111` (§4.3.2.7).
    pub fn push_zip(&mut self, buf: &mut Vec<u8>) {
        self.push_n_string(buf, 4);
        buf.extend_from_slice(b"11111");
    }

    /// Appends two random upper-case letters (a state).
    pub fn push_state(&mut self, buf: &mut Vec<u8>) {
        for _ in 0..2 {
            buf.push(b'A' + self.uniform(0, 25) as u8);
        }
    }

    /// Appends I_DATA / S_DATA: an a-string of 26 to 50 characters, with ORIGINAL at
    /// a random position in one row out of ten (drawn per row).
    pub fn push_data_with_original(&mut self, buf: &mut Vec<u8>) {
        let start = buf.len();
        self.push_a_string(buf, 26, 50);
        if self.uniform(1, 10) == 1 {
            let len = buf.len() - start;
            let at = start + self.uniform(0, (len - ORIGINAL.len()) as i64) as usize;
            buf[at..at + ORIGINAL.len()].copy_from_slice(ORIGINAL);
        }
    }

    /// Shuffles `values` (Fisher-Yates).
    pub fn shuffle<T>(&mut self, values: &mut [T]) {
        for i in (1..values.len()).rev() {
            let j = self.uniform(0, i as i64) as usize;
            values.swap(i, j);
        }
    }
}

/// NURand's formula on two draws: `(((a | b) + c) % (y - x + 1)) + x`.
pub fn nurand_from(a: i64, b: i64, c: i64, x: i64, y: i64) -> i64 {
    (((a | b) + c) % (y - x + 1)) + x
}

/// Appends the last name of `n` in `0..=999`: the syllables of its three digits.
pub fn push_last_name(buf: &mut Vec<u8>, n: i64) {
    for digit in [n / 100, (n / 10) % 10, n % 10] {
        buf.extend_from_slice(SYLLABLES[digit as usize].as_bytes());
    }
}

/// The last name of `n` in `0..=999`, as a string.
pub fn last_name(n: i64) -> String {
    let mut buf = Vec::new();
    push_last_name(&mut buf, n);
    String::from_utf8_lossy(&buf).into_owned()
}

/// The differences |C_LAST_load − C_LAST_run| the specification allows: 65..=119
/// without 96 and 112 (§2.1.6.1).
pub fn allowed_c_last_delta(delta: i64) -> bool {
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// The run's C_LAST constant for a choice `k` in `0..53`: [`C_LAST_LOAD`] minus the
/// `k`-th allowed difference (so it stays in `0..=255`).
pub fn run_c_last(k: i64) -> i64 {
    let mut delta = 65 + k;
    if delta >= 96 {
        delta += 1;
    }
    if delta >= 112 {
        delta += 1;
    }
    C_LAST_LOAD - delta
}

/// Appends `cents` as a decimal with two digits after the point (`-10.00`, `0.05`).
pub fn push_money(buf: &mut Vec<u8>, cents: i64) {
    if cents < 0 {
        buf.push(b'-');
    }
    let c = cents.unsigned_abs();
    crate::rows::push_int(buf, (c / 100) as i64);
    buf.push(b'.');
    buf.push(b'0' + (c % 100 / 10) as u8);
    buf.push(b'0' + (c % 10) as u8);
}

/// Appends a rate in ten-thousandths (`0..=9999`) as `0.dddd`.
pub fn push_rate(buf: &mut Vec<u8>, ten_thousandths: i64) {
    buf.extend_from_slice(format!("0.{ten_thousandths:04}").as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_specification_examples() {
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(40), "BARPRESBAR");
        assert_eq!(last_name(0), "BARBARBAR");
        let longest = (0..1000).map(|n| last_name(n).len()).max();
        assert_eq!(longest, Some(15));
    }

    #[test]
    fn nurand_formula_and_range() {
        assert_eq!(nurand_from(255, 999, 0, 0, 999), 23);
        assert_eq!(nurand_from(1, 2, 10, 0, 999), 13);
        assert_eq!(nurand_from(0, 999, 1, 0, 999), 0);
        assert_eq!(nurand_from(0, 3000, 0, 1, 3000), 1);
        let mut rng = stream(7, Stream::Customer, 1);
        let mut seen = [0u32; 1000];
        for _ in 0..100_000 {
            let v = rng.nurand(255, 0, 999, C_LAST_LOAD);
            assert!((0..=999).contains(&v));
            seen[v as usize] += 1;
        }
        // Non-uniform: the most frequent value is far more common than the mean (100).
        assert!(seen.iter().max().copied().unwrap_or(0) > 300);
        for _ in 0..10_000 {
            let v = rng.nurand(8191, 1, 100_000, 7911);
            assert!((1..=100_000).contains(&v));
        }
    }

    #[test]
    fn strings_have_the_asked_lengths_and_characters() {
        let mut rng = stream(1, Stream::Item, 0);
        for _ in 0..1000 {
            let mut b = Vec::new();
            rng.push_a_string(&mut b, 8, 16);
            assert!((8..=16).contains(&b.len()));
            assert!(b.iter().all(u8::is_ascii_alphanumeric));
            let mut z = Vec::new();
            rng.push_zip(&mut z);
            assert_eq!(z.len(), 9);
            assert!(z.ends_with(b"11111") && z.iter().all(u8::is_ascii_digit));
            let mut s = Vec::new();
            rng.push_state(&mut s);
            assert!(s.len() == 2 && s.iter().all(u8::is_ascii_uppercase));
        }
    }

    #[test]
    fn original_marks_about_one_row_in_ten() {
        let mut rng = stream(3, Stream::Stock, 2);
        let marked = (0..10_000)
            .filter(|_| {
                let mut b = Vec::new();
                rng.push_data_with_original(&mut b);
                assert!((26..=50).contains(&b.len()));
                b.windows(8).any(|w| w == ORIGINAL)
            })
            .count();
        assert!((850..=1150).contains(&marked), "{marked}");
    }

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let draw = |seed, t, w| {
            let mut r = stream(seed, t, w);
            (0..4).map(|_| r.uniform(0, 1 << 40)).collect::<Vec<_>>()
        };
        assert_eq!(draw(1, Stream::Stock, 1), draw(1, Stream::Stock, 1));
        assert_ne!(draw(1, Stream::Stock, 1), draw(1, Stream::Stock, 2));
        assert_ne!(draw(1, Stream::Stock, 1), draw(1, Stream::Customer, 1));
        assert_ne!(draw(1, Stream::Stock, 1), draw(2, Stream::Stock, 1));
    }

    #[test]
    fn run_constants_keep_an_allowed_distance() {
        let all: Vec<i64> = (0..53).map(run_c_last).collect();
        for c in &all {
            assert!((0..=255).contains(c));
            assert!(allowed_c_last_delta(C_LAST_LOAD - c), "{c}");
        }
        let mut distinct = all.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 53);
        assert_eq!((65..=119).filter(|d| allowed_c_last_delta(*d)).count(), 53);
    }

    #[test]
    fn money_and_rates() {
        let text = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = Vec::new();
            f(&mut b);
            String::from_utf8(b).unwrap()
        };
        assert_eq!(text(&|b| push_money(b, -1000)), "-10.00");
        assert_eq!(text(&|b| push_money(b, 5)), "0.05");
        assert_eq!(text(&|b| push_money(b, 30_000_000)), "300000.00");
        assert_eq!(text(&|b| push_rate(b, 2000)), "0.2000");
        assert_eq!(text(&|b| push_rate(b, 7)), "0.0007");
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut rng = stream(5, Stream::Orders, 1);
        let mut v: Vec<i64> = (1..=3000).collect();
        rng.shuffle(&mut v);
        assert_ne!(v, (1..=3000).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (1..=3000).collect::<Vec<_>>());
    }
}
