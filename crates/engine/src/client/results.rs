//! Reading the results of the SQL command (or pipeline) in flight
//! (`WAIT_RESULT`): counting rows, `\gset`/`\aset`, errors, ReadyForQuery.

use pgrush_script::{CommandKind, GsetKind, RawMessage, Variables};
use pgrush_stats::QueryMode;
use pgrush_wire::{BackendMessage, ClientEncoding, ErrorFields, PlainStop, ReadOutcome};

use super::read_state::ReadState;
use super::{Client, ErrStatus, Next, State, Wait};
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;
use crate::messages;

/// Outcome of reading what the socket has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Poll {
    /// More results are expected.
    Pending,
    /// The command completed (possibly with an error logged only).
    Done,
    /// The command failed; `Client::estatus` says how.
    Failed,
}

/// What handling buffered messages gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Messages were handled; more may be buffered.
    Handled,
    /// No complete message is buffered: read the socket.
    Empty,
    /// The command's results are all in (or it failed).
    Finished(Poll),
}

/// What reading the socket gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    /// Data was appended to the input buffer.
    Data,
    /// Nothing to read right now.
    Nothing,
    /// The connection is closed or failed.
    Gone,
}

impl<C: ClientConn> Client<C> {
    /// `WAIT_RESULT`: reads what has arrived; a retryable error (or any error with
    /// `--continue-on-error`) goes to Error, any other failure aborts.
    pub(super) fn wait_result<N: Network<Conn = C>>(&mut self, ctx: &mut ThreadCtx<'_, N>) -> Next {
        if ctx.cfg.output.debug && !self.reading_on(ctx) {
            debug_receiving(ctx, self.id);
        }
        match self.poll_results(ctx) {
            Poll::Pending => Next::wait(State::WaitResult, Wait::Socket),
            Poll::Done => Next::go(State::EndCommand),
            Poll::Failed => Next::go(self.after_failed_command(ctx)),
        }
    }

    /// Whether pgbench, in this turn, would still be reading results it already
    /// has (printing no `receiving` line): once a command's first result is in,
    /// pgbench reads the rest without returning to its loop; at an
    /// `\endpipeline`, it returns after each query's result, but reads from a
    /// sync's result on to the end of the next query's.
    #[cold]
    fn reading_on<N>(&self, ctx: &ThreadCtx<'_, N>) -> bool {
        if ctx.ends_pipeline(self.script, self.command) {
            return self.read.after_sync;
        }
        self.read.failed || (ctx.cfg.query_mode == QueryMode::Simple && self.read.qrynum > 0)
    }

    /// Where a failed command leads: Error for a retryable failure (or any SQL
    /// error but a lost connection with `--continue-on-error`), else Aborted.
    #[cold]
    pub(super) fn after_failed_command<N>(&self, ctx: &ThreadCtx<'_, N>) -> State {
        let errors = &ctx.cfg.errors;
        if self.estatus.recoverable(
            errors.continue_on_error,
            errors.reconnect_timeout_us.is_some(),
        ) {
            State::Error
        } else {
            State::Aborted
        }
    }

    /// Reads the results of the command in flight. A plain command (no `\gset`/`\aset`,
    /// not the end of a pipeline) reads its common messages on the fast path
    /// ([`ClientConn::next_plain`]); everything else, and any message the fast path
    /// leaves, goes through [`Client::result_message`] one message at a time.
    fn poll_results<N: Network<Conn = C>>(&mut self, ctx: &ThreadCtx<'_, N>) -> Poll {
        // Per-command facts, looked up once rather than per message.
        let ends_pipeline = ctx.ends_pipeline(self.script, self.command);
        let plain = self.read.gset.is_none() && !ends_pipeline;
        self.poll_results_of(ctx, plain, ends_pipeline)
    }

