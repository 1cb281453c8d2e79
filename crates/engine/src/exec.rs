//! Executing one script command (pgbench's `START_COMMAND` and `SKIP_COMMAND`).

use pgrush_script::{CommandKind, EvalContext, RawMessage};
use pgrush_stats::QueryMode;

use crate::client::{Client, Pipeline, State};
use crate::clock::LazyNow;
use crate::cond::IfState;
use crate::messages;
use crate::worker::ThreadCtx;

/// `client N aborted in command C (what) of script S; message`, returning Aborted.
fn command_failed(cl: &Client, ctx: &ThreadCtx<'_>, what: &str, message: &str) -> State {
    messages::error(
        ctx.progname(),
        &format!(
            "client {} aborted in command {} ({}) of script {}; {}",
            cl.id, cl.command, what, cl.script, message
        ),
    );
    State::Aborted
}

/// Starts the client's current command; returns the next state.
pub fn start_command(cl: &mut Client, ctx: &mut ThreadCtx<'_>, now: &mut LazyNow) -> State {
    let cfg = ctx.cfg;
    let command = &cfg.scripts[cl.script].commands[cl.command];
    match &command.kind {
        CommandKind::Sql(sql) => {
            if matches!(cl.pipeline, Pipeline::On { .. })
                && let Some((kind, _)) = &sql.gset
            {
                let (what, msg) = match kind {
                    pgrush_script::GsetKind::Gset => {
                        ("gset", "\\gset is not allowed in pipeline mode")
                    }
                    pgrush_script::GsetKind::Aset => {
                        ("aset", "\\aset is not allowed in pipeline mode")
                    }
                };
                return command_failed(cl, ctx, what, msg);
            }
            let stmt = ctx.stmt_index(cl.script, cl.command);
            if !crate::sql::send_sql(cl, ctx, sql, stmt) {
                return command_failed(cl, ctx, "SQL", "SQL command send failed");
            }
            match cl.pipeline {
                Pipeline::Off => State::WaitResult,
                Pipeline::On { .. } => State::EndCommand,
            }
        }
        kind => {
            if cfg.debug {
                messages::debug(
                    ctx.progname(),
                    &messages::concat(
                        &format!("client {} executing \\", cl.id),
                        &command.argv_line(),
                    ),
                );
            }
            let next = meta_command(cl, ctx, now, kind);
            now.reset();
            next
        }
    }
}

fn eval(
    cl: &mut Client,
    expr: &pgrush_script::Expr,
) -> Result<pgrush_script::Value, Option<Vec<u8>>> {
    let mut debug_out = Vec::new();
    let r = {
        let mut ectx = EvalContext {
            vars: &cl.vars,
            rng: &mut cl.rng,
            script: cl.script,
            command: cl.command,
            debug_out: &mut debug_out,
        };
        expr.eval(&mut ectx)
    };
    // debug() output goes to stderr as is (no program-name prefix).
    for line in debug_out {
        eprintln!("{line}");
    }
    r.map_err(|e| e.message())
}

/// Prints an evaluation error's message (exact bytes; some failures have none).
fn eval_failed(ctx: &ThreadCtx<'_>, msg: Option<Vec<u8>>) {
    if let Some(m) = msg {
        messages::error(ctx.progname(), &m);
    }
}

