//! One reading of the server's cumulative counters, and the difference of two.

use pgrush_stats::server::{DatabaseActivity, IoCounts, TableActivity};
use pgrush_wire::QueryResult;

use crate::counter_curve::LAGGING;

/// The cumulative counters at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// `pg_stat_database` for the current database.
    pub database: DatabaseActivity,
    /// WAL records, full-page images, bytes.
    pub wal: [u64; 3],
    /// Checkpoints started, buffers written by checkpoints.
    pub checkpoints: [u64; 2],
    /// `pg_stat_io` totals.
    pub io: IoCounts,
    /// The pgbench tables (cumulative; `dead_tuples_end` is the current value).
    pub tables: Vec<TableActivity>,
}

/// Column `col` of row `row` as an unsigned number (0 when NULL, negative or not a number).
fn num(r: &QueryResult, row: usize, col: usize) -> u64 {
    r.get(row, col)
        .and_then(|v| v.parse::<i128>().ok())
        .map_or(0, |v| u64::try_from(v).unwrap_or(0))
}

impl Snapshot {
    /// Reads the results of [`crate::catalog::Capabilities::counters_query`].
    pub fn parse(results: &[QueryResult]) -> Snapshot {
        let mut s = Snapshot::default();
        if let Some(r) = results.first() {
            s.database = database_from_array(&database_row(r));
        }
        if let Some(r) = results.get(1) {
            s.wal = [num(r, 0, 0), num(r, 0, 1), num(r, 0, 2)];
        }
        if let Some(r) = results.get(2) {
            s.checkpoints = [num(r, 0, 0), num(r, 0, 1)];
        }
        if let Some(r) = results.get(3) {
            s.io = IoCounts {
                reads: num(r, 0, 0),
                writes: num(r, 0, 1),
                extends: num(r, 0, 2),
                fsyncs: num(r, 0, 3),
            };
        }
        if let Some(r) = results.get(4) {
            s.tables = (0..r.rows().len())
                .map(|row| TableActivity {
                    name: r.get(row, 0).unwrap_or_default().to_string(),
                    updates: num(r, row, 1),
                    hot_updates: num(r, row, 2),
                    dead_tuples_end: num(r, row, 3),
                    autovacuums: num(r, row, 4),
                    autoanalyzes: num(r, row, 5),
                    heap_hit: num(r, row, 6),
                    heap_read: num(r, row, 7),
                    index_hit: num(r, row, 8),
                    index_read: num(r, row, 9),
                    fillfactor: None,
                })
                .collect();
        }
        s
    }
}

/// The 12 `pg_stat_database` counters of the first row of `r`, in the order of
/// [`DatabaseActivity`]'s fields (zeros when there is no row).
pub fn database_row(r: &QueryResult) -> [u64; 12] {
    let mut out = [0; 12];
    if !r.rows().is_empty() {
        for (c, v) in out.iter_mut().enumerate() {
            *v = num(r, 0, c);
        }
    }
    out
}

/// The database counters from their array (the order of [`database_row`]).
pub fn database_from_array(a: &[u64; 12]) -> DatabaseActivity {
    DatabaseActivity {
        commits: a[0],
        rollbacks: a[1],
        blocks_hit: a[2],
        blocks_read: a[3],
        tuples_returned: a[4],
        tuples_fetched: a[5],
        tuples_inserted: a[6],
        tuples_updated: a[7],
        tuples_deleted: a[8],
        temp_bytes: a[9],
        deadlocks: a[10],
        conflicts: a[11],
    }
}

/// One reading of [`crate::catalog::Capabilities::fine_query`]: the lagging counters
/// (database, then WAL records and full-page images), the next transaction id, the
/// WAL insert position (0 when not readable) and the other samplers connected.
pub fn fine_counters(results: &[QueryResult]) -> ([u64; LAGGING], u64, u64, u64) {
    let mut lagging = [0; LAGGING];
    if let Some(r) = results.first() {
        lagging[..12].copy_from_slice(&database_row(r));
    }
    if let Some(r) = results.get(1) {
        lagging[12] = num(r, 0, 0);
        lagging[13] = num(r, 0, 1);
    }
    let live = results.get(2);
    let live = |c| live.map_or(0, |r| num(r, 0, c));
    (lagging, live(0), live(1), live(2))
}

