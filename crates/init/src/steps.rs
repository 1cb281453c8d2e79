//! The initialization steps on one connection, sending exactly pgbench 18's statements.

use crate::config::InitConfig;
use crate::console::Console;
use crate::ddl;
use crate::error::InitError;
use crate::progress::Progress;
use crate::rows::{Table, push_text_row};
use crate::session::{CopyFailure, CopySink, DbFailure, Session};

/// Bytes of COPY data gathered before one CopyData message is sent.
pub const BATCH_BYTES: usize = 64 * 1024;

/// Runs `sql`, turning a failure into pgbench's `query failed` error; after Ctrl-C
/// nothing more is started.
pub fn exec(session: &mut dyn Session, sql: &str) -> Result<(), InitError> {
    if session.interrupted() {
        return Err(InitError::Interrupted);
    }
    session.execute(sql).map_err(|e| InitError::Query {
        message: e.message,
        sql: sql.to_string(),
    })
}

/// Why a generator stopped sending rows after Ctrl-C (the COPY is then failed, and the
/// server's error is reported).
pub const INTERRUPTED: &str = "interrupted by a signal";

/// Maps a COPY failure to pgbench's message for it.
pub fn copy_error(e: CopyFailure) -> InitError {
    match e {
        CopyFailure::Start(m) => InitError::CopyStart(m),
        CopyFailure::Send(m) => InitError::CopySend(m),
        CopyFailure::End(m) => InitError::CopyEnd(m),
    }
}

/// `d`.
pub fn drop_tables(s: &mut dyn Session, console: &Console) -> Result<(), InitError> {
    console.line("dropping old tables...");
    exec(s, ddl::DROP_TABLES)
}

/// `t`.
pub fn create_tables(
    s: &mut dyn Session,
    cfg: &InitConfig,
    console: &Console,
) -> Result<(), InitError> {
    console.line("creating tables...");
    for sql in ddl::create_tables(cfg) {
        exec(s, &sql)?;
    }
    let parts = cfg.partitioning.count();
    if parts > 0 {
        console.line(&format!("creating {parts} partitions..."));
        for sql in ddl::create_partitions(cfg) {
            exec(s, &sql)?;
        }
    }
    Ok(())
}

/// pgbench 18's relkind lookup (extended protocol).
pub fn relkind(s: &mut dyn Session, table: &str) -> Result<Option<String>, InitError> {
    s.query_value(ddl::RELKIND_QUERY, &[table])
        .map_err(|e| InitError::Query {
            message: e.message,
            sql: ddl::RELKIND_QUERY.to_string(),
        })
}

/// True when pgbench 18 would COPY `table` with FREEZE.
pub fn wants_freeze(s: &mut dyn Session, table: &str) -> Result<bool, InitError> {
    let v14 = s.server_version_num() >= 140_000;
    Ok(v14 && relkind(s, table)?.as_deref() == Some("r"))
}

/// COPY data gathered into [`BATCH_BYTES`] messages: rows are appended to
/// [`RowBatches::buf`], each ended with [`RowBatches::row_done`], which sends a full
/// batch and reports its row count; [`RowBatches::finish`] sends the rest.
pub struct RowBatches<'a> {
    sink: &'a mut dyn CopySink,
    on_batch: &'a mut dyn FnMut(i64),
    /// The rows not sent yet.
    pub buf: Vec<u8>,
    pending: i64,
}

impl<'a> RowBatches<'a> {
    /// Batches for `sink`, reporting each sent batch's rows to `on_batch`.
    pub fn new(sink: &'a mut dyn CopySink, on_batch: &'a mut dyn FnMut(i64)) -> Self {
        RowBatches {
            sink,
            on_batch,
            buf: Vec::with_capacity(BATCH_BYTES + 1024),
            pending: 0,
        }
    }

