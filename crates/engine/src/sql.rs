//! Sending SQL commands in the three query modes and reading their results.
//!
//! Simple mode sends one Query; extended mode Parse/Bind/Describe/Execute/Sync
//! with the unnamed statement; prepared mode prepares `P_<k>` lazily (Parse +
//! Sync, queued in the same write as the first execution) and then sends
//! Bind/Describe/Execute/Sync. Inside a pipeline no Sync is sent per command.
//! Results are read until the expected ReadyForQuery messages have arrived.

use pgrush_script::{GsetKind, RawMessage, SqlCommand};
use pgrush_stats::QueryMode;
use pgrush_wire::{BackendMessage, ReadOutcome};

use crate::client::{Client, ErrStatus, Pipeline};
use crate::messages;
use crate::worker::ThreadCtx;

/// Outcome of reading what the socket has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poll {
    /// More results are expected.
    Pending,
    /// The command completed (possibly with an error logged only).
    Done,
    /// The command failed; `Client::estatus` says how.
    Failed,
}

/// Progress of reading the results of the command in flight.
#[derive(Debug, Default)]
pub struct ReadState {
    /// ReadyForQuery messages still expected.
    pub syncs_left: u32,
    /// Leading ReadyForQuery messages that close lazy preparations (their errors are only logged).
    pub prepare_syncs: u32,
    /// Statement texts of the pending preparations (for error positions), oldest first.
    pub prepare_texts: std::collections::VecDeque<usize>,
    /// Commands sent in the current pipeline whose result has not been read yet,
    /// oldest first (an error's `LINE n:` display shows that command's text).
    pub pipeline_cmds: std::collections::VecDeque<usize>,
    /// Result number within the command (`\;` compounds in simple mode).
    pub qrynum: u32,
    /// An error was seen: results are discarded up to the last ReadyForQuery.
    pub failed: bool,
    /// `\gset`/`\aset` of the command in flight.
    pub gset: Option<GsetKind>,
    /// Rows in the current result.
    pub rows: u64,
    /// Whether the current result had a RowDescription.
    pub tuples: bool,
    /// Column names of the current result (`\gset`/`\aset` only).
    pub names: TextRow,
    /// Values of the last row of the current result (`\gset`/`\aset` only).
    pub values: TextRow,
    /// Rows and tuple flag of the last completed result (`\gset`).
    pub last: Option<(u64, bool)>,
    /// Names/values of the last completed result (`\gset`).
    pub last_names: TextRow,
    /// Values of the last completed result (`\gset`).
    pub last_values: TextRow,
}

/// A row of optional texts (the server's bytes) in one reusable buffer (no
/// allocation once warm).
#[derive(Debug, Default)]
pub struct TextRow {
    text: Vec<u8>,
    cells: Vec<Option<(usize, usize)>>,
}

impl TextRow {
    /// Empties the row, keeping its buffers.
    pub fn clear(&mut self) {
        self.text.clear();
        self.cells.clear();
    }

    /// Appends a cell (`None` = SQL NULL), bytes as received.
    pub fn push(&mut self, cell: Option<&[u8]>) {
        let cell = cell.map(|b| {
            let start = self.text.len();
            self.text.extend_from_slice(b);
            (start, self.text.len())
        });
        self.cells.push(cell);
    }

    /// The cells in order.
    pub fn iter(&self) -> impl Iterator<Item = Option<&[u8]>> + '_ {
        self.cells
            .iter()
            .map(|c| c.and_then(|(s, e)| self.text.get(s..e)))
    }
}

impl ReadState {
    fn begin(&mut self, gset: Option<GsetKind>) {
        self.qrynum = 0;
        self.failed = false;
        self.gset = gset;
        self.rows = 0;
        self.tuples = false;
        self.last = None;
    }
}

