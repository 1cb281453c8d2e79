//! One server timeline for a merged run. The shards sampled the same server, so the
//! merged document keeps one of their timelines rather than adding them up: the one
//! whose measured interval overlaps the merged run's the most (the lowest shard index
//! on ties, so shard 0's when the shards started and ended together), moved by the
//! whole intervals its series starts after the merged run's (as its client series is).
//! Its findings are the shard's until the caller explains them again with the merged
//! run's figures. Each `--target` server's timeline is chosen the same way.

use pgrush_stats::server::ServerTimeline;

use super::check::Shard;
use super::timeline::Timeline;
use crate::document::RunDocument;

/// The server timeline of the merged run, if any shard has one.
pub(crate) fn server_timeline(shards: &[Shard<'_>], timeline: &Timeline) -> Option<ServerTimeline> {
    timeline_of(shards, timeline, |d| d.server_stats.as_ref())
}

/// The timeline of the server of `--target` number `index` (from 0), chosen as the
/// run's server's is.
pub(crate) fn target_timeline(
    shards: &[Shard<'_>],
    timeline: &Timeline,
    index: usize,
) -> Option<ServerTimeline> {
    timeline_of(shards, timeline, |d| {
        d.targets.as_ref()?.get(index)?.server_stats.as_ref()
    })
}

/// The timeline `of` each shard's document chosen and moved (see the module's doc).
fn timeline_of(
    shards: &[Shard<'_>],
    timeline: &Timeline,
    of: impl Fn(&RunDocument) -> Option<&ServerTimeline>,
) -> Option<ServerTimeline> {
    let overlap = |i: usize, s: &Shard<'_>| {
        let start = timeline.starts_us[i];
        let end = start + s.doc.results.duration_s * 1e6;
        (end.min(timeline.end_us) - start.max(timeline.start_us)).max(0.0)
    };
    let (i, chosen) = shards
        .iter()
        .enumerate()
        .filter(|(_, s)| of(s.doc).is_some())
        .fold(
            None,
            |best: Option<(usize, &Shard<'_>)>, (i, s)| match best {
                Some((b, bs)) if overlap(b, bs) >= overlap(i, s) => Some((b, bs)),
                _ => Some((i, s)),
            },
        )?;
    let mut t = of(chosen.doc)?.clone();
    let interval_us = (t.interval_s * 1e6).round().max(1.0) as u64;
    let shift_s = timeline.series_offset(i, interval_us) as f64 * t.interval_s;
    for iv in &mut t.intervals {
        iv.start_s += shift_s;
    }
    for e in &mut t.events {
        e.start_s += shift_s;
        e.end_s += shift_s;
    }
    Some(t)
}