fn meta_command(
    cl: &mut Client,
    ctx: &mut ThreadCtx<'_>,
    now: &mut LazyNow,
    kind: &CommandKind,
) -> State {
    match kind {
        CommandKind::Sql(_) => State::Aborted,
        CommandKind::Set { var, expr } => {
            let value = match eval(cl, expr) {
                Ok(v) => v,
                Err(msg) => {
                    eval_failed(ctx, msg);
                    return command_failed(cl, ctx, "set", "evaluation of meta-command failed");
                }
            };
            if let Err(e) = cl.vars.set_value("set", var, value) {
                messages::error(ctx.progname(), &e.to_bytes());
                return command_failed(cl, ctx, "set", "assignment of meta-command failed");
            }
            State::EndCommand
        }
        CommandKind::Sleep(sleep) => {
            let usec = match sleep.micros(&cl.vars) {
                Ok(us) => i64::from(us),
                Err(msg) => {
                    messages::error(ctx.progname(), &msg.to_bytes());
                    return command_failed(cl, ctx, "sleep", "execution of meta-command failed");
                }
            };
            let t = now.get(&ctx.clock);
            cl.sleep_until = t + usec;
            State::Sleep
        }
        CommandKind::If(expr) => {
            let value = match eval(cl, expr) {
                Ok(v) => v,
                Err(msg) => {
                    eval_failed(ctx, msg);
                    return command_failed(cl, ctx, "if", "evaluation of meta-command failed");
                }
            };
            cl.cond.push(if value.truth() {
                IfState::True
            } else {
                IfState::False
            });
            State::EndCommand
        }
        CommandKind::Elif(expr) => {
            if cl.cond.peek() == Some(IfState::True) {
                cl.cond.poke(IfState::Ignored);
                return State::EndCommand;
            }
            let value = match eval(cl, expr) {
                Ok(v) => v,
                Err(msg) => {
                    eval_failed(ctx, msg);
                    return command_failed(cl, ctx, "elif", "evaluation of meta-command failed");
                }
            };
            cl.cond.poke(if value.truth() {
                IfState::True
            } else {
                IfState::False
            });
            State::EndCommand
        }
        CommandKind::Else => {
            if cl.cond.peek() == Some(IfState::True) {
                cl.cond.poke(IfState::ElseFalse);
            }
            State::EndCommand
        }
        CommandKind::EndIf => {
            cl.cond.pop();
            State::EndCommand
        }
        CommandKind::SetShell { var, args } => {
            let prog: &[u8] = args.first().map_or(b"", Vec::as_slice);
            let mut output = Vec::new();
            let result = pgrush_script::build_shell_command(args, &cl.vars).and_then(|line| {
                match crate::shell::capture(&line) {
                    Some(out) => {
                        output = out;
                        pgrush_script::parse_setshell_output(prog, &output)
                    }
                    None => Err(pgrush_script::MetaError::CouldNotLaunch(prog.to_vec())),
                }
            });
            let stored = result.and_then(|v| {
                cl.vars
                    .put_value("setshell", &var.name, pgrush_script::Value::Int(v))
                    .map_err(pgrush_script::MetaError::from)
            });
            match stored {
                Ok(()) => {
                    if ctx.cfg.debug {
                        setshell_debug(ctx, prog, args.get(1), &output);
                    }
                    State::EndCommand
                }
                Err(e) => {
                    let quiet = ctx.timer_exceeded
                        && matches!(e, pgrush_script::MetaError::CouldNotRead(_));
                    if !quiet {
                        messages::error(ctx.progname(), &e.to_bytes());
                    }
                    command_failed(cl, ctx, "setshell", "execution of meta-command failed")
                }
            }
        }
        CommandKind::Shell { args } => {
            let prog: &[u8] = args.first().map_or(b"", Vec::as_slice);
            let result = pgrush_script::build_shell_command(args, &cl.vars).and_then(|line| {
                if crate::shell::system(&line) {
                    Ok(())
                } else {
                    Err(pgrush_script::MetaError::CouldNotLaunch(prog.to_vec()))
                }
            });
            match result {
                Ok(()) => State::EndCommand,
                Err(e) => {
                    let quiet = ctx.timer_exceeded
                        && matches!(e, pgrush_script::MetaError::CouldNotLaunch(_));
                    if !quiet {
                        messages::error(ctx.progname(), &e.to_bytes());
                    }
                    command_failed(cl, ctx, "shell", "execution of meta-command failed")
                }
            }
        }
        CommandKind::StartPipeline => {
            if ctx.cfg.query_mode == QueryMode::Simple {
                return command_failed(
                    cl,
                    ctx,
                    "startpipeline",
                    "cannot use pipeline mode with the simple query protocol",
                );
            }
            if ctx.cfg.query_mode == QueryMode::Prepared {
                prepare_pipeline(cl, ctx);
            }
            if matches!(cl.pipeline, Pipeline::On { .. }) {
                return command_failed(cl, ctx, "startpipeline", "already in pipeline mode");
            }
            cl.pipeline = Pipeline::On { syncs: 0 };
            cl.read.pipeline_cmds.clear();
            State::EndCommand
        }
        CommandKind::SyncPipeline => {
            let Pipeline::On { syncs } = cl.pipeline else {
                return command_failed(cl, ctx, "syncpipeline", "not in pipeline mode");
            };
            if let Some(conn) = cl.conn.as_mut() {
                conn.queue_sync();
            }
            cl.read.syncs_left += 1;
            cl.pipeline = Pipeline::On { syncs: syncs + 1 };
            State::EndCommand
        }
        CommandKind::EndPipeline => {
            let Pipeline::On { .. } = cl.pipeline else {
                return command_failed(cl, ctx, "endpipeline", "not in pipeline mode");
            };
            if let Some(conn) = cl.conn.as_mut() {
                conn.queue_sync();
            }
            cl.read.syncs_left += 1;
            if !cl.flush_output() {
                return command_failed(cl, ctx, "endpipeline", "failed to send a pipeline sync");
            }
            cl.pipeline = Pipeline::Off;
            cl.read.failed = false;
            cl.read.gset = None;
            State::WaitResult
        }
    }
}