/// Sends the SQL command `sql` (global prepared index `stmt`) of the client's
/// current position. Returns false when the output could not be written.
pub fn send_sql(cl: &mut Client, ctx: &mut ThreadCtx<'_>, sql: &SqlCommand, stmt: usize) -> bool {
    let in_pipeline = matches!(cl.pipeline, Pipeline::On { .. });
    if !in_pipeline {
        cl.read = ReadState {
            names: std::mem::take(&mut cl.read.names),
            values: std::mem::take(&mut cl.read.values),
            last_names: std::mem::take(&mut cl.read.last_names),
            last_values: std::mem::take(&mut cl.read.last_values),
            prepare_texts: std::mem::take(&mut cl.read.prepare_texts),
            pipeline_cmds: std::mem::take(&mut cl.read.pipeline_cmds),
            ..ReadState::default()
        };
        cl.read.prepare_texts.clear();
        cl.read.pipeline_cmds.clear();
    } else {
        cl.read.pipeline_cmds.push_back(cl.command);
    }
    cl.read.begin(sql.gset.as_ref().map(|g| g.0));
    let Some(conn) = cl.conn.as_mut() else {
        return false;
    };
    match ctx.cfg.query_mode {
        QueryMode::Simple => {
            cl.buf.clear();
            sql.write_simple(&cl.vars, &mut cl.buf);
            if ctx.cfg.debug {
                messages::debug(
                    ctx.progname(),
                    &messages::concat(&format!("client {} sending ", cl.id), &cl.buf),
                );
            }
            let _ = conn.queue_query(&cl.buf);
            cl.read.syncs_left += 1;
        }
        QueryMode::Extended => {
            if ctx.cfg.debug {
                messages::debug(
                    ctx.progname(),
                    &messages::concat(&format!("client {} sending ", cl.id), &sql.extended_text),
                );
            }
            let _ = conn.queue_parse("", &sql.extended_text, sql.params().len());
            queue_bind_execute(conn, "", sql, &cl.vars, &mut cl.buf, &mut cl.param_bounds);
            if !in_pipeline {
                conn.queue_sync();
                cl.read.syncs_left += 1;
            }
        }
        QueryMode::Prepared => {
            let name = &ctx.stmt_names[stmt];
            if !cl.prepared[stmt] {
                prepare(cl.id, conn, &mut cl.read, ctx, name, sql, stmt);
                cl.prepared[stmt] = true;
            }
            if ctx.cfg.debug {
                messages::debug(
                    ctx.progname(),
                    &format!("client {} sending {}", cl.id, name),
                );
            }
            queue_bind_execute(conn, name, sql, &cl.vars, &mut cl.buf, &mut cl.param_bounds);
            if !in_pipeline {
                conn.queue_sync();
                cl.read.syncs_left += 1;
            }
        }
    }
    if in_pipeline {
        // Inside a pipeline nothing waits for the output; write it when it is large.
        return true;
    }
    cl.flush_output()
}

/// Queues Parse + Sync for statement `name` (a lazy preparation).
pub fn prepare(
    client_id: u32,
    conn: &mut pgrush_wire::Connection,
    read: &mut ReadState,
    ctx: &ThreadCtx<'_>,
    name: &str,
    sql: &SqlCommand,
    stmt: usize,
) {
    if ctx.cfg.debug {
        messages::debug(
            ctx.progname(),
            &format!("client {client_id} preparing {name}"),
        );
    }
    let _ = conn.queue_parse(name, &sql.extended_text, sql.params().len());
    conn.queue_sync();
    read.syncs_left += 1;
    read.prepare_syncs += 1;
    read.prepare_texts.push_back(stmt);
}

fn queue_bind_execute(
    conn: &mut pgrush_wire::Connection,
    stmt_name: &str,
    sql: &SqlCommand,
    vars: &pgrush_script::Variables,
    scratch: &mut Vec<u8>,
    bounds: &mut Vec<Option<(usize, usize)>>,
) {
    // Parameter values as text, concatenated in `scratch` (both buffers are reused:
    // no allocation once warm); NULL for undefined variables.
    scratch.clear();
    bounds.clear();
    for i in 0..sql.params().len() {
        let start = scratch.len();
        if sql.write_param(vars, i, scratch) {
            bounds.push(Some((start, scratch.len())));
        } else {
            bounds.push(None);
        }
    }
    let text = &scratch[..];
    let params = bounds.iter().map(|b| b.map(|(s, e)| &text[s..e]));
    let _ = conn.queue_bind("", stmt_name, params);
    let _ = conn.queue_describe_portal("");
    let _ = conn.queue_execute("", 0);
}

