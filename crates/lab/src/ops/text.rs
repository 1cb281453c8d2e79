//! The text table: one row per scale and step (two for reindex: plain and concurrently).

use crate::ops::config::StepKind;
use crate::ops::result::{Details, OpsDocument, StepResult};

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Scale factor.
    pub scale: u32,
    /// Step label.
    pub step: String,
    /// Seconds (`None` when skipped).
    pub seconds: Option<f64>,
    /// Bytes.
    pub bytes: Option<u64>,
    /// Rate text (`12.3 MB/s`, `450000 rows/s`).
    pub rate: String,
    /// Check verdict or why the step was skipped.
    pub note: String,
}

/// The rows of one step's result.
pub fn rows_of(scale: u32, result: &StepResult) -> Vec<Row> {
    let mut label = result.step.name().to_string();
    if result.round > 1 {
        label.push_str(&format!(" #{}", result.round));
    }
    if let Some(why) = &result.skipped {
        return vec![Row {
            scale,
            step: label,
            seconds: None,
            bytes: None,
            rate: String::new(),
            note: format!("skipped: {why}"),
        }];
    }
    let mut note = match &result.check {
        Some(c) if c.passed => "ok".to_string(),
        Some(c) => format!("FAILED: {}", c.text),
        None => String::new(),
    };
    if let (Details::Recovery(d), Some(c)) = (&result.details, &result.check)
        && c.passed
        && result.step == StepKind::CrashRecovery
        && d.history_rows > 0
    {
        // The commits the check found again after the crash.
        note = format!("ok: {} commits checked, none lost", d.transactions);
    }
    if let Details::Failover(d) = &result.details {
        note = failover_note(d, note);
    }
    if let Details::Load(d) = &result.details {
        note = format!(
            "tables {}, indexes {}, WAL {}",
            size_text(d.table_bytes),
            size_text(d.index_bytes),
            size_text(d.wal_bytes)
        );
    }
    if let Details::Restore(d) = &result.details
        && let Some(p) = &d.phases
    {
        note.push_str(&format!(
            " (schema {:.2} s, data {:.2} s, indexes and constraints {:.2} s)",
            p.schema_seconds, p.data_seconds, p.index_and_constraint_seconds
        ));
    }
    let mb_rate = || {
        result
            .bytes_per_second
            .map(|r| format!("{:.1} MB/s", r / 1e6))
            .unwrap_or_default()
    };
    let rate = match &result.details {
        Details::Load(d) => format!("{:.0} rows/s", d.rows_per_second),
        _ => mb_rate(),
    };
    let mut rows = vec![Row {
        scale,
        step: label.clone(),
        seconds: Some(result.seconds),
        bytes: result.bytes,
        rate,
        note,
    }];
    if let Details::Reindex(d) = &result.details {
        let rate = if d.concurrently_seconds > 0.0 {
            format!(
                "{:.1} MB/s",
                d.index_bytes as f64 / d.concurrently_seconds / 1e6
            )
        } else {
            String::new()
        };
        rows.push(Row {
            scale,
            step: label.replace("reindex", "reindex concurrently"),
            seconds: Some(d.concurrently_seconds),
            bytes: Some(d.index_bytes),
            rate,
            note: String::new(),
        });
    }
    rows
}

/// `12.3 MB`, `1.20 GB`, `512 kB`.
pub fn size_text(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.0} kB", b / 1e3)
    }
}

/// One line of the table.
pub fn row_line(row: &Row) -> String {
    let seconds = row
        .seconds
        .map(|s| format!("{s:.2} s"))
        .unwrap_or_else(|| "-".to_string());
    let size = row.bytes.map(size_text).unwrap_or_else(|| "-".to_string());
    format!(
        "{:>6}  {:<22} {:>10} {:>10} {:>16}  {}",
        row.scale, row.step, seconds, size, row.rate, row.note
    )
    .trim_end()
    .to_string()
}

/// The header line.
pub fn header() -> String {
    format!(
        "{:>6}  {:<22} {:>10} {:>10} {:>16}  {}",
        "scale", "step", "time", "size", "rate", "check and notes"
    )
}

