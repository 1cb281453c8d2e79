//! `-j N` with `-i`: the same result as a single-connection load, built by N connections.
//!
//! An ordinary pgbench_accounts is loaded by one COPY FREEZE stream unless there are
//! enough jobs and CPUs ([`one_frozen_stream`]); otherwise accounts are split into ranges
//! ([`crate::split`]) copied by concurrent streams, one transaction each; with range
//! partitions a stream may own whole partitions and truncate + COPY FREEZE them. Vacuum
//! runs one table (or partition) per connection and the primary keys are built
//! concurrently. See the crate README for the measurements behind these choices.

use crate::config::{InitConfig, Partitioning};
use crate::console::Console;
use crate::ddl;
use crate::error::InitError;
use crate::progress::Progress;
use crate::rows::Table;
use crate::session::{Connector, Session};
use crate::split::{Chunk, Target, plan_accounts};
use crate::steps::{copy_error, exec, populate, send_rows, wants_freeze};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Runs `tasks` on up to `workers` connections: `main` on this thread plus fresh
/// connections on worker threads (set to [`SYNC_COMMIT`]; `main` is set by the runner).
/// Tasks are taken in order; the first error stops the others from starting new tasks
/// and is returned.
pub fn run_tasks<C, T>(
    connector: &C,
    main: &mut C::Session,
    workers: u32,
    tasks: &[T],
    work: &(dyn Fn(&mut dyn Session, &T) -> Result<(), InitError> + Sync),
) -> Result<(), InitError>
where
    C: Connector,
    T: Sync,
{
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<InitError>> = Mutex::new(None);
    let record = |e: InitError| {
        failed.store(true, Ordering::SeqCst);
        let mut slot = match first_error.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if slot.is_none() {
            *slot = Some(e);
        }
    };
    let drain = |s: &mut dyn Session| {
        while !failed.load(Ordering::SeqCst) {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(task) = tasks.get(i) else { break };
            if let Err(e) = work(s, task) {
                record(e);
            }
        }
    };
    let extra = (workers.max(1) as usize - 1).min(tasks.len().saturating_sub(1));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..extra)
            .map(|_| {
                scope.spawn(|| match connector.connect() {
                    Ok(mut s) => match exec(&mut s, SYNC_COMMIT) {
                        Ok(()) => drain(&mut s),
                        Err(e) => record(e),
                    },
                    Err(msg) => record(InitError::Connect(msg)),
                })
            })
            .collect();
        drain(main);
        for h in handles {
            if h.join().is_err() {
                record(InitError::Worker);
            }
        }
    });
    let slot = match first_error.into_inner() {
        Ok(v) => v,
        Err(p) => p.into_inner(),
    };
    slot.map_or(Ok(()), Err)
}

/// Every connection of a parallel load commits synchronously. Rows that are not frozen
/// can only be marked all-visible by the vacuum once their commit is known to be flushed,
/// which PostgreSQL tracks per group of 32 transaction ids: one asynchronous commit of
/// ours (e.g. an `analyze` of another table) next to a loading stream's would keep the
/// `v` step from marking that stream's pages all-visible.
pub const SYNC_COMMIT: &str = "set synchronous_commit = on";

/// The smallest number of jobs (and CPUs) for which parallel plain COPY of an ordinary
/// pgbench_accounts is expected to beat one COPY FREEZE stream plus a cheap vacuum.
pub const PARALLEL_COPY_MIN_JOBS: u32 = 4;

/// True when pgbench_accounts is best loaded by one COPY FREEZE stream: it is an ordinary
/// table and there are fewer than [`PARALLEL_COPY_MIN_JOBS`] jobs or CPUs.
/// `PGRUSH_INIT_PARALLEL_COPY=1` forces parallel plain COPY, `=0` one frozen stream.
pub fn one_frozen_stream(cfg: &InitConfig) -> bool {
    if cfg.partitioning != Partitioning::None {
        return false;
    }
    match std::env::var("PGRUSH_INIT_PARALLEL_COPY").as_deref() {
        Ok("1") => false,
        Ok("0") => true,
        _ => {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            cfg.jobs < PARALLEL_COPY_MIN_JOBS || cpus < PARALLEL_COPY_MIN_JOBS as usize
        }
    }
}

/// The partition bounds pgbench's `t` step gives range partition `p`, as
/// `pg_get_expr(relpartbound)` prints them.
fn expected_bound(cfg: &InitConfig, p: u32) -> String {
    let size = ddl::range_partition_size(cfg);
    let parts = cfg.partitioning.count();
    let lo = if p == 1 {
        "MINVALUE".to_string()
    } else {
        ((i64::from(p) - 1) * size + 1).to_string()
    };
    let hi = if p < parts {
        (i64::from(p) * size + 1).to_string()
    } else {
        "MAXVALUE".to_string()
    };
    format!(
        "{} FOR VALUES FROM ({lo}) TO ({hi})",
        ddl::partition_name(p)
    )
}