/// `later - earlier` of the database counters (0 where a counter went back: a reset).
pub fn database_delta(later: &DatabaseActivity, earlier: &DatabaseActivity) -> DatabaseActivity {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    DatabaseActivity {
        commits: d(later.commits, earlier.commits),
        rollbacks: d(later.rollbacks, earlier.rollbacks),
        blocks_hit: d(later.blocks_hit, earlier.blocks_hit),
        blocks_read: d(later.blocks_read, earlier.blocks_read),
        tuples_returned: d(later.tuples_returned, earlier.tuples_returned),
        tuples_fetched: d(later.tuples_fetched, earlier.tuples_fetched),
        tuples_inserted: d(later.tuples_inserted, earlier.tuples_inserted),
        tuples_updated: d(later.tuples_updated, earlier.tuples_updated),
        tuples_deleted: d(later.tuples_deleted, earlier.tuples_deleted),
        temp_bytes: d(later.temp_bytes, earlier.temp_bytes),
        deadlocks: d(later.deadlocks, earlier.deadlocks),
        conflicts: d(later.conflicts, earlier.conflicts),
    }
}

/// `later - earlier` of the `pg_stat_io` totals.
pub fn io_delta(later: &IoCounts, earlier: &IoCounts) -> IoCounts {
    IoCounts {
        reads: later.reads.saturating_sub(earlier.reads),
        writes: later.writes.saturating_sub(earlier.writes),
        extends: later.extends.saturating_sub(earlier.extends),
        fsyncs: later.fsyncs.saturating_sub(earlier.fsyncs),
    }
}

/// Per-table totals between two snapshots (tables that appear only later count from 0).
pub fn table_deltas(later: &[TableActivity], earlier: &[TableActivity]) -> Vec<TableActivity> {
    later
        .iter()
        .map(|t| {
            let zero = TableActivity::default();
            let e = earlier.iter().find(|e| e.name == t.name).unwrap_or(&zero);
            let d = |a: u64, b: u64| a.saturating_sub(b);
            TableActivity {
                name: t.name.clone(),
                updates: d(t.updates, e.updates),
                hot_updates: d(t.hot_updates, e.hot_updates),
                dead_tuples_end: t.dead_tuples_end,
                autovacuums: d(t.autovacuums, e.autovacuums),
                autoanalyzes: d(t.autoanalyzes, e.autoanalyzes),
                heap_hit: d(t.heap_hit, e.heap_hit),
                heap_read: d(t.heap_read, e.heap_read),
                index_hit: d(t.index_hit, e.index_hit),
                index_read: d(t.index_read, e.index_read),
                fillfactor: t.fillfactor,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_saturate_after_a_reset() {
        let later = DatabaseActivity {
            commits: 5,
            ..DatabaseActivity::default()
        };
        let earlier = DatabaseActivity {
            commits: 9,
            blocks_hit: 3,
            ..DatabaseActivity::default()
        };
        assert_eq!(database_delta(&later, &earlier).commits, 0);
        assert_eq!(
            database_delta(&earlier, &later),
            DatabaseActivity {
                commits: 4,
                blocks_hit: 3,
                ..DatabaseActivity::default()
            }
        );
    }

    #[test]
    fn new_tables_count_from_zero() {
        let t = TableActivity {
            name: "pgbench_history".into(),
            updates: 7,
            hot_updates: 7,
            ..TableActivity::default()
        };
        let d = table_deltas(std::slice::from_ref(&t), &[]);
        assert_eq!(d[0].hot_share(), Some(1.0));
    }
}
