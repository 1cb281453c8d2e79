//! Text output: pg_test_timing 18's lines and histogram, byte for byte, then
//! pgrush's nanosecond histogram, percentiles, backwards steps and the
//! `--all-clocks` comparison table.

use crate::clock::ClockKind;
use crate::measure::{Measurement, NsDetail};
use crate::report::ClockReport;
use std::fmt::Write;

/// `Testing timing overhead for N second(s).` (pg_test_timing's first line).
pub fn testing_line(duration_s: u32) -> String {
    let unit = if duration_s == 1 { "second" } else { "seconds" };
    format!("Testing timing overhead for {duration_s} {unit}.\n")
}

/// `Per loop time including overhead: %0.2f ns`.
pub fn per_loop_line(m: &Measurement) -> String {
    let ns = m.per_loop_ns().unwrap_or(f64::NAN);
    format!("Per loop time including overhead: {ns:.2} ns\n")
}

/// pg_test_timing's histogram: title, header and one row per bucket from
/// 0 to the highest non-empty one (`%6ld    %9.5f %10lld`).
pub fn us_histogram(m: &Measurement) -> String {
    let mut out = String::from("Histogram of timing durations:\n");
    let _ = writeln!(out, "{:>6}   {:>10} {:>10}", "< us", "% of total", "count");
    for (i, &count) in m
        .us_histogram
        .iter()
        .enumerate()
        .take(m.max_us_bucket() + 1)
    {
        let pct = count as f64 * 100.0 / m.loops as f64;
        let _ = writeln!(out, "{:>6}    {:>9.5} {:>10}", 1u64 << i, pct, count);
    }
    out
}

/// The two lines pg_test_timing 18 prints on stderr before exiting at a backwards step.
pub fn warp_lines(warp_us: i64) -> String {
    format!("Detected clock going backwards in time.\nTime warp: {warp_us} us\n")
}

/// Formats a resolution: whole nanoseconds without decimals, else three.
pub fn format_ns(ns: f64) -> String {
    if ns.fract() == 0.0 && ns.abs() < 1e15 {
        format!("{}", ns as i64)
    } else {
        format!("{ns:.3}")
    }
}

/// The nanosecond section `pgrush timing` prints after the compatible output.
pub fn ns_section(r: &ClockReport) -> String {
    let mut out = String::new();
    let _ = write!(out, "\nClock: {}", r.clock);
    if let Some(res) = r.resolution_ns {
        let _ = write!(out, ", resolution {} ns", format_ns(res));
    }
    if let Some(min) = r
        .measurement
        .detail
        .as_ref()
        .and_then(NsDetail::min_step_ns)
    {
        let _ = write!(out, ", smallest step seen {min} ns");
    }
    out.push('\n');
    if let Some(d) = &r.measurement.detail {
        out.push_str(&ns_histogram(d, r.measurement.loops));
        let p = d.percentiles();
        out.push_str("Percentiles of timing durations (ns):\n");
        let _ = writeln!(
            out,
            "{:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "p50", "p90", "p99", "p99.9", "p99.99", "max"
        );
        let _ = writeln!(
            out,
            "{:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            p.p50, p.p90, p.p99, p.p99_9, p.p99_99, p.max
        );
    }
    out.push_str(&backwards_line(&r.measurement));
    out
}

/// `Histogram of timing durations in nanoseconds:` rows from the lowest to
/// the highest non-empty power-of-two bucket.
fn ns_histogram(d: &NsDetail, loops: u64) -> String {
    let mut out = String::from("Histogram of timing durations in nanoseconds:\n");
    let first = d.pow2.iter().position(|&c| c != 0);
    let last = d.pow2.iter().rposition(|&c| c != 0);
    // The bound column widens for large bounds so that the columns stay aligned.
    let w = last.map_or(6, |l| (1u128 << l).to_string().len().max(6));
    let _ = writeln!(out, "{:>w$}   {:>10} {:>10}", "< ns", "% of total", "count");
    if let (Some(first), Some(last)) = (first, last) {
        for (i, &count) in d.pow2.iter().enumerate().take(last + 1).skip(first) {
            let pct = count as f64 * 100.0 / loops.max(1) as f64;
            let label = 1u128 << i;
            let _ = writeln!(out, "{label:>w$}    {pct:>9.5} {count:>10}");
        }
    }
    out
}