    /// [`Client::poll_results`] for a command known to be `plain` (or not) and to
    /// end a pipeline (or not).
    #[inline(always)]
    pub(super) fn poll_results_of<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        plain: bool,
        ends_pipeline: bool,
    ) -> Poll {
        // A plain command's results are waited for with nothing complete in the
        // buffer (a turn reads until it must wait, and only server-initiated
        // messages can follow a ReadyForQuery), and its turn comes when the
        // socket is readable: read before looking.
        let mut look_at_buffer = !plain;
        loop {
            // Handle every complete message already buffered.
            if look_at_buffer {
                loop {
                    if plain {
                        match self.plain_results(ctx) {
                            Step::Handled => {}
                            Step::Empty => break,
                            Step::Finished(poll) => return poll,
                        }
                    }
                    match self.result_message(ctx, ends_pipeline) {
                        Step::Handled => {}
                        Step::Empty => break,
                        Step::Finished(poll) => return poll,
                    }
                }
            }
            look_at_buffer = true;
            match self.read_socket() {
                Arrival::Data => continue,
                Arrival::Nothing => return Poll::Pending,
                Arrival::Gone => return self.connection_gone(ctx),
            }
        }
    }

    /// The socket closed while results were awaited: the client aborts. When the
    /// server already reported an error (which it does before ending a session),
    /// that report was the client's last word, as in pgbench.
    #[cold]
    #[inline(never)]
    fn connection_gone<N>(&mut self, ctx: &ThreadCtx<'_, N>) -> Poll {
        // Under `--reconnect` the client says so itself (`lose_connection`).
        if !self.read.failed && ctx.cfg.errors.reconnect_timeout_us.is_none() {
            messages::error(
                ctx.progname(),
                &format!(
                    "client {} aborted in command {} (SQL) of script {}; perhaps the backend died while processing",
                    self.id, self.command, self.script
                ),
            );
        }
        self.estatus = ErrStatus::ConnectionLost;
        Poll::Failed
    }

    /// The fast path of a plain command: consumes the buffered messages of its results
    /// with the same effects as [`Client::result_message`] (rows, result ends,
    /// ReadyForQuery). `Handled` means a message the fast path leaves is next.
    #[inline]
    fn plain_results<N: Network<Conn = C>>(&mut self, ctx: &ThreadCtx<'_, N>) -> Step {
        loop {
            let Some(conn) = self.conn.as_mut() else {
                return Step::Finished(Poll::Failed);
            };
            let stop = conn.next_plain(&mut self.read.current);
            if ctx.cfg.query_mode == QueryMode::Simple {
                // As `store_result`: each result is one query of a `\;` compound.
                self.read.qrynum += self.read.current.completed;
            }
            self.read.current.completed = 0;
            match stop {
                PlainStop::Ready(status) => {
                    self.tx_status = status;
                    if self.ready_for_query(ctx, false) {
                        // No `\gset` to store: the command is done unless it failed.
                        return Step::Finished(if self.read.failed {
                            Poll::Failed
                        } else {
                            Poll::Done
                        });
                    }
                }
                PlainStop::NeedMore => return Step::Empty,
                PlainStop::Other => return Step::Handled,
            }
        }
    }

    /// Handles the next buffered message of the command's results, whatever it is.
    #[inline(never)]
    fn result_message<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        ends_pipeline: bool,
    ) -> Step {
        let Some(conn) = self.conn.as_mut() else {
            return Step::Finished(Poll::Failed);
        };
        // How to read the server's texts (in its client encoding).
        let encoding = conn.client_encoding();
        let msg = match conn.next_message() {
            Ok(Some(m)) => m,
            Ok(None) => return Step::Empty,
            Err(e) => {
                messages::error(
                    ctx.progname(),
                    &format!(
                        "client {} script {} aborted in command {} query {}: {}",
                        self.id,
                        self.script,
                        self.command,
                        self.read.qrynum,
                        e.libpq_message(None)
                    ),
                );
                self.estatus = ErrStatus::Other;
                return Step::Finished(Poll::Failed);
            }
        };
        match msg {
            BackendMessage::RowDescription(rd) => self.read.row_description(&rd),
            BackendMessage::DataRow(row) => self.read.data_row(&row),
            BackendMessage::CommandComplete(_) | BackendMessage::EmptyQueryResponse => {
                self.end_result(ctx, ends_pipeline);
            }
            BackendMessage::ErrorResponse(fields) => {
                error_response(
                    &mut self.read,
                    &mut self.estatus,
                    &self.buf,
                    (self.id, self.script, self.command),
                    ctx,
                    &fields,
                    encoding,
                );
                if self.estatus == ErrStatus::ConnectionLost {
                    // The server ends the session: nothing more will come.
                    if ctx.cfg.errors.reconnect_timeout_us.is_some() {
                        self.lost_sqlstate = fields.code().try_into().ok();
                    }
                    return Step::Finished(Poll::Failed);
                }
            }
            BackendMessage::NoticeResponse(fields) => print_notice(&fields, encoding),
            BackendMessage::ReadyForQuery(status) => {
                self.tx_status = status;
                if self.ready_for_query(ctx, ends_pipeline) {
                    return Step::Finished(self.finish_command(ctx));
                }
            }
            BackendMessage::CopyInResponse | BackendMessage::CopyOutResponse => {
                messages::error(ctx.progname(), "COPY is not supported in pgbench, aborting");
                self.estatus = ErrStatus::Other;
                return Step::Finished(Poll::Failed);
            }
            _ => {}
        }
        Step::Handled
    }

    /// CommandComplete / EmptyQueryResponse: the end of one result.
    fn end_result<N: Network<Conn = C>>(&mut self, ctx: &ThreadCtx<'_, N>, ends_pipeline: bool) {
        let stored = store_result(
            &mut self.read,
            &mut self.vars,
            ctx,
            self.id,
            self.script,
            self.command,
        );
        if !stored && !self.read.failed {
            // As pgbench: the other results are discarded, the client aborts.
            self.read.failed = true;
            self.estatus = ErrStatus::MetaCommand;
        }
        if ends_pipeline {
            self.read.pipeline_cmds.pop_front();
            // pgbench reads a pipeline's results one query at a time,
            // numbering them from 0 again after each query.
            self.read.qrynum = 0;
            // It returns to its loop after each query's result, a sync's at least
            // being still to come: a new `receiving` line at once.
            self.read.after_sync = false;
            if ctx.cfg.output.debug {
                debug_receiving(ctx, self.id);
            }
        }
    }

    /// ReadyForQuery: true when it was the last one the command expects
    /// (`ends_pipeline`: the command is an `\endpipeline`).
    #[inline]
    fn ready_for_query<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        ends_pipeline: bool,
    ) -> bool {
        let ongoing = self.read.syncs_left;
        self.read.syncs_left = self.read.syncs_left.saturating_sub(1);
        if self.read.prepare_syncs > 0 {
            self.read.prepare_syncs -= 1;
            self.read.prepare_texts.pop_front();
            return false;
        }
        if ends_pipeline {
            // pgbench stops reading at the first error, so it reports
            // only the syncs before it; a sync result counts as a query.
            if ctx.cfg.output.debug && !self.read.failed {
                messages::debug(
                    ctx.progname(),
                    &format!(
                        "client {} pipeline ending, ongoing syncs: {ongoing}",
                        self.id
                    ),
                );
            }
            self.read.qrynum += 1;
            self.read.after_sync = self.read.syncs_left > 0;
        }
        self.read.syncs_left == 0
    }

    /// All results are in: the command failed, or `\gset` stores its one row.
    fn finish_command<N: Network<Conn = C>>(&mut self, ctx: &ThreadCtx<'_, N>) -> Poll {
        if self.read.failed {
            return Poll::Failed;
        }
        if self.read.gset != Some(GsetKind::Gset) {
            return Poll::Done;
        }
        let qrynum = self.read.qrynum.saturating_sub(1);
        let (rows, tuples) = self.read.last.unwrap_or((0, false));
        if !tuples || rows != 1 {
            messages::error(
                ctx.progname(),
                &format!(
                    "client {} script {} command {} query {}: expected one row, got {}",
                    self.id, self.script, self.command, qrynum, rows
                ),
            );
            self.estatus = ErrStatus::MetaCommand;
            return Poll::Failed;
        }
        let r = &self.read;
        for (name, value) in r.last_names.iter().zip(r.last_values.iter()) {
            let stored = store_var(
                &mut self.vars,
                ctx,
                (self.id, self.script, self.command, qrynum),
                name.unwrap_or(b""),
                value,
            );
            if !stored {
                self.estatus = ErrStatus::MetaCommand;
                return Poll::Failed;
            }
        }
        Poll::Done
    }

    /// Reads what the socket has.
    fn read_socket(&mut self) -> Arrival {
        match self.conn.as_mut().map(ClientConn::read_some) {
            Some(Ok(ReadOutcome::Data(_))) => Arrival::Data,
            Some(Ok(ReadOutcome::WouldBlock)) => Arrival::Nothing,
            Some(Ok(ReadOutcome::Closed) | Err(_)) | None => Arrival::Gone,
        }
    }

    /// `WAIT_ROLLBACK_RESULT`'s reading: the result of the ROLLBACK sent after a failure.
    #[cold]
    #[inline(never)]
    pub(super) fn poll_rollback<N: Network<Conn = C>>(&mut self, ctx: &ThreadCtx<'_, N>) -> Poll {
        const ABORTED: &str = "aborted while rolling back the transaction after an error";
        loop {
            loop {
                let Some(conn) = self.conn.as_mut() else {
                    return Poll::Failed;
                };
                let msg = match conn.next_message() {
                    Ok(Some(m)) => m,
                    Ok(None) => break,
                    Err(e) => {
                        messages::error(
                            ctx.progname(),
                            &format!("client {} {ABORTED}; {}", self.id, e.libpq_message(None)),
                        );
                        return Poll::Failed;
                    }
                };
                match msg {
                    BackendMessage::ErrorResponse(fields) => {
                        messages::error(
                            ctx.progname(),
                            &format!(
                                "client {} {ABORTED}; {}",
                                self.id,
                                fields.to_db_error().libpq_message(None)
                            ),
                        );
                        self.read.failed = true;
                    }
                    BackendMessage::ReadyForQuery(status) => {
                        self.tx_status = status;
                        return if self.read.failed {
                            Poll::Failed
                        } else {
                            Poll::Done
                        };
                    }
                    _ => {}
                }
            }
            match self.read_socket() {
                Arrival::Data => continue,
                Arrival::Nothing => return Poll::Pending,
                Arrival::Gone => {
                    messages::error(
                        ctx.progname(),
                        &format!(
                            "client {} {ABORTED}; perhaps the backend died while processing",
                            self.id
                        ),
                    );
                    return Poll::Failed;
                }
            }
        }
    }
}

