//! What the sampled server offers: which statistics views and columns exist (asked
//! from the catalog, not assumed from the version), and what the role may read. The
//! sampling queries are built from it, so one sampler serves servers 13 to 18.

use std::collections::BTreeSet;

use pgrush_wire::Connection;

use crate::counter_curve::StepWindow;
use crate::error::MonitorError;

/// The application name the sampler's own connection uses.
pub const SAMPLER_APPLICATION_NAME: &str = "pgrush-server-stats";

/// The views and columns the sampler may use, and the role's reach.
#[derive(Debug, Clone, Default)]
pub struct Capabilities {
    /// `server_version_num`.
    pub version_num: u32,
    /// `(view, column)` pairs of the statistics views present.
    columns: BTreeSet<(String, String)>,
    /// Whether the role can see other roles' sessions (`pg_monitor` or superuser).
    pub sees_all_sessions: bool,
    /// The role's name.
    pub role: String,
}

/// The views whose columns decide the queries.
const VIEWS: &[&str] = &[
    "pg_stat_wal",
    "pg_stat_checkpointer",
    "pg_stat_bgwriter",
    "pg_stat_io",
];

/// The 12 counters of `pg_stat_database` for the current database.
const DATABASE_COUNTERS: &str = "SELECT xact_commit, xact_rollback, blks_hit, blks_read, \
     tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted, temp_bytes, deadlocks, \
     conflicts FROM pg_catalog.pg_stat_database WHERE datname = current_database()";

impl Capabilities {
    /// Reads the catalog on `con`.
    pub fn read(con: &mut Connection) -> Result<Capabilities, MonitorError> {
        let list = VIEWS
            .iter()
            .map(|v| format!("'{v}'"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT c.relname, a.attname FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = 'pg_catalog' AND c.relname IN ({list}) AND a.attnum > 0; \
             SELECT current_user, pg_catalog.pg_has_role(current_user, 'pg_monitor', 'member') \
             OR (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)"
        );
        let results = con.simple_query(&sql).map_err(MonitorError::query)?;
        let mut caps = Capabilities {
            version_num: con.server_version_num(),
            ..Capabilities::default()
        };
        if let Some(cols) = results.first() {
            for row in 0..cols.rows().len() {
                if let (Some(v), Some(c)) = (cols.get(row, 0), cols.get(row, 1)) {
                    caps.columns.insert((v.to_string(), c.to_string()));
                }
            }
        }
        if let Some(role) = results.get(1) {
            caps.role = role.get(0, 0).unwrap_or_default().to_string();
            caps.sees_all_sessions = role.get(0, 1) == Some("t");
        }
        Ok(caps)
    }

    /// Whether `view` has `column`.
    pub fn has(&self, view: &str, column: &str) -> bool {
        self.columns
            .contains(&(view.to_string(), column.to_string()))
    }

    /// The counters query: one statement per source, in the order
    /// [`crate::snapshot::Snapshot::parse`] reads them.
    pub fn counters_query(&self) -> String {
        let wal = if self.has("pg_stat_wal", "wal_bytes") {
            "SELECT wal_records, wal_fpi, wal_bytes FROM pg_catalog.pg_stat_wal"
        } else {
            "SELECT 0, 0, pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), '0/0')::bigint"
        };
        let checkpoints = if self.has("pg_stat_checkpointer", "num_timed") {
            "SELECT num_timed + num_requested, buffers_written FROM pg_catalog.pg_stat_checkpointer"
        } else if self.has("pg_stat_bgwriter", "checkpoints_timed") {
            "SELECT checkpoints_timed + checkpoints_req, buffers_checkpoint \
             FROM pg_catalog.pg_stat_bgwriter"
        } else {
            "SELECT 0, 0"
        };
        let io = if self.has("pg_stat_io", "fsyncs") {
            "SELECT coalesce(sum(reads), 0), coalesce(sum(writes), 0), \
             coalesce(sum(extends), 0), coalesce(sum(fsyncs), 0) FROM pg_catalog.pg_stat_io"
        } else {
            "SELECT 0, 0, 0, 0"
        };
        format!(
            "{DATABASE_COUNTERS}; {wal}; {checkpoints}; {io}; \
             SELECT s.relname, s.n_tup_upd, s.n_tup_hot_upd, s.n_dead_tup, s.autovacuum_count, \
             s.autoanalyze_count, coalesce(io.heap_blks_hit, 0), coalesce(io.heap_blks_read, 0), \
             coalesce(io.idx_blks_hit, 0), coalesce(io.idx_blks_read, 0) \
             FROM pg_catalog.pg_stat_user_tables s \
             JOIN pg_catalog.pg_statio_user_tables io USING (relid) \
             WHERE s.relname LIKE 'pgbench\\_%' ORDER BY s.relname"
        )
    }

    /// The fine counters query (run with each wait sample): `pg_stat_database`, WAL
    /// records and full-page images, then the live positions (next transaction id,
    /// WAL insert position; NULL on a standby) and the other samplers connected (other
    /// shards'), in the order
    /// [`crate::snapshot::FineCounters::parse`] reads them.
    pub fn fine_query(&self) -> String {
        let wal = if self.has("pg_stat_wal", "wal_records") {
            "SELECT wal_records, wal_fpi FROM pg_catalog.pg_stat_wal"
        } else {
            "SELECT 0, 0"
        };
        format!(
            "{DATABASE_COUNTERS}; {wal}; \
             SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot()), \
             CASE WHEN pg_catalog.pg_is_in_recovery() THEN NULL ELSE \
             pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_insert_lsn(), '0/0')::bigint END, \
             (SELECT count(*) FROM pg_catalog.pg_stat_activity \
              WHERE application_name = '{SAMPLER_APPLICATION_NAME}' \
              AND pid <> pg_catalog.pg_backend_pid())"
        )
    }

    /// The statement that makes the sampler's own backend flush its statistics when
    /// it goes idle (15 and later), appended to each of its queries so that its own
    /// transactions are counted at once and can be told from the benchmark's.
    pub fn own_flush(&self) -> Option<&'static str> {
        (self.version_num >= 150_000).then_some("SELECT pg_catalog.pg_stat_force_next_flush()")
    }

