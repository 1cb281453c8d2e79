//! How a merged run shows its shards: the block `pgrush merge` prints on stderr and the
//! section of the HTML page.

use super::merged_doc::MergedDoc;
use crate::svg::escape;
use std::fmt::Write as _;

/// Earliest shard start (Unix s, server clock).
fn earliest(m: &MergedDoc) -> f64 {
    m.shards
        .iter()
        .map(|x| x.start_time_unix)
        .fold(f64::INFINITY, f64::min)
}

/// The "merged from N shards" block `pgrush merge` prints on stderr: one line per shard
/// (host, clients, clock offset ± uncertainty, start relative to the earliest), then the
/// start spread and the measured interval.
pub fn merged_text(m: &MergedDoc, duration_s: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "merged from {} shards (benchmark {}, start: {}):",
        m.shard_count, m.benchmark_id, m.start_method
    );
    let earliest = earliest(m);
    for x in &m.shards {
        let last = x.first_client.saturating_add(x.clients.max(1) - 1);
        let _ = writeln!(
            s,
            "  shard {}: host {}, clients {}-{}, clock offset {:+.3} ± {:.3} ms, start +{:.3} ms, {} transactions",
            x.index,
            x.host.as_deref().unwrap_or("unknown"),
            x.first_client,
            last,
            x.clock_offset_ms,
            x.clock_offset_uncertainty_ms,
            (x.start_time_unix - earliest) * 1000.0,
            x.processed
        );
    }
    let _ = writeln!(
        s,
        "start spread: {:.3} ms; measured interval: {:.6} s (earliest start to latest end, server clock)",
        m.start_spread_ms, duration_s
    );
    s
}

/// The HTML page's "Shards" section: one row per shard.
pub fn html_section(m: &MergedDoc) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<h2>Shards</h2><p>Merged from {} shards (benchmark <code>{}</code>, start: {}); \
         start spread {:.3} ms.</p><table id=\"shards\"><tr><th>shard</th><th>host</th>\
         <th>clients</th><th>clock offset (ms)</th><th>start (ms)</th><th>transactions</th></tr>",
        m.shard_count,
        escape(&m.benchmark_id),
        escape(&m.start_method),
        m.start_spread_ms
    );
    let first = earliest(m);
    for x in &m.shards {
        let last = x.first_client.saturating_add(x.clients.max(1) - 1);
        let _ = write!(
            s,
            "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}–{}</td>\
             <td class=\"n\">{:+.3} ± {:.3}</td><td class=\"n\">+{:.3}</td><td class=\"n\">{}</td></tr>",
            x.index,
            escape(x.host.as_deref().unwrap_or("unknown")),
            x.first_client,
            last,
            x.clock_offset_ms,
            x.clock_offset_uncertainty_ms,
            (x.start_time_unix - first) * 1000.0,
            x.processed
        );
    }
    s.push_str("</table>");
    s
}
