//! `--reconnect`'s outage windows: the run's lost connections joined into windows,
//! each with its length, the spread over the clients, the failures by SQLSTATE
//! class, the servers the clients were on before and after, and the throughput and
//! p99 latency of the minute before, the window itself and the minute after (from
//! the time series, when the run kept one).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use pgrush_stats::{
    ClientOutage, LatencyHistogram, OutageWindow, RunSummary, ServerIdentity, SparseHistogram,
    outage_windows,
};
use serde::{Deserialize, Serialize};

use crate::textbuf::TextBuf;

/// How far before and after a window its neighbourhood reaches, µs.
const NEIGHBOURHOOD_US: i64 = 60_000_000;

/// Throughput and p99 latency over a stretch of the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StretchFigures {
    /// Successful transactions per second.
    pub tps: f64,
    /// 99th percentile latency (ms; None when no transaction succeeded in it).
    pub p99_ms: Option<f64>,
}

/// One outage window as the document and the text report give it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutageWindowDoc {
    /// First failure, seconds from the start of the measured run.
    pub start_s: f64,
    /// The last client's first success after it (or the end of the run), seconds.
    pub end_s: f64,
    /// Clients that lost their connection in it.
    pub clients: u32,
    /// Connection failures in it.
    pub connection_failures: u64,
    /// The shortest and the longest client outage in it, seconds.
    pub client_min_s: f64,
    /// See `client_min_s`.
    pub client_max_s: f64,
    /// Some client had no success after it before the run ended.
    pub open: bool,
    /// Connection failures by SQLSTATE class of the cause (`08`: the socket closed).
    pub failures_by_sqlstate_class: BTreeMap<String, u64>,
    /// The minute before (or what the run had of it), the window, the minute after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<StretchFigures>,
    /// See `before`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during: Option<StretchFigures>,
    /// See `before`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<StretchFigures>,
    /// Which servers the clients of the window were on before and after it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerChangeDoc>,
}

/// Client outages of one window that went from one server to another (or stayed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerChangeDoc {
    /// The server before: `host:port (primary|standby), system ID` (`?`: unknown).
    pub before: String,
    /// The server after, as `before` (`?`: none, the client had no success after it).
    pub after: String,
    /// How many client outages of the window did so.
    pub client_outages: u32,
}

/// `--reconnect`'s section of the document: the windows and every client outage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutagesDoc {
    /// The outage windows, in time order.
    pub windows: Vec<OutageWindowDoc>,
    /// Every client's outage (times in µs from the start of the measured run).
    pub clients: Vec<serde_json::Value>,
}

/// The outage windows of a run with `--reconnect` (None without it, or when no
/// connection was lost).
pub fn outages_doc(sum: &RunSummary) -> Option<OutagesDoc> {
    if !sum.config.reconnect || sum.stats.outages.is_empty() {
        return None;
    }
    let run_end = sum.bench_duration_us as i64;
    let windows = outage_windows(&sum.stats.outages, run_end)
        .iter()
        .map(|w| window_doc(sum, w))
        .collect();
    let clients = sum
        .stats
        .outages
        .iter()
        .filter_map(|o| serde_json::to_value(o).ok())
        .collect();
    Some(OutagesDoc { windows, clients })
}

fn window_doc(sum: &RunSummary, w: &OutageWindow) -> OutageWindowDoc {
    let mut classes = BTreeMap::new();
    let mut moves: BTreeMap<(String, String), u32> = BTreeMap::new();
    for o in in_window(&sum.stats.outages, w) {
        *classes.entry(o.sqlstate_class().to_string()).or_insert(0) += o.failures;
        *moves
            .entry((describe(o.before.as_ref()), describe(o.after.as_ref())))
            .or_insert(0) += 1;
    }
    let servers = moves
        .into_iter()
        .map(|((before, after), client_outages)| ServerChangeDoc {
            before,
            after,
            client_outages,
        })
        .collect();
    // The whole intervals of the minute before and the minute after; the
    // intervals the window touches.
    let step = sum
        .stats
        .series
        .as_ref()
        .map_or(1, |series| series.interval_us.max(1) as i64);
    let (start, end) = (w.start_us.max(0), w.end_us.max(0));
    let stretch = |first: i64, last: i64| stretch_figures(sum, first, last);
    OutageWindowDoc {
        start_s: w.start_us as f64 / 1e6,
        end_s: w.end_us as f64 / 1e6,
        clients: w.clients,
        connection_failures: w.failures,
        client_min_s: w.client_min_us as f64 / 1e6,
        client_max_s: w.client_max_us as f64 / 1e6,
        open: w.open,
        failures_by_sqlstate_class: classes,
        before: stretch(
            div_ceil(start - NEIGHBOURHOOD_US, step).max(0),
            start / step,
        ),
        during: stretch(start / step, div_ceil(end, step).max(start / step + 1)),
        after: stretch(div_ceil(end, step), (end + NEIGHBOURHOOD_US) / step),
        servers,
    }
}

