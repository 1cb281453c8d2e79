//! pgbench's pseudo-random generator (xoroshiro128**), its seeding, the
//! distributions, the hashes and `permute`, bit-exact.

/// xoroshiro128** state, seeded as PostgreSQL's `pg_prng_seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prng {
    s0: u64,
    s1: u64,
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Prng {
    /// Seed from a 64-bit value (two SplitMix64 steps).
    pub fn from_seed(seed: u64) -> Prng {
        let mut x = seed;
        let s0 = splitmix64(&mut x);
        let s1 = splitmix64(&mut x);
        if s0 == 0 && s1 == 0 {
            Prng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            }
        } else {
            Prng { s0, s1 }
        }
    }

    /// The raw state (s0, s1).
    pub fn state(&self) -> (u64, u64) {
        (self.s0, self.s1)
    }

    /// Next 64-bit output.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let mut s1 = self.s1;
        let out = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        s1 ^= s0;
        self.s0 = s0.rotate_left(24) ^ s1 ^ (s1 << 16);
        self.s1 = s1.rotate_left(37);
        out
    }

    /// A new generator seeded from this one's next output (`initRandomState`).
    pub fn derive(&mut self) -> Prng {
        Prng::from_seed(self.next_u64())
    }

    /// Uniform in `[rmin, rmax]`; no draw when `rmax <= rmin` (returns `rmin`).
    pub fn uniform_u64(&mut self, rmin: u64, rmax: u64) -> u64 {
        if rmax > rmin {
            let range = rmax - rmin;
            let shift = range.leading_zeros();
            loop {
                let v = self.next_u64() >> shift;
                if v <= range {
                    return rmin + v;
                }
            }
        } else {
            rmin
        }
    }

    /// Uniform double in `[0, 1)` with 52 random bits.
    #[inline]
    pub fn double(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * (1.0 / 4_503_599_627_370_496.0)
    }

    /// Standard normal value (Box-Muller, two draws).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.double();
        let u2 = 1.0 - self.double();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
    }

    /// `random(lb, ub)`: `lb + uniform(0, ub - lb)` with two's complement wrap.
    /// The caller checks the range (`lb <= ub`, size fits in int64).
    pub fn random(&mut self, lb: i64, ub: i64) -> i64 {
        lb.wrapping_add(self.uniform_u64(0, ub.wrapping_sub(lb) as u64) as i64)
    }

    /// `random_exponential(lb, ub, p)` (p > 0 checked by the caller).
    pub fn exponential(&mut self, lb: i64, ub: i64, p: f64) -> i64 {
        let cut = (-p).exp();
        let u = 1.0 - self.double();
        let r = -(cut + (1.0 - cut) * u).ln() / p;
        let n = ub.wrapping_sub(lb).wrapping_add(1) as f64;
        lb.wrapping_add(crate::strconv::c_double_to_i64(n * r))
    }

    /// `random_gaussian(lb, ub, p)` (p >= 2 checked by the caller).
    pub fn gaussian(&mut self, lb: i64, ub: i64, p: f64) -> i64 {
        let z = loop {
            let z = self.normal();
            if !(z < -p || z >= p) {
                break z;
            }
        };
        let r = (z + p) / (p * 2.0);
        let n = ub.wrapping_sub(lb).wrapping_add(1) as f64;
        lb.wrapping_add(crate::strconv::c_double_to_i64(n * r))
    }

    /// `random_zipfian(lb, ub, s)` (1.001 <= s <= 1000 checked by the caller).
    pub fn zipfian(&mut self, lb: i64, ub: i64, s: f64) -> i64 {
        let n = ub.wrapping_sub(lb).wrapping_add(1);
        let x = if n <= 1 {
            1
        } else {
            let b = 2f64.powf(s - 1.0);
            loop {
                let u = self.double();
                let v = self.double();
                let x = u.powf(-1.0 / (s - 1.0)).floor();
                let t = (1.0 + 1.0 / x).powf(s - 1.0);
                if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
                    break crate::strconv::c_double_to_i64(x);
                }
            }
        };
        lb.wrapping_sub(1).wrapping_add(x)
    }
}

/// 64-bit FNV-1a over the 8 bytes of `v` (arithmetic shifts), as pgbench's `hash_fnv1a`.
pub fn hash_fnv1a(v: i64, seed: i64) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed as u64;
    let mut v = v;
    for _ in 0..8 {
        let octet = (v & 0xff) as u64;
        v >>= 8;
        h = (h ^ octet).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h as i64
}

/// 64-bit MurmurHash2 of one 8-byte block, as pgbench's `hash_murmur2`/`hash`.
pub fn hash_murmur2(v: i64, seed: i64) -> i64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = (seed as u64) ^ 0x3525_3c9a_de8f_4ca8;
    let mut k = (v as u64).wrapping_mul(M);
    k ^= k >> R;
    k = k.wrapping_mul(M);
    h ^= k;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h as i64
}

