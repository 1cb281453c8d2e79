//! Latency percentiles (`--percentiles[=LIST]`): list parsing, the percentile maths on
//! HDR histograms, and the text lines printed after pgbench's report.
//!
//! A percentile `p` of `n` recorded values is the smallest recorded value `v` such that at
//! least `p`% of the values are ≤ `v` (the "nearest rank" definition: rank `⌈p·n/100⌉`,
//! at least 1), reported at the histogram's resolution (3 significant digits; the highest
//! value equivalent to the bucket, so values below 2048 µs are exact).

use crate::textbuf::TextBuf;
use pgrush_stats::histogram::HISTOGRAM_MAX_US;
use pgrush_stats::{GrowingHistogram, LatencyHistogram, RunSummary, SparseHistogram};
use std::fmt::Write as _;

/// The list used when `--percentiles` is given without a value.
pub const DEFAULT_PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// A bad `--percentiles` list (given on the command line or saved in a run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PercentileError {
    /// The list is empty or has an empty element.
    #[error("invalid --percentiles list \"{0}\": empty element")]
    Empty(String),
    /// An element is not a number in (0, 100].
    #[error("invalid --percentiles value \"{0}\": must be a number greater than 0 and at most 100")]
    Invalid(String),
}

/// Whether `p` is a percentile pgrush reports: greater than 0 and at most 100 (NaN is
/// not). The one check of `--percentiles`, of the percentiles a saved run holds and of
/// `pNN` metrics.
pub fn is_percentile(p: f64) -> bool {
    p > 0.0 && p <= 100.0
}

/// `p` in a message: its shortest decimal form, or scientific notation when that is
/// long (`1e308`, not 309 digits).
fn shown(p: f64) -> String {
    let plain = p.to_string();
    if plain.len() <= 20 {
        plain
    } else {
        format!("{p:e}")
    }
}

/// A validated, ordered list of percentiles (each in (0, 100]).
#[derive(Debug, Clone, PartialEq)]
pub struct PercentileList(Vec<f64>);

impl Default for PercentileList {
    fn default() -> Self {
        PercentileList(DEFAULT_PERCENTILES.to_vec())
    }
}

impl PercentileList {
    /// Parses `50,90,99.9`: comma-separated numbers in (0, 100], spaces allowed around them.
    /// The list is sorted and duplicates removed.
    pub fn parse(text: &str) -> Result<Self, PercentileError> {
        let mut out = Vec::new();
        for part in text.split(',') {
            let t = part.trim();
            if t.is_empty() {
                return Err(PercentileError::Empty(text.to_string()));
            }
            let ok = t.bytes().all(|b| b.is_ascii_digit() || b == b'.');
            let v: f64 = match t.parse() {
                Ok(v) if ok => v,
                _ => return Err(PercentileError::Invalid(t.to_string())),
            };
            if !is_percentile(v) {
                return Err(PercentileError::Invalid(t.to_string()));
            }
            out.push(v);
        }
        Self::from_values(out)
    }

    /// A list from values (validated, sorted, deduplicated).
    pub fn from_values(mut values: Vec<f64>) -> Result<Self, PercentileError> {
        if let Some(&bad) = values.iter().find(|&&v| !is_percentile(v)) {
            return Err(PercentileError::Invalid(shown(bad)));
        }
        values.sort_by(f64::total_cmp);
        values.dedup();
        Ok(PercentileList(values))
    }

    /// The percentiles, ascending.
    pub fn values(&self) -> &[f64] {
        &self.0
    }

    /// Labels `p50`, `p99.9`, … in order.
    pub fn labels(&self) -> Vec<String> {
        self.0.iter().map(|&p| label(p)).collect()
    }
}

/// The label of a percentile: `p` followed by the shortest decimal form (`p50`, `p99.99`).
pub fn label(p: f64) -> String {
    format!("p{p}")
}

