//! Running one script command (`START_COMMAND`, `SLEEP`, `END_COMMAND`) and
//! skipping the commands of an inactive `\if` branch (`SKIP_COMMAND`).

use pgrush_script::{
    CommandKind, EvalContext, Expr, FastExpr, GsetKind, MetaError, RawMessage, SqlCommand, Value,
    VarRef,
};
use pgrush_stats::QueryMode;

use super::send::SendFailure;
use super::{Client, ErrStatus, Next, Pipeline, State, Wait};
use crate::clock::LazyNow;
use crate::cond::IfState;
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;
use crate::messages;

impl<C: ClientConn> Client<C> {
    /// `START_COMMAND`: runs the current command, or ends the transaction after the last one.
    pub(super) fn start_command<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        let script = &ctx.cfg.scripts[self.script];
        if self.command >= script.commands.len() {
            if matches!(self.pipeline, Pipeline::On { .. }) {
                messages::error(
                    ctx.progname(),
                    &format!(
                        "client {} aborted: end of script reached with pipeline open",
                        self.id
                    ),
                );
                return Next::go(State::Aborted);
            }
            return Next::go(State::EndTx);
        }
        if ctx.cfg.output.report_per_command {
            self.stmt_begin = now.get(&ctx.clock);
        }
        let next = self.execute(ctx, now);
        self.note_abort(next);
        if next == State::WaitResult {
            if ctx.cfg.output.debug {
                // pgbench polls once right after sending.
                super::results::debug_receiving(ctx, self.id);
            }
            return Next::wait(next, Wait::Socket);
        }
        Next::go(next)
    }

    /// A command that aborted the client leaves the transaction in error (a
    /// meta-command's, unless an SQL error came first).
    #[inline(always)]
    pub(super) fn note_abort(&mut self, next: State) {
        if next == State::Aborted && self.estatus == ErrStatus::None {
            self.estatus = ErrStatus::MetaCommand;
        }
    }

    /// `SLEEP`: waits for the end of a `\sleep`.
    #[inline(never)]
    pub(super) fn sleep<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        let t = now.get(&ctx.clock);
        if t < self.sleep_until {
            return Next::wait(State::Sleep, Wait::Until(self.sleep_until));
        }
        Next::go(State::EndCommand)
    }

    /// `END_COMMAND`: accounts the command's latency (`-r`) and moves on.
    pub(super) fn end_command<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        if ctx.cfg.output.report_per_command && ctx.measured(self.txn_scheduled) {
            let t = now.get(&ctx.clock);
            let latency = (t - self.stmt_begin) as f64;
            ctx.stats
                .record_command_at(self.script, self.command, latency, t);
            ctx.record_stage_command(self.txn_scheduled, self.script, self.command, latency);
        }
        self.command += 1;
        Next::go(if self.cond.active() {
            State::StartCommand
        } else {
            State::SkipCommand
        })
    }

    /// Runs the current command (SQL or meta); returns the next state.
    fn execute<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> State {
        let cfg = ctx.cfg;
        let command = &cfg.scripts[self.script].commands[self.command];
        match &command.kind {
            CommandKind::Sql(sql) => {
                if matches!(self.pipeline, Pipeline::On { .. })
                    && let Some((kind, _)) = &sql.gset
                {
                    let (what, msg) = match kind {
                        GsetKind::Gset => ("gset", "\\gset is not allowed in pipeline mode"),
                        GsetKind::Aset => ("aset", "\\aset is not allowed in pipeline mode"),
                    };
                    return self.command_failed(ctx, what, msg);
                }
                let stmt = ctx.stmt_index(self.script, self.command);
                self.run_sql(ctx, sql, stmt)
            }
            kind => {
                if cfg.output.debug {
                    messages::debug(
                        ctx.progname(),
                        &messages::concat(
                            &format!("client {} executing \\", self.id),
                            &command.argv_line(),
                        ),
                    );
                }
                self.run_meta(ctx, now, kind)
            }
        }
    }

    /// Sends SQL command `sql` (global statement index `stmt`): next WaitResult
    /// (EndCommand in a pipeline), or Aborted when it could not be sent.
    #[inline(always)]
    pub(super) fn run_sql<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        sql: &SqlCommand,
        stmt: usize,
    ) -> State {
        if let Err(failure) = self.send_sql(ctx, sql, stmt) {
            return self.send_failed(ctx, &failure);
        }
        match self.pipeline {
            Pipeline::Off => State::WaitResult,
            Pipeline::On { .. } => State::EndCommand,
        }
    }

    /// SQL that could not be sent: the client aborts, or, under `--reconnect`,
    /// a socket that failed is a lost connection (Error).
    #[cold]
    #[inline(never)]
    fn send_failed<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        failure: &SendFailure,
    ) -> State {
        if matches!(failure, SendFailure::Socket) && ctx.cfg.errors.reconnect_timeout_us.is_some() {
            self.estatus = ErrStatus::ConnectionLost;
            return State::Error;
        }
        self.command_failed(ctx, "SQL", &failure.message())
    }

    /// Runs meta-command `kind` (after `--debug`'s line): the next state. The
    /// clock is read again after it (a meta-command takes its time).
    #[inline(always)]
    pub(super) fn run_meta<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
        kind: &CommandKind,
    ) -> State {
        let next = self.meta_command(ctx, now, kind);
        now.reset();
        next
    }

    /// Evaluates an expression with the client's variables and generator; `debug()`
    /// output goes to stderr as is (no program-name prefix).
    #[inline(never)]
    fn eval(&mut self, expr: &Expr) -> Result<Value, Option<Vec<u8>>> {
        let mut debug_out = Vec::new();
        let r = {
            let mut ectx = EvalContext {
                vars: &self.vars,
                rng: &mut self.rng,
                script: self.script,
                command: self.command,
                debug_out: &mut debug_out,
            };
            expr.eval(&mut ectx)
        };
        for line in debug_out {
            eprintln!("{line}");
        }
        r.map_err(|e| e.message())
    }

    /// Evaluates a meta-command's expression; on failure prints why (some
    /// failures have no message) and the abort line, which names the command
    /// by its word as written (`SET`, `If`), as pgbench does.
    fn eval_or_fail<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        expr: &Expr,
    ) -> Result<Value, State> {
        self.eval(expr).map_err(|msg| {
            if let Some(m) = msg {
                messages::error(ctx.progname(), &m);
            }
            let word = self.command_word(ctx);
            self.command_failed(ctx, word, "evaluation of meta-command failed")
        })
    }

    /// The current meta-command's word as written in the script (`SET`, `Elif`).
    #[cold]
    fn command_word<'c, N>(&self, ctx: &ThreadCtx<'c, N>) -> &'c str {
        let cfg = ctx.cfg;
        cfg.scripts[self.script].commands[self.command].word()
    }

    /// `\set var expr` (`fast`: the expression compiled, when it could be).
    #[inline(always)]
    pub(super) fn set_variable<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        var: &VarRef,
        expr: &Expr,
        fast: Option<&FastExpr>,
    ) -> State {
        // The builtin scripts' expressions need neither the context nor
        // error handling.
        let fast_value = fast.and_then(|f| f.eval(&self.vars, &mut self.rng));
        let value = match fast_value {
            Some(v) => v,
            None => match self.eval_or_fail(ctx, expr) {
                Ok(v) => v,
                Err(state) => return state,
            },
        };
        if let Err(e) = self.vars.set_value("set", var, value) {
            let e = e.in_context(self.command_word(ctx));
            messages::error(ctx.progname(), &e.to_bytes());
            return self.command_failed(ctx, "set", "assignment of meta-command failed");
        }
        State::EndCommand
    }

    fn meta_command<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
        kind: &CommandKind,
    ) -> State {
        match kind {
            CommandKind::Sql(_) => State::Aborted,
            CommandKind::Set { var, expr, fast } => {
                self.set_variable(ctx, var, expr, fast.as_ref())
            }
            CommandKind::Sleep(sleep) => match sleep.micros(&self.vars) {
                Ok(us) => {
                    self.sleep_until = now.get(&ctx.clock) + i64::from(us);
                    State::Sleep
                }
                Err(msg) => {
                    messages::error(ctx.progname(), &msg.to_bytes());
                    self.command_failed(ctx, "sleep", "execution of meta-command failed")
                }
            },
            CommandKind::If(expr) => match self.eval_or_fail(ctx, expr) {
                Ok(value) => {
                    self.cond.push(if value.truth() {
                        IfState::True
                    } else {
                        IfState::False
                    });
                    State::EndCommand
                }
                Err(state) => state,
            },
            CommandKind::Elif(expr) => {
                if self.cond.peek() == Some(IfState::True) {
                    self.cond.poke(IfState::Ignored);
                    return State::EndCommand;
                }
                match self.eval_or_fail(ctx, expr) {
                    Ok(value) => {
                        self.cond.poke(if value.truth() {
                            IfState::True
                        } else {
                            IfState::False
                        });
                        State::EndCommand
                    }
                    Err(state) => state,
                }
            }
            CommandKind::Else => {
                if self.cond.peek() == Some(IfState::True) {
                    self.cond.poke(IfState::ElseFalse);
                }
                State::EndCommand
            }
            CommandKind::EndIf => {
                self.cond.pop();
                State::EndCommand
            }
            CommandKind::SetShell { var, args } => self.set_shell(ctx, &var.name, args),
            CommandKind::Shell { args } => self.shell(ctx, args),
            CommandKind::StartPipeline => self.start_pipeline(ctx),
            CommandKind::SyncPipeline => self.sync_pipeline(ctx),
            CommandKind::EndPipeline => self.end_pipeline(ctx),
        }
    }

    /// `\syncpipeline`: queues a Sync inside the pipeline.
    #[inline(never)]
    fn sync_pipeline<N: Network<Conn = C>>(&mut self, ctx: &ThreadCtx<'_, N>) -> State {
        let Pipeline::On { syncs } = self.pipeline else {
            return self.command_failed(ctx, "syncpipeline", "not in pipeline mode");
        };
        if let Some(conn) = self.conn.as_mut() {
            conn.queue_sync();
        }
        self.read.syncs_left += 1;
        self.pipeline = Pipeline::On { syncs: syncs + 1 };
        State::EndCommand
    }

    /// `\endpipeline`: queues the final Sync, writes the whole pipeline and waits
    /// for its results.
    #[inline(never)]
    fn end_pipeline<N: Network<Conn = C>>(&mut self, ctx: &ThreadCtx<'_, N>) -> State {
        let Pipeline::On { .. } = self.pipeline else {
            return self.command_failed(ctx, "endpipeline", "not in pipeline mode");
        };
        if let Some(conn) = self.conn.as_mut() {
            conn.queue_sync();
        }
        self.read.syncs_left += 1;
        if !self.flush_output() {
            return self.command_failed(ctx, "endpipeline", "failed to send a pipeline sync");
        }
        self.pipeline = Pipeline::Off;
        self.read.failed = false;
        self.read.after_sync = false;
        self.read.gset = None;
        State::WaitResult
    }

    /// `\setshell var command args...`: stores the command's output (an integer).
    #[inline(never)]
    fn set_shell<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        var: &[u8],
        args: &[Vec<u8>],
    ) -> State {
        let prog: &[u8] = args.first().map_or(b"", Vec::as_slice);
        let mut output = Vec::new();
        let result = pgrush_script::build_shell_command(args, &self.vars).and_then(|line| {
            match crate::shell::capture(&line) {
                Some(out) => {
                    output = out;
                    pgrush_script::parse_setshell_output(prog, &output)
                }
                None => Err(MetaError::CouldNotLaunch(prog.to_vec())),
            }
        });
        let stored = result.and_then(|v| {
            self.vars
                .put_value("setshell", var, Value::Int(v))
                .map_err(MetaError::from)
        });
        match stored {
            Ok(()) => {
                if ctx.cfg.output.debug {
                    setshell_debug(ctx.progname(), prog, args.get(1), &output);
                }
                State::EndCommand
            }
            Err(e) => {
                let quiet = ctx.timer_exceeded && matches!(e, MetaError::CouldNotRead(_));
                if !quiet {
                    messages::error(ctx.progname(), &e.to_bytes());
                }
                self.command_failed(ctx, "setshell", "execution of meta-command failed")
            }
        }
    }

    /// `\shell command args...`.
    #[inline(never)]
    fn shell<N: Network<Conn = C>>(&mut self, ctx: &ThreadCtx<'_, N>, args: &[Vec<u8>]) -> State {
        let prog: &[u8] = args.first().map_or(b"", Vec::as_slice);
        let result = pgrush_script::build_shell_command(args, &self.vars).and_then(|line| {
            if crate::shell::system(&line) {
                Ok(())
            } else {
                Err(MetaError::CouldNotLaunch(prog.to_vec()))
            }
        });
        match result {
            Ok(()) => State::EndCommand,
            Err(e) => {
                let quiet = ctx.timer_exceeded && matches!(e, MetaError::CouldNotLaunch(_));
                if !quiet {
                    messages::error(ctx.progname(), &e.to_bytes());
                }
                self.command_failed(ctx, "shell", "execution of meta-command failed")
            }
        }
    }

    /// `\startpipeline`; in prepared mode it first prepares every SQL command up to
    /// `\endpipeline` (as pgbench, so a BEGIN ISOLATION LEVEL in the pipeline works).
    #[inline(never)]
    fn start_pipeline<N: Network<Conn = C>>(&mut self, ctx: &mut ThreadCtx<'_, N>) -> State {
        if ctx.cfg.query_mode == QueryMode::Simple {
            return self.command_failed(
                ctx,
                "startpipeline",
                "cannot use pipeline mode with the simple query protocol",
            );
        }
        if ctx.cfg.query_mode == QueryMode::Prepared
            && let Err(failure) = self.prepare_pipeline(ctx)
        {
            return self.command_failed(ctx, "startpipeline", &failure.message());
        }
        if matches!(self.pipeline, Pipeline::On { .. }) {
            return self.command_failed(ctx, "startpipeline", "already in pipeline mode");
        }
        self.pipeline = Pipeline::On { syncs: 0 };
        self.read.pipeline_cmds.clear();
        State::EndCommand
    }

    /// `SKIP_COMMAND`: skips one command of an inactive branch; returns the next state.
    #[inline(never)]
    pub(super) fn skip_command<N>(&mut self, ctx: &ThreadCtx<'_, N>) -> State {
        let script = &ctx.cfg.scripts[self.script];
        let Some(command) = script.commands.get(self.command) else {
            // Cannot happen with balanced conditionals; end the transaction.
            return State::EndTx;
        };
        let is_if = matches!(command.kind, CommandKind::If(_));
        let is_elif = matches!(command.kind, CommandKind::Elif(_));
        let is_else = matches!(command.kind, CommandKind::Else);
        let is_endif = matches!(command.kind, CommandKind::EndIf);
        if !(is_if || is_elif || is_else || is_endif) {
            self.command += 1;
            return State::SkipCommand;
        }
        match self.cond.peek() {
            Some(IfState::False) => {
                if is_if {
                    self.cond.push(IfState::Ignored);
                    self.command += 1;
                    State::SkipCommand
                } else if is_elif {
                    State::StartCommand
                } else if is_else {
                    self.cond.poke(IfState::ElseTrue);
                    self.command += 1;
                    State::StartCommand
                } else {
                    self.cond.pop();
                    self.command += 1;
                    self.resume_state()
                }
            }
            Some(IfState::Ignored) | Some(IfState::ElseFalse) => {
                self.command += 1;
                if is_if {
                    self.cond.push(IfState::Ignored);
                    State::SkipCommand
                } else if is_endif {
                    self.cond.pop();
                    self.resume_state()
                } else {
                    State::SkipCommand
                }
            }
            // Inconsistent (active stack in skip state): resume normal execution.
            _ => State::StartCommand,
        }
    }

    /// After an `\endif` while skipping: run again if the enclosing branch runs.
    fn resume_state(&self) -> State {
        if self.cond.active() {
            State::StartCommand
        } else {
            State::SkipCommand
        }
    }
}

/// pgbench's `--debug` line after a `\setshell`: the command, its first argument
/// as written (`(null)` when there is none, as glibc prints a NULL string) and
/// the line read from its output, trailing newline included.
fn setshell_debug(progname: &str, prog: &[u8], first_arg: Option<&Vec<u8>>, output: &[u8]) {
    let line = pgrush_script::setshell_first_line(output).unwrap_or(b"");
    let line = &line[..line.iter().position(|&c| c == 0).unwrap_or(line.len())];
    let mut msg = prog.to_vec();
    msg.extend_from_slice(b": shell parameter name: \"");
    msg.extend_from_slice(first_arg.map_or(b"(null)", Vec::as_slice));
    msg.extend_from_slice(b"\", value: \"");
    msg.extend_from_slice(line);
    msg.push(b'"');
    messages::debug(progname, &msg);
}
