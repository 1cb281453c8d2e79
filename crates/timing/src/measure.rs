//! The measurement loop: read a clock back to back for a duration and collect
//! pg_test_timing's microsecond histogram, optionally a nanosecond histogram
//! with percentiles, and every backwards step.
//!
//! The loop reproduces pg_test_timing 18: one reading per iteration, each
//! reading truncated to whole microseconds, the bucket of an iteration is the
//! bit length of the microsecond difference to the previous reading, and the
//! loop runs while the elapsed whole microseconds since the first reading are
//! below the duration. The per-loop time divides the time from the first
//! reading to one more reading after the loop by the number of iterations.

use crate::clock::ClockSource;
use hdrhistogram::Histogram;

/// Number of microsecond buckets (pg_test_timing keeps 32).
pub const US_BUCKETS: usize = 32;
/// Number of nanosecond power-of-two buckets.
pub const NS_BUCKETS: usize = 64;
/// Largest step the nanosecond histogram tells apart (larger ones are clamped): one hour.
const HIST_MAX_NS: u64 = 3_600_000_000_000;

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeasureConfig {
    /// How long to read the clock, in nanoseconds (whole microseconds count).
    pub duration_ns: i64,
    /// Collect the nanosecond histogram and percentiles.
    pub detail: bool,
    /// pg_test_timing 18's behaviour: stop at the first step that goes back a
    /// whole microsecond (otherwise backwards steps are counted and the loop goes on).
    pub stop_on_backwards: bool,
}

/// Backwards steps seen (a reading smaller than the one before it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backwards {
    /// How many readings went backwards.
    pub count: u64,
    /// The largest backwards step, in nanoseconds (positive; 0 when none).
    pub largest_ns: i64,
}

/// Differences below this many ns are counted in a flat array inside the loop
/// (one compare and one increment); larger ones go to the histogram at once.
const SMALL_NS: usize = 4096;

/// Nanosecond-resolution statistics of the differences between consecutive readings.
///
/// Inside the loop, small differences only bump a counter in a flat array;
/// [`NsDetail::settle`] folds them into the histogram when the loop is over.
#[derive(Debug, Clone)]
pub struct NsDetail {
    hist: Histogram<u64>,
    small: Box<[u64; SMALL_NS]>,
    /// Counts per power-of-two bucket: index = bit length of the difference in ns.
    pub pow2: [u64; NS_BUCKETS],
    /// The largest forward difference, exact.
    pub max_ns: u64,
    /// The smallest non-zero difference, exact (`u64::MAX` when none).
    min_nonzero_ns: u64,
}

/// The percentiles pgrush reports, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    #[serde(rename = "p99.9")]
    pub p99_9: u64,
    /// 99.99th percentile.
    #[serde(rename = "p99.99")]
    pub p99_99: u64,
    /// Largest difference.
    pub max: u64,
}

impl NsDetail {
    fn new() -> NsDetail {
        NsDetail {
            // 3 significant digits: values below 2048 ns are exact.
            hist: Histogram::new_with_max(HIST_MAX_NS, 3)
                .expect("constant histogram bounds are valid"),
            small: Box::new([0; SMALL_NS]),
            pow2: [0; NS_BUCKETS],
            max_ns: 0,
            min_nonzero_ns: u64::MAX,
        }
    }

    #[inline(always)]
    fn record(&mut self, diff_ns: u64) {
        match self.small.get_mut(diff_ns as usize) {
            Some(count) => *count += 1,
            None => self.record_large(diff_ns),
        }
    }

    /// Folds the flat array into the histogram, the buckets and the extremes.
    fn settle(&mut self) {
        for (v, count) in self.small.iter_mut().enumerate() {
            if *count == 0 {
                continue;
            }
            let v = v as u64;
            let _ = self.hist.record_n(v, *count);
            self.pow2[bit_length(v)] += *count;
            self.max_ns = self.max_ns.max(v);
            if v != 0 {
                self.min_nonzero_ns = self.min_nonzero_ns.min(v);
            }
            *count = 0;
        }
    }

