//! What a shard prints about its own report: shards launched together (`mpirun`,
//! `srun`) share one terminal, so only shard 0 prints pgbench's report, headed by a
//! line saying it covers one shard of N; every other shard prints one line instead:
//! its counts, where its document went and that `pgrush merge` gives the whole run.
//! With `--shard-reports` every shard prints its report, each headed by that line.

use pgrush_report::document::ShardDoc;
use pgrush_stats::RunSummary;

use crate::options::Options;

/// Whether this run prints pgbench's full report (not a shard, shard 0, or every
/// shard with `--shard-reports`).
pub fn prints_full_report(opts: &Options) -> bool {
    opts.shard_reports || opts.shard.is_none_or(|s| s.index == 0)
}

/// "shard I of N (clients A to B of C)", or "(client A of C)".
fn who(shard: &ShardDoc, clients: u32) -> String {
    let first = shard.first_client;
    let range = if clients == 1 {
        format!("client {first}")
    } else {
        format!("clients {first} to {}", first + clients.saturating_sub(1))
    };
    format!(
        "shard {} of {} ({range} of {})",
        shard.index, shard.count, shard.clients_total
    )
}

/// "`pgrush merge` of the N shards' documents gives the whole run".
fn merge_hint(prog: &str, shard: &ShardDoc) -> String {
    format!(
        "`{prog} merge` of the {} shards' documents gives the whole run",
        shard.count
    )
}

/// The line above shard 0's report.
pub fn report_heading(prog: &str, shard: &ShardDoc, clients: u32) -> String {
    format!(
        "{}: the report below is this shard's; {}\n",
        who(shard, clients),
        merge_hint(prog, shard)
    )
}

/// The line another shard prints instead of the report; `json` is its `--json` path.
pub fn brief_report(
    prog: &str,
    shard: &ShardDoc,
    summary: &RunSummary,
    json: Option<&str>,
) -> String {
    let c = &summary.stats.total.counters;
    brief_line(
        prog,
        shard,
        summary.config.clients,
        (c.successful, c.failed()),
        json,
    )
}

/// [`brief_report`] from the shard's clients and its `(processed, failed)` counts.
fn brief_line(
    prog: &str,
    shard: &ShardDoc,
    clients: u32,
    (processed, failed): (u64, u64),
    json: Option<&str>,
) -> String {
    let document = match json {
        Some("-") => "its document is on standard output".to_string(),
        Some(path) => format!("its document: {path}"),
        None => "no document kept (--json FILE keeps it)".to_string(),
    };
    format!(
        "{}: {processed} transactions processed, {failed} failed; {document}; {}\n",
        who(shard, clients),
        merge_hint(prog, shard)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(index: u32) -> ShardDoc {
        ShardDoc {
            index,
            count: 4,
            source: "mpi".into(),
            first_client: index * 2,
            clients_total: 8,
            benchmark_id: "0123".into(),
            start_unix_us: 0,
            clock_offset_ms: 0.0,
            clock_offset_uncertainty_ms: 0.0,
            start_method: "barrier".into(),
        }
    }

    #[test]
    fn who_prints_the_full_report() {
        let shard = |index| Options {
            shard: Some(crate::shard::ShardIdentity {
                index,
                count: 2,
                source: crate::shard::identity::ShardSource::Option,
            }),
            ..Options::default()
        };
        assert!(prints_full_report(&Options::default()));
        assert!(prints_full_report(&shard(0)));
        assert!(!prints_full_report(&shard(1)));
        let every = Options {
            shard_reports: true,
            ..shard(1)
        };
        assert!(prints_full_report(&every));
        assert_eq!(
            report_heading("pgrush", &super::tests::shard(1), 1),
            "shard 1 of 4 (client 2 of 8): the report below is this shard's; \
             `pgrush merge` of the 4 shards' documents gives the whole run\n"
        );
    }

    #[test]
    fn heading_and_brief_line() {
        assert_eq!(
            report_heading("pgrush", &shard(0), 2),
            "shard 0 of 4 (clients 0 to 1 of 8): the report below is this shard's; \
             `pgrush merge` of the 4 shards' documents gives the whole run\n"
        );
        assert_eq!(
            brief_line("pgrush", &shard(2), 2, (40, 1), Some("run.shard2.json")),
            "shard 2 of 4 (clients 4 to 5 of 8): 40 transactions processed, 1 failed; \
             its document: run.shard2.json; `pgrush merge` of the 4 shards' documents \
             gives the whole run\n"
        );
    }
}