/// In prepared mode, `\startpipeline` prepares every SQL command up to `\endpipeline` first.
fn prepare_pipeline(cl: &mut Client, ctx: &mut ThreadCtx<'_>) {
    let script = &ctx.cfg.scripts[cl.script];
    if !matches!(cl.pipeline, Pipeline::Off) {
        return;
    }
    // Results of these preparations are read with the pipeline's results.
    cl.read.syncs_left = 0;
    cl.read.prepare_syncs = 0;
    cl.read.prepare_texts.clear();
    for j in cl.command + 1..script.commands.len() {
        match &script.commands[j].kind {
            CommandKind::EndPipeline => break,
            CommandKind::Sql(sql) => {
                let stmt = ctx.stmt_index(cl.script, j);
                if cl.prepared[stmt] {
                    continue;
                }
                if let Some(conn) = cl.conn.as_mut() {
                    let name = ctx.stmt_names[stmt].clone();
                    crate::sql::prepare(cl.id, conn, &mut cl.read, ctx, &name, sql, stmt);
                }
                cl.prepared[stmt] = true;
            }
            _ => {}
        }
    }
}

/// Skips the current command of an inactive branch (pgbench's `SKIP_COMMAND`).
pub fn skip_command(cl: &mut Client, ctx: &mut ThreadCtx<'_>) {
    let script = &ctx.cfg.scripts[cl.script];
    let Some(command) = script.commands.get(cl.command) else {
        // Cannot happen with balanced conditionals; end the transaction.
        cl.state = State::EndTx;
        return;
    };
    let is_if = matches!(command.kind, CommandKind::If(_));
    let is_elif = matches!(command.kind, CommandKind::Elif(_));
    let is_else = matches!(command.kind, CommandKind::Else);
    let is_endif = matches!(command.kind, CommandKind::EndIf);
    if !(is_if || is_elif || is_else || is_endif) {
        cl.command += 1;
        return;
    }
    match cl.cond.peek() {
        Some(IfState::False) => {
            if is_if {
                cl.cond.push(IfState::Ignored);
                cl.command += 1;
            } else if is_elif {
                cl.state = State::StartCommand;
            } else if is_else {
                cl.cond.poke(IfState::ElseTrue);
                cl.state = State::StartCommand;
                cl.command += 1;
            } else {
                cl.cond.pop();
                if cl.cond.active() {
                    cl.state = State::StartCommand;
                }
                cl.command += 1;
            }
        }
        Some(IfState::Ignored) | Some(IfState::ElseFalse) => {
            if is_if {
                cl.cond.push(IfState::Ignored);
            } else if is_endif {
                cl.cond.pop();
                if cl.cond.active() {
                    cl.state = State::StartCommand;
                }
            }
            cl.command += 1;
        }
        _ => {
            // Inconsistent (active stack in skip state): resume normal execution.
            cl.state = State::StartCommand;
        }
    }
}

/// pgbench's `--debug` line after a `\setshell`: the command, its first argument
/// as written (`(null)` when there is none, as glibc prints a NULL string) and
/// the line read from its output, trailing newline included.
fn setshell_debug(ctx: &ThreadCtx<'_>, prog: &[u8], first_arg: Option<&Vec<u8>>, output: &[u8]) {
    let line = pgrush_script::setshell_first_line(output).unwrap_or(b"");
    let line = &line[..line.iter().position(|&c| c == 0).unwrap_or(line.len())];
    let mut msg = prog.to_vec();
    msg.extend_from_slice(b": shell parameter name: \"");
    msg.extend_from_slice(first_arg.map_or(b"(null)", Vec::as_slice));
    msg.extend_from_slice(b"\", value: \"");
    msg.extend_from_slice(line);
    msg.push(b'"');
    messages::debug(ctx.progname(), &msg);
}
