//! The run page's table of `--reconnect`'s outage windows: when and how long, the
//! clients and failures in each, throughput and p99 latency of the minute before,
//! the window and the minute after, and the servers the clients were on before and
//! after (the time charts shade the same windows, [`outage_marks`]). The ops page
//! shows the windows of its switchover and failover steps the same way.

use std::fmt::Write as _;

use crate::outage::{OutageWindowDoc, OutagesDoc, StretchFigures};
use crate::svg::{Mark, escape};

/// The colour of an outage window on every chart.
pub const OUTAGE_COLOUR: &str = "#d62728";

/// `<h2>Outage windows</h2>` and its table.
pub(crate) fn html_section(doc: &OutagesDoc) -> String {
    format!(
        "<h2>Outage windows</h2>{}",
        windows_table(&doc.windows, "outages")
    )
}

/// The windows as shaded spans of a time axis (seconds from the start of the
/// measured run), labelled `outage 1`, `outage 2`, ….
pub fn outage_marks(windows: &[OutageWindowDoc]) -> Vec<Mark> {
    windows
        .iter()
        .enumerate()
        .map(|(i, w)| Mark {
            label: format!("outage {}", i + 1),
            from: w.start_s,
            to: w.end_s,
            color: OUTAGE_COLOUR,
        })
        .collect()
}

/// The table of `windows` (one row each), with HTML id `id` (escaped).
pub fn windows_table(windows: &[OutageWindowDoc], id: &str) -> String {
    let mut s = format!(
        "<table id=\"{}\"><tr><th>window</th><th>from (s)</th>\
         <th>to (s)</th><th>length (ms)</th><th>clients</th><th>connection failures</th>\
         <th>per client (ms)</th><th>SQLSTATE classes</th>\
         <th>tps before / during / after</th><th>p99 (ms) before / during / after</th>\
         <th>servers before → after</th></tr>",
        escape(id)
    );
    for (i, w) in windows.iter().enumerate() {
        let classes: Vec<String> = w
            .failures_by_sqlstate_class
            .iter()
            .map(|(class, n)| format!("{class}: {n}"))
            .collect();
        let stretches = [w.before, w.during, w.after];
        let servers: Vec<String> = w
            .servers
            .iter()
            .map(|m| {
                format!(
                    "{} → {} ({} client outages)",
                    escape(&m.before),
                    escape(&m.after),
                    m.client_outages
                )
            })
            .collect();
        let _ = write!(
            s,
            "<tr><td class=\"n\">{}{}</td><td class=\"n\">{:.3}</td><td class=\"n\">{:.3}</td>\
             <td class=\"n\">{:.1}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{:.1} – {:.1}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td>{}</td></tr>",
            i + 1,
            if w.open { " (open at the end)" } else { "" },
            w.start_s,
            w.end_s,
            (w.end_s - w.start_s) * 1000.0,
            w.clients,
            w.connection_failures,
            w.client_min_s * 1000.0,
            w.client_max_s * 1000.0,
            escape(&classes.join(", ")),
            triple(&stretches, |f| Some(format!("{:.1}", f.tps))),
            triple(&stretches, |f| f.p99_ms.map(|p| format!("{p:.3}"))),
            servers.join("<br>")
        );
    }
    s.push_str("</table>");
    s
}

/// `a / b / c` of one figure of the three stretches (`–` where missing).
fn triple(
    stretches: &[Option<StretchFigures>; 3],
    figure: impl Fn(&StretchFigures) -> Option<String>,
) -> String {
    stretches
        .iter()
        .map(|f| f.as_ref().and_then(&figure).unwrap_or_else(|| "–".into()))
        .collect::<Vec<_>>()
        .join(" / ")
}
