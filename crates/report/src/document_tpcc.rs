//! The TPC-C-like workload's rates (`--workload tpcc`): New-Orders per minute (NOPM) and
//! transactions per minute (TPM), counted by the clients and, as HammerDB counts them, by
//! the server (the districts' `d_next_o_id` and `pg_stat_database`).

use pgrush_stats::RunSummary;
use serde::{Deserialize, Serialize};

/// The rates of a `--workload tpcc` run (its first script is New-Order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpccDoc {
    /// New-Order transactions the clients ended successfully in the measured run (the 1%
    /// rolled back at an unused item id included, as go-tpc counts them).
    pub new_orders: u64,
    /// `new_orders` per minute of the measured run.
    pub nopm: f64,
    /// Successful transactions of the five types per minute of the measured run.
    pub tpm: f64,
    /// The server's counts between a reading just before the clients start and one
    /// after they end (`null` when they could not be read, and in a shard's document).
    pub server: Option<TpccServerDoc>,
}

/// HammerDB's server-side counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpccServerDoc {
    /// Growth of the sum of the districts' `d_next_o_id`: New-Orders committed (a
    /// rolled-back one leaves its district's counter alone).
    pub new_orders_committed: i64,
    /// `new_orders_committed` per minute between the readings.
    pub nopm: f64,
    /// Growth of the sum of `xact_commit + xact_rollback` over `pg_stat_database`:
    /// every database's and session's transactions, not only the run's.
    pub transactions: i64,
    /// `transactions` per minute between the readings.
    pub tpm: f64,
    /// Time between the readings (s): the run, its warm-up and its connections included.
    pub duration_s: f64,
}

/// Per minute of `seconds` (0 for an empty interval).
fn per_minute(count: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count * 60.0 / seconds
    } else {
        0.0
    }
}

impl TpccServerDoc {
    /// The counts of two readings `duration_s` apart: (Σ d_next_o_id, Σ commits +
    /// rollbacks) before and after.
    pub fn between(before: (i64, i64), after: (i64, i64), duration_s: f64) -> Self {
        let new_orders_committed = after.0 - before.0;
        let transactions = after.1 - before.1;
        TpccServerDoc {
            new_orders_committed,
            nopm: per_minute(new_orders_committed as f64, duration_s),
            transactions,
            tpm: per_minute(transactions as f64, duration_s),
            duration_s,
        }
    }
}

impl TpccDoc {
    /// The clients' rates of `sum`, with the server's counts when read.
    pub fn build(sum: &RunSummary, server: Option<TpccServerDoc>) -> Self {
        let seconds = sum.bench_duration_s();
        let new_orders = sum
            .stats
            .scripts
            .first()
            .map_or(0, |s| s.tx.counters.successful);
        TpccDoc {
            new_orders,
            nopm: per_minute(new_orders as f64, seconds),
            tpm: per_minute(sum.stats.total.counters.successful as f64, seconds),
            server,
        }
    }

    /// NOPM as `--assert nopm` reads it: New-Orders committed per minute, the server's
    /// count when there is one (HammerDB's), else the clients'.
    pub fn committed_nopm(&self) -> f64 {
        self.server.as_ref().map_or(self.nopm, |s| s.nopm)
    }

    /// The lines after the text report.
    pub fn text_lines(&self) -> String {
        let mut text = format!(
            "New-Order transactions per minute (NOPM) = {:.1}\ntransactions per minute (TPM) = {:.1}\n",
            self.nopm, self.tpm
        );
        if let Some(s) = &self.server {
            text.push_str(&format!(
                "New-Orders committed per minute, by the districts' d_next_o_id (server NOPM) = {:.1} ({} in {:.1} s)\n\
                 server transactions per minute, commits + rollbacks of pg_stat_database (server TPM) = {:.1}\n",
                s.nopm, s.new_orders_committed, s.duration_s, s.tpm
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_rates_are_per_minute_between_readings() {
        let s = TpccServerDoc::between((30_010, 500), (30_310, 1_400), 30.0);
        assert_eq!(s.new_orders_committed, 300);
        assert_eq!(s.nopm, 600.0);
        assert_eq!(s.transactions, 900);
        assert_eq!(s.tpm, 1800.0);
        assert_eq!(TpccServerDoc::between((1, 1), (1, 1), 0.0).tpm, 0.0);
        let doc = TpccDoc {
            new_orders: 10,
            nopm: 20.0,
            tpm: 40.0,
            server: None,
        };
        assert_eq!(doc.committed_nopm(), 20.0);
        assert_eq!(
            doc.text_lines(),
            "New-Order transactions per minute (NOPM) = 20.0\ntransactions per minute (TPM) = 40.0\n"
        );
        let doc = TpccDoc {
            server: Some(s),
            ..doc
        };
        assert_eq!(doc.committed_nopm(), 600.0);
        assert!(
            doc.text_lines()
                .contains("(server NOPM) = 600.0 (300 in 30.0 s)\n")
        );
    }
}
