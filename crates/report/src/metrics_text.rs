//! The `/metrics` page of `--metrics-listen`: a run's live figures in the Prometheus
//! text format (0.0.4) or in OpenMetrics 1.0 when the scraper asks for it. Pure: the
//! endpoint hands in the figures, this renders them.
//!
//! Series (every one labelled `shard`; per script and stage also `script` and `stage`,
//! the stage being `warmup`, or the stage's number, `1` in a run without stages):
//! counters `pgrush_transactions_total` (successful), `pgrush_failures_total{kind}`
//! (`serialization`, `deadlock`, `other`), `pgrush_retries_total`,
//! `pgrush_retried_transactions_total`, `pgrush_skipped_total` (`-L`); histograms
//! `pgrush_latency_seconds` and, under `-R`, `pgrush_lag_seconds` (cumulative buckets
//! from `pgrush_stats::live::BUCKET_BOUNDS_US`, never reset); per shard the counter
//! `pgrush_clients_aborted_total` and the gauges `pgrush_clients`,
//! `pgrush_clients_connected`, `pgrush_stage`, `pgrush_rate_target_tps`; then the
//! caller's own gauges (the client machine's load, the server's statistics).

use std::fmt::Write;

use pgrush_stats::live::{BUCKET_BOUNDS_US, LiveHistogram, LiveTotals, ThreadGauges};

/// Which exposition format to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsFormat {
    /// Prometheus' text format 0.0.4.
    Prometheus,
    /// OpenMetrics 1.0 text.
    OpenMetrics,
}

impl MetricsFormat {
    /// The format for a request's `Accept` header: OpenMetrics when it names it.
    pub fn for_accept(accept: Option<&str>) -> MetricsFormat {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => MetricsFormat::OpenMetrics,
            _ => MetricsFormat::Prometheus,
        }
    }

    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            MetricsFormat::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            MetricsFormat::OpenMetrics => {
                "application/openmetrics-text; version=1.0.0; charset=utf-8"
            }
        }
    }
}

/// A gauge the caller adds (machine load, server statistics).
#[derive(Debug, Clone, PartialEq)]
pub struct Gauge {
    /// Metric name.
    pub name: &'static str,
    /// Its help text.
    pub help: &'static str,
    /// Labels beyond `shard`.
    pub labels: Vec<(&'static str, String)>,
    /// The value.
    pub value: f64,
}

/// Everything the page shows.
#[derive(Debug, Clone, Copy)]
pub struct MetricsPage<'a> {
    /// Script names, by script index.
    pub scripts: &'a [String],
    /// This process's shard index (0 when not sharded).
    pub shard: u32,
    /// Clients of this process (`-c`).
    pub clients: u32,
    /// The cumulative figures.
    pub totals: &'a LiveTotals,
    /// The threads' gauges, summed.
    pub gauges: ThreadGauges,
    /// Further gauges, grouped by name (a name's lines are written together).
    pub extra: &'a [Gauge],
}

/// The stage label of stage slot `slot` (0: the warm-up).
pub fn stage_label(slot: usize) -> String {
    match slot {
        0 => "warmup".to_string(),
        n => n.to_string(),
    }
}

/// Escapes a label value: backslash, double quote and line feed.
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A sample value as the formats write it.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// A label set `{a="x",b="y"}` (labels escaped).
fn labels(pairs: &[(&str, &str)]) -> String {
    let mut out = open_labels(pairs);
    out.push('}');
    out
}

/// A label set without its closing brace, `{a="x",b="y"`, for lines that add one more
/// label (a histogram's `le`).
fn open_labels(pairs: &[(&str, &str)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{k}=\"{}\"", escape_label(v));
    }
    out
}

/// The page's text writer: metadata lines once per family, in either format.
struct Page {
    out: String,
    format: MetricsFormat,
}

impl Page {
    /// `# HELP` and `# TYPE` of a family; `name` without the `_total` of a counter.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let shown = match (self.format, kind) {
            (MetricsFormat::Prometheus, "counter") => format!("{name}_total"),
            _ => name.to_string(),
        };
        let _ = writeln!(self.out, "# HELP {shown} {help}");
        let _ = writeln!(self.out, "# TYPE {shown} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &str, value: &str) {
        let _ = writeln!(self.out, "{name}{labels} {value}");
    }

    fn finish(mut self) -> String {
        if self.format == MetricsFormat::OpenMetrics {
            self.out.push_str("# EOF\n");
        }
        self.out
    }
}

/// The cells to show: `(script name, stage label, cell)` of every cell that counted a
/// transaction (counts never go down, so a series once shown stays).
fn shown_cells<'a>(
    page: &MetricsPage<'a>,
) -> Vec<(&'a str, String, &'a pgrush_stats::live::LiveCell)> {
    let shape = page.totals.shape;
    let mut out = Vec::new();
    for slot in 0..shape.stage_slots() {
        for (script, name) in page.scripts.iter().enumerate().take(shape.scripts) {
            if let Some(cell) = page.totals.cells.get(shape.cell(slot, script))
                && cell.counters.total() > 0
            {
                out.push((name.as_str(), stage_label(slot), cell));
            }
        }
    }
    out
}