/// The 1-based nearest rank of percentile `p` among `n` values (`⌈p·n/100⌉`, at least 1,
/// at most `n`), robust to binary rounding of `p` (99.9 % of 1000 is rank 999, not 1000).
pub fn nearest_rank(p: f64, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let x = p / 100.0 * n as f64;
    let eps = 1e-9 * x.abs().max(1.0);
    let r = (x - eps).ceil();
    if r < 1.0 {
        1
    } else if r >= n as f64 {
        n
    } else {
        r as u64
    }
}

/// The value (µs) at percentile `p` (0..=100] of `hist`; `None` when it is empty.
pub fn value_at_percentile(hist: &LatencyHistogram, p: f64) -> Option<u64> {
    values_at_percentiles(hist, &[p]).pop().flatten()
}

/// [`value_at_percentile`] of each of `ps`, in one pass over `hist` (a pass per
/// percentile costs a whole iteration of the histogram each: the report's spectrum asks
/// for sixty). All `None` when `hist` is empty.
pub fn values_at_percentiles(hist: &LatencyHistogram, ps: &[f64]) -> Vec<Option<u64>> {
    let inner = hist.inner();
    let n = inner.len();
    if n == 0 {
        return vec![None; ps.len()];
    }
    let ranks: Vec<u64> = ps.iter().map(|&p| nearest_rank(p, n)).collect();
    let mut order: Vec<usize> = (0..ps.len()).collect();
    order.sort_by_key(|&i| ranks[i]);
    let mut out = vec![Some(inner.max()); ps.len()];
    let mut waiting = order.into_iter().peekable();
    let mut seen = 0u64;
    for v in inner.iter_recorded() {
        seen += v.count_at_value();
        while let Some(i) = waiting.next_if(|&i| ranks[i] <= seen) {
            out[i] = Some(v.value_iterated_to());
        }
        if waiting.peek().is_none() {
            break;
        }
    }
    out
}

/// The values (ms) at every percentile of `list`; `None` when the histogram is empty.
/// `exact_max_us` (the exact largest value, when known) caps the values: a bucket's highest
/// equivalent value may exceed the largest value actually recorded.
pub fn percentiles_ms(
    hist: &LatencyHistogram,
    list: &PercentileList,
    exact_max_us: Option<f64>,
) -> Option<Vec<f64>> {
    if hist.is_empty() {
        return None;
    }
    let cap = cap_us(exact_max_us);
    Some(
        values_at_percentiles(hist, list.values())
            .into_iter()
            .map(|v| (v.unwrap_or(0) as f64).min(cap) / 1000.0)
            .collect(),
    )
}

/// [`percentiles_ms`] of the histogram that `sparse` stands for
/// ([`SparseHistogram::to_histogram`]), read from its buckets: building the full
/// histogram allocates and scans 184 KiB, which dominated the documents of long runs
/// (one sparse histogram per `-P` interval).
pub fn sparse_percentiles_ms(
    sparse: &SparseHistogram,
    list: &PercentileList,
    exact_max_us: Option<f64>,
) -> Option<Vec<f64>> {
    if sparse
        .buckets
        .last()
        .is_some_and(|&(v, _)| u64::from(v) > HISTOGRAM_MAX_US)
    {
        // Values past the histogram's range are clamped where they are recorded.
        return percentiles_ms(&sparse.to_histogram(), list, exact_max_us);
    }
    let n = sparse.len();
    if n == 0 {
        return None;
    }
    let buckets = || {
        sparse
            .buckets
            .iter()
            .map(|&(v, c)| (u64::from(v), u64::from(c)))
    };
    Some(bucket_percentiles_ms(buckets, n, list, exact_max_us))
}

