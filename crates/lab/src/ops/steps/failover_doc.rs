//! What a switchover's or a failover's workload (`pgrush --reconnect --json`) wrote
//! in its run document: the outage windows, the throughput per interval, and the
//! moments of the step placed on the same time axis (seconds from the start of the
//! measured run, whose Unix time the document gives).

use pgrush_report::document::TimeSeriesDoc;
use serde::Deserialize;
use serde_json::Value;

use crate::ops::result::{ClientOutageTimes, FailoverTimeline, OutageWindowDoc, WorkloadInterval};

/// When the primary went and the standby took over, Unix µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Moments {
    /// The primary was told to go.
    pub stopping_us: i64,
    /// The primary was down.
    pub down_us: i64,
    /// `pg_promote()` returned.
    pub promoted_us: i64,
}

/// The first outage window of the run document: its length, clients and failures.
pub(crate) fn outage(doc: &Value) -> (Option<f64>, u64, u64) {
    let window = &doc["outages"]["windows"][0];
    let length = match (window["start_s"].as_f64(), window["end_s"].as_f64()) {
        (Some(start), Some(end)) => Some(end - start),
        _ => None,
    };
    let failures = doc["results"]["transactions"]["connection_failures"]
        .as_u64()
        .unwrap_or(0);
    (length, window["clients"].as_u64().unwrap_or(0), failures)
}

/// Every outage window of the run document (none when it has none, or they do not
/// read).
pub(crate) fn windows(doc: &Value) -> Vec<OutageWindowDoc> {
    serde_json::from_value(doc["outages"]["windows"].clone()).unwrap_or_default()
}

/// The time series' intervals worth charting ([`TimeSeriesDoc::chartable`], as the run
/// page charts them); none when the document has no time series that reads.
pub(crate) fn intervals(doc: &Value) -> Vec<WorkloadInterval> {
    let Ok(series) = TimeSeriesDoc::deserialize(&doc["time_series"]) else {
        return Vec::new();
    };
    series
        .chartable()
        .into_iter()
        .map(|i| WorkloadInterval {
            start_s: i.start_s,
            end_s: i.start_s + i.duration_s,
            tps: i.tps,
            failures: i.transactions.failed,
        })
        .collect()
}

/// Each client's outage of the document, in its order (time order).
pub(crate) fn client_outages(doc: &Value) -> Vec<ClientOutageTimes> {
    let seconds = |us: &Value| us.as_i64().map(|us| us as f64 / 1e6);
    doc["outages"]["clients"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some(ClientOutageTimes {
                client: u32::try_from(c["client"].as_u64()?).ok()?,
                start_s: seconds(&c["start_us"])?,
                end_s: seconds(&c["end_us"]),
            })
        })
        .collect()
}

/// `moments` on the document's time axis, and the first commit after a lost
/// connection (the earliest end of `clients`' outages); None without the document's
/// start time.
pub(crate) fn timeline(
    doc: &Value,
    moments: &Moments,
    clients: &[ClientOutageTimes],
) -> Option<FailoverTimeline> {
    let start_us = (doc["start_time_unix"].as_f64()? * 1e6).round() as i64;
    let at = |unix_us: i64| (unix_us - start_us) as f64 / 1e6;
    let first_commit_s = clients
        .iter()
        .filter_map(|c| c.end_s)
        .min_by(f64::total_cmp);
    Some(FailoverTimeline {
        primary_stopping_s: at(moments.stopping_us),
        primary_down_s: at(moments.down_us),
        promoted_s: at(moments.promoted_us),
        first_commit_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One interval of a run document's time series.
    fn interval(start_s: f64, duration_s: f64, tps: f64, failed: u64) -> Value {
        serde_json::json!({
            "start_s": start_s, "duration_s": duration_s, "tps": tps,
            "transactions": {"processed": 0, "failed": failed, "serialization_failures": 0,
                "deadlock_failures": 0, "other_failures": 0, "skipped": 0, "retried": 0,
                "retries": 0},
            "latency_average_ms": null, "latency_stddev_ms": null, "latency_percentiles": [],
            "lag_average_ms": null, "lag_max_ms": null
        })
    }

    fn document() -> Value {
        serde_json::json!({
            "start_time_unix": 1000.5,
            "results": {"transactions": {"connection_failures": 3}},
            "time_series": {"interval_s": 1.0, "intervals": [
                interval(0.0, 0.98, 100.0, 0),
                interval(1.0, 1.0, 40.0, 3),
                interval(2.0, 0.004, 250.0, 0)
            ]},
            "outages": {
                "windows": [{"start_s": 1.25, "end_s": 1.75, "clients": 2,
                    "connection_failures": 3, "client_min_s": 0.4, "client_max_s": 0.5,
                    "open": false, "failures_by_sqlstate_class": {"57": 2, "08": 1}}],
                "clients": [
                    {"client": 0, "start_us": 1_250_000, "end_us": 1_750_000, "failures": 2},
                    {"client": 1, "start_us": 1_300_000, "end_us": 1_700_000, "failures": 1}
                ]
            }
        })
    }

    #[test]
    fn reads_windows_intervals_and_places_the_moments() {
        let doc = document();
        assert_eq!(outage(&doc), (Some(0.5), 2, 3));
        let w = windows(&doc);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].start_s, w[0].end_s, w[0].clients), (1.25, 1.75, 2));
        let i = intervals(&doc);
        assert_eq!(i.len(), 2, "the last few milliseconds are left out: {i:?}");
        assert_eq!((i[1].start_s, i[1].end_s, i[1].failures), (1.0, 2.0, 3));
        let moments = Moments {
            stopping_us: 1_001_700_000,
            down_us: 1_001_800_000,
            promoted_us: 1_002_000_000,
        };
        let clients = client_outages(&doc);
        assert_eq!(clients.len(), 2);
        assert_eq!((clients[1].client, clients[1].start_s), (1, 1.3));
        assert_eq!(clients[1].end_s, Some(1.7));
        let t = timeline(&doc, &moments, &clients).expect("a start time");
        assert!((t.primary_stopping_s - 1.2).abs() < 1e-9, "{t:?}");
        assert!((t.primary_down_s - 1.3).abs() < 1e-9, "{t:?}");
        assert!((t.promoted_s - 1.5).abs() < 1e-9, "{t:?}");
        assert_eq!(t.first_commit_s, Some(1.7));
    }

    #[test]
    fn a_missing_document_gives_nothing() {
        let moments = Moments {
            stopping_us: 1,
            down_us: 2,
            promoted_us: 3,
        };
        assert_eq!(timeline(&Value::Null, &moments, &[]), None);
        assert!(client_outages(&Value::Null).is_empty());
        assert!(windows(&Value::Null).is_empty());
        assert!(intervals(&Value::Null).is_empty());
        assert_eq!(outage(&Value::Null), (None, 0, 0));
    }
}