/// Renders the page.
pub fn render(page: &MetricsPage<'_>, format: MetricsFormat) -> String {
    let mut w = Page {
        out: String::new(),
        format,
    };
    let shard = page.shard.to_string();
    let cells = shown_cells(page);
    let cell_labels: Vec<String> = cells
        .iter()
        .map(|(script, stage, _)| {
            labels(&[("script", script), ("stage", stage), ("shard", &shard)])
        })
        .collect();
    type Count = fn(&pgrush_stats::TxCounters) -> u64;
    let counters: [(&str, &str, Count); 4] = [
        ("pgrush_transactions", "Successful transactions.", |c| {
            c.successful
        }),
        ("pgrush_retries", "Retries (--max-tries).", |c| c.retries),
        (
            "pgrush_retried_transactions",
            "Transactions retried at least once.",
            |c| c.retried,
        ),
        (
            "pgrush_skipped",
            "Transactions skipped for being late (-L).",
            |c| c.skipped,
        ),
    ];
    for (name, help, get) in counters {
        w.family(name, "counter", help);
        for ((_, _, cell), l) in cells.iter().zip(&cell_labels) {
            w.sample(
                &format!("{name}_total"),
                l,
                &get(&cell.counters).to_string(),
            );
        }
    }
    w.family(
        "pgrush_failures",
        "counter",
        "Failed transactions by kind (after their last try).",
    );
    for (script, stage, cell) in &cells {
        let c = &cell.counters;
        for (kind, n) in [
            ("serialization", c.serialization_failures),
            ("deadlock", c.deadlock_failures),
            ("other", c.other_failures),
        ] {
            let l = labels(&[
                ("script", script),
                ("stage", stage),
                ("shard", &shard),
                ("kind", kind),
            ]);
            w.sample("pgrush_failures_total", &l, &n.to_string());
        }
    }
    histogram(
        &mut w,
        "pgrush_latency_seconds",
        "Latency of successful transactions.",
        cells.iter().map(|(s, st, c)| (*s, st.as_str(), &c.latency)),
        &shard,
    );
    if page.totals.shape.throttled {
        histogram(
            &mut w,
            "pgrush_lag_seconds",
            "Schedule lag of successful transactions (-R).",
            cells.iter().map(|(s, st, c)| (*s, st.as_str(), &c.lag)),
            &shard,
        );
    }
    shard_figures(&mut w, page, &shard);
    extra_gauges(&mut w, page.extra, &shard);
    w.finish()
}

/// One histogram family: per series the cumulative buckets, `+Inf`, sum and count.
/// Each bucket line is written in place (a scrape writes hundreds of them).
fn histogram<'a>(
    w: &mut Page,
    name: &str,
    help: &str,
    series: impl Iterator<Item = (&'a str, &'a str, &'a LiveHistogram)>,
    shard: &str,
) {
    w.family(name, "histogram", help);
    let bounds: Vec<String> = BUCKET_BOUNDS_US
        .iter()
        .map(|&us| number(us as f64 / 1e6))
        .collect();
    let bucket = format!("{name}_bucket");
    for (script, stage, h) in series {
        let base = [("script", script), ("stage", stage), ("shard", shard)];
        let open = open_labels(&base);
        let cumulative = h.cumulative();
        for (i, n) in cumulative.iter().enumerate() {
            let le = bounds.get(i).map_or("+Inf", String::as_str);
            let _ = writeln!(w.out, "{bucket}{open},le=\"{le}\"}} {n}");
        }
        let l = labels(&base);
        w.sample(&format!("{name}_sum"), &l, &number(h.sum_us / 1e6));
        w.sample(
            &format!("{name}_count"),
            &l,
            &cumulative[cumulative.len() - 1].to_string(),
        );
    }
}

/// The process's own figures: aborted clients, clients, stage, rate target.
fn shard_figures(w: &mut Page, page: &MetricsPage<'_>, shard: &str) {
    let l = labels(&[("shard", shard)]);
    let g = &page.gauges;
    w.family(
        "pgrush_clients_aborted",
        "counter",
        "Clients that aborted (an error they cannot go on after).",
    );
    w.sample("pgrush_clients_aborted_total", &l, &g.aborted.to_string());
    let gauges = [
        (
            "pgrush_clients",
            "Clients of this process (-c).",
            f64::from(page.clients),
        ),
        (
            "pgrush_clients_connected",
            "Clients with an open connection.",
            f64::from(g.connected),
        ),
        (
            "pgrush_stage",
            "The stage the run is in (0: the warm-up; 1 in a run without stages).",
            f64::from(g.stage_slot),
        ),
        (
            "pgrush_rate_target_tps",
            "The rate target of this process (transactions per second; 0 when not throttled).",
            g.rate_tps,
        ),
    ];
    for (name, help, v) in gauges {
        w.family(name, "gauge", help);
        w.sample(name, &l, &number(v));
    }
}

/// The caller's gauges, one family per name in order of first appearance.
fn extra_gauges(w: &mut Page, extra: &[Gauge], shard: &str) {
    let mut names: Vec<&str> = Vec::new();
    for g in extra {
        if !names.contains(&g.name) {
            names.push(g.name);
        }
    }
    for name in names {
        let mut first = true;
        for g in extra.iter().filter(|g| g.name == name) {
            if first {
                w.family(name, "gauge", g.help);
                first = false;
            }
            let mut l: Vec<(&str, &str)> = g.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            l.push(("shard", shard));
            w.sample(name, &labels(&l), &number(g.value));
        }
    }
}

#[cfg(test)]
mod tests;