/// pgbench's `permute(v, size, seed)` (size > 0 checked by the caller).
pub fn permute(val: i64, isize: i64, seed: i64) -> i64 {
    if isize < 2 {
        return 0;
    }
    let size = isize as u64;
    let mut rng = Prng::from_seed(seed as u64);
    let mut v = (val as u64) % size;
    // Work modulo the largest power of 2 <= size; l >= 1 since size >= 2.
    let l = 63 - size.leading_zeros();
    let mask = (1u64 << l) - 1;
    for _ in 0..6 {
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (l - 1));
        }
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (l - 1));
            v = size - 1 - t;
        }
        v = (v + rng.uniform_u64(0, size - 1)) % size;
    }
    v as i64
}

/// How `--random-seed` / `PGBENCH_RANDOM_SEED` was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedSpec {
    /// `time`: the caller supplies the monotonic clock in microseconds.
    Time,
    /// `rand`: the caller supplies a strong random u64.
    Rand,
    /// An explicit unsigned integer.
    Value(u64),
}

/// Parse a seed option value as pgbench does (`sscanf("%lu%c")`: leading blanks and a
/// sign allowed, negative values wrap, overflow saturates). On error the caller prints
/// [`seed_error_lines`].
pub fn parse_seed_spec(s: &str) -> Result<SeedSpec, String> {
    match s {
        "time" => return Ok(SeedSpec::Time),
        "rand" => return Ok(SeedSpec::Rand),
        _ => {}
    }
    let b = s.as_bytes();
    let r = pgrush_cconv::strtoul(b);
    // sscanf's %lu must match digits, and nothing may follow.
    let mut i = 0;
    while i < b.len() && pgrush_cconv::is_space(b[i]) {
        i += 1;
    }
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let has_digit = i < b.len() && b[i].is_ascii_digit();
    if !has_digit || !r.is_whole(b) {
        return Err(s.to_string());
    }
    Ok(SeedSpec::Value(r.value))
}

/// The two error lines pgbench prints for an unparsable seed (error, then detail):
/// `unrecognized random seed option "<s>"` and
/// `Expecting an unsigned integer, "time" or "rand".`; then the caller adds
/// `error while setting random seed from --random-seed option` (or
/// `... from PGBENCH_RANDOM_SEED environment variable`).
pub fn seed_error_lines(s: &str) -> (String, String) {
    (
        format!("unrecognized random seed option \"{s}\""),
        "Expecting an unsigned integer, \"time\" or \"rand\".".to_string(),
    )
}

/// Per-thread generators (script choice, throttling, log sampling).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadRngs {
    /// Script choice (`chooseScript`).
    pub choose: Prng,
    /// `-R` throttling delays.
    pub throttle: Prng,
    /// `--sampling-rate`.
    pub sample: Prng,
}

/// Everything pgbench draws from its base generator, in pgbench's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seeds {
    /// The base seed (`random_seed` variable is this value as a signed int64).
    pub random_seed: u64,
    /// One expression generator per client.
    pub clients: Vec<Prng>,
    /// `default_seed` (None when given with `-D`: then no draw happens).
    pub default_seed: Option<i64>,
    /// One set per thread.
    pub threads: Vec<ThreadRngs>,
}

impl Seeds {
    /// Draw, from a base generator seeded with `random_seed`: the client generators,
    /// `default_seed` (unless `default_seed_defined`), then per thread the choose,
    /// throttle and sample generators.
    pub fn plan(
        random_seed: u64,
        nclients: usize,
        nthreads: usize,
        default_seed_defined: bool,
    ) -> Seeds {
        let mut base = Prng::from_seed(random_seed);
        let clients = (0..nclients).map(|_| base.derive()).collect();
        let default_seed = if default_seed_defined {
            None
        } else {
            Some(base.next_u64() as i64)
        };
        let threads = (0..nthreads)
            .map(|_| {
                let choose = base.derive();
                let throttle = base.derive();
                let sample = base.derive();
                ThreadRngs {
                    choose,
                    throttle,
                    sample,
                }
            })
            .collect();
        Seeds {
            random_seed,
            clients,
            default_seed,
            threads,
        }
    }
}

/// The part of a run's generators one shard keeps (see [`Seeds::plan_slice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedSlice {
    /// Clients of the whole run.
    pub clients_total: usize,
    /// The shard's first client.
    pub first_client: usize,
    /// The shard's clients.
    pub clients: usize,
    /// Threads of the whole run.
    pub threads_total: usize,
    /// The shard's first thread.
    pub first_thread: usize,
    /// The shard's threads.
    pub threads: usize,
}