/// True when pgbench_accounts has exactly the range partitions the options describe, so
/// rows can be copied into each partition directly.
fn range_layout_matches(s: &mut dyn Session, cfg: &InitConfig) -> Result<bool, InitError> {
    let sql = "select string_agg(c.relname || ' ' || pg_catalog.pg_get_expr(c.relpartbound, c.oid), E'\\n' order by c.relname collate \"C\") from pg_catalog.pg_inherits i join pg_catalog.pg_class c on c.oid = i.inhrelid where i.inhparent = 'pgbench_accounts'::pg_catalog.regclass";
    let got = s.query_value(sql, &[]).map_err(|e| InitError::Query {
        message: e.message,
        sql: sql.to_string(),
    })?;
    Ok(got.as_deref() == Some(expected_layout(cfg).as_str()))
}

/// What [`range_layout_matches`]'s query returns for the layout the options describe.
pub(crate) fn expected_layout(cfg: &InitConfig) -> String {
    let mut want: Vec<String> = (1..=cfg.partitioning.count())
        .map(|p| expected_bound(cfg, p))
        .collect();
    want.sort();
    want.join("\n")
}

/// True when some foreign key references pgbench_accounts (a partition then cannot be
/// truncated on its own, so partitions are not loaded with FREEZE).
fn accounts_referenced(s: &mut dyn Session) -> Result<bool, InitError> {
    let sql = "select count(*) from pg_catalog.pg_constraint where contype = 'f' and confrelid = 'pgbench_accounts'::pg_catalog.regclass";
    let v = s.query_value(sql, &[]).map_err(|e| InitError::Query {
        message: e.message,
        sql: sql.to_string(),
    })?;
    Ok(v.as_deref() != Some("0"))
}

/// `g` with `cfg.jobs` connections.
pub fn client_generate<C: Connector>(
    connector: &C,
    main: &mut C::Session,
    cfg: &InitConfig,
    console: &Console,
) -> Result<(), InitError> {
    console.line("generating data (client-side)...");
    exec(main, "begin")?;
    exec(main, ddl::TRUNCATE_TABLES)?;
    populate(main, cfg, console, Table::Branches, cfg.branches())?;
    populate(main, cfg, console, Table::Tellers, cfg.tellers())?;
    if one_frozen_stream(cfg) && wants_freeze(main, Table::Accounts.name())? {
        // COPY FREEZE needs the truncating transaction, so one stream loads everything;
        // that beats parallel plain COPY plus the much heavier vacuum it needs.
        let mut progress =
            Progress::new(console, Table::Accounts.name(), cfg.accounts(), cfg.quiet);
        let sql = ddl::copy_statement(Table::Accounts.name(), true);
        main.copy_in(&sql, &mut |sink| {
            send_rows(sink, Table::Accounts, 1, cfg.accounts(), &mut |n| {
                progress.advance(n)
            })
        })
        .map_err(copy_error)?;
        progress.finish();
        return exec(main, "commit");
    }
    exec(main, "commit")?;

    let direct =
        matches!(cfg.partitioning, Partitioning::Range(_)) && range_layout_matches(main, cfg)?;
    let freeze_partitions =
        direct && main.server_version_num() >= 140_000 && !accounts_referenced(main)?;
    let mut chunks = plan_accounts(cfg, cfg.jobs, freeze_partitions);
    if !direct {
        // The table is not laid out as the options say (e.g. `-I g` with other options
        // than the `t` step had): let the server route the rows.
        for c in &mut chunks {
            c.target = Target::Accounts;
        }
    }
    let progress = Mutex::new(Progress::new(
        console,
        Table::Accounts.name(),
        cfg.accounts(),
        cfg.quiet,
    ));
    let work = |s: &mut dyn Session, chunk: &Chunk| -> Result<(), InitError> {
        let table = chunk.target.table();
        let whole = matches!(chunk.target, Target::Partition { whole: true, .. });
        let freeze = whole && wants_freeze(s, &table)?;
        if whole {
            exec(s, "begin")?;
            exec(s, &format!("truncate table {table}"))?;
        }
        let sql = ddl::copy_statement(&table, freeze);
        s.copy_in(&sql, &mut |sink| {
            send_rows(sink, Table::Accounts, chunk.lo, chunk.hi, &mut |n| {
                if let Ok(mut p) = progress.lock() {
                    p.advance(n);
                }
            })
        })
        .map_err(copy_error)?;
        if whole {
            exec(s, "commit")?;
        }
        Ok(())
    };
    let result = run_tasks(connector, main, cfg.jobs, &chunks, &work);
    if let Ok(mut p) = progress.lock() {
        p.finish();
    }
    result
}