/// [`percentiles_ms`] of a per-command histogram, read from its buckets: the same values
/// as from [`GrowingHistogram::to_histogram`] (identical counts), without building the
/// 184 KiB full histogram for each command.
pub fn growing_percentiles_ms(
    hist: &GrowingHistogram,
    list: &PercentileList,
    exact_max_us: Option<f64>,
) -> Option<Vec<f64>> {
    let n = hist.len();
    if n == 0 {
        return None;
    }
    Some(bucket_percentiles_ms(
        || hist.iter_recorded(),
        n,
        list,
        exact_max_us,
    ))
}

/// The bound on reported values: `exact_max_us` when it is a real value, else none.
fn cap_us(exact_max_us: Option<f64>) -> f64 {
    exact_max_us
        .filter(|m| m.is_finite() && *m >= 0.0)
        .unwrap_or(f64::INFINITY)
}

/// The values (ms) at every percentile of `list` among `n` (> 0) values recorded as
/// ascending `(value, count)` buckets (`buckets()` starts a new pass): each value is its
/// bucket's highest equivalent value in a full histogram, capped by `exact_max_us`.
fn bucket_percentiles_ms<I: Iterator<Item = (u64, u64)>>(
    buckets: impl Fn() -> I,
    n: u64,
    list: &PercentileList,
    exact_max_us: Option<f64>,
) -> Vec<f64> {
    // The resolution of a full histogram (its bounds only: nothing is allocated).
    let resolution = LatencyHistogram::new();
    let resolution = resolution.inner();
    let cap = cap_us(exact_max_us);
    let highest = buckets().last().map_or(0, |(v, _)| v);
    list.values()
        .iter()
        .map(|&p| {
            let rank = nearest_rank(p, n);
            let mut seen = 0u64;
            let bucket = buckets()
                .find(|&(_, count)| {
                    seen = seen.saturating_add(count);
                    seen >= rank
                })
                .map_or(highest, |(v, _)| v);
            (resolution.highest_equivalent(bucket) as f64).min(cap) / 1000.0
        })
        .collect()
}

/// `p50 = 0.223 ms, p90 = 0.301 ms, …`
fn push_inline(s: &mut TextBuf, list: &PercentileList, values_ms: &[f64]) {
    for (i, (&p, &v)) in list.values().iter().zip(values_ms).enumerate() {
        if i > 0 {
            s.str(", ");
        }
        let _ = write!(s, "{} = ", label(p));
        s.fixed(v, 3);
        s.str(" ms");
    }
}