    #[cold]
    fn record_large(&mut self, diff_ns: u64) {
        self.hist.saturating_record(diff_ns);
        self.pow2[bit_length(diff_ns)] += 1;
        if diff_ns > self.max_ns {
            self.max_ns = diff_ns;
        }
        if diff_ns != 0 && diff_ns < self.min_nonzero_ns {
            self.min_nonzero_ns = diff_ns;
        }
    }

    /// Number of forward (or zero) differences recorded.
    pub fn samples(&self) -> u64 {
        self.hist.len()
    }

    /// p50 … p99.99 and the maximum.
    pub fn percentiles(&self) -> Percentiles {
        if self.hist.is_empty() {
            return Percentiles::default();
        }
        let q = |q: f64| self.hist.value_at_quantile(q).min(self.max_ns);
        Percentiles {
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
            max: self.max_ns,
        }
    }

    /// The smallest non-zero difference observed (the clock's effective granularity).
    pub fn min_step_ns(&self) -> Option<u64> {
        (self.min_nonzero_ns != u64::MAX).then_some(self.min_nonzero_ns)
    }
}

/// The result of one measurement.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Iterations (clock readings after the first).
    pub loops: u64,
    /// Time from the first reading to the reading after the loop, in ns.
    pub elapsed_ns: i64,
    /// pg_test_timing's histogram: index = bit length of the difference in whole µs.
    pub us_histogram: [u64; US_BUCKETS],
    /// Nanosecond statistics, when asked for.
    pub detail: Option<NsDetail>,
    /// Backwards steps (at nanosecond resolution; not tracked by pg_test_timing's
    /// loop, stop-at-first without detail, which only sees whole-µs warps).
    pub backwards: Backwards,
    /// Set when the loop stopped at a backwards step (pg_test_timing
    /// behaviour): the step in whole microseconds (negative).
    pub warp_us: Option<i64>,
}

impl Measurement {
    /// Nanoseconds per iteration, overhead included (`None` without iterations).
    pub fn per_loop_ns(&self) -> Option<f64> {
        (self.loops > 0).then(|| self.elapsed_ns as f64 / 1e9 * 1e9 / self.loops as f64)
    }

    /// Index of the highest non-empty microsecond bucket (0 when all are empty).
    pub fn max_us_bucket(&self) -> usize {
        self.us_histogram.iter().rposition(|&c| c != 0).unwrap_or(0)
    }
}

/// Bit length of `v` (0 for 0).
#[inline]
pub fn bit_length(v: u64) -> usize {
    (u64::BITS - v.leading_zeros()) as usize
}

/// Reads `clock` back to back for `cfg.duration_ns`.
pub fn measure<C: ClockSource>(clock: &mut C, cfg: &MeasureConfig) -> Measurement {
    match (cfg.detail, cfg.stop_on_backwards) {
        (false, false) => run::<C, false, false>(clock, cfg.duration_ns),
        (false, true) => run::<C, false, true>(clock, cfg.duration_ns),
        (true, false) => run::<C, true, false>(clock, cfg.duration_ns),
        (true, true) => run::<C, true, true>(clock, cfg.duration_ns),
    }
}