impl Seeds {
    /// What [`Seeds::plan`] for the whole run would give, then [`Seeds::slice`], without
    /// keeping the other shards' generators: the draws before, between and after the
    /// slice are made and dropped (memory grows with the shard, not the whole run).
    /// `None` when the slice is out of range.
    pub fn plan_slice(
        random_seed: u64,
        part: &SeedSlice,
        default_seed_defined: bool,
    ) -> Option<Seeds> {
        let client_end = part.first_client.checked_add(part.clients)?;
        let thread_end = part.first_thread.checked_add(part.threads)?;
        if client_end > part.clients_total || thread_end > part.threads_total {
            return None;
        }
        let mut base = Prng::from_seed(random_seed);
        let skip = |base: &mut Prng, draws: usize| {
            for _ in 0..draws {
                base.next_u64();
            }
        };
        skip(&mut base, part.first_client);
        let clients = (0..part.clients).map(|_| base.derive()).collect();
        skip(&mut base, part.clients_total - client_end);
        let default_seed = if default_seed_defined {
            None
        } else {
            Some(base.next_u64() as i64)
        };
        // Three generators a thread: choose, throttle, sample.
        skip(&mut base, 3 * part.first_thread);
        let threads = (0..part.threads)
            .map(|_| ThreadRngs {
                choose: base.derive(),
                throttle: base.derive(),
                sample: base.derive(),
            })
            .collect();
        Some(Seeds {
            random_seed,
            clients,
            default_seed,
            threads,
        })
    }

    /// The slice of a bigger run's seeds that one shard keeps: `clients` generators
    /// from `first_client` and `threads` thread sets from `first_thread` (the draws
    /// of the whole run are made in its order, so each client and thread draws what
    /// it would in that one run). `None` when the slice is out of range.
    pub fn slice(
        &self,
        first_client: usize,
        clients: usize,
        first_thread: usize,
        threads: usize,
    ) -> Option<Seeds> {
        let client_end = first_client.checked_add(clients)?;
        let thread_end = first_thread.checked_add(threads)?;
        Some(Seeds {
            random_seed: self.random_seed,
            clients: self.clients.get(first_client..client_end)?.to_vec(),
            default_seed: self.default_seed,
            threads: self.threads.get(first_thread..thread_end)?.to_vec(),
        })
    }
}

/// pgbench's `chooseScript`: no draw with a single script; else a uniform draw in
/// `[0, total-1]` walked through the weights.
pub fn choose_script(rng: &mut Prng, weights: &[u32]) -> usize {
    if weights.len() <= 1 {
        return 0;
    }
    let total: i64 = weights.iter().map(|&w| i64::from(w)).sum();
    let mut w = rng.random(0, total - 1);
    let mut i = 0;
    loop {
        w -= i64::from(weights[i]);
        i += 1;
        if w < 0 || i >= weights.len() {
            return i - 1;
        }
    }
}

/// Mean throttling delay in µs for `-R rate` with `nthreads` threads.
pub fn throttle_mean_us(rate: f64, nthreads: usize) -> f64 {
    1_000_000.0 / rate * nthreads as f64
}

/// One Poisson delay in µs (`getPoissonRand`): `trunc(-ln(1 - u) * mean + 0.5)`.
pub fn throttle_delay_us(rng: &mut Prng, mean: f64) -> i64 {
    let u = 1.0 - rng.double();
    crate::strconv::c_double_to_i64(-u.ln() * mean + 0.5)
}