/// `Backwards steps: none` or the count and the largest step.
pub fn backwards_line(m: &Measurement) -> String {
    if m.backwards.count == 0 {
        "Backwards steps: none\n".to_string()
    } else {
        format!(
            "Backwards steps: {} (largest {} ns)\n",
            m.backwards.count, m.backwards.largest_ns
        )
    }
}

/// The stderr line printed when a clock went backwards (pgrush behaviour).
pub fn backwards_warning(clock: ClockKind, m: &Measurement) -> String {
    format!(
        "Detected clock going backwards in time: {} backwards step{} of clock {}, largest {} ns.\n",
        m.backwards.count,
        if m.backwards.count == 1 { "" } else { "s" },
        clock,
        m.backwards.largest_ns
    )
}

/// First line of `--all-clocks`.
pub fn all_clocks_heading(n_clocks: usize, duration_s: u32) -> String {
    let unit = if duration_s == 1 { "second" } else { "seconds" };
    let clocks = if n_clocks == 1 { "clock" } else { "clocks" };
    format!("Testing timing overhead of {n_clocks} {clocks} for {duration_s} {unit} each.\n")
}

/// The `--all-clocks` table: one column per clock, one row per measure.
pub fn all_clocks_table(reports: &[ClockReport]) -> String {
    let mut rows: Vec<(&str, Vec<String>)> = vec![
        ("cost per reading (ns)", Vec::new()),
        ("resolution (ns)", Vec::new()),
        ("smallest step (ns)", Vec::new()),
        ("p50 (ns)", Vec::new()),
        ("p90 (ns)", Vec::new()),
        ("p99 (ns)", Vec::new()),
        ("p99.9 (ns)", Vec::new()),
        ("p99.99 (ns)", Vec::new()),
        ("max (ns)", Vec::new()),
        ("backwards steps", Vec::new()),
        ("largest backwards (ns)", Vec::new()),
    ];
    for r in reports {
        let m = &r.measurement;
        let p = m
            .detail
            .as_ref()
            .map(NsDetail::percentiles)
            .unwrap_or_default();
        let min = m.detail.as_ref().and_then(NsDetail::min_step_ns);
        let cells = [
            m.per_loop_ns().map_or("-".into(), |v| format!("{v:.2}")),
            r.resolution_ns.map_or("-".into(), format_ns),
            min.map_or("-".into(), |v| v.to_string()),
            p.p50.to_string(),
            p.p90.to_string(),
            p.p99.to_string(),
            p.p99_9.to_string(),
            p.p99_99.to_string(),
            p.max.to_string(),
            m.backwards.count.to_string(),
            m.backwards.largest_ns.to_string(),
        ];
        for (row, cell) in rows.iter_mut().zip(cells) {
            row.1.push(cell);
        }
    }
    let label_w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let widths: Vec<usize> = reports
        .iter()
        .enumerate()
        .map(|(i, r)| {
            rows.iter()
                .map(|row| row.1[i].len())
                .chain([r.clock.name().len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("{:label_w$}", "");
    for (r, w) in reports.iter().zip(&widths) {
        let _ = write!(out, "  {:>w$}", r.clock.name());
    }
    out.push('\n');
    for (label, cells) in &rows {
        let _ = write!(out, "{label:label_w$}");
        for (cell, w) in cells.iter().zip(&widths) {
            let _ = write!(out, "  {cell:>w$}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Backwards, US_BUCKETS};

    fn measurement(hist: &[u64], elapsed_ns: i64) -> Measurement {
        let mut us_histogram = [0; US_BUCKETS];
        us_histogram[..hist.len()].copy_from_slice(hist);
        Measurement {
            loops: hist.iter().sum(),
            elapsed_ns,
            us_histogram,
            detail: None,
            backwards: Backwards::default(),
            warp_us: None,
        }
    }

    #[test]
    fn compatible_lines() {
        assert_eq!(testing_line(1), "Testing timing overhead for 1 second.\n");
        assert_eq!(testing_line(3), "Testing timing overhead for 3 seconds.\n");
        let m = measurement(&[10_745_866, 300_759, 86, 0, 22], 1_000_000_000);
        assert_eq!(
            per_loop_line(&m),
            format!(
                "Per loop time including overhead: {:.2} ns\n",
                1e9 / 11_046_733.0
            )
        );
        assert_eq!(
            us_histogram(&m),
            "Histogram of timing durations:\n  < us   % of total      count\n     1     97.27642   10745866\n     2      2.72261     300759\n     4      0.00078         86\n     8      0.00000          0\n    16      0.00020         22\n"
        );
        assert_eq!(
            warp_lines(-3),
            "Detected clock going backwards in time.\nTime warp: -3 us\n"
        );
    }

    #[test]
    fn empty_histogram_still_prints_first_row() {
        let m = measurement(&[5], 100);
        assert!(us_histogram(&m).ends_with("     1    100.00000          5\n"));
    }

    fn scripted(kind: ClockKind, steps: &[i64]) -> ClockReport {
        struct Steps(i64, Vec<i64>, usize);
        impl crate::clock::ClockSource for Steps {
            fn now_ns(&mut self) -> i64 {
                let step = self.1[self.2 % self.1.len()];
                self.2 += 1;
                self.0 += step;
                self.0
            }
        }
        let cfg = crate::measure::MeasureConfig {
            duration_ns: 100_000,
            detail: true,
            stop_on_backwards: false,
        };
        ClockReport {
            clock: kind,
            resolution_ns: Some(1.0),
            measurement: crate::measure::measure(&mut Steps(0, steps.to_vec(), 0), &cfg),
        }
    }

    #[test]
    fn ns_section_layout() {
        let r = scripted(ClockKind::Monotonic, &[100]);
        // First reading at 100 ns; 1000 readings until 100 µs have elapsed.
        assert_eq!(r.measurement.loops, 1000);
        assert_eq!(
            ns_section(&r),
            "\nClock: monotonic, resolution 1 ns, smallest step seen 100 ns\n\
             Histogram of timing durations in nanoseconds:\n\
             \x20 < ns   % of total      count\n\
             \x20  128    100.00000       1000\n\
             Percentiles of timing durations (ns):\n\
             \x20      p50        p90        p99      p99.9     p99.99        max\n\
             \x20      100        100        100        100        100        100\n\
             Backwards steps: none\n"
        );
        let back = scripted(ClockKind::Realtime, &[300, -50, 250]);
        assert!(ns_section(&back).ends_with("Backwards steps: 200 (largest 50 ns)\n"));
        assert_eq!(
            backwards_warning(back.clock, &back.measurement),
            "Detected clock going backwards in time: 200 backwards steps of clock realtime, largest 50 ns.\n"
        );
    }

    #[test]
    fn all_clocks_columns() {
        let a = scripted(ClockKind::Monotonic, &[100]);
        let b = scripted(ClockKind::MonotonicCoarse, &[0, 0, 0, 4_000_000]);
        let t = all_clocks_table(&[a, b]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 12);
        assert_eq!(
            lines[0],
            "                        monotonic  monotonic_coarse"
        );
        assert_eq!(
            lines[3],
            "smallest step (ns)            100           4000000"
        );
        assert_eq!(
            lines[4],
            "p50 (ns)                      100                 0"
        );
        assert_eq!(
            lines[10],
            "backwards steps                 0                 0"
        );
        assert_eq!(
            all_clocks_heading(2, 1),
            "Testing timing overhead of 2 clocks for 1 second each.\n"
        );
    }

    #[test]
    fn resolution_formatting() {
        assert_eq!(format_ns(1.0), "1");
        assert_eq!(format_ns(4_000_000.0), "4000000");
        assert_eq!(format_ns(0.357_142), "0.357");
    }
}
