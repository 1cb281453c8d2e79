//! `--html=FILE`: one self-contained page (inline CSS, SVG and the hover script of
//! [`crate::page`], nothing fetched) rendered from a [`RunDocument`]: summary, tps and
//! latency percentiles over time, `--reconnect`'s outage windows, the latency
//! distribution (percentile spectrum), per-command latencies and the settings.

use crate::compare::Comparison;
use crate::document::{Distribution, IntervalDoc, RunDocument};
use crate::page::page_end;
pub use crate::page::page_start;
use crate::percentiles::{label, value_at_percentile, values_at_percentiles};
use crate::svg::{Chart, Mark, Series, Stacking, XScale, escape};
use std::fmt::Write as _;

pub(crate) fn ms(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.3} ms"),
        _ => "–".to_string(),
    }
}

fn row(s: &mut String, name: &str, value: &str) {
    let _ = write!(
        s,
        "<tr><th>{}</th><td class=\"n\">{}</td></tr>",
        escape(name),
        escape(value)
    );
}

fn text_row(s: &mut String, name: &str, value: &str) {
    let _ = write!(
        s,
        "<tr><th>{}</th><td>{}</td></tr>",
        escape(name),
        escape(value)
    );
}

/// Points of the percentile spectrum of a distribution (percentile, ms), HdrHistogram
/// style: 10 points per decade of `1/(1-p)`, up to the largest value.
pub fn spectrum(dist: &Distribution) -> Vec<(f64, f64)> {
    let h = dist.histogram();
    if h.is_empty() {
        return Vec::new();
    }
    let n = h.len() as f64;
    let mut ps = Vec::new();
    for k in 0..=60 {
        let p = 100.0 * (1.0 - 10f64.powf(-f64::from(k) / 10.0));
        // Past the resolution of the sample count, the spectrum is flat at the maximum.
        if (1.0 - p / 100.0) * n < 0.5 && k > 0 {
            break;
        }
        ps.push(if k == 0 { 0.0001 } else { p });
    }
    let mut out: Vec<(f64, f64)> = ps
        .iter()
        .zip(values_at_percentiles(&h, &ps))
        .filter_map(|(&p, v)| Some((p, (v? as f64 / 1000.0).min(dist.max_ms))))
        .collect();
    if let Some(max) = value_at_percentile(&h, 100.0) {
        let last = out.last().map_or(0.0, |l| l.0);
        let top = (100.0 * (1.0 - 0.5 / n)).max(last);
        out.push((top, (max as f64 / 1000.0).min(dist.max_ms)));
    }
    out
}

/// `--workload tpcc`: the clients' NOPM and TPM, then the server's.
fn tpcc_rows(s: &mut String, tpcc: &crate::document::TpccDoc) {
    row(s, "NOPM (clients)", &format!("{:.1}", tpcc.nopm));
    row(s, "TPM (clients)", &format!("{:.1}", tpcc.tpm));
    if let Some(server) = &tpcc.server {
        row(
            s,
            "NOPM (server, d_next_o_id)",
            &format!("{:.1}", server.nopm),
        );
        row(
            s,
            "TPM (server, commits + rollbacks)",
            &format!("{:.1}", server.tpm),
        );
    }
}

