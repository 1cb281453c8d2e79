//! `load`: pgrush's own `-i` (with `-j N`), its steps' times, sizes and WAL written.

use std::io::IsTerminal;

use pgrush_init::wire_session::WireConnector;
use pgrush_init::{Console, Step, run_init};
use pgrush_wire::conninfo::resolve;

use crate::ops::config::{OpsConfig, StepKind};
use crate::ops::error::OpsError;
use crate::ops::result::{Details, InitStepTime, LoadDetails, StepResult};
use crate::ops::server::Server;

/// Table, index and total bytes of the pgbench tables (partitions included).
pub const SIZES_SQL: &str = "SELECT coalesce(sum(pg_table_size(c.oid)), 0), \
     coalesce(sum(pg_indexes_size(c.oid)), 0), coalesce(sum(pg_total_relation_size(c.oid)), 0) \
     FROM pg_class c WHERE c.relkind = 'r' AND c.relname LIKE 'pgbench\\_%' \
     AND c.relnamespace = current_schema()::regnamespace";

/// Runs the initialization at `scale`.
pub fn run(
    server: &Server,
    cfg: &OpsConfig,
    scale: u32,
    round: u32,
) -> Result<StepResult, OpsError> {
    let mut db = server.db(None)?;
    let wal_before = db.wal_position()?;
    let mut init = cfg.init.clone();
    init.scale = i64::from(scale);
    init.jobs = cfg.jobs.max(1);
    let params = resolve(&server.request).map_err(|e| OpsError::Connect(e.to_string()))?;
    let connector = WireConnector::new(params);
    crate::ops::interrupt::set_init(Some(connector.interrupt()));
    let console = if std::io::stderr().is_terminal() {
        Console::stderr()
    } else {
        Console::new(Box::new(std::io::sink()), false)
    };
    let times = run_init(&init, &connector, &console);
    crate::ops::interrupt::set_init(None);
    if crate::ops::interrupt::requested() {
        return Err(OpsError::Interrupted);
    }
    let times = times.map_err(|e| {
        OpsError::Init(
            String::from_utf8_lossy(&e.render("pgrush"))
                .trim()
                .to_string(),
        )
    })?;
    let wal_after = db.wal_position()?;
    let sizes = db.rows(SIZES_SQL)?;
    let size = |i: usize| -> u64 {
        sizes
            .first()
            .and_then(|r| r.get(i))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let (table_bytes, index_bytes, total_bytes) = (size(0), size(1), size(2));
    let seconds: f64 = times.iter().map(|t| t.seconds).sum();
    let generate: f64 = times
        .iter()
        .filter(|t| {
            t.op == Step::ClientGenerate.op_name() || t.op == Step::ServerGenerate.op_name()
        })
        .map(|t| t.seconds)
        .sum();
    let rows = u64::try_from(init.branches() + init.tellers() + init.accounts()).unwrap_or(0);
    let details = LoadDetails {
        init_steps: times
            .iter()
            .map(|t| InitStepTime {
                op: t.op.to_string(),
                seconds: t.seconds,
            })
            .collect(),
        rows,
        rows_per_second: if generate > 0.0 {
            rows as f64 / generate
        } else {
            0.0
        },
        table_bytes,
        index_bytes,
        total_bytes,
        wal_bytes: wal_after.saturating_sub(wal_before),
    };
    Ok(StepResult {
        step: StepKind::Load,
        round,
        seconds,
        bytes: Some(total_bytes),
        bytes_per_second: crate::ops::program::rate(total_bytes, seconds),
        check: None,
        skipped: None,
        details: Details::Load(details),
    })
}