/// The lines printed after pgbench's report with `--percentiles`: overall latency (and
/// schedule lag with `-R`), per script when there are several, and per command with `-r`.
/// Nothing is printed for a distribution without values. Command texts are the script's
/// bytes, as in the text report.
pub fn render_text(sum: &RunSummary, list: &PercentileList) -> Vec<u8> {
    let mut s = TextBuf::default();
    let total = &sum.stats.total;
    if let Some(v) = percentiles_ms(&total.latency_hist, list, Some(total.latency.max)) {
        s.str("latency percentiles: ");
        push_inline(&mut s, list, &v);
        s.str("\n");
    }
    if let Some(lag) = &total.lag_hist
        && let Some(v) = percentiles_ms(lag, list, Some(total.lag.max))
    {
        s.str("schedule lag percentiles: ");
        push_inline(&mut s, list, &v);
        s.str("\n");
    }
    let several = sum.scripts.len() > 1;
    for (i, info) in sum.scripts.iter().enumerate() {
        let Some(st) = sum.stats.scripts.get(i) else {
            continue;
        };
        let prefix = if several {
            format!("SQL script {} ", i + 1)
        } else {
            String::new()
        };
        if several
            && let Some(v) = percentiles_ms(&st.tx.latency_hist, list, Some(st.tx.latency.max))
        {
            let _ = write!(s, "{prefix}latency percentiles: ");
            push_inline(&mut s, list, &v);
            s.str("\n");
        }
        if !sum.config.per_command {
            continue;
        }
        let _ = writeln!(
            s,
            "{prefix}statement latency percentiles in milliseconds ({}):",
            list.labels().join(", ")
        );
        for (j, text) in info.commands.iter().enumerate() {
            let values = st
                .commands
                .get(j)
                .and_then(|c| growing_percentiles_ms(&c.latency_hist, list, Some(c.latency.max)));
            s.str(" ");
            for k in 0..list.values().len() {
                s.str("  ");
                match values.as_ref().and_then(|v| v.get(k)) {
                    Some(&v) => s.fixed_width(v, 11, 3),
                    None => s.str("          -"),
                }
            }
            s.str(" ");
            s.bytes(text);
            s.str("\n");
        }
    }
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: impl IntoIterator<Item = u64>) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for v in values {
            h.record_u64(v);
        }
        h
    }

    #[test]
    fn parse_lists() {
        assert_eq!(
            PercentileList::parse("99.9, 50,90,50").map(|l| l.values().to_vec()),
            Ok(vec![50.0, 90.0, 99.9])
        );
        assert!(matches!(
            PercentileList::parse("0"),
            Err(PercentileError::Invalid(_))
        ));
        assert!(PercentileList::parse("100").is_ok());
        assert!(PercentileList::parse("100.5").is_err());
        assert!(PercentileList::parse("50,,90").is_err());
        assert!(PercentileList::parse("").is_err());
        assert!(PercentileList::parse("nan").is_err());
        assert!(PercentileList::parse("1e1").is_err());
        assert!(PercentileList::parse("-5").is_err());
        assert_eq!(
            PercentileList::default().labels(),
            ["p50", "p90", "p99", "p99.9", "p99.99"]
        );
    }

    #[test]
    fn growing_percentiles_match_the_full_histogram() {
        let lists = [
            PercentileList::default(),
            PercentileList::parse("0.001,1,25,50,75,99.999,100").unwrap_or_default(),
        ];
        let values = [
            0u64,
            1,
            2047,
            2048,
            2049,
            1_003,
            65_537,
            123_456,
            HISTOGRAM_MAX_US,
            HISTOGRAM_MAX_US + 1,
            u64::MAX,
        ];
        for end in 1..=values.len() {
            let mut growing = GrowingHistogram::new();
            for (i, &v) in values[..end].iter().enumerate().rev() {
                growing.record_u64_n(v, i as u64 % 4 + 1);
            }
            for list in &lists {
                for cap in [None, Some(1e12), Some(2_000.0)] {
                    assert_eq!(
                        growing_percentiles_ms(&growing, list, cap),
                        percentiles_ms(&growing.to_histogram(), list, cap),
                        "{:?}",
                        &values[..end]
                    );
                }
            }
        }
        let list = PercentileList::default();
        assert_eq!(
            growing_percentiles_ms(&GrowingHistogram::new(), &list, None),
            None
        );
    }

    #[test]
    fn sparse_percentiles_match_the_full_histogram() {
        let lists = [
            PercentileList::default(),
            PercentileList::parse("1,25,50,75,100").unwrap_or_default(),
        ];
        let values = [
            0u64,
            1,
            255,
            256,
            257,
            2047,
            2048,
            2049,
            1_003,
            65_537,
            123_456,
            3_599_999_999,
            HISTOGRAM_MAX_US,
            HISTOGRAM_MAX_US + 1,
            u64::from(u32::MAX),
        ];
        // Every prefix of the values, each value recorded a varying number of times.
        for end in 1..=values.len() {
            let mut coarse = LatencyHistogram::new();
            for (i, &v) in values[..end].iter().enumerate() {
                for _ in 0..=(i % 4) {
                    coarse.record_u64(v);
                }
            }
            let sparse = SparseHistogram::from_histogram(&coarse);
            for list in &lists {
                for cap in [None, Some(1e12), Some(2_000.0)] {
                    assert_eq!(
                        sparse_percentiles_ms(&sparse, list, cap),
                        percentiles_ms(&sparse.to_histogram(), list, cap),
                        "{:?}",
                        sparse.buckets
                    );
                }
            }
        }
        let empty = SparseHistogram::default();
        assert_eq!(
            sparse_percentiles_ms(&empty, &lists[0], None),
            percentiles_ms(&empty.to_histogram(), &lists[0], None)
        );
        // Hand-made buckets, as merged sparse histograms hold them.
        let many = SparseHistogram {
            buckets: (0..5000u32).map(|i| (i * 977 + 3, i % 7 + 1)).collect(),
        };
        for list in &lists {
            assert_eq!(
                sparse_percentiles_ms(&many, list, None),
                percentiles_ms(&many.to_histogram(), list, None)
            );
        }
    }

    #[test]
    fn ranks() {
        assert_eq!(nearest_rank(50.0, 1000), 500);
        assert_eq!(nearest_rank(99.9, 1000), 999);
        assert_eq!(nearest_rank(99.99, 1000), 1000);
        assert_eq!(nearest_rank(99.99, 10_000), 9999);
        assert_eq!(nearest_rank(0.001, 10), 1);
        assert_eq!(nearest_rank(100.0, 7), 7);
        assert_eq!(nearest_rank(50.0, 0), 0);
        assert_eq!(nearest_rank(50.0, 3), 2);
    }

    #[test]
    fn exact_values() {
        let h = hist(1..=1000);
        let list = PercentileList::default();
        assert_eq!(
            percentiles_ms(&h, &list, None),
            Some(vec![0.5, 0.9, 0.99, 0.999, 1.0])
        );
        let h = hist(1..=10);
        assert_eq!(value_at_percentile(&h, 50.0), Some(5));
        assert_eq!(value_at_percentile(&h, 90.0), Some(9));
        assert_eq!(value_at_percentile(&h, 90.1), Some(10));
        assert_eq!(value_at_percentile(&h, 0.1), Some(1));
        assert_eq!(value_at_percentile(&h, 100.0), Some(10));
        let h = hist([7]);
        assert_eq!(value_at_percentile(&h, 99.99), Some(7));
        assert_eq!(value_at_percentile(&LatencyHistogram::new(), 50.0), None);
        // Several at once, in any order, in one pass.
        let ps = [100.0, 0.1, 90.1, 50.0, 99.99, 90.0];
        assert_eq!(
            values_at_percentiles(&hist(1..=10), &ps),
            [Some(10), Some(1), Some(10), Some(5), Some(10), Some(9)]
        );
        assert_eq!(
            values_at_percentiles(&LatencyHistogram::new(), &ps),
            [None; 6]
        );
        assert_eq!(percentiles_ms(&LatencyHistogram::new(), &list, None), None);
        // Above 2048 µs values are kept to 3 significant digits: 123456 lies in a bucket
        // 64 µs wide, reported at its highest value.
        let h = hist([100, 123_456, 123_456, 123_500]);
        assert_eq!(value_at_percentile(&h, 25.0), Some(100));
        assert_eq!(value_at_percentile(&h, 50.0), Some(123_519));
        assert_eq!(value_at_percentile(&h, 100.0), Some(123_519));
        // Capped by the exact maximum when it is known.
        let one = PercentileList::parse("100").unwrap_or_default();
        assert_eq!(
            percentiles_ms(&h, &one, Some(123_500.4)),
            Some(vec![123.5004])
        );
        assert_eq!(percentiles_ms(&h, &one, None), Some(vec![123.519]));
        // 99 values of 1 ms and one of 100 ms: p99 is 1 ms, p99.5 the outlier.
        let h = hist(std::iter::repeat_n(1000, 99).chain([100_000]));
        assert_eq!(value_at_percentile(&h, 99.0), Some(1000));
        let big = value_at_percentile(&h, 99.5).unwrap_or(0);
        assert!((100_000..=100_063).contains(&big), "{big}");
    }
}