fn summary_table(s: &mut String, d: &RunDocument) {
    let r = &d.results;
    let t = &r.transactions;
    s.push_str("<table id=\"summary\">");
    row(
        s,
        "tps",
        &r.tps.map_or("–".to_string(), |v| format!("{v:.6}")),
    );
    let processed = match r.expected_transactions {
        Some(e) => format!("{}/{e}", t.processed),
        None => t.processed.to_string(),
    };
    row(s, "transactions actually processed", &processed);
    if let Some(tpcc) = &d.tpcc {
        tpcc_rows(s, tpcc);
    }
    row(s, "failed transactions", &t.failed.to_string());
    if d.config.max_tries != 1 {
        row(s, "transactions retried", &t.retried.to_string());
        row(s, "total retries", &t.retries.to_string());
    }
    if t.skipped > 0 {
        row(s, "transactions skipped", &t.skipped.to_string());
    }
    row(s, "latency average", &ms(r.latency_average_ms));
    if r.latency_stddev_ms.is_some() {
        row(s, "latency stddev", &ms(r.latency_stddev_ms));
    }
    if let Some(l) = &d.latency {
        for p in &l.percentiles {
            row(s, &format!("latency {}", label(p.p)), &ms(Some(p.ms)));
        }
        row(s, "latency max", &ms(Some(l.max_ms)));
    }
    if r.lag_average_ms.is_some() || r.lag_max_ms.is_some() {
        row(s, "schedule lag average", &ms(r.lag_average_ms));
        row(s, "schedule lag max", &ms(r.lag_max_ms));
    }
    row(s, "duration", &format!("{:.3} s", r.duration_s));
    if let Some(w) = d.config.warmup_s {
        text_row(
            s,
            "warm-up",
            &format!("{w} s before the measured run, not counted"),
        );
    }
    if let Some(v) = r.initial_connection_time_ms {
        row(s, "initial connection time", &ms(Some(v)));
    }
    if let Some(v) = r.average_connection_time_ms {
        row(s, "average connection time", &ms(Some(v)));
    }
    if r.aborted {
        row(s, "status", "aborted: the results are incomplete");
    } else if r.interrupted {
        row(s, "status", "interrupted: the results are incomplete");
    }
    s.push_str("</table>");
}

fn time_charts(s: &mut String, d: &RunDocument) {
    let Some(ts) = &d.time_series else {
        s.push_str("<p>No time series recorded.</p>");
        return;
    };
    let intervals = ts.chartable();
    let tps = Chart {
        title: String::new(),
        x_label: "time since start (s)".into(),
        y_label: "transactions per second".into(),
        x_scale: XScale::Linear,
        series: vec![
            Series {
                name: "tps".into(),
                points: intervals.iter().map(|i| (i.mid_s(), i.tps)).collect(),
            },
            Series {
                name: "failures/s".into(),
                points: intervals
                    .iter()
                    .filter(|i| i.duration_s > 0.0)
                    .map(|i| (i.mid_s(), i.transactions.failed as f64 / i.duration_s))
                    .collect(),
            },
        ],
    };
    let mut marks = time_marks(d);
    marks.extend(crate::server::marks(d.server_stats.as_ref()));
    s.push_str("<h2>Throughput over time</h2>");
    s.push_str(&tps.render_with(&marks, Stacking::Lines));
    let mut series: Vec<Series> = d
        .percentiles
        .iter()
        .map(|&p| Series {
            name: label(p),
            points: intervals
                .iter()
                .filter_map(|i| {
                    let v = i.latency_percentiles.iter().find(|v| v.p == p)?;
                    Some((i.mid_s(), v.ms))
                })
                .collect(),
        })
        .collect();
    series.push(Series {
        name: "average".into(),
        points: intervals
            .iter()
            .filter_map(|i| Some((i.mid_s(), i.latency_average_ms?)))
            .collect(),
    });
    let lat = Chart {
        title: String::new(),
        x_label: "time since start (s)".into(),
        y_label: "latency (ms)".into(),
        x_scale: XScale::Linear,
        series,
    };
    s.push_str("<h2>Latency percentiles over time</h2>");
    s.push_str(&lat.render_with(&marks, Stacking::Lines));
}

/// The stages of a run in stages as shaded spans of the time axis (which starts with
/// the measured interval, as the stages do), in two alternating colours, and
/// `--reconnect`'s outage windows in red; every time chart of the page shades them.
fn time_marks(d: &RunDocument) -> Vec<Mark> {
    const COLOURS: [&str; 2] = ["#9467bd", "#7f7f7f"];
    let stages = d.stages.iter().flatten().enumerate().map(|(i, st)| Mark {
        label: st.name(),
        from: st.start_s,
        to: st.end_s,
        color: COLOURS[i % 2],
    });
    let outages = d
        .outages
        .iter()
        .flat_map(|o| crate::outage_html::outage_marks(&o.windows));
    stages.chain(outages).collect()
}

fn distribution_chart(s: &mut String, d: &RunDocument) {
    let mut series = Vec::new();
    if let Some(l) = &d.latency {
        series.push(Series {
            name: "all transactions".into(),
            points: spectrum(l),
        });
    }
    if d.scripts.len() > 1 {
        for (i, sc) in d.scripts.iter().enumerate() {
            if let Some(l) = &sc.latency {
                series.push(Series {
                    name: format!("script {}", i + 1),
                    points: spectrum(l),
                });
            }
        }
    }
    let c = Chart {
        title: String::new(),
        x_label: "percentile".into(),
        y_label: "latency (ms)".into(),
        x_scale: XScale::Percentile,
        series,
    };
    s.push_str("<h2>Latency by percentile (percentile spectrum)</h2>");
    s.push_str(&c.render());
}