/// The whole table of a document.
pub fn table(doc: &OpsDocument) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "pgrush ops: PostgreSQL {} ({}), -j {}, dump format {}\n",
        doc.server_version, doc.target, doc.settings.jobs, doc.settings.dump_format
    ));
    out.push_str(&header());
    out.push('\n');
    for scale in &doc.scales {
        for result in &scale.steps {
            for row in rows_of(scale.scale, result) {
                out.push_str(&row_line(&row));
                out.push('\n');
            }
        }
    }
    if let Some(why) = &doc.stopped {
        out.push_str(&format!("stopped: {why}\n"));
    }
    out
}

/// A switchover's or failover's note: what the clients saw, what the servers took, and
/// the check's verdict (`ok` or `FAILED: …`) at the end.
fn failover_note(d: &crate::ops::result::FailoverDetails, verdict: String) -> String {
    let outage = match d.outage_seconds {
        Some(s) => format!(
            "clients cut off {s:.2} s ({} clients, {} connection failures)",
            d.clients_cut_off, d.connection_failures
        ),
        None => "no client lost its connection".to_string(),
    };
    let standby = if d.synchronous { "sync" } else { "async" };
    let rejoin = match (d.rejoin_seconds, d.rewound) {
        (Some(s), Some(true)) => format!(", old primary rejoined in {s:.2} s (pg_rewind)"),
        (Some(s), _) => format!(", old primary rejoined in {s:.2} s"),
        _ => String::new(),
    };
    format!(
        "{outage}; primary down in {:.2} s, {} of WAL to replay, promoted in {:.2} s{rejoin}; \
         {} of {} commits lost ({standby} standby): {verdict}",
        d.stop_seconds,
        size_text(d.replay_backlog_bytes),
        d.promote_seconds,
        d.lost_transactions,
        d.transactions
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::result::{Check, RecoveryDetails, ReindexDetails};

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(size_text(512_000), "512 kB");
        assert_eq!(size_text(15_500_000), "15.5 MB");
        assert_eq!(size_text(1_200_000_000), "1.20 GB");
    }

    #[test]
    fn crash_recovery_says_the_commits_it_checked() {
        let result = StepResult {
            step: StepKind::CrashRecovery,
            round: 1,
            seconds: 0.3,
            bytes: Some(26_600_000),
            bytes_per_second: Some(8.8e7),
            check: Some(Check {
                passed: true,
                text: "x".into(),
            }),
            skipped: None,
            details: Details::Recovery(RecoveryDetails {
                transactions: 23_806,
                redo_start: "0/1".into(),
                redo_end: "0/2".into(),
                wal_replayed_bytes: 26_600_000,
                expected_history_rows: 23_806,
                history_rows: 23_806,
                target: None,
                base_backup_seconds: None,
            }),
        };
        let line = row_line(&rows_of(1, &result)[0]);
        assert!(
            line.ends_with("ok: 23806 commits checked, none lost"),
            "{line}"
        );
    }

    #[test]
    fn reindex_gives_two_rows_and_failures_show() {
        let result = StepResult {
            step: StepKind::Reindex,
            round: 1,
            seconds: 0.5,
            bytes: Some(2_000_000),
            bytes_per_second: Some(4e6),
            check: Some(Check {
                passed: false,
                text: "x".into(),
            }),
            skipped: None,
            details: Details::Reindex(ReindexDetails {
                plain_seconds: 0.5,
                concurrently_seconds: 1.0,
                index_bytes: 2_000_000,
            }),
        };
        let rows = rows_of(2, &result);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].step, "reindex concurrently");
        assert_eq!(rows[1].rate, "2.0 MB/s");
        assert!(row_line(&rows[0]).contains("FAILED: x"));
        let skipped = StepResult::skipped(StepKind::Pitr, 2, "why");
        let line = row_line(&rows_of(1, &skipped)[0]);
        assert!(
            line.contains("pitr #2") && line.ends_with("skipped: why"),
            "{line}"
        );
    }
}