/// The loop, specialised so that unused bookkeeping costs nothing.
fn run<C: ClockSource, const DETAIL: bool, const STOP: bool>(
    clock: &mut C,
    duration_ns: i64,
) -> Measurement {
    let mut us_histogram = [0u64; US_BUCKETS];
    let mut detail = DETAIL.then(NsDetail::new);
    let mut backwards = Backwards::default();
    let mut loops: u64 = 0;
    let total_us = duration_ns / 1000;

    let start = clock.now_ns();
    let mut prev_ns = start;
    let mut cur_us = start / 1000;
    let mut elapsed_us: i64 = 0;
    while elapsed_us < total_us {
        let now = clock.now_ns();
        let prev_us = cur_us;
        cur_us = now / 1000;
        let diff_us = cur_us.wrapping_sub(prev_us);
        let diff_ns = now.wrapping_sub(prev_ns);
        prev_ns = now;
        if STOP && diff_us < 0 {
            if let Some(d) = detail.as_mut() {
                d.settle();
            }
            return Measurement {
                loops,
                elapsed_ns: now.wrapping_sub(start),
                us_histogram,
                detail,
                backwards: Backwards {
                    count: backwards.count + 1,
                    largest_ns: backwards.largest_ns.max(diff_ns.saturating_neg()),
                },
                warp_us: Some(diff_us),
            };
        }
        if STOP && !DETAIL {
            // pg_test_timing's own loop: only whole-microsecond steps are seen.
            us_histogram[bit_length(diff_us as u64).min(US_BUCKETS - 1)] += 1;
        } else if diff_ns < 0 {
            backwards.count += 1;
            backwards.largest_ns = backwards.largest_ns.max(diff_ns.saturating_neg());
            if STOP {
                // Less than a whole microsecond back: pg_test_timing files it under 0.
                us_histogram[0] += 1;
            }
        } else {
            us_histogram[bit_length(diff_us as u64).min(US_BUCKETS - 1)] += 1;
            if DETAIL && let Some(d) = detail.as_mut() {
                d.record(diff_ns as u64);
            }
        }
        loops += 1;
        elapsed_us = now.wrapping_sub(start) / 1000;
    }
    let end = clock.now_ns();
    if let Some(d) = detail.as_mut() {
        d.settle();
    }
    Measurement {
        loops,
        elapsed_ns: end.wrapping_sub(start),
        us_histogram,
        detail,
        backwards,
        warp_us: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock that replays fixed steps (cycling), starting at `start`.
    struct StepClock {
        now: i64,
        steps: Vec<i64>,
        i: usize,
        reads: u64,
    }

    impl StepClock {
        fn new(start: i64, steps: &[i64]) -> StepClock {
            StepClock {
                now: start,
                steps: steps.to_vec(),
                i: 0,
                reads: 0,
            }
        }
    }

    impl ClockSource for StepClock {
        fn now_ns(&mut self) -> i64 {
            self.reads += 1;
            if self.reads == 1 {
                return self.now;
            }
            self.now += self.steps[self.i % self.steps.len()];
            self.i += 1;
            self.now
        }
    }

    fn cfg(duration_ns: i64, detail: bool, stop: bool) -> MeasureConfig {
        MeasureConfig {
            duration_ns,
            detail,
            stop_on_backwards: stop,
        }
    }

    #[test]
    fn bit_lengths() {
        assert_eq!(bit_length(0), 0);
        assert_eq!(bit_length(1), 1);
        assert_eq!(bit_length(2), 2);
        assert_eq!(bit_length(3), 2);
        assert_eq!(bit_length(1024), 11);
        assert_eq!(bit_length(u64::MAX), 64);
    }

    #[test]
    fn steady_clock_fills_microsecond_buckets_like_pg_test_timing() {
        // 250 ns per reading, starting on a microsecond boundary: every fourth
        // reading crosses into the next microsecond (diff 1 -> bucket 1).
        let mut c = StepClock::new(1_000_000, &[250]);
        let m = measure(&mut c, &cfg(1_000_000, true, false));
        // The loop stops when 1000 whole µs have elapsed: 4000 readings.
        assert_eq!(m.loops, 4000);
        assert_eq!(m.us_histogram[0], 3000);
        assert_eq!(m.us_histogram[1], 1000);
        assert_eq!(m.max_us_bucket(), 1);
        assert_eq!(m.elapsed_ns, 4001 * 250);
        assert!((m.per_loop_ns().unwrap() - 250.0625).abs() < 1e-9);
        let d = m.detail.as_ref().unwrap();
        assert_eq!(d.samples(), 4000);
        assert_eq!(d.pow2[bit_length(250)], 4000);
        assert_eq!(
            d.percentiles(),
            Percentiles {
                p50: 250,
                p90: 250,
                p99: 250,
                p99_9: 250,
                p99_99: 250,
                max: 250
            }
        );
        assert_eq!(d.min_step_ns(), Some(250));
        assert_eq!(m.backwards, Backwards::default());
    }

    #[test]
    fn percentiles_of_a_mixed_distribution() {
        // Per cycle: 985 steps of 20 ns, 10 of 5000 ns, 5 of 100 µs (569.7 µs).
        let mut steps = vec![20; 985];
        steps.extend([5000; 10]);
        steps.extend([100_000; 5]);
        let mut c = StepClock::new(0, &steps);
        let m = measure(&mut c, &cfg(20 * 569_700, true, false));
        assert_eq!(m.loops, 20_000);
        let d = m.detail.as_ref().unwrap();
        let p = d.percentiles();
        assert_eq!((p.p50, p.p90), (20, 20));
        assert!((4995..=5005).contains(&p.p99), "{p:?}");
        assert!((99_900..=100_000).contains(&p.p99_9), "{p:?}");
        assert!((99_900..=100_000).contains(&p.p99_99), "{p:?}");
        assert_eq!(p.max, 100_000);
        assert_eq!(d.min_step_ns(), Some(20));
        assert_eq!(d.pow2[bit_length(20)], 19_700);
        assert_eq!(d.pow2[bit_length(5000)], 200);
        assert_eq!(d.pow2[bit_length(100_000)], 100);
        // The 5000 ns steps land in µs bucket 3 (diff 4 or 5 µs) and the
        // 100 µs steps in bucket 7 (diff 100 µs).
        assert_eq!(m.us_histogram[3], 200);
        assert_eq!(m.us_histogram[7], 100);
        assert_eq!(m.max_us_bucket(), 7);
        assert_eq!(m.us_histogram.iter().sum::<u64>(), m.loops);
    }

    #[test]
    fn backwards_steps_are_counted_and_the_loop_goes_on() {
        let mut c = StepClock::new(10_000, &[300, 300, -700, 300, 300, 300, -2500, 5000]);
        let m = measure(&mut c, &cfg(100_000, true, false));
        assert!(m.warp_us.is_none());
        let cycles = m.loops / 8;
        assert!(cycles >= 10);
        assert!(m.backwards.count >= 2 * cycles);
        assert_eq!(m.backwards.largest_ns, 2500);
        let d = m.detail.as_ref().unwrap();
        // Backwards steps are not in the histograms.
        assert_eq!(d.samples() + m.backwards.count, m.loops);
        assert_eq!(m.us_histogram.iter().sum::<u64>(), d.samples());
        assert_eq!(d.percentiles().max, 5000);
    }

    #[test]
    fn compat_mode_stops_at_first_whole_microsecond_warp() {
        // 300 ns back from 1_000_100 to 999_800 crosses a µs boundary: warp -1.
        let mut c = StepClock::new(999_800, &[150, 150, -300, 10]);
        let m = measure(&mut c, &cfg(1_000_000, false, true));
        assert_eq!(m.warp_us, Some(-1));
        assert_eq!(m.loops, 2);
        assert_eq!(m.backwards.largest_ns, 300);

        // Backwards by less than a microsecond without crossing one: pg_test_timing
        // does not notice (bucket 0) and goes on; with the ns detail it is counted.
        for detail in [false, true] {
            let mut c = StepClock::new(1_000_000, &[400, -200, 800]);
            let m = measure(&mut c, &cfg(3_000, detail, true));
            assert_eq!(m.warp_us, None);
            assert_eq!(m.loops, 9);
            assert_eq!(m.us_histogram[0], 6);
            assert_eq!(m.us_histogram.iter().sum::<u64>(), m.loops);
            assert_eq!(m.backwards.count, if detail { 3 } else { 0 });
        }
    }

    #[test]
    fn coarse_clock_mostly_zero_steps() {
        let mut steps = vec![0; 99];
        steps.push(4_000_000);
        let mut c = StepClock::new(0, &steps);
        let m = measure(&mut c, &cfg(40_000_000, true, false));
        let d = m.detail.as_ref().unwrap();
        assert_eq!(d.percentiles().p50, 0);
        assert_eq!(d.min_step_ns(), Some(4_000_000));
        assert_eq!(d.pow2[0], m.loops - m.loops / 100);
        // 4000 µs -> bit length 12 -> bucket label 4096.
        assert_eq!(m.max_us_bucket(), 12);
    }
}