fn command_table(s: &mut String, d: &RunDocument) {
    s.push_str("<h2>Per-command latencies</h2>");
    if !d.config.per_command {
        s.push_str("<p>Run with <code>-r</code> to collect per-command latencies.</p>");
        return;
    }
    s.push_str("<table id=\"commands\"><tr><th>script</th><th>command</th><th>executions</th><th>average</th>");
    for &p in &d.percentiles {
        let _ = write!(s, "<th>{}</th>", escape(&label(p)));
    }
    s.push_str("<th>failures</th><th>retries</th></tr>");
    for (i, sc) in d.scripts.iter().enumerate() {
        for c in &sc.commands {
            let _ = write!(
                s,
                "<tr><td class=\"n\">{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
                i + 1,
                escape(&c.text),
                c.executions,
                ms(Some(c.average_ms))
            );
            for &p in &d.percentiles {
                let v = c.latency.as_ref().and_then(|l| l.percentile_ms(p));
                let _ = write!(s, "<td class=\"n\">{}</td>", ms(v));
            }
            let _ = write!(
                s,
                "<td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                c.failures, c.retries
            );
        }
    }
    s.push_str("</table>");
}

fn settings_tables(s: &mut String, d: &RunDocument) {
    s.push_str("<h2>Settings</h2><table id=\"settings\">");
    let c = &d.config;
    text_row(s, "transaction type", &c.transaction_type);
    for (i, sc) in d.scripts.iter().enumerate() {
        text_row(
            s,
            &format!("script {}", i + 1),
            &format!("{} (weight {})", sc.description, sc.weight),
        );
    }
    text_row(s, "scaling factor", &c.scale.to_string());
    if let (Some(m), Some(n)) = (&c.partition_method, c.partitions) {
        text_row(s, "partitions", &format!("{n} ({m})"));
    }
    text_row(s, "query mode", &c.query_mode);
    text_row(s, "clients", &c.clients.to_string());
    text_row(s, "threads", &c.threads.to_string());
    text_row(s, "maximum number of tries", &c.max_tries.to_string());
    if let Some(t) = c.transactions_per_client {
        text_row(s, "transactions per client", &t.to_string());
    }
    if let Some(t) = c.duration_s {
        text_row(s, "duration", &format!("{t} s"));
    }
    if let Some(w) = c.warmup_s {
        text_row(s, "warm-up", &format!("{w} s"));
    }
    if let Some(r) = c.rate_tps {
        text_row(s, "rate limit", &format!("{r} tps"));
    }
    if let Some(l) = c.latency_limit_ms {
        text_row(s, "latency limit", &format!("{l} ms"));
    }
    text_row(
        s,
        "new connection per transaction",
        &c.connect_per_transaction.to_string(),
    );
    text_row(s, "command line", &d.command_line.join(" "));
    text_row(s, "start time", &d.start_time);
    text_row(
        s,
        "pgrush",
        &format!(
            "{} (pgbench {} compatible)",
            d.pgrush_version, d.pgbench_compatible_version
        ),
    );
    let cl = &d.client;
    text_row(
        s,
        "client",
        &format!(
            "{} {} ({}), {} CPUs{}",
            cl.os,
            cl.arch,
            cl.os_description.as_deref().unwrap_or("unknown"),
            cl.cpus,
            cl.hostname
                .as_deref()
                .map(|h| format!(", host {h}"))
                .unwrap_or_default()
        ),
    );
    s.push_str("</table>");
    if let Some(srv) = &d.server {
        s.push_str("<h2>Server</h2><table id=\"server\">");
        text_row(s, "server_version", &srv.version);
        for (k, v) in &srv.settings {
            text_row(s, k, v);
        }
        s.push_str("</table>");
    }
}