/// Queues a simple-protocol ROLLBACK (after a failure in a transaction block).
pub fn send_rollback(cl: &mut Client) {
    cl.read.syncs_left = 1;
    cl.read.prepare_syncs = 0;
    cl.read.prepare_texts.clear();
    cl.read.failed = false;
    if let Some(conn) = cl.conn.as_mut() {
        let _ = conn.queue_query("ROLLBACK");
    }
}

/// Reads the results of the command in flight.
pub fn poll_results(cl: &mut Client, ctx: &mut ThreadCtx<'_>) -> Poll {
    loop {
        let Some(conn) = cl.conn.as_mut() else {
            return Poll::Failed;
        };
        // Handle every complete message already buffered.
        loop {
            // How to read the server's texts (in its client encoding).
            let utf8 = conn.client_encoding_utf8();
            let msg = match conn.next_message() {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(e) => {
                    messages::error(
                        ctx.progname(),
                        &format!(
                            "client {} script {} aborted in command {} query {}: {}",
                            cl.id,
                            cl.script,
                            cl.command,
                            cl.read.qrynum,
                            e.libpq_message(None)
                        ),
                    );
                    cl.estatus = ErrStatus::Other;
                    return Poll::Failed;
                }
            };
            match msg {
                BackendMessage::RowDescription(rd) => {
                    cl.read.tuples = true;
                    cl.read.rows = 0;
                    if cl.read.gset.is_some() {
                        cl.read.names.clear();
                        for f in rd.fields() {
                            cl.read.names.push(Some(f.name));
                        }
                    }
                }
                BackendMessage::DataRow(row) => {
                    cl.read.rows += 1;
                    if cl.read.gset.is_some() {
                        cl.read.values.clear();
                        for v in row.fields() {
                            cl.read.values.push(v);
                        }
                    }
                }
                BackendMessage::CommandComplete(_) | BackendMessage::EmptyQueryResponse => {
                    let stored = end_result(
                        &mut cl.read,
                        &mut cl.vars,
                        ctx,
                        cl.id,
                        cl.script,
                        cl.command,
                    );
                    if !stored && !cl.read.failed {
                        // As pgbench: the other results are discarded, the client aborts.
                        cl.read.failed = true;
                        cl.estatus = ErrStatus::MetaCommand;
                    }
                    if ends_pipeline(ctx, cl.script, cl.command) {
                        cl.read.pipeline_cmds.pop_front();
                        // pgbench reads a pipeline's results one query at a time,
                        // numbering them from 0 again after each query.
                        cl.read.qrynum = 0;
                    }
                }
                BackendMessage::ErrorResponse(fields) => {
                    if cl.read.prepare_syncs > 0 {
                        // A failed lazy preparation: logged only, the execution will fail.
                        let text = cl
                            .read
                            .prepare_texts
                            .front()
                            .map(|&k| ctx.stmt_text(k))
                            .unwrap_or(b"");
                        messages::error(
                            ctx.progname(),
                            &fields.to_db_error_in(utf8).libpq_message_bytes(Some(text)),
                        );
                    } else if !cl.read.failed {
                        cl.read.failed = true;
                        let status = ErrStatus::from_sqlstate(fields.code());
                        cl.estatus = status;
                        // In a pipeline the error belongs to the oldest command not answered.
                        let command = match cl.read.pipeline_cmds.front() {
                            Some(&c) if ends_pipeline(ctx, cl.script, cl.command) => c,
                            _ => cl.command,
                        };
                        let query = ctx.query_text(cl.script, command, &cl.buf);
                        let text = fields.to_db_error_in(utf8).libpq_message_bytes(query);
                        if status.retryable() || ctx.cfg.continue_on_error {
                            if ctx.cfg.verbose_errors {
                                messages::info(
                                    ctx.progname(),
                                    &messages::concat(
                                        &format!(
                                            "client {} got an error in command {} (SQL) of script {}; ",
                                            cl.id, cl.command, cl.script
                                        ),
                                        &text,
                                    ),
                                );
                            }
                        } else {
                            messages::error(
                                ctx.progname(),
                                &messages::concat(
                                    &format!(
                                        "client {} script {} aborted in command {} query {}: ",
                                        cl.id, cl.script, cl.command, cl.read.qrynum
                                    ),
                                    &text,
                                ),
                            );
                        }
                    }
                    if cl.read.prepare_syncs == 0 {
                        // A failed preparation is not one of the command's queries.
                        cl.read.qrynum += 1;
                        if ends_pipeline(ctx, cl.script, cl.command) {
                            cl.read.pipeline_cmds.pop_front();
                        }
                    }
                }
                BackendMessage::NoticeResponse(fields) => {
                    let mut line = fields.to_db_error_in(utf8).libpq_message_bytes(None);
                    line.push(b'\n');
                    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), &line);
                }
                BackendMessage::ReadyForQuery(status) => {
                    cl.tx_status = status;
                    let ongoing = cl.read.syncs_left;
                    cl.read.syncs_left = cl.read.syncs_left.saturating_sub(1);
                    if cl.read.prepare_syncs > 0 {
                        cl.read.prepare_syncs -= 1;
                        cl.read.prepare_texts.pop_front();
                        continue;
                    }
                    if ends_pipeline(ctx, cl.script, cl.command) {
                        // pgbench stops reading at the first error, so it reports
                        // only the syncs before it; a sync result counts as a query.
                        if ctx.cfg.debug && !cl.read.failed {
                            messages::debug(
                                ctx.progname(),
                                &format!(
                                    "client {} pipeline ending, ongoing syncs: {ongoing}",
                                    cl.id
                                ),
                            );
                        }
                        cl.read.qrynum += 1;
                    }
                    if cl.read.syncs_left == 0 {
                        return finish_command(cl, ctx);
                    }
                }
                BackendMessage::CopyInResponse | BackendMessage::CopyOutResponse => {
                    messages::error(ctx.progname(), "COPY is not supported in pgbench, aborting");
                    cl.estatus = ErrStatus::Other;
                    return Poll::Failed;
                }
                _ => {}
            }
        }
        match conn.read_some() {
            Ok(ReadOutcome::WouldBlock) => return Poll::Pending,
            Ok(ReadOutcome::Data(_)) => continue,
            Ok(ReadOutcome::Closed) | Err(_) => {
                messages::error(
                    ctx.progname(),
                    &format!(
                        "client {} aborted in command {} (SQL) of script {}; perhaps the backend died while processing",
                        cl.id, cl.command, cl.script
                    ),
                );
                cl.estatus = ErrStatus::Other;
                return Poll::Failed;
            }
        }
    }
}

