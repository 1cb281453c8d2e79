//! The run page's "Statements over time" section: the latency of the slowest statements
//! (`-r`) interval by interval, average and a high percentile, and of each script when
//! there are several, with the server's events (checkpoints, autovacuum) shaded, so that
//! a statement getting slower during a checkpoint shows at a glance.

use crate::document::{IntervalDoc, IntervalLatencyDoc, RunDocument};
use crate::palette::series_colour;
use crate::percentiles::label;
use crate::svg::{Chart, Mark, Series, Stacking, XScale, escape};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How many statements are charted (the slowest on average over the run).
pub const CHARTED_STATEMENTS: usize = 6;
/// Longest legend entry (characters: what fits the chart's legend columns); longer
/// statement texts and script names end with "…" (the table under the charts gives the
/// whole statements).
const LEGEND_CHARS: usize = 19;

/// `text` on one line, at most `max` characters, ending with "…" when shortened (at a
/// word where one is near, as every page's labels are).
pub fn shorten(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::svg::frame::shorten(&one_line, max)
}

/// The `(script, command)` of the slowest statements: highest average latency over the
/// intervals, at most [`CHARTED_STATEMENTS`].
fn slowest(intervals: &[&IntervalDoc]) -> Vec<(u32, u32)> {
    let mut totals: BTreeMap<(u32, u32), (u64, f64)> = BTreeMap::new();
    for c in intervals.iter().flat_map(|i| &i.commands) {
        let t = totals.entry((c.script, c.command)).or_default();
        t.0 += c.latency.latency_sums.count;
        t.1 += c.latency.latency_sums.sum_us;
    }
    let mut ranked: Vec<((u32, u32), f64)> = totals
        .into_iter()
        .filter(|(_, (n, _))| *n > 0)
        .map(|(k, (n, sum))| (k, sum / n as f64))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
        .into_iter()
        .take(CHARTED_STATEMENTS)
        .map(|(k, _)| k)
        .collect()
}

/// The percentile charted next to the average: 99 when reported, else the highest one.
fn high_percentile(d: &RunDocument) -> Option<f64> {
    if d.percentiles.contains(&99.0) {
        return Some(99.0);
    }
    d.percentiles.iter().copied().reduce(f64::max)
}