/// ErrorResponse: a failed lazy preparation is only logged; otherwise the first
/// error of the command decides its status.
fn error_response<N>(
    read: &mut ReadState,
    estatus: &mut ErrStatus,
    sent: &[u8],
    at: (u32, usize, usize),
    ctx: &ThreadCtx<'_, N>,
    fields: &ErrorFields<'_>,
    encoding: ClientEncoding,
) {
    let (id, script, command_now) = at;
    if read.prepare_syncs > 0 {
        // A failed lazy preparation: logged only, the execution will fail.
        let text = read
            .prepare_texts
            .front()
            .map(|&k| ctx.stmt_text(k))
            .unwrap_or(b"");
        messages::error(
            ctx.progname(),
            &fields
                .to_db_error_in(encoding)
                .libpq_message_bytes(Some(text)),
        );
    } else if !read.failed {
        read.failed = true;
        let status = if fields.ends_session() || on_a_standby(ctx, script, fields.code()) {
            ErrStatus::ConnectionLost
        } else {
            ErrStatus::from_sqlstate(fields.code())
        };
        *estatus = status;
        // In a pipeline the error belongs to the oldest command not answered.
        let command = match read.pipeline_cmds.front() {
            Some(&c) if ctx.ends_pipeline(script, command_now) => c,
            _ => command_now,
        };
        let query = ctx.query_text(script, command, sent);
        let text = fields.to_db_error_in(encoding).libpq_message_bytes(query);
        let errors = &ctx.cfg.errors;
        if status.recoverable(
            errors.continue_on_error,
            errors.reconnect_timeout_us.is_some(),
        ) {
            if ctx.cfg.errors.verbose_errors {
                messages::info(
                    ctx.progname(),
                    &messages::concat(
                        &format!(
                            "client {} got an error in command {} (SQL) of script {}; ",
                            id, command_now, script
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
                        id, script, command_now, read.qrynum
                    ),
                    &text,
                ),
            );
        }
    }
    if read.prepare_syncs == 0 {
        // A failed preparation is not one of the command's queries.
        read.qrynum += 1;
        if ctx.ends_pipeline(script, command_now) {
            read.pipeline_cmds.pop_front();
        }
    }
}

/// Under `--reconnect`, with a conninfo that asks for a read-write server
/// (`target_session_attrs=read-write` or `primary`), a read-only transaction error
/// (SQLSTATE 25006: the server became a standby) loses the connection: the client
/// looks for the primary again. The conninfo is that of `script`'s target.
fn on_a_standby<N>(ctx: &ThreadCtx<'_, N>, script: usize, code: &[u8]) -> bool {
    use pgrush_wire::conninfo::TargetSessionAttrs;
    ctx.cfg.errors.reconnect_timeout_us.is_some()
        && code == b"25006"
        && matches!(
            ctx.cfg
                .targets
                .params(&ctx.cfg.conn, ctx.plan.script_target[script])
                .target_session_attrs(),
            TargetSessionAttrs::ReadWrite | TargetSessionAttrs::Primary
        )
}

/// `--debug`'s line for a client about to read results.
pub(super) fn debug_receiving<N>(ctx: &ThreadCtx<'_, N>, client: u32) {
    messages::debug(ctx.progname(), &format!("client {client} receiving"));
}

/// A notice, printed as libpq's default notice processor does (a failed write to
/// stderr is not reported anywhere).
pub(super) fn print_notice(fields: &ErrorFields<'_>, encoding: ClientEncoding) {
    let mut line = fields.to_db_error_in(encoding).libpq_message_bytes(None);
    line.push(b'\n');
    let _ignored = std::io::Write::write_all(&mut std::io::stderr().lock(), &line);
}

/// End of one result: `\aset` stores every column of its row, `\gset` keeps the
/// result for the end of the command. Returns false when a variable could not be
/// stored (the error is printed).
fn store_result<N>(
    r: &mut ReadState,
    vars: &mut Variables,
    ctx: &ThreadCtx<'_, N>,
    client: u32,
    script: usize,
    command: usize,
) -> bool {
    let mut stored = true;
    match r.gset {
        Some(GsetKind::Aset) if r.current.tuples && r.current.rows > 0 && !r.failed => {
            for (name, value) in r.names.iter().zip(r.values.iter()) {
                let at = (client, script, command, r.qrynum);
                if !store_var(vars, ctx, at, name.unwrap_or(b""), value) {
                    stored = false;
                    break;
                }
            }
        }
        Some(GsetKind::Gset) => {
            r.last = Some((r.current.rows, r.current.tuples));
            std::mem::swap(&mut r.last_names, &mut r.names);
            std::mem::swap(&mut r.last_values, &mut r.values);
        }
        _ => {}
    }
    r.current.end_result();
    if ctx.cfg.query_mode == QueryMode::Simple {
        r.qrynum += 1;
    }
    stored
}

/// Stores column `name` = `value` (NULL as empty) under the command's `\gset`/`\aset`
/// prefix; `at` is (client, script, command, query) for the error message.
fn store_var<N>(
    vars: &mut Variables,
    ctx: &ThreadCtx<'_, N>,
    at: (u32, usize, usize, u32),
    name: &[u8],
    value: Option<&[u8]>,
) -> bool {
    let (client, script, command, qrynum) = at;
    let (context, prefix) = match &ctx.cfg.scripts[script].commands[command].kind {
        CommandKind::Sql(sql) => match &sql.gset {
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