/// Whether the command in flight is an `\endpipeline` (its reads collect the
/// results of the whole pipeline, one Sync per `\syncpipeline` and one of its own).
fn ends_pipeline(ctx: &ThreadCtx<'_>, script: usize, command: usize) -> bool {
    ctx.cfg.scripts[script]
        .commands
        .get(command)
        .is_some_and(|c| matches!(c.kind, pgrush_script::CommandKind::EndPipeline))
}

/// End of one result (CommandComplete / EmptyQueryResponse). Returns false when
/// an `\aset` variable could not be stored (the error is printed).
fn end_result(
    r: &mut ReadState,
    vars: &mut pgrush_script::Variables,
    ctx: &ThreadCtx<'_>,
    client: u32,
    script: usize,
    command: usize,
) -> bool {
    let mut stored = true;
    match r.gset {
        Some(GsetKind::Aset) if r.tuples && r.rows > 0 && !r.failed => {
            for (name, value) in r.names.iter().zip(r.values.iter()) {
                if !store_var(
                    vars,
                    ctx,
                    client,
                    script,
                    command,
                    r.qrynum,
                    name.unwrap_or(b""),
                    value,
                ) {
                    stored = false;
                    break;
                }
            }
        }
        Some(GsetKind::Gset) => {
            r.last = Some((r.rows, r.tuples));
            std::mem::swap(&mut r.last_names, &mut r.names);
            std::mem::swap(&mut r.last_values, &mut r.values);
        }
        _ => {}
    }
    r.rows = 0;
    r.tuples = false;
    if ctx.cfg.query_mode == QueryMode::Simple {
        r.qrynum += 1;
    }
    stored
}