/// One line per part: `value` of its entry in each interval where it has one.
fn lines<'a>(
    names: &[String],
    intervals: &[&'a IntervalDoc],
    entry: impl Fn(&'a IntervalDoc, usize) -> Option<&'a IntervalLatencyDoc>,
    value: impl Fn(&IntervalLatencyDoc) -> Option<f64>,
) -> Vec<Series> {
    names
        .iter()
        .enumerate()
        .map(|(k, name)| Series {
            name: name.clone(),
            points: intervals
                .iter()
                .filter_map(|&i| Some((i.mid_s(), value(entry(i, k)?)?)))
                .collect(),
        })
        .collect()
}

/// Two charts (average, high percentile) of the parts named `names`.
fn chart_pair<'a>(
    s: &mut String,
    what: &str,
    names: &[String],
    (intervals, marks, high): (&[&'a IntervalDoc], &[Mark], Option<f64>),
    entry: impl Fn(&'a IntervalDoc, usize) -> Option<&'a IntervalLatencyDoc> + Copy,
) {
    let chart = |title: String, series| Chart {
        title,
        x_label: "time since start (s)".into(),
        y_label: "latency (ms)".into(),
        x_scale: XScale::Linear,
        series,
    };
    let avg = lines(names, intervals, entry, |l| l.latency_average_ms);
    let title = format!("{what} latency over time: average");
    s.push_str(&chart(title, avg).render_with(marks, Stacking::Lines));
    if let Some(p) = high {
        let pct = lines(names, intervals, entry, |l| l.percentile_ms(p));
        let title = format!("{what} latency over time: {}", label(p));
        s.push_str(&chart(title, pct).render_with(marks, Stacking::Lines));
    }
}

/// The text of command `c` of script `sc` (empty when the document has none).
fn statement_text(d: &RunDocument, (sc, c): (u32, u32)) -> &str {
    d.scripts
        .get(sc as usize)
        .and_then(|s| s.commands.get(c as usize))
        .map_or("", |c| c.text.as_str())
}

/// `label` followed by as much of `text` as fits a legend entry.
fn legend_name(label: &str, text: &str) -> String {
    let room = LEGEND_CHARS.saturating_sub(label.chars().count() + 1);
    format!("{label} {}", shorten(text, room))
}

/// The statements' legend names: `script.command text`, shortened.
fn statement_names(d: &RunDocument, keys: &[(u32, u32)]) -> Vec<String> {
    keys.iter()
        .map(|&(sc, c)| {
            let label = format!("{}.{}", sc + 1, c + 1);
            legend_name(&label, statement_text(d, (sc, c)))
        })
        .collect()
}

/// The entry of statement `key` in interval `i`.
fn command_entry(i: &IntervalDoc, key: (u32, u32)) -> Option<&IntervalLatencyDoc> {
    let at = i
        .commands
        .binary_search_by_key(&key, |e| (e.script, e.command))
        .ok()?;
    Some(&i.commands[at].latency)
}

/// The entry of script `k` in interval `i`.
fn script_entry(i: &IntervalDoc, k: usize) -> Option<&IntervalLatencyDoc> {
    let k = u32::try_from(k).ok()?;
    let e = i.scripts.iter().find(|e| e.script == k)?;
    Some(&e.latency)
}

/// The section (empty when the time series has no per-script or per-command figures).
pub fn html_section(d: &RunDocument) -> String {
    let Some(ts) = &d.time_series else {
        return String::new();
    };
    let intervals = ts.chartable();
    let keys = slowest(&intervals);
    let several_scripts = d.scripts.len() > 1 && intervals.iter().any(|i| !i.scripts.is_empty());
    if keys.is_empty() && !several_scripts {
        return String::new();
    }
    let marks = crate::server::marks(d.server_stats.as_ref());
    let context = (intervals.as_slice(), marks.as_slice(), high_percentile(d));
    let mut s = String::from("<h2>Statements over time</h2>");
    if !keys.is_empty() {
        let _ = write!(
            s,
            "<p>The {} slowest statements on average, interval by interval{}.</p>",
            keys.len(),
            if marks.is_empty() {
                ""
            } else {
                "; shaded: the server's checkpoints and autovacuum runs"
            }
        );
        let names = statement_names(d, &keys);
        chart_pair(&mut s, "Statement", &names, context, |i, k| {
            command_entry(i, keys[k])
        });
        s.push_str("<table id=\"charted-statements\"><tr><th>line</th><th>statement</th></tr>");
        for (k, &(sc, c)) in keys.iter().enumerate() {
            let _ = write!(
                s,
                "<tr><td><span style=\"color:{}\">■</span> {}.{}</td><td><code>{}</code></td></tr>",
                series_colour(&names[k]),
                sc + 1,
                c + 1,
                escape(statement_text(d, (sc, c)))
            );
        }
        s.push_str("</table>");
    }
    if several_scripts {
        let names: Vec<String> = d
            .scripts
            .iter()
            .enumerate()
            .map(|(k, sc)| legend_name(&format!("script {}", k + 1), &sc.description))
            .collect();
        chart_pair(&mut s, "Script", &names, context, script_entry);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_keeps_short_texts_and_marks_cuts() {
        assert_eq!(shorten("SELECT 1;", 48), "SELECT 1;");
        assert_eq!(shorten("UPDATE  t\n SET x = 1", 48), "UPDATE t SET x = 1");
        let long = "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;";
        let s = shorten(long, 20);
        assert_eq!(s, "UPDATE pgbench_acco…");
        assert_eq!(s.chars().count(), 20);
        assert_eq!(shorten("ab cd", 4), "ab…");
    }
}
