//! `pgrush -i --workload tpcc`: the steps (`d t g v p f`) for the nine TPC-C tables, with
//! `-j N` connections sharing the COPY streams, vacuums and index builds through the same
//! task runner as pgbench's tables ([`crate::parallel::run_tasks`]).

use super::ddl::{self, Layout};
use super::rows::{self, Generation, Table};
use crate::config::Step;
use crate::console::Console;
use crate::error::InitError;
use crate::parallel::{SYNC_COMMIT, run_tasks};
use crate::progress::Progress;
use crate::runner::{StepTime, done_line};
use crate::session::{Connector, Session};
use crate::split::split_range;
use crate::steps::{RowBatches, copy_error, exec, wants_freeze};
use std::sync::Mutex;
use std::time::Instant;

/// What `pgrush -i --workload tpcc` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TpccConfig {
    /// The steps, in order (`G` is refused).
    pub steps: Vec<Step>,
    /// `-s`: the number of warehouses.
    pub warehouses: i64,
    /// `-j`: connections.
    pub jobs: u32,
    /// `--random-seed`: the data seed.
    pub seed: u64,
    /// `-q`: progress every 5 seconds.
    pub quiet: bool,
    /// Table options.
    pub layout: Layout,
}

/// One COPY stream: a table's rows for warehouses `lo..=hi` (ITEM: the whole table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyTask {
    /// The table.
    pub table: Table,
    /// First warehouse.
    pub lo: i64,
    /// Last warehouse (inclusive).
    pub hi: i64,
    /// The stream fills the whole table: it truncates it and copies with FREEZE in its
    /// own transaction.
    pub whole: bool,
}

/// The COPY streams of a load: each table split into at most `jobs` warehouse ranges,
/// largest tables first.
pub fn plan(warehouses: i64, jobs: u32) -> Vec<CopyTask> {
    let mut out = Vec::new();
    for table in Table::BY_SIZE {
        let ranges = if table.global() {
            vec![(0, 0)]
        } else {
            split_range(1, warehouses, jobs)
        };
        let whole = ranges.len() == 1;
        out.extend(ranges.into_iter().map(|(lo, hi)| CopyTask {
            table,
            lo,
            hi,
            whole,
        }));
    }
    out
}

/// The rows a load of `warehouses` writes (order lines counted from the order plan).
pub fn total_rows(seed: u64, warehouses: i64) -> i64 {
    let mut total = 0;
    for table in Table::BY_SIZE {
        total += match table {
            Table::Item => table.rows_per_warehouse(),
            Table::OrderLine => (1..=warehouses)
                .map(|w| {
                    rows::order_plan(seed, w)
                        .iter()
                        .map(|p| p.lines)
                        .sum::<i64>()
                })
                .sum(),
            _ => table.rows_per_warehouse() * warehouses,
        };
    }
    total
}