/// A page comparing saved runs (`pgrush report A.json B.json --html=FILE`): the
/// comparison table, throughput and p99 latency over time, and the latency
/// distributions, one line per run.
pub fn render_comparison(runs: &[(String, RunDocument)]) -> String {
    let mut s = String::with_capacity(64 * 1024);
    page_start(
        &mut s,
        &format!("pgrush: comparison of {} runs", runs.len()),
    );
    let table = Comparison::build(runs);
    s.push_str("<h2>Runs side by side</h2><table id=\"comparison\"><tr><th>metric</th>");
    for name in &table.runs {
        let _ = write!(s, "<th>{}</th>", escape(name));
    }
    s.push_str("</tr>");
    let mut section = "";
    for row in &table.rows {
        if row.section != section {
            section = row.section;
            let _ = write!(
                s,
                "<tr><th colspan=\"{}\">{}</th></tr>",
                table.runs.len() + 1,
                escape(section)
            );
        }
        let _ = write!(s, "<tr><td>{}</td>", escape(&row.metric));
        for c in &row.cells {
            let _ = write!(s, "<td class=\"n\">{}</td>", escape(c));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    let per_run = |f: &dyn Fn(&RunDocument) -> Vec<(f64, f64)>| -> Vec<Series> {
        runs.iter()
            .map(|(name, d)| Series {
                name: name.clone(),
                points: f(d),
            })
            .collect()
    };
    let over_time = |d: &RunDocument, f: &dyn Fn(&IntervalDoc) -> Option<f64>| {
        d.time_series
            .as_ref()
            .map(|ts| {
                ts.chartable()
                    .into_iter()
                    .filter_map(|i| Some((i.mid_s(), f(i)?)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let charts = [
        Chart {
            title: "Throughput over time".into(),
            x_label: "time since start (s)".into(),
            y_label: "transactions per second".into(),
            x_scale: XScale::Linear,
            series: per_run(&|d| over_time(d, &|i| Some(i.tps))),
        },
        Chart {
            title: "p99 latency over time".into(),
            x_label: "time since start (s)".into(),
            y_label: "latency (ms)".into(),
            x_scale: XScale::Linear,
            series: per_run(&|d| {
                over_time(d, &|i| {
                    // p99, or the reported percentile nearest to it.
                    i.latency_percentiles
                        .iter()
                        .min_by(|a, b| (a.p - 99.0).abs().total_cmp(&(b.p - 99.0).abs()))
                        .map(|v| v.ms)
                })
            }),
        },
        Chart {
            title: "Latency by percentile (percentile spectrum)".into(),
            x_label: "percentile".into(),
            y_label: "latency (ms)".into(),
            x_scale: XScale::Percentile,
            series: per_run(&|d| d.latency.as_ref().map(spectrum).unwrap_or_default()),
        },
    ];
    for mut c in charts {
        let _ = write!(s, "<h2>{}</h2>", escape(&c.title));
        c.title.clear();
        s.push_str(&c.render());
    }
    s.push_str("<h2>Command lines</h2><table id=\"command-lines\">");
    for (name, d) in runs {
        text_row(&mut s, name, &d.command_line.join(" "));
    }
    s.push_str("</table>");
    page_end(&mut s);
    s
}

/// The whole page.
pub fn render(d: &RunDocument) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let title = format!(
        "pgrush run: {} ({})",
        d.config.transaction_type, d.start_time
    );
    page_start(&mut s, &title);
    if !d.warnings.is_empty() {
        s.push_str("<div class=\"warn\"><strong>Warnings</strong><ul>");
        for w in &d.warnings {
            let _ = write!(s, "<li>{}</li>", escape(w));
        }
        s.push_str("</ul></div>");
    }
    s.push_str("<h2>Summary</h2>");
    summary_table(&mut s, d);
    if let Some(m) = &d.merged {
        s.push_str(&crate::merge::html_section(m));
    }
    time_charts(&mut s, d);
    if let Some(o) = &d.outages {
        s.push_str(&crate::outage_html::html_section(o));
    }
    s.push_str(&crate::statement_chart::html_section(d));
    let marks = time_marks(d);
    if let Some(t) = &d.server_stats {
        s.push_str(&crate::server::html_section(t, &marks));
    }
    if let Some(m) = &d.machine {
        s.push_str(&crate::machine::html_section(m, &marks));
    }
    distribution_chart(&mut s, d);
    s.push_str(&targets_section(d));
    command_table(&mut s, d);
    settings_tables(&mut s, d);
    let _ = write!(s, "<h2>Report</h2><pre>{}</pre>", escape(&d.report_text));
    page_end(&mut s);
    s
}

/// The HTML page's `Per target` table (empty without targets): transactions,
/// failures, tps and the latency percentiles of each target; then the summary of
/// each target's server statistics (as the text report prints it).
fn targets_section(d: &RunDocument) -> String {
    let Some(targets) = &d.targets else {
        return String::new();
    };
    let mut s = String::from(
        "<h2>Per target</h2><table id=\"targets\"><tr><th>target</th><th>scripts</th><th>processed</th><th>failed</th><th>tps</th><th>average</th>",
    );
    for &p in &d.percentiles {
        let _ = write!(s, "<th>{}</th>", escape(&label(p)));
    }
    s.push_str("</tr>");
    for t in targets {
        let scripts: Vec<String> = t.scripts.iter().map(usize::to_string).collect();
        let latency = t.latency.as_ref();
        let _ = write!(
            s,
            "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
            escape(&t.name),
            scripts.join(", "),
            t.transactions.processed,
            t.transactions.failed,
            t.tps.map_or("–".to_string(), |v| format!("{v:.1}")),
            ms(latency.map(|l| l.average_ms)),
        );
        for &p in &d.percentiles {
            let _ = write!(
                s,
                "<td class=\"n\">{}</td>",
                ms(latency.and_then(|l| l.percentile_ms(p)))
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    for (i, t) in targets.iter().enumerate() {
        if let Some(server) = &t.server_stats {
            let text = crate::server::render_target_text(i + 1, t, server);
            let _ = write!(s, "<pre class=\"target-server\">{}</pre>", escape(&text));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Counts, PercentileValue, TimeSeriesDoc};
    use crate::hdr;
    use pgrush_stats::LatencyHistogram;

    fn dist(values: impl IntoIterator<Item = u64>) -> Distribution {
        let mut h = LatencyHistogram::new();
        for v in values {
            h.record_u64(v);
        }
        Distribution {
            count: h.len(),
            min_ms: h.min() as f64 / 1000.0,
            max_ms: h.max() as f64 / 1000.0,
            average_ms: h.mean() / 1000.0,
            stddev_ms: None,
            percentiles: Vec::new(),
            hdr_histogram: hdr::encode(&h),
            sums: None,
        }
    }

    #[test]
    fn spectrum_is_monotonic_and_ends_at_the_maximum() {
        let points = spectrum(&dist(1..=10_000));
        assert!(points.len() > 30, "{}", points.len());
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
        );
        assert_eq!(points.last().map(|p| p.1), Some(10.007));
        assert_eq!(points.first().map(|p| p.1), Some(0.001));
        let one = spectrum(&dist([500]));
        // One value: flat, up to the percentile half a sample below 100 %.
        assert!(one.iter().all(|p| p.1 == 0.5), "{one:?}");
        assert_eq!(one.last().map(|p| p.0), Some(50.0));
        assert!(spectrum(&dist([])).is_empty());
    }

    #[test]
    fn short_last_interval_is_not_charted() {
        let iv = |start_s: f64, duration_s: f64| IntervalDoc {
            start_s,
            duration_s,
            transactions: Counts::default(),
            tps: 0.0,
            latency_average_ms: None,
            latency_stddev_ms: None,
            latency_percentiles: vec![PercentileValue { p: 50.0, ms: 1.0 }],
            lag_average_ms: None,
            lag_max_ms: None,
            latency_sums: None,
            lag_sums: None,
            latency_histogram: None,
            scripts: Vec::new(),
            commands: Vec::new(),
        };
        let ts = TimeSeriesDoc {
            interval_s: 1.0,
            intervals: vec![iv(0.0, 0.9), iv(1.0, 1.0), iv(2.0, 0.01)],
        };
        let kept: Vec<f64> = ts.chartable().iter().map(|i| i.start_s).collect();
        assert_eq!(kept, vec![0.0, 1.0]);
        let tiny = TimeSeriesDoc {
            interval_s: 1.0,
            intervals: vec![iv(0.0, 0.2)],
        };
        assert_eq!(tiny.chartable().len(), 1);
        assert_eq!(iv(2.0, 0.5).mid_s(), 2.25);
    }
}