    /// Over what time a step of the benchmark's transaction count was made: a
    /// backend that stays connected flushes its statistics at most once a second (15
    /// and later; before, it sent them to the collector at most every 500 ms); one
    /// that connects for each transaction flushes as it exits.
    pub fn step_window(&self, connection_per_transaction: bool) -> StepWindow {
        if connection_per_transaction {
            StepWindow::SincePreviousCorner
        } else if self.version_num >= 150_000 {
            StepWindow::FlushPeriod(1.0)
        } else {
            StepWindow::FlushPeriod(0.5)
        }
    }

    /// How many of the benchmark's backends (by application name) are still there.
    pub fn backends_query(application_name: &str) -> String {
        format!(
            "SELECT count(*) FROM pg_catalog.pg_stat_activity \
             WHERE pid <> pg_catalog.pg_backend_pid() AND backend_type = 'client backend' \
             AND datname = current_database() AND application_name = '{}'",
            application_name.replace('\'', "''")
        )
    }

    /// The wait sampling query for the benchmark's backends (by application name),
    /// the checkpointer and autovacuum workers, then the waiting lock requests.
    /// Without `pg_monitor` the checkpointer and the workers are left out: their
    /// columns would read as NULL.
    pub fn waits_query(&self, application_name: &str) -> String {
        let app = application_name.replace('\'', "''");
        let auxiliary = if self.sees_all_sessions {
            "OR backend_type IN ('checkpointer', 'autovacuum worker')"
        } else {
            ""
        };
        format!(
            "SELECT backend_type, coalesce(state, ''), coalesce(wait_event_type, ''), \
             coalesce(wait_event, ''), \
             CASE WHEN backend_type = 'autovacuum worker' THEN coalesce(query, '') ELSE '' END \
             FROM pg_catalog.pg_stat_activity \
             WHERE pid <> pg_catalog.pg_backend_pid() AND \
             ((backend_type = 'client backend' AND datname = current_database() \
               AND application_name = '{app}') {auxiliary}); \
             SELECT l.locktype, coalesce(c.relname, ''), count(*) \
             FROM pg_catalog.pg_locks l LEFT JOIN pg_catalog.pg_class c ON c.oid = l.relation \
             WHERE NOT l.granted AND (l.database IS NULL OR l.database = \
               (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())) \
             GROUP BY 1, 2"
        )
    }

    /// What the role cannot see, as a warning, if anything.
    pub fn privilege_warning(&self) -> Option<String> {
        (!self.sees_all_sessions).then(|| {
            format!(
                "server statistics: role \"{}\" is not a member of pg_monitor: the \
                 checkpointer's and autovacuum's activity cannot be seen, only the \
                 benchmark's own sessions and the cumulative counters",
                self.role
            )
        })
    }
}

/// The `fillfactor` of each pgbench table (`None` when not set).
pub fn fillfactors(con: &mut Connection) -> Vec<(String, Option<u32>)> {
    let sql = "SELECT relname, coalesce(array_to_string(reloptions, ','), '') \
               FROM pg_catalog.pg_class WHERE relname LIKE 'pgbench\\_%' \
               AND relkind IN ('r', 'p') ORDER BY relname";
    let Ok(results) = con.simple_query(sql) else {
        return Vec::new();
    };
    let Some(r) = results.first() else {
        return Vec::new();
    };
    (0..r.rows().len())
        .filter_map(|row| {
            let name = r.get(row, 0)?.to_string();
            let ff = r.get(row, 1).unwrap_or_default().split(',').find_map(|o| {
                o.strip_prefix("fillfactor=")
                    .and_then(|v| v.parse::<u32>().ok())
            });
            Some((name, ff))
        })
        .collect()
}