/// A server as the report names it (`?` when unknown).
fn describe(id: Option<&ServerIdentity>) -> String {
    id.map_or_else(|| "?".to_string(), ServerIdentity::describe)
}

/// `a / b` rounded up (`b` > 0).
fn div_ceil(a: i64, b: i64) -> i64 {
    a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)
}

/// The client outages that began in window `w`.
fn in_window<'a>(
    outages: &'a [ClientOutage],
    w: &'a OutageWindow,
) -> impl Iterator<Item = &'a ClientOutage> {
    outages
        .iter()
        .filter(move |o| o.start_us >= w.start_us && o.start_us <= w.end_us)
}

/// Throughput and p99 of the time series' intervals `first..last` (by index;
/// the intervals have `step` µs); None without a series or when none lies there.
fn stretch_figures(sum: &RunSummary, first: i64, last: i64) -> Option<StretchFigures> {
    let series = sum.stats.series.as_ref()?;
    let step = series.interval_us.max(1) as f64;
    let intervals = series.intervals();
    let range = first.max(0) as usize..(last.max(0) as usize).min(intervals.len());
    if range.is_empty() {
        return None;
    }
    let n = range.len();
    let mut successful = 0;
    let mut hist = SparseHistogram::default();
    for iv in &intervals[range] {
        successful += iv.counters.successful;
        hist.merge(&iv.latency_hist);
    }
    let full: LatencyHistogram = hist.to_histogram();
    Some(StretchFigures {
        tps: successful as f64 / (n as f64 * step / 1e6),
        p99_ms: (!full.is_empty()).then(|| full.value_at_quantile(0.99) as f64 / 1000.0),
    })
}

/// The text report's block (nothing without `--reconnect` or without outages).
pub(crate) fn push_outages(s: &mut TextBuf, sum: &RunSummary) {
    let Some(doc) = outages_doc(sum) else {
        return;
    };
    let _ = writeln!(s, "outage windows: {}", doc.windows.len());
    for (i, w) in doc.windows.iter().enumerate() {
        let _ = write!(s, " - window {}: from ", i + 1);
        s.fixed(w.start_s, 3);
        s.str(" s to ");
        s.fixed(w.end_s, 3);
        s.str(" s (");
        s.fixed((w.end_s - w.start_s) * 1000.0, 1);
        let _ = write!(
            s,
            " ms{}), {} clients, {} connection failures\n   per client: ",
            if w.open { ", open at the end" } else { "" },
            w.clients,
            w.connection_failures
        );
        s.fixed(w.client_min_s * 1000.0, 1);
        s.str(" to ");
        s.fixed(w.client_max_s * 1000.0, 1);
        s.str(" ms\n   failures by SQLSTATE class:");
        for (class, n) in &w.failures_by_sqlstate_class {
            let _ = write!(s, " {class}: {n}");
        }
        s.str("\n");
        push_stretches(s, w);
        for m in &w.servers {
            let _ = writeln!(
                s,
                "   servers: {} -> {} ({} client outages)",
                m.before, m.after, m.client_outages
            );
        }
    }
}

/// `tps` and `p99` of the minute before, the window and the minute after.
fn push_stretches(s: &mut TextBuf, w: &OutageWindowDoc) {
    if w.before.is_none() && w.during.is_none() && w.after.is_none() {
        return;
    }
    s.str("   tps before/during/after:");
    for f in [w.before, w.during, w.after] {
        match f {
            Some(f) => {
                s.str(" ");
                s.fixed(f.tps, 1);
            }
            None => s.str(" -"),
        }
    }
    s.str("; p99 (ms):");
    for f in [w.before, w.during, w.after] {
        match f.and_then(|f| f.p99_ms) {
            Some(p) => {
                s.str(" ");
                s.fixed(p, 3);
            }
            None => s.str(" -"),
        }
    }
    s.str("\n");
}
