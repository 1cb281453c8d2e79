//! Sending SQL commands in the three query modes.
//!
//! Simple mode sends one Query; extended mode Parse/Bind/Describe/Execute/Sync
//! with the unnamed statement; prepared mode prepares `P_<k>` lazily before its
//! first execution (outside a pipeline synchronously, as pgbench's `PQprepare`;
//! inside one, Parse + Sync queued ahead of the pipeline's commands) and then sends
//! Bind/Describe/Execute/Sync. Inside a pipeline no Sync is sent per command.
//!
//! Every queued message is checked: a message the connection refuses (SQL text
//! holding a NUL byte) aborts the client instead of leaving it waiting for a
//! reply that never comes.

use pgrush_script::SqlCommand;
use pgrush_stats::QueryMode;

use pgrush_wire::{BackendMessage, ReadOutcome};

use super::read_state::ReadState;
use super::results::print_notice;
use super::{Client, Pipeline};
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;
use crate::messages;

/// Why a command could not be sent.
#[derive(Debug)]
pub(super) enum SendFailure {
    /// The connection refused to queue a message (e.g. a NUL byte in the SQL text).
    Refused(pgrush_wire::Error),
    /// The socket failed (or the client has no connection).
    Socket,
}

impl SendFailure {
    /// The end of pgbench's abort line (`...; SQL command send failed`), with the
    /// reason when the connection gave one.
    pub(super) fn message(&self) -> String {
        match self {
            SendFailure::Refused(e) => format!("SQL command send failed: {e}"),
            SendFailure::Socket => "SQL command send failed".to_string(),
        }
    }
}

impl From<pgrush_wire::Error> for SendFailure {
    fn from(e: pgrush_wire::Error) -> Self {
        SendFailure::Refused(e)
    }
}

impl From<pgrush_wire::EncodeRefusal> for SendFailure {
    fn from(refusal: pgrush_wire::EncodeRefusal) -> Self {
        SendFailure::Refused(refusal.into())
    }
}