/// `G` with `cfg.jobs` connections.
pub fn server_generate<C: Connector>(
    connector: &C,
    main: &mut C::Session,
    cfg: &InitConfig,
    console: &Console,
) -> Result<(), InitError> {
    console.line("generating data (server-side)...");
    exec(main, "begin")?;
    exec(main, ddl::TRUNCATE_TABLES)?;
    let [branches, tellers, _] = ddl::server_side_inserts(cfg);
    exec(main, &branches)?;
    exec(main, &tellers)?;
    exec(main, "commit")?;
    let chunks = plan_accounts(cfg, cfg.jobs, false);
    let work =
        |s: &mut dyn Session, chunk: &Chunk| exec(s, &ddl::accounts_insert(chunk.lo, chunk.hi));
    run_tasks(connector, main, cfg.jobs, &chunks, &work)
}

/// `v` with one table per connection (accounts first: it takes longest). A partitioned
/// pgbench_accounts is vacuumed partition by partition, then its own statistics are
/// gathered (`analyze only` on v18+, where plain `analyze` would redo the partitions).
///
/// When `accounts_loaded` (this run's `g` or `G` filled the accounts), their vacuum also
/// freezes: rows that concurrent streams could not load frozen end up frozen as after
/// pgbench's COPY FREEZE, and an aggressive vacuum waits for a page it cannot lock at
/// once (a page pinned by the background writer) instead of leaving it not all-visible.
/// Pages already frozen by COPY FREEZE are skipped, so it costs nothing there; on
/// freshly loaded unfrozen pages it measured about 8% more than a plain vacuum.
pub fn vacuum<C: Connector>(
    connector: &C,
    main: &mut C::Session,
    cfg: &InitConfig,
    console: &Console,
    accounts_loaded: bool,
) -> Result<(), InitError> {
    console.line("vacuuming...");
    let version = main.server_version_num();
    let parts = cfg.partitioning.count();
    let mut tables: Vec<String> = if parts > 0 {
        (1..=parts).map(ddl::partition_name).collect()
    } else {
        vec!["pgbench_accounts".to_string()]
    };
    tables.extend(["pgbench_branches", "pgbench_tellers", "pgbench_history"].map(String::from));
    let big = |t: &str| t.starts_with("pgbench_accounts");
    let no_ring = version >= 160_000;
    let work = |s: &mut dyn Session, t: &String| {
        if no_ring && big(t) {
            // Freshly loaded pages are all dirtied by the vacuum: a small ring buffer
            // would force a WAL flush for nearly every page written back.
            exec(s, "set vacuum_buffer_usage_limit = 0")?;
        }
        if accounts_loaded && big(t) {
            exec(s, &format!("vacuum (freeze, analyze) {t}"))
        } else {
            exec(s, &format!("vacuum analyze {t}"))
        }
    };
    run_tasks(connector, main, cfg.jobs, &tables, &work)?;
    if parts > 0 {
        let only = if version >= 180_000 { "only " } else { "" };
        exec(main, &format!("analyze {only}pgbench_accounts"))?;
    }
    Ok(())
}

/// Session settings for the connection building the accounts primary key: enough
/// parallel maintenance workers and memory for them.
pub fn index_build_settings(jobs: u32) -> Vec<String> {
    let workers = jobs.saturating_sub(1).max(1);
    // PostgreSQL drops workers when each participant would get less than 32MB.
    let mem_mb = 64.max(32 * (workers + 1));
    vec![
        format!("set max_parallel_maintenance_workers = {workers}"),
        format!("set maintenance_work_mem = '{mem_mb}MB'"),
    ]
}

/// `p` with the three primary keys built concurrently. A partitioned pgbench_accounts
/// gets its partitions' keys first (concurrently); the parent's key then adopts them.
pub fn primary_keys<C: Connector>(
    connector: &C,
    main: &mut C::Session,
    cfg: &InitConfig,
    console: &Console,
) -> Result<(), InitError> {
    console.line("creating primary keys...");
    let [branches, tellers, accounts] = match <[String; 3]>::try_from(ddl::primary_keys(cfg)) {
        Ok(a) => a,
        Err(_) => return Err(InitError::Worker),
    };
    let parts = cfg.partitioning.count();
    let mut tasks: Vec<(String, bool)> = Vec::new();
    if parts > 0 {
        tasks.extend((1..=parts).map(|p| (ddl::partition_primary_key(cfg, p), false)));
    } else {
        tasks.push((accounts.clone(), true));
    }
    tasks.push((branches, false));
    tasks.push((tellers, false));
    let jobs = cfg.jobs;
    let work = |s: &mut dyn Session, task: &(String, bool)| {
        if task.1 {
            for set in index_build_settings(jobs) {
                exec(s, &set)?;
            }
        }
        exec(s, &task.0)
    };
    run_tasks(connector, main, cfg.jobs, &tasks, &work)?;
    if parts > 0 {
        exec(main, &accounts)?;
    }
    Ok(())
}