    /// Ends one row; sends the batch once it is full (and stops after Ctrl-C).
    #[inline]
    pub fn row_done(&mut self) -> Result<(), DbFailure> {
        self.pending += 1;
        if self.buf.len() >= BATCH_BYTES {
            if self.sink.interrupted() {
                return Err(DbFailure {
                    message: INTERRUPTED.as_bytes().to_vec(),
                });
            }
            self.sink.send(&self.buf)?;
            self.buf.clear();
            (self.on_batch)(self.pending);
            self.pending = 0;
        }
        Ok(())
    }

    /// Sends what is left.
    pub fn finish(self) -> Result<(), DbFailure> {
        if !self.buf.is_empty() {
            self.sink.send(&self.buf)?;
        }
        if self.pending > 0 {
            (self.on_batch)(self.pending);
        }
        Ok(())
    }
}

/// Generates the text COPY rows with ids `lo..=hi` of `table` into `sink` in batches,
/// reporting each batch to `progress`.
pub fn send_rows(
    sink: &mut dyn CopySink,
    table: Table,
    lo: i64,
    hi: i64,
    on_batch: &mut dyn FnMut(i64),
) -> Result<(), DbFailure> {
    let mut batches = RowBatches::new(sink, on_batch);
    for id in lo..=hi {
        push_text_row(&mut batches.buf, table, id);
        batches.row_done()?;
    }
    batches.finish()
}

/// pgbench's `initPopulateTable`: relkind check, COPY (with FREEZE when allowed), rows,
/// progress, the `\.` line.
pub fn populate(
    s: &mut dyn Session,
    cfg: &InitConfig,
    console: &Console,
    table: Table,
    total: i64,
) -> Result<(), InitError> {
    let freeze = wants_freeze(s, table.name())?;
    let sql = ddl::copy_statement(table.name(), freeze);
    let mut progress = Progress::new(console, table.name(), total, cfg.quiet);
    s.copy_in(&sql, &mut |sink| {
        send_rows(sink, table, 1, total, &mut |n| progress.advance(n))?;
        progress.finish();
        sink.send(b"\\.\n")
    })
    .map_err(copy_error)
}

/// `g` on one connection.
pub fn client_generate(
    s: &mut dyn Session,
    cfg: &InitConfig,
    console: &Console,
) -> Result<(), InitError> {
    console.line("generating data (client-side)...");
    exec(s, "begin")?;
    exec(s, ddl::TRUNCATE_TABLES)?;
    populate(s, cfg, console, Table::Branches, cfg.branches())?;
    populate(s, cfg, console, Table::Tellers, cfg.tellers())?;
    populate(s, cfg, console, Table::Accounts, cfg.accounts())?;
    exec(s, "commit")
}

/// `G` on one connection.
pub fn server_generate(
    s: &mut dyn Session,
    cfg: &InitConfig,
    console: &Console,
) -> Result<(), InitError> {
    console.line("generating data (server-side)...");
    exec(s, "begin")?;
    exec(s, ddl::TRUNCATE_TABLES)?;
    for sql in ddl::server_side_inserts(cfg) {
        exec(s, &sql)?;
    }
    exec(s, "commit")
}

/// `v` on one connection.
pub fn vacuum(s: &mut dyn Session, console: &Console) -> Result<(), InitError> {
    console.line("vacuuming...");
    for t in ddl::VACUUM_TABLES {
        exec(s, &format!("vacuum analyze {t}"))?;
    }
    Ok(())
}

/// `p` on one connection.
pub fn primary_keys(
    s: &mut dyn Session,
    cfg: &InitConfig,
    console: &Console,
) -> Result<(), InitError> {
    console.line("creating primary keys...");
    for sql in ddl::primary_keys(cfg) {
        exec(s, &sql)?;
    }
    Ok(())
}

/// `f` (always on one connection: every statement locks pgbench_branches or pgbench_history).
pub fn foreign_keys(s: &mut dyn Session, console: &Console) -> Result<(), InitError> {
    console.line("creating foreign keys...");
    for sql in ddl::FOREIGN_KEYS {
        exec(s, sql)?;
    }
    Ok(())
}
