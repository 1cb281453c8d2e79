//! `reindex`: `REINDEX TABLE pgbench_accounts`, then `REINDEX TABLE CONCURRENTLY`.

use std::time::Instant;

use crate::ops::config::StepKind;
use crate::ops::error::OpsError;
use crate::ops::program::rate;
use crate::ops::result::{Details, ReindexDetails, StepResult};
use crate::ops::server::Server;

/// Index bytes of `pgbench_accounts` (its partitions' indexes included).
const ACCOUNTS_INDEX_SQL: &str = "SELECT coalesce(sum(pg_indexes_size(c.oid)), 0) FROM pg_class c \
     WHERE c.relkind = 'r' AND (c.relname = 'pgbench_accounts' OR c.relname LIKE 'pgbench\\_accounts\\_%') \
     AND c.relnamespace = current_schema()::regnamespace";

/// Times both forms of REINDEX.
pub fn run(server: &Server, round: u32) -> Result<StepResult, OpsError> {
    let mut db = server.db(None)?;
    let start = Instant::now();
    db.exec("REINDEX TABLE pgbench_accounts")?;
    let plain_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    db.exec("REINDEX TABLE CONCURRENTLY pgbench_accounts")?;
    let concurrently_seconds = start.elapsed().as_secs_f64();
    let index_bytes = db.number(ACCOUNTS_INDEX_SQL)?;
    Ok(StepResult {
        step: StepKind::Reindex,
        round,
        seconds: plain_seconds,
        bytes: Some(index_bytes),
        bytes_per_second: rate(index_bytes, plain_seconds),
        check: None,
        skipped: None,
        details: Details::Reindex(ReindexDetails {
            plain_seconds,
            concurrently_seconds,
            index_bytes,
        }),
    })
}