/// Runs the steps of `cfg`, printing pgbench-style messages and the `done in` line.
pub fn run_tpcc_init<C: Connector>(
    cfg: &TpccConfig,
    connector: &C,
    console: &Console,
) -> Result<Vec<StepTime>, InitError> {
    if cfg.steps.contains(&Step::ServerGenerate) {
        return Err(InitError::Unsupported(
            "server-side generation (G) is not available with --workload tpcc".into(),
        ));
    }
    let mut main = connector.connect().map_err(InitError::Connect)?;
    if cfg.jobs > 1 {
        exec(&mut main, SYNC_COMMIT)?;
    }
    let mut times = Vec::new();
    let mut loaded = false;
    for &step in &cfg.steps {
        let start = Instant::now();
        match step {
            Step::Drop => {
                console.line("dropping old tables...");
                for sql in ddl::drop_statements() {
                    exec(&mut main, &sql)?;
                }
            }
            Step::CreateTables => {
                console.line("creating tables and functions...");
                for sql in ddl::create_statements(&cfg.layout) {
                    exec(&mut main, &sql)?;
                }
            }
            Step::ClientGenerate | Step::ServerGenerate => {
                generate(connector, &mut main, cfg, console)?;
                loaded = true;
            }
            Step::Vacuum => {
                console.line("vacuuming...");
                let verb = if loaded {
                    "vacuum (freeze, analyze)"
                } else {
                    "vacuum analyze"
                };
                let sql: Vec<String> = Table::BY_SIZE
                    .iter()
                    .map(|t| format!("{verb} {}", t.name()))
                    .collect();
                run_tasks(connector, &mut main, cfg.jobs, &sql, &|s, q| exec(s, q))?;
            }
            Step::PrimaryKeys => {
                console.line("creating primary keys...");
                let sql = ddl::keys_and_indexes(&cfg.layout);
                run_tasks(connector, &mut main, cfg.jobs, &sql, &|s, q| exec(s, q))?;
            }
            Step::ForeignKeys => {
                console.line("creating foreign keys...");
                for sql in ddl::FOREIGN_KEYS {
                    exec(&mut main, sql)?;
                }
            }
        }
        times.push(StepTime {
            op: step.op_name(),
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    console.line(&done_line(&times));
    Ok(times)
}

/// `g`: every table truncated, then the COPY streams of [`plan`] on `cfg.jobs`
/// connections.
fn generate<C: Connector>(
    connector: &C,
    main: &mut C::Session,
    cfg: &TpccConfig,
    console: &Console,
) -> Result<(), InitError> {
    console.line("generating data (client-side)...");
    let now_sql = "select localtimestamp(0)::text";
    let now = main
        .query_value(now_sql, &[])
        .map_err(|e| InitError::Query {
            message: e.message,
            sql: now_sql.into(),
        })?
        .unwrap_or_default();
    let generation = Generation {
        seed: cfg.seed,
        now: now.into_bytes(),
    };
    exec(main, ddl::TRUNCATE_TABLES)?;
    let tasks = plan(cfg.warehouses, cfg.jobs);
    let total = total_rows(cfg.seed, cfg.warehouses);
    let progress = Mutex::new(Progress::new(console, "TPC-C tables", total, cfg.quiet));
    let work = |s: &mut dyn Session, task: &CopyTask| -> Result<(), InitError> {
        let table = task.table.name();
        let freeze = task.whole && wants_freeze(s, table)?;
        if freeze {
            exec(s, "begin")?;
            exec(s, &format!("truncate table {table}"))?;
        }
        let sql = if freeze {
            format!("copy {table} from stdin with (freeze on)")
        } else {
            format!("copy {table} from stdin")
        };
        s.copy_in(&sql, &mut |sink| {
            let mut on_batch = |n| {
                if let Ok(mut p) = progress.lock() {
                    p.advance(n);
                }
            };
            let mut batches = RowBatches::new(sink, &mut on_batch);
            for w in task.lo..=task.hi {
                rows::send_table(&mut batches, task.table, w, &generation)?;
            }
            batches.finish()
        })
        .map_err(copy_error)?;
        if freeze {
            exec(s, "commit")?;
        }
        Ok(())
    };
    let result = run_tasks(connector, main, cfg.jobs, &tasks, &work);
    if let Ok(mut p) = progress.lock() {
        p.finish();
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_splits_warehouses_and_keeps_item_whole() {
        let one = plan(1, 4);
        assert_eq!(one.len(), 9);
        assert!(one.iter().all(|t| t.whole));
        let many = plan(5, 2);
        assert_eq!(many.iter().filter(|t| t.table == Table::Stock).count(), 2);
        let items: Vec<_> = many.iter().filter(|t| t.table == Table::Item).collect();
        assert_eq!(items.len(), 1);
        assert!(items[0].whole);
        assert!(
            many.iter()
                .filter(|t| t.table != Table::Item)
                .all(|t| !t.whole)
        );
        let mut stock: Vec<(i64, i64)> = many
            .iter()
            .filter(|t| t.table == Table::Stock)
            .map(|t| (t.lo, t.hi))
            .collect();
        stock.sort();
        assert_eq!(stock, [(1, 3), (4, 5)]);
    }

    #[test]
    fn total_counts_every_row() {
        let total = total_rows(1, 1);
        let fixed = 100_000 + 1 + 10 + 30_000 * 3 + 9_000 + 100_000;
        let lines = total - fixed;
        assert!((297_000..=303_000).contains(&lines), "{lines}");
    }
}