fn finish_command(cl: &mut Client, ctx: &mut ThreadCtx<'_>) -> Poll {
    if cl.read.failed {
        return Poll::Failed;
    }
    if cl.read.gset == Some(GsetKind::Gset) {
        let qrynum = cl.read.qrynum.saturating_sub(1);
        let (rows, tuples) = cl.read.last.unwrap_or((0, false));
        if !tuples || rows != 1 {
            messages::error(
                ctx.progname(),
                &format!(
                    "client {} script {} command {} query {}: expected one row, got {}",
                    cl.id, cl.script, cl.command, qrynum, rows
                ),
            );
            cl.estatus = ErrStatus::MetaCommand;
            return Poll::Failed;
        }
        let prefix_ok = {
            let r = &cl.read;
            let mut ok = true;
            for (name, value) in r.last_names.iter().zip(r.last_values.iter()) {
                if !store_var(
                    &mut cl.vars,
                    ctx,
                    cl.id,
                    cl.script,
                    cl.command,
                    qrynum,
                    name.unwrap_or(b""),
                    value,
                ) {
                    ok = false;
                    break;
                }
            }
            ok
        };
        if !prefix_ok {
            cl.estatus = ErrStatus::MetaCommand;
            return Poll::Failed;
        }
    }
    Poll::Done
}

#[allow(clippy::too_many_arguments)]
fn store_var(
    vars: &mut pgrush_script::Variables,
    ctx: &ThreadCtx<'_>,
    client: u32,
    script: usize,
    command: usize,
    qrynum: u32,
    name: &[u8],
    value: Option<&[u8]>,
) -> bool {
    let (context, prefix) = match &ctx.cfg.scripts[script].commands[command].kind {
        pgrush_script::CommandKind::Sql(sql) => match &sql.gset {
            Some((GsetKind::Gset, p)) => ("gset", p.as_slice()),
            Some((GsetKind::Aset, p)) => ("aset", p.as_slice()),
            None => ("gset", &b""[..]),
        },
        _ => ("gset", &b""[..]),
    };
    // The prefixed name is built in a reused buffer (no allocation once warm).
    thread_local! {
        static FULL: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let stored = FULL.with_borrow_mut(|full| {
        full.clear();
        full.extend_from_slice(prefix);
        full.extend_from_slice(name);
        vars.put_text(context, &full[..], value.unwrap_or(b""))
            .map_err(|e| (e, full.clone()))
    });
    if let Err((invalid_name, full)) = stored {
        messages::error(ctx.progname(), &invalid_name.to_bytes());
        messages::error(
            ctx.progname(),
            &messages::concat(
                &format!(
                    "client {client} script {script} command {command} query {qrynum}: error storing into variable "
                ),
                &full,
            ),
        );
        return false;
    }
    true
}

/// Reads the result of the ROLLBACK sent after a failure.
pub fn poll_rollback(cl: &mut Client, ctx: &mut ThreadCtx<'_>) -> Poll {
    loop {
        let Some(conn) = cl.conn.as_mut() else {
            return Poll::Failed;
        };
        loop {
            let msg = match conn.next_message() {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(e) => {
                    messages::error(
                        ctx.progname(),
                        &format!(
                            "client {} aborted while rolling back the transaction after an error; {}",
                            cl.id,
                            e.libpq_message(None)
                        ),
                    );
                    return Poll::Failed;
                }
            };
            match msg {
                BackendMessage::ErrorResponse(fields) => {
                    messages::error(
                        ctx.progname(),
                        &format!(
                            "client {} aborted while rolling back the transaction after an error; {}",
                            cl.id,
                            fields.to_db_error().libpq_message(None)
                        ),
                    );
                    cl.read.failed = true;
                }
                BackendMessage::ReadyForQuery(status) => {
                    cl.tx_status = status;
                    return if cl.read.failed {
                        Poll::Failed
                    } else {
                        Poll::Done
                    };
                }
                _ => {}
            }
        }
        match conn.read_some() {
            Ok(ReadOutcome::WouldBlock) => return Poll::Pending,
            Ok(ReadOutcome::Data(_)) => continue,
            Ok(ReadOutcome::Closed) | Err(_) => {
                messages::error(
                    ctx.progname(),
                    &format!(
                        "client {} aborted while rolling back the transaction after an error; perhaps the backend died while processing",
                        cl.id
                    ),
                );
                return Poll::Failed;
            }
        }
    }
}
