//! The live page of `--dashboard`: one self-contained page (inline style, script and
//! SVG; it fetches nothing but its own `data.json`) with the run's charts so far, which
//! its script extends every second with the intervals closed since the last poll.
//!
//! The intervals are built on the endpoint's thread from the deltas the engine's
//! threads publish for the live metrics ([`LiveInterval::from_cells`]): counts per
//! second, and latency percentiles as the upper bounds of the live histogram's buckets
//! (1-1.2-1.5-2-2.5-3-4-5-6-8 per decade, so within 25% above the value); the report at
//! the end has the exact figures.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::page::page_start;
use crate::palette::series_colour;
use crate::svg::escape;

mod interval;
mod series;
pub use interval::{LiveInterval, LiveLatency, LiveServer};
pub use series::{DEFAULT_LIMIT, LiveSeries};

/// The page's script: draws the charts, polls `data.json`, reloads at the end.
const SCRIPT: &str = include_str!("dashboard/page.js");

/// The page's own style beyond the shared one.
const DASHBOARD_STYLE: &str = "#status{font-size:15px}#latest td{min-width:80px}";

/// What the page says about the run besides its intervals.
#[derive(Debug, Clone, Copy)]
pub struct LivePageInfo<'a> {
    /// The command line, passwords redacted.
    pub command_line: &'a str,
    /// The scripts' names, in the order of [`LiveInterval::script_avg_ms`].
    pub scripts: &'a [String],
}

/// The `data.json` answer: the intervals of `series` from `first` on, where they start
/// (the page drops what it holds from there on), the cursor to ask from next and its
/// generation, whether the final report is ready, the scripts' names and the colour of
/// every series the intervals name.
pub fn data_json(
    info: &LivePageInfo<'_>,
    series: &LiveSeries,
    first: usize,
    finished: bool,
) -> String {
    let first = first.min(series.intervals().len());
    let intervals = &series.intervals()[first..];
    let mut colours: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut name = |n: &str| {
        colours
            .entry(n.to_string())
            .or_insert_with(|| series_colour(n));
    };
    FIXED_SERIES.iter().for_each(|n| name(n));
    info.scripts.iter().for_each(|n| name(n));
    for i in intervals {
        for w in i.server.iter().flat_map(|s| s.waits.keys()) {
            name(w);
        }
    }
    let doc = serde_json::json!({
        "first": first,
        "next": series.next(),
        "generation": series.generation(),
        "finished": finished,
        "scripts": info.scripts,
        "colours": colours,
        "intervals": intervals,
    });
    doc.to_string()
}

/// The series every page can draw (their colours are sent once with each answer).
const FIXED_SERIES: &[&str] = &[
    "tps",
    "average",
    "p50",
    "p90",
    "p99",
    "max",
    "serialization",
    "deadlock",
    "other",
    "connection",
    "retries",
    "user",
    "system",
    "iowait",
    "steal",
    "busiest core",
    "WAL MB",
    "checkpoints",
];

/// The live page with the intervals so far (`data`, a [`data_json`] answer from the
/// first interval on) drawn at load: a page opened late shows the whole run.
pub fn live_page(info: &LivePageInfo<'_>, data: &str) -> String {
    let mut s = String::new();
    page_start(&mut s, "pgrush: live run");
    let _ = write!(
        s,
        "<style>{DASHBOARD_STYLE}</style>\
         <p id=\"status\">running</p>\
         <pre id=\"command\">{}</pre>\
         <table id=\"latest\"></table>\
         <div id=\"charts\"></div>\
         <p>Percentiles here are the upper bounds of the live histogram's buckets \
         (within 25% above the value); the final report, shown here when the run ends, \
         has the exact figures.</p>",
        escape(info.command_line)
    );
    // `<` never occurs outside a JSON string, where `\u003c` means the same.
    let _ = write!(
        s,
        "<script id=\"dash-data\" type=\"application/json\">{}</script><script>{}</script>",
        data.replace('<', "\\u003c"),
        SCRIPT
    );
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgrush_stats::live::{LiveShape, LiveTotals};

    fn cells() -> LiveTotals {
        let shape = LiveShape {
            scripts: 2,
            stages: 0,
            throttled: false,
        };
        let mut t = LiveTotals::new(shape);
        let c = &mut t.cells[shape.cell(1, 0)];
        c.counters.successful = 40;
        c.counters.deadlock_failures = 2;
        c.latency.counts[0] = 40;
        c.latency.sum_us = 40.0 * 8.0;
        t
    }

    #[test]
    fn an_interval_gives_rates_per_second_and_bucket_percentiles() {
        let i = LiveInterval::from_cells(&cells(), 3.0, 2.0);
        assert_eq!(i.tps, 20.0);
        assert_eq!(i.failures_per_s["deadlock"], 1.0);
        let l = i.latency_ms.expect("latency");
        assert_eq!((l.average, l.p99), (0.008, 0.01));
        assert_eq!(i.script_avg_ms, vec![Some(0.008), None]);
    }

    #[test]
    fn the_page_embeds_its_data_without_closing_its_script() {
        let scripts = vec!["</script><b>".to_string()];
        let info = LivePageInfo {
            command_line: "pgrush -c 2 'password=***'",
            scripts: &scripts,
        };
        let mut series = LiveSeries::new(DEFAULT_LIMIT);
        series.push(LiveInterval::from_cells(&cells(), 1.0, 1.0));
        let data = data_json(&info, &series, 0, false);
        let v: serde_json::Value = serde_json::from_str(&data).expect("JSON");
        assert_eq!(v["next"], 1);
        assert_eq!(v["colours"]["tps"], "#1f77b4");
        let page = live_page(&info, &data);
        assert_eq!(page.matches("</script>").count(), 2, "{page}");
        assert!(page.contains("<pre id=\"command\">pgrush -c 2 &#39;password=***&#39;</pre>"));
        // Nothing fetched: no source, link or import.
        assert!(!page.contains(" src=") && !page.contains("<link") && !page.contains("@import"));
    }
}
