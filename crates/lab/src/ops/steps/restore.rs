//! `restore`: the real `pg_restore -j N` (or `psql` for a plain dump) into a fresh
//! database, then a per-table comparison with the original (row count and a checksum).

use crate::ops::config::{DumpFormat, OpsConfig, StepKind};
use crate::ops::db::Db;
use crate::ops::error::OpsError;
use crate::ops::program::{rate, remove, run_program};
use crate::ops::result::{Check, Details, RestoreDetails, StepResult, TableComparison};
use crate::ops::server::Server;
use crate::ops::steps::dump::RoundState;

/// The pgbench tables, with the key their rows are compared in.
pub const TABLES: &[&str] = &[
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_tellers",
    "pgbench_history",
];

/// A scratch database, dropped when this goes out of scope.
struct ScratchDb<'a> {
    server: &'a Server,
    name: String,
}

impl<'a> ScratchDb<'a> {
    fn create(server: &'a Server) -> Result<ScratchDb<'a>, OpsError> {
        let name = format!("pgrush_ops_restore_{}", std::process::id());
        if let Some(cluster) = &server.cluster {
            cluster.journal_scratch_database(&name)?;
        }
        let mut db = server.db(None)?;
        db.exec(&format!("DROP DATABASE IF EXISTS {name}"))?;
        db.exec(&format!("CREATE DATABASE {name} TEMPLATE template0"))?;
        Ok(ScratchDb { server, name })
    }
}

impl Drop for ScratchDb<'_> {
    fn drop(&mut self) {
        if let Ok(mut db) = self.server.db(None) {
            let _ = db.exec_cleanup(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// Restores the round's dump and compares the copy with the original.
pub fn run(
    server: &Server,
    cfg: &OpsConfig,
    round: u32,
    state: &mut RoundState,
) -> Result<StepResult, OpsError> {
    let (path, format) = state
        .dump
        .take()
        .ok_or_else(|| OpsError::Unexpected("restore: no dump in this round".into()))?;
    let target = ScratchDb::create(server)?;
    let jobs = match format {
        DumpFormat::Custom | DumpFormat::Directory => cfg.jobs.max(1),
        DumpFormat::Plain | DumpFormat::Tar => 1,
    };
    let mut cmd = if format == DumpFormat::Plain {
        let mut cmd = server.tool("psql");
        cmd.args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-o", "/dev/null", "-f"])
            .arg(&path);
        cmd
    } else {
        let mut cmd = server.tool("pg_restore");
        cmd.args(["--exit-on-error", "--verbose"]);
        if jobs > 1 {
            cmd.arg(format!("-j{jobs}"));
        }
        cmd.arg(&path);
        cmd
    };
    cmd.arg("-d").arg(&target.name);
    let program = if format == DumpFormat::Plain {
        "psql"
    } else {
        "pg_restore"
    };
    let finished = run_program(cmd, program)?;
    let seconds = finished.seconds;
    let phases = (format != DumpFormat::Plain)
        .then(|| super::restore_phases::phases(&finished.stderr_lines, seconds));
    remove(&path)?;
    let mut original = server.db(None)?;
    let mut copy = server.db(Some(&target.name))?;
    let bytes = copy.number("SELECT pg_database_size(current_database())")?;
    let mut tables = Vec::new();
    for table in TABLES {
        let (rows, checksum) = fingerprint(&mut original, table)?;
        let (restored_rows, restored_checksum) = fingerprint(&mut copy, table)?;
        tables.push(TableComparison {
            table: table.to_string(),
            rows,
            restored_rows,
            checksum,
            restored_checksum,
        });
    }
    drop(copy);
    let passed = tables
        .iter()
        .all(|t| t.rows == t.restored_rows && t.checksum == t.restored_checksum);
    let total: u64 = tables.iter().map(|t| t.rows).sum();
    Ok(StepResult {
        step: StepKind::Restore,
        round,
        seconds,
        bytes: Some(bytes),
        bytes_per_second: rate(bytes, seconds),
        check: Some(Check {
            passed,
            text: format!(
                "{} tables, {total} rows: row counts and checksums {}",
                tables.len(),
                if passed { "equal" } else { "differ" }
            ),
        }),
        skipped: None,
        details: Details::Restore(RestoreDetails {
            jobs,
            phases,
            tables,
        }),
    })
}

/// A table's row count and an order-independent checksum of its rows' text.
fn fingerprint(db: &mut Db, table: &str) -> Result<(u64, String), OpsError> {
    let sql =
        format!("SELECT count(*), coalesce(sum(hashtextextended(t::text, 0)), 0) FROM {table} t");
    let row = db.rows(&sql)?.into_iter().next().unwrap_or_default();
    let rows = row.first().and_then(|v| v.parse().ok()).unwrap_or(0);
    Ok((rows, row.get(1).cloned().unwrap_or_default()))
}
