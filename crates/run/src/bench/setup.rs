//! Work on the setup connection before a run: scale and partition detection,
//! and the vacuum / truncate pgbench does unless `-n`.

use std::io::Write;

use pgrush_cconv::atoi;
use pgrush_engine::messages;
use pgrush_stats::{PartitionMethod, Partitioning};
use pgrush_wire::Connection;

use crate::failure::Failure;

/// What the setup connection found out about the pgbench tables.
#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    /// `count(*)` of pgbench_branches.
    pub scale: i64,
    /// Partitioning of pgbench_accounts, if any.
    pub partitioning: Option<Partitioning>,
}

/// pgbench's partition detection query (sent verbatim).
const PARTITION_QUERY: &str = "select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1";

/// `failure` with the hint that the tables may need initializing (`init`: the
/// initialization command's options, `-i` for pgbench's tables).
fn with_init_hint(failure: Failure, prog: &str, init: &str, db: &str) -> Failure {
    failure.hint(format!(
        "Perhaps you need to do initialization (\"{prog} {init}\") in database \"{db}\"."
    ))
}

/// The rows of `table` (pgbench's scale from `pgbench_branches`, or the warehouses of the
/// TPC-C-like tables), with pgbench's messages (`noun`: what is counted); the warning
/// that `-s` is ignored is printed here.
pub fn count_rows(
    con: &mut Connection,
    prog: &str,
    table: &str,
    noun: &str,
    scale_given: bool,
) -> Result<i64, Failure> {
    let sql = format!("select count(*) from {table}");
    let scale = match con.simple_query(&sql) {
        Ok(results) => {
            let v = results
                .first()
                .and_then(|r| r.get(0, 0))
                .unwrap_or("")
                .to_string();
            let n = i64::from(atoi(v.as_bytes()));
            if n < 0 {
                return Err(Failure::error(format!(
                    "invalid count(*) from {table}: \"{v}\""
                )));
            }
            n
        }
        Err(e) => {
            let failure = Failure::error(messages::concat(
                &format!("could not count number of {noun}: "),
                &e.libpq_message_bytes(Some(sql.as_bytes())),
            ));
            if e.code() == Some("42P01") {
                let init = if table == "warehouse" {
                    "-i --workload tpcc"
                } else {
                    "-i"
                };
                return Err(with_init_hint(failure, prog, init, con.db()));
            }
            return Err(failure);
        }
    };
    if scale_given {
        messages::warning(
            prog,
            &format!("scale option ignored, using count from {table} table ({scale})"),
        );
    }
    Ok(scale)
}

/// Scale and partitioning (pgbench's `GetTableInfo`); the scale warning is printed here.
pub fn table_info(
    con: &mut Connection,
    prog: &str,
    scale_given: bool,
) -> Result<TableInfo, Failure> {
    let scale = count_rows(con, prog, "pgbench_branches", "branches", scale_given)?;
    let partitioning = match con.simple_query(PARTITION_QUERY) {
        Err(_) => None,
        Ok(results) => {
            let Some(r) = results.first() else {
                return Ok(TableInfo {
                    scale,
                    partitioning: None,
                });
            };
            if r.rows().is_empty() {
                let failure = Failure::error("no pgbench_accounts table found in \"search_path\"");
                return Err(with_init_hint(failure, prog, "-i", con.db()));
            }
            let count = atoi(r.get(0, 2).unwrap_or("0").as_bytes());
            match r.get(0, 1) {
                None => None,
                Some("r") => Some(Partitioning {
                    method: PartitionMethod::Range,
                    count,
                }),
                Some("h") => Some(Partitioning {
                    method: PartitionMethod::Hash,
                    count,
                }),
                Some(other) => {
                    return Err(Failure::error(format!(
                        "unexpected partition method: \"{other}\""
                    )));
                }
            }
        }
    };
    Ok(TableInfo {
        scale,
        partitioning,
    })
}

fn try_execute(con: &mut Connection, prog: &str, sql: &str) {
    if let Err(e) = con.simple_query(sql) {
        messages::error(prog, &e.libpq_message_bytes(Some(sql.as_bytes())));
        messages::detail(prog, "(ignoring this error and continuing anyway)");
    }
}

/// `starting vacuum...end.` (and `-v`'s accounts vacuum), errors reported and ignored.
pub fn vacuum(con: &mut Connection, prog: &str, vacuum_all: bool) {
    let mut err = std::io::stderr();
    let _ = err.write_all(b"starting vacuum...");
    let _ = err.flush();
    try_execute(con, prog, "vacuum pgbench_branches");
    try_execute(con, prog, "vacuum pgbench_tellers");
    try_execute(con, prog, "truncate pgbench_history");
    let _ = err.write_all(b"end.\n");
    if vacuum_all {
        let _ = err.write_all(b"starting vacuum pgbench_accounts...");
        let _ = err.flush();
        try_execute(con, prog, "vacuum analyze pgbench_accounts");
        let _ = err.write_all(b"end.\n");
    }
}