/// Log sampling: whether this transaction is logged (`draw <= rate`).
pub fn sample(rng: &mut Prng, rate: f64) -> bool {
    rng.double() <= rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors() {
        let mut p = Prng::from_seed(0);
        assert_eq!(p.state(), (0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4));
        assert_eq!(p.next_u64(), 0xdec90d521e93e35d);
        assert_eq!(p.next_u64(), 0x6d33ac6f18895e08);
        assert_eq!(p.next_u64(), 0xab21904eec6fa48a);
        let mut p = Prng::from_seed(1);
        assert_eq!(p.state(), (0x910a2dec89025cc1, 0xbeeb8da1658eec67));
        assert_eq!(p.next_u64(), 0x65094a0ab526fa3a);
        let mut p = Prng::from_seed(1);
        assert_eq!(p.double(), 0.3946729923383392);
        assert_eq!(p.double(), 0.7789436795282156);
        let mut p = Prng::from_seed(12345);
        assert_eq!(p.state(), (0x22118258a9d111a0, 0x346edce5f713f8ed));
        let outs: Vec<u64> = (0..4).map(|_| p.next_u64()).collect();
        assert_eq!(
            outs,
            [
                0x89f4caece00c92fd,
                0x79e82d14ca5e32f1,
                0xe0ee89f06b09ec55,
                0x991a5fdcdc06551e
            ]
        );
    }

    #[test]
    fn distributions_vector() {
        let seeds = Seeds::plan(12345, 2, 1, false);
        assert_eq!(seeds.default_seed, Some(-2238700299075589035));
        let mut c = seeds.clients.clone();
        let mut row = |i: usize| {
            let r = &mut c[i];
            (
                r.random(1, 1000000),
                r.random(-5000, 5000),
                r.exponential(1, 1000, 2.5),
                r.gaussian(1, 1000, 2.5),
                r.zipfian(1, 1000, 1.5),
            )
        };
        assert_eq!(row(0), (453054, 2874, 167, 500, 1));
        assert_eq!(row(1), (287770, 2995, 816, 547, 102));
        assert_eq!(row(0), (511963, -196, 399, 345, 3));
        assert_eq!(row(1), (195578, -230, 400, 740, 1));
    }

    #[test]
    fn hashes_and_permute() {
        let ds = -2238700299075589035;
        assert_eq!(hash_murmur2(12345, ds), 577212503624664099);
        assert_eq!(hash_fnv1a(12345, 678), -4997051310545852918);
        assert_eq!(hash_murmur2(-1, 0), 4219408603045787357);
        assert_eq!(permute(3, 10, ds), 6);
        assert_eq!(permute(123456, 1000000, 42), 268783);
        assert_eq!(hash_fnv1a(-12345, 5), -555290874814727808);
        assert_eq!(hash_murmur2(-7, -3), -613166819281088844);
        assert_eq!(permute(-5, 7, -9), 3);
        assert_eq!(permute(123, 2, 0), 1);
        assert_eq!(permute(9223372036854775807, 1000003, 77), 410910);
        assert_eq!(hash_fnv1a(9223372036854775807, -1), 9116682525541297170);
    }

    #[test]
    fn thread_uses() {
        // Seed 777, 3 clients, 2 threads, weights 2,3,1: thread 1 picks this sequence.
        let s = Seeds::plan(777, 3, 2, false);
        let mut ch = s.threads[1].choose;
        let picks: Vec<usize> = (0..12)
            .map(|_| choose_script(&mut ch, &[2, 3, 1]))
            .collect();
        assert_eq!(picks, [1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0]);
        let s = Seeds::plan(31337, 1, 1, false);
        let mut th = s.threads[0].throttle;
        let mean = throttle_mean_us(100.0, 1);
        let d: Vec<i64> = (0..6).map(|_| throttle_delay_us(&mut th, mean)).collect();
        assert_eq!(d, [17547, 24509, 10858, 3749, 2417, 7367]);
        let s = Seeds::plan(4242, 1, 1, false);
        let mut sa = s.threads[0].sample;
        let logged: Vec<usize> = (1..=20).filter(|_| sample(&mut sa, 0.5)).collect();
        assert_eq!(logged, [2, 6, 7, 10, 12, 14, 15, 16, 19, 20]);
    }

    #[test]
    fn a_slice_keeps_what_the_whole_run_drew() {
        let whole = Seeds::plan(7, 8, 4, false);
        let shard = whole.slice(4, 2, 2, 1).expect("in range");
        assert_eq!(shard.clients, whole.clients[4..6]);
        assert_eq!(shard.threads, whole.threads[2..3]);
        assert_eq!(shard.default_seed, whole.default_seed);
        // A shard's own plan would draw other generators.
        assert_ne!(Seeds::plan(7, 2, 1, false).clients, shard.clients);
        assert!(whole.slice(7, 2, 0, 1).is_none());
        assert!(whole.slice(0, 1, 4, 1).is_none());
        for default_seed_defined in [false, true] {
            let whole = Seeds::plan(7, 8, 4, default_seed_defined);
            let part = SeedSlice {
                clients_total: 8,
                first_client: 4,
                clients: 2,
                threads_total: 4,
                first_thread: 2,
                threads: 1,
            };
            let planned = Seeds::plan_slice(7, &part, default_seed_defined);
            assert_eq!(planned, whole.slice(4, 2, 2, 1));
            let past = SeedSlice {
                first_client: 7,
                ..part
            };
            assert_eq!(Seeds::plan_slice(7, &past, false), None);
        }
    }

    #[test]
    fn seed_specs() {
        assert_eq!(parse_seed_spec("time"), Ok(SeedSpec::Time));
        assert_eq!(parse_seed_spec(" 5"), Ok(SeedSpec::Value(5)));
        assert_eq!(parse_seed_spec("-1"), Ok(SeedSpec::Value(u64::MAX)));
        assert!(parse_seed_spec("5 ").is_err());
        assert!(parse_seed_spec("").is_err());
        assert!(parse_seed_spec("0x10").is_err());
    }
}
