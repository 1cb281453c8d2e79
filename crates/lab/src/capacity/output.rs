//! The search's result as text: a line per step while it runs ([`step_line`]), then the
//! latency-throughput curve as a table (at most [`MAX_WIDTH`] columns) and the verdict
//! ([`render_text`]).

use super::result::{CapacityResult, StepRecord, rate_text};
use super::slo::SloVerdict;

/// The widest line of the table.
pub const MAX_WIDTH: usize = 100;

/// `1.234` ms, `-` when unknown.
fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

/// A share in percent with the digits it needs (`0.25%`, `12.5%`).
pub(super) fn percent(share: f64) -> String {
    let pct = share * 100.0;
    let text = if pct >= 10.0 {
        format!("{pct:.1}")
    } else if pct >= 1.0 {
        format!("{pct:.2}")
    } else {
        format!("{pct:.3}")
    };
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

/// What a failed SLO measured: `p99 < 6 ms: 7.210 ms, 1.94% [1.37%, 2.74%] of 1600
/// over the bound (limit 1%)`.
pub fn failed_slo_text(v: &SloVerdict) -> String {
    let mut text = v.slo.clone();
    if let Some(m) = v.measured {
        let unit = match v.unit.as_str() {
            "" => String::new(),
            "%" => "%".to_string(),
            u => format!(" {u}"),
        };
        text.push_str(&format!(": {m:.3}{unit}"));
    }
    if let (Some(k), Some(n), Some(limit), Some((low, high))) = (v.k, v.n, v.limit, v.interval) {
        let share = if n > 0 { k as f64 / n as f64 } else { 0.0 };
        text.push_str(&format!(
            ", {} [{}, {}] of {n} over the bound (limit {})",
            percent(share),
            percent(low),
            percent(high),
            percent(limit)
        ));
        if !v.decided {
            text.push_str(", undecided after the last round: the estimate decides");
        }
    }
    text
}

/// Why a step failed, in a few words: `not delivered, p99 < 6 ms`.
fn short_failure(s: &StepRecord) -> String {
    let mut parts = Vec::new();
    if !s.delivered {
        parts.push("not delivered");
    }
    parts.extend(s.slos.iter().filter(|v| !v.holds).map(|v| v.slo.as_str()));
    parts.join(", ")
}

/// A latency in a step's line, with 3 significant digits (`5.12`, `66.9`, `334`).
fn ms_short(v: Option<f64>) -> String {
    match v {
        None => "-".to_string(),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// The line printed after a step: `step 3 at 1600 tps: delivered 1598.2, p50 5.10 ms,
/// p99 6.21 ms: holds` (the table has the rest).
pub fn step_line(s: &StepRecord) -> String {
    let verdict = match &s.failure {
        None => "holds".to_string(),
        Some(_) => format!("fails ({})", short_failure(s)),
    };
    let rounds = if s.rounds > 1 {
        format!(" in {} rounds", s.rounds)
    } else {
        String::new()
    };
    format!(
        "step {} at {} tps{rounds}: delivered {:.1}, p50 {} ms, p99 {} ms: {verdict}",
        s.step,
        rate_text(s.offered_tps),
        s.delivered_tps,
        ms_short(s.p50_ms),
        ms_short(s.p99_ms),
    )
}

/// The curve's rows (a header first): the steps by offered rate.
pub fn table(result: &CapacityResult) -> Vec<Vec<String>> {
    let mut rows = vec![
        [
            "step",
            "offered",
            "delivered",
            "p50 ms",
            "p99 ms",
            "p99.9 ms",
            "lag ms/s",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for s in result.curve() {
        let verdict = match &s.failure {
            None => "holds".to_string(),
            Some(_) => format!("fails: {}", short_failure(s)),
        };
        rows.push(vec![
            s.step.to_string(),
            rate_text(s.offered_tps),
            format!("{:.1}", s.delivered_tps),
            ms(s.p50_ms),
            ms(s.p99_ms),
            ms(s.p99_9_ms),
            s.lag_growth_ms_per_s
                .map_or_else(|| "-".to_string(), |g| format!("{g:.1}")),
            verdict,
        ]);
    }
    rows
}

/// The table as aligned text (numbers right-aligned, the verdict left-aligned and cut
/// to fit [`MAX_WIDTH`]).
fn table_text(rows: &[Vec<String>]) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut text = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == columns {
                line.push_str("  ");
                let room = MAX_WIDTH.saturating_sub(line.chars().count());
                line.push_str(&pgrush_report::svg::frame::shorten(cell, room));
            } else {
                let gap = if c == 0 { "" } else { "  " };
                line.push_str(&format!("{gap}{cell:>w$}", w = widths[c]));
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// The curve and the verdict.
pub fn render_text(result: &CapacityResult) -> String {
    let mut text = String::from("latency (from the schedule) against offered rate (tps):\n");
    text.push_str(&table_text(&table(result)));
    text.push('\n');
    text.push_str(&verdict_text(result));
    text
}

/// The lines that say what the search found.
pub fn verdict_text(result: &CapacityResult) -> String {
    let slos = result.settings.slos.join(", ");
    let mut text = String::new();
    match (result.capacity_tps, result.first_failing_tps) {
        (Some(good), Some(bad)) => {
            text.push_str(&format!(
                "sustainable rate: {} tps ({slos} held)\n\
                 the capacity lies in [{}, {}) tps (bracket width {})\n",
                rate_text(good),
                rate_text(good),
                rate_text(bad),
                percent((bad - good) / good)
            ));
        }
        (Some(good), None) => text.push_str(&format!(
            "sustainable rate: at least {} tps ({slos} held); no failing rate found\n",
            rate_text(good)
        )),
        (None, Some(bad)) => text.push_str(&format!(
            "sustainable rate: none found: every rate tried failed, down to {} tps\n",
            rate_text(bad)
        )),
        (None, None) => text.push_str("sustainable rate: unknown (no step finished)\n"),
    }
    if let (Some(bad), Some(why)) = (result.first_failing_tps, &result.first_failure) {
        text.push_str(&format!(
            "first failing rate: {} tps: {why}\n",
            rate_text(bad)
        ));
        text.push_str(
            "(latency counts from each transaction's scheduled start; shares with 95% intervals)\n",
        );
    }
    if let Some(p) = &result.probe {
        text.push_str(&format!(
            "closed-loop probe: {:.1} tps, latency average {:.3} ms\n",
            p.tps, p.latency_average_ms
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::capacity::result::{SCHEMA, SearchSettings};

    fn step(number: usize, rate: f64, failure: Option<&str>) -> StepRecord {
        let slo = |name: &str, holds: bool| SloVerdict {
            slo: name.to_string(),
            holds,
            measured: Some(7.5),
            unit: "ms".into(),
            k: Some(40),
            n: Some(1000),
            limit: Some(0.01),
            interval: Some((0.0295, 0.054)),
            decided: true,
        };
        StepRecord {
            step: number,
            offered_tps: rate,
            rounds: 1,
            duration_s: 2.0,
            transactions: (rate * 2.0) as u64,
            delivered_tps: rate,
            latency_average_ms: Some(5.2),
            lag_average_ms: Some(0.1),
            p50_ms: Some(5.123),
            p99_ms: Some(123456.789),
            p99_9_ms: Some(123456.789),
            lag_growth_ms_per_s: Some(-0.04),
            delivered: failure.is_none(),
            slos: vec![
                slo(
                    "select-only-and-more: p99.999 < 12345.678 ms",
                    failure.is_none(),
                ),
                slo("latency-stddev < 12345.678 ms", failure.is_none()),
            ],
            held: failure.is_none(),
            failure: failure.map(str::to_string),
        }
    }

    fn result() -> CapacityResult {
        CapacityResult {
            schema: SCHEMA.into(),
            pgrush_version: "0".into(),
            settings: SearchSettings {
                slos: vec!["p99 < 10 ms".into()],
                start_rate: 100.0,
                precision: 0.05,
                step_s: 2,
                max_step_s: 8,
                warmup_s: 1,
                run_args: Vec::new(),
            },
            probe: None,
            capacity_tps: Some(812.5),
            first_failing_tps: Some(1000.0),
            first_failure: Some("p99 < 10 ms: 7.500 ms".into()),
            bracket_width: Some(0.23),
            steps: vec![
                step(1, 1_234_567.0, Some("everything")),
                step(2, 812.5, None),
                step(3, 0.25, None),
            ],
            complete: true,
            interrupted: false,
        }
    }

    #[test]
    fn the_table_is_the_curve_in_at_most_100_columns() {
        let text = render_text(&result());
        let rows: Vec<&str> = text.lines().skip(1).take(4).collect();
        assert!(rows[0].starts_with("step  offered"), "{text}");
        // By offered rate: 0.25, 812.5, 1234567.
        assert!(rows[1].starts_with("   3     0.25"), "{text}");
        assert!(rows[2].starts_with("   2    812.5"), "{text}");
        assert!(rows[3].contains("fails: not delivered"), "{text}");
        for row in &rows {
            assert!(
                row.chars().count() <= MAX_WIDTH,
                "{} columns: {row}",
                row.len()
            );
        }
        assert!(rows[3].ends_with('…'), "{text}");
        assert!(text.contains("the capacity lies in [812.5, 1000) tps (bracket width 23.1%)"));
        assert!(text.contains("first failing rate: 1000 tps: p99 < 10 ms: 7.500 ms\n"));
    }

    #[test]
    fn a_failed_share_says_its_interval() {
        let v = &step(1, 10.0, Some("x")).slos[0];
        assert_eq!(
            failed_slo_text(v),
            "select-only-and-more: p99.999 < 12345.678 ms: 7.500 ms, 4% [2.95%, 5.4%] of 1000 \
             over the bound (limit 1%)"
        );
        assert_eq!(
            step_line(&step(4, 812.5, None)),
            "step 4 at 812.5 tps: delivered 812.5, p50 5.12 ms, p99 123457 ms: holds"
        );
    }

    #[test]
    fn shares_read_as_percent() {
        assert_eq!(percent(0.01), "1%");
        assert_eq!(percent(0.019375), "1.94%");
        assert_eq!(percent(0.00123), "0.123%");
        assert_eq!(percent(0.125), "12.5%");
        assert_eq!(percent(0.0), "0%");
    }
}