impl<C: ClientConn> Client<C> {
    /// Sends the SQL command `sql` (global prepared index `stmt`) of the client's
    /// current position; outside a pipeline the output is written at once.
    #[inline(always)]
    pub(super) fn send_sql<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        sql: &SqlCommand,
        stmt: usize,
    ) -> Result<(), SendFailure> {
        let in_pipeline = matches!(self.pipeline, Pipeline::On { .. });
        if in_pipeline {
            self.read.pipeline_cmds.push_back(self.command);
        } else {
            self.read.reset();
        }
        self.read.begin(sql.gset.as_ref().map(|g| g.0));
        let Some(conn) = self.conn.as_mut() else {
            return Err(SendFailure::Socket);
        };
        match ctx.cfg.query_mode {
            QueryMode::Simple => {
                self.buf.clear();
                let holds_nul = sql.write_simple(&self.vars, &mut self.buf);
                if ctx.cfg.output.debug {
                    debug_sending(ctx.progname(), self.id, &self.buf);
                }
                conn.queue_query(&self.buf, holds_nul)?;
                self.read.syncs_left += 1;
            }
            QueryMode::Extended => {
                if ctx.cfg.output.debug {
                    debug_sending(ctx.progname(), self.id, &sql.extended_text);
                }
                conn.queue_parse("", &sql.extended_text, sql.params().len())?;
                let head = ctx.bind_head(stmt)?;
                conn.queue_bind_execute(head, sql, &self.vars, !in_pipeline)?;
                if !in_pipeline {
                    self.read.syncs_left += 1;
                }
            }
            QueryMode::Prepared => {
                if !self.prepared[stmt] {
                    prepare_first(self.id, conn, &mut self.read, ctx, (sql, stmt), in_pipeline)?;
                    self.prepared[stmt] = true;
                }
                if ctx.cfg.output.debug {
                    debug_sending(ctx.progname(), self.id, ctx.stmt_name(stmt).as_bytes());
                }
                let head = ctx.bind_head(stmt)?;
                conn.queue_bind_execute(head, sql, &self.vars, !in_pipeline)?;
                if !in_pipeline {
                    self.read.syncs_left += 1;
                }
            }
        }
        // Inside a pipeline nothing waits for the output: it is written at `\endpipeline`
        // (or when the socket asks for it).
        if in_pipeline || self.flush_output() {
            Ok(())
        } else {
            Err(SendFailure::Socket)
        }
    }

    /// In prepared mode, `\startpipeline` prepares every SQL command up to
    /// `\endpipeline` first; their results are read with the pipeline's.
    pub(super) fn prepare_pipeline<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
    ) -> Result<(), SendFailure> {
        if !matches!(self.pipeline, Pipeline::Off) {
            return Ok(());
        }
        let script = &ctx.cfg.scripts[self.script];
        self.read.syncs_left = 0;
        self.read.prepare_syncs = 0;
        self.read.prepare_texts.clear();
        for j in self.command + 1..script.commands.len() {
            match &script.commands[j].kind {
                pgrush_script::CommandKind::EndPipeline => break,
                pgrush_script::CommandKind::Sql(sql) => {
                    let stmt = ctx.stmt_index(self.script, j);
                    if self.prepared[stmt] {
                        continue;
                    }
                    if let Some(conn) = self.conn.as_mut() {
                        prepare(self.id, conn, &mut self.read, ctx, sql, stmt)?;
                    }
                    self.prepared[stmt] = true;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Queues a simple-protocol ROLLBACK (after a failure in a transaction block).
    pub(super) fn send_rollback(&mut self) -> Result<(), SendFailure> {
        self.read.syncs_left = 1;
        self.read.prepare_syncs = 0;
        self.read.prepare_texts.clear();
        self.read.failed = false;
        let conn = self.conn.as_mut().ok_or(SendFailure::Socket)?;
        conn.queue_query(b"ROLLBACK", false)?;
        Ok(())
    }
}

/// `--debug`'s `client N sending ...` line. Out of line and `cold`: every command
/// of a run without `--debug` passes the test, and none of this code belongs in the
/// path it takes.
#[cold]
#[inline(never)]
fn debug_sending(progname: &str, client_id: u32, what: &[u8]) {
    messages::debug(
        progname,
        &messages::concat(&format!("client {client_id} sending "), what),
    );
}

/// Queues Parse + Sync for prepared statement `stmt` (a lazy preparation).
fn prepare<C: ClientConn, N: Network<Conn = C>>(
    client_id: u32,
    conn: &mut C,
    read: &mut ReadState,
    ctx: &ThreadCtx<'_, N>,
    sql: &SqlCommand,
    stmt: usize,
) -> Result<(), SendFailure> {
    queue_preparation(client_id, conn, ctx, sql, stmt)?;
    read.syncs_left += 1;
    read.prepare_syncs += 1;
    read.prepare_texts.push_back(stmt);
    Ok(())
}

/// Queues Parse + Sync for statement `stmt`, after `--debug`'s `preparing` line.
fn queue_preparation<C: ClientConn, N>(
    client_id: u32,
    conn: &mut C,
    ctx: &ThreadCtx<'_, N>,
    sql: &SqlCommand,
    stmt: usize,
) -> Result<(), SendFailure> {
    let name = ctx.stmt_name(stmt);
    if ctx.cfg.output.debug {
        messages::debug(
            ctx.progname(),
            &format!("client {client_id} preparing {name}"),
        );
    }
    conn.queue_parse(name, &sql.extended_text, sql.params().len())?;
    conn.queue_sync();
    Ok(())
}

/// The first execution of statement `stmt` on this connection prepares it:
/// synchronously outside a pipeline, queued ahead of the pipeline's commands in
/// one. Once per statement and connection: kept out of the sending path.
#[cold]
#[inline(never)]
fn prepare_first<C: ClientConn, N: Network<Conn = C>>(
    client_id: u32,
    conn: &mut C,
    read: &mut ReadState,
    ctx: &ThreadCtx<'_, N>,
    (sql, stmt): (&SqlCommand, usize),
    in_pipeline: bool,
) -> Result<(), SendFailure> {
    if in_pipeline {
        prepare(client_id, conn, read, ctx, sql, stmt)
    } else {
        prepare_now(client_id, conn, ctx, sql, stmt)
    }
}

/// Prepares statement `stmt` synchronously, as pgbench's `PQprepare` outside a
/// pipeline: Parse and Sync are written and the reply read (blocking) before the
/// execution is queued, so a refusal is printed (libpq's message) before
/// `sending P_k`, as pgbench does; the run goes on and the execution fails.
fn prepare_now<C: ClientConn, N>(
    client_id: u32,
    conn: &mut C,
    ctx: &ThreadCtx<'_, N>,
    sql: &SqlCommand,
    stmt: usize,
) -> Result<(), SendFailure> {
    queue_preparation(client_id, conn, ctx, sql, stmt)?;
    while !conn.flush().map_err(|_| SendFailure::Socket)? {
        conn.wait_socket(true).map_err(|_| SendFailure::Socket)?;
    }
    loop {
        let encoding = conn.client_encoding();
        let more = match conn.next_message() {
            Ok(Some(BackendMessage::ReadyForQuery(_))) => return Ok(()),
            Ok(Some(BackendMessage::ErrorResponse(fields))) => {
                let text = ctx.stmt_text(stmt);
                messages::error(
                    ctx.progname(),
                    &fields
                        .to_db_error_in(encoding)
                        .libpq_message_bytes(Some(text)),
                );
                false
            }
            Ok(Some(BackendMessage::NoticeResponse(fields))) => {
                print_notice(&fields, encoding);
                false
            }
            Ok(Some(_)) => false,
            Ok(None) => true,
            Err(_) => return Err(SendFailure::Socket),
        };
        if more {
            match conn.read_some() {
                Ok(ReadOutcome::Data(_)) => {}
                Ok(ReadOutcome::WouldBlock) => {
                    conn.wait_socket(false).map_err(|_| SendFailure::Socket)?;
                }
                Ok(ReadOutcome::Closed) | Err(_) => return Err(SendFailure::Socket),
            }
        }
    }
}
