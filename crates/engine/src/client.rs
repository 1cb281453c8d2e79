//! One benchmark client: pgbench's per-client state machine.
//!
//! [`Client::advance`] runs the machine until the client has to wait for
//! something (the server, a deadline) or is done, and returns a [`Wait`].
//! The states keep pgbench's `CSTATE_*` names so behaviour can be compared
//! state by state.

use pgrush_script::Prng;
use pgrush_stats::{TxOutcome, TxRecord};
use pgrush_wire::{Connection, TransactionStatus};

use crate::clock::{LazyNow, Micros};
use crate::cond::CondStack;
use crate::config::RunLength;
use crate::messages;
use crate::worker::ThreadCtx;

/// What a client waits for after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Can go on at once (it yielded to let the other clients run).
    Now,
    /// Data from its connection (or the socket becoming writable when output is pending).
    Socket,
    /// A deadline on the thread's clock (throttle schedule or `\sleep`).
    Until(Micros),
    /// Finished or aborted; nothing more to do.
    Done,
}

/// pgbench's client states (`CSTATE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Pick the script of the next transaction; next: PrepareThrottle, StartTx or Finished (-T over).
    ChooseScript,
    /// Draw the next `-R` slot (skipping late ones under `-L`); next: Throttle or Finished.
    PrepareThrottle,
    /// Wait for the scheduled start; next: StartTx or Finished.
    Throttle,
    /// Connect if needed (`-C`), save the random state, note the start; next: StartCommand.
    StartTx,
    /// Run the current command; next: WaitResult, Sleep, EndCommand, EndTx, Aborted.
    StartCommand,
    /// Skip commands of an inactive `\if` branch; next: StartCommand or itself.
    SkipCommand,
    /// Wait for the results of an SQL command (or a pipeline); next: EndCommand, Error, Aborted.
    WaitResult,
    /// `\sleep` in progress; next: EndCommand.
    Sleep,
    /// Account the command's latency and move on; next: StartCommand or SkipCommand.
    EndCommand,
    /// A retryable error: roll back if needed; next: WaitRollbackResult, Retry, Failure, Finished.
    Error,
    /// Wait for the ROLLBACK after an error; next: Retry, Failure, Finished, Aborted.
    WaitRollbackResult,
    /// Restart the transaction with the saved random state; next: StartCommand.
    Retry,
    /// Count the failed transaction; next: EndTx.
    Failure,
    /// Record the transaction; next: ChooseScript, Finished, Aborted.
    EndTx,
    /// The client stopped on an error.
    Aborted,
    /// The client completed its work.
    Finished,
}

/// Why the current transaction is in error (pgbench's `EStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrStatus {
    /// No error.
    None,
    /// A meta command failed (always aborts).
    MetaCommand,
    /// SQLSTATE 40001.
    Serialization,
    /// SQLSTATE 40P01.
    Deadlock,
    /// Any other SQL error.
    Other,
}

impl ErrStatus {
    /// From a SQLSTATE.
    pub fn from_sqlstate(code: &[u8]) -> ErrStatus {
        match code {
            b"40001" => ErrStatus::Serialization,
            b"40P01" => ErrStatus::Deadlock,
            _ => ErrStatus::Other,
        }
    }

    /// Serialization and deadlock failures can be retried.
    pub fn retryable(self) -> bool {
        matches!(self, ErrStatus::Serialization | ErrStatus::Deadlock)
    }
}

/// Pipeline mode of the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipeline {
    /// Not in a pipeline.
    Off,
    /// Between `\startpipeline` and `\endpipeline`; `syncs` = Syncs queued so far.
    On {
        /// Sync messages queued (by `\syncpipeline`).
        syncs: u32,
    },
}

/// One client.
pub struct Client {
    /// Global client number.
    pub id: u32,
    /// Current state.
    pub state: State,
    /// What it waits for.
    pub wait: Wait,
    /// Its connection (None between transactions under `-C`, and when done).
    pub conn: Option<Connection>,
    /// Whether the connection is registered in the thread's poll.
    pub registered: bool,
    /// Output still to be written to the socket.
    pub out_pending: bool,
    /// Whether the poll registration includes writability.
    pub write_interest: bool,
    /// Its variables.
    pub vars: pgrush_script::Variables,
    /// Its random generator (expression functions).
    pub rng: Prng,
    /// The generator's state at the start of the transaction (restored on retry).
    pub saved_rng: Prng,
    /// Script of the current transaction.
    pub script: usize,
    /// Current command index.
    pub command: usize,
    /// Transactions ended (successful, skipped and failed).
    pub cnt: u64,
    /// Tries of the current transaction (1 = first).
    pub tries: u32,
    /// Error status of the current transaction.
    pub estatus: ErrStatus,
    /// Scheduled start of the transaction.
    pub txn_scheduled: Micros,
    /// Actual start of the transaction.
    pub txn_begin: Micros,
    /// Start of the current command (`-r`).
    pub stmt_begin: Micros,
    /// End of the current `\sleep`.
    pub sleep_until: Micros,
    /// `\if` nesting state.
    pub cond: CondStack,
    /// Per prepared statement (global `P_k` index): prepared on this connection?
    pub prepared: Vec<bool>,
    /// Pipeline mode.
    pub pipeline: Pipeline,
    /// Reading state of the command in flight.
    pub read: crate::sql::ReadState,
    /// Scratch buffer for statement text (simple mode) or parameter values (bytes).
    pub buf: Vec<u8>,
    /// Byte ranges of the parameter values in `buf` (None = NULL).
    pub param_bounds: Vec<Option<(usize, usize)>>,
    /// Transaction status from the last ReadyForQuery.
    pub tx_status: TransactionStatus,
}

impl Client {
    /// A client in its initial state.
    pub fn new(id: u32, vars: pgrush_script::Variables, rng: Prng, n_prepared: usize) -> Client {
        Client {
            id,
            state: State::ChooseScript,
            wait: Wait::Now,
            conn: None,
            registered: false,
            out_pending: false,
            write_interest: false,
            vars,
            saved_rng: rng,
            rng,
            script: 0,
            command: 0,
            cnt: 0,
            tries: 1,
            estatus: ErrStatus::None,
            txn_scheduled: 0,
            txn_begin: 0,
            stmt_begin: 0,
            sleep_until: 0,
            cond: CondStack::default(),
            prepared: vec![false; n_prepared],
            pipeline: Pipeline::Off,
            read: crate::sql::ReadState::default(),
            buf: Vec::with_capacity(256),
            param_bounds: Vec::with_capacity(16),
            tx_status: TransactionStatus::Idle,
        }
    }

    /// True when the client will do nothing more.
    pub fn done(&self) -> bool {
        matches!(self.state, State::Aborted | State::Finished)
    }

    /// Runs the state machine until the client must wait; returns what for.
    pub fn advance(&mut self, ctx: &mut ThreadCtx<'_>, now: &mut LazyNow) -> Wait {
        let wait = self.run(ctx, now);
        self.wait = wait;
        wait
    }

    fn run(&mut self, ctx: &mut ThreadCtx<'_>, now: &mut LazyNow) -> Wait {
        loop {
            match self.state {
                State::ChooseScript => {
                    self.script = ctx.choose_script();
                    self.estatus = ErrStatus::None;
                    self.tries = 1;
                    if ctx.cfg.debug {
                        let mut msg = messages::concat(
                            &format!("client {} executing script \"", self.id),
                            &ctx.cfg.scripts[self.script].desc,
                        );
                        msg.push(b'"');
                        messages::debug(ctx.progname(), &msg);
                    }
                    self.state = if ctx.timer_exceeded {
                        State::Finished
                    } else if ctx.throttle_delay > 0.0 {
                        State::PrepareThrottle
                    } else {
                        State::StartTx
                    };
                }
                State::PrepareThrottle => {
                    ctx.throttle_trigger += ctx.poisson_delay();
                    self.txn_scheduled = ctx.throttle_trigger;
                    if ctx.cfg.latency_limit_us > 0 {
                        let t = now.get(&ctx.clock);
                        while ctx.throttle_trigger < t - ctx.cfg.latency_limit_us
                            && self.under_tx_limit(ctx)
                        {
                            self.record_tx(ctx, now, true);
                            ctx.throttle_trigger += ctx.poisson_delay();
                            self.txn_scheduled = ctx.throttle_trigger;
                        }
                        if !self.under_tx_limit(ctx) {
                            self.state = State::Finished;
                            continue;
                        }
                    }
                    self.state = match ctx.end_time {
                        Some(end) if self.txn_scheduled > end => State::Finished,
                        _ => State::Throttle,
                    };
                }
                State::Throttle => {
                    let t = now.get(&ctx.clock);
                    if t < self.txn_scheduled && !ctx.timer_exceeded {
                        return Wait::Until(self.txn_scheduled);
                    }
                    self.state = if ctx.timer_exceeded {
                        State::Finished
                    } else {
                        State::StartTx
                    };
                }
                State::StartTx => {
                    let mut t = now.get(&ctx.clock);
                    if self.conn.is_none() {
                        let start = t;
                        match ctx.connect() {
                            Some(conn) => {
                                self.conn = Some(conn);
                                self.prepared.iter_mut().for_each(|p| *p = false);
                                self.pipeline = Pipeline::Off;
                                self.tx_status = TransactionStatus::Idle;
                                if !ctx.register(self) {
                                    self.state = State::Aborted;
                                    continue;
                                }
                            }
                            None => {
                                messages::error(
                                    ctx.progname(),
                                    &format!(
                                        "client {} aborted while establishing connection",
                                        self.id
                                    ),
                                );
                                self.state = State::Aborted;
                                continue;
                            }
                        }
                        t = now.refresh(&ctx.clock);
                        ctx.stats.add_conn_time_us((t - start).max(0) as u64);
                    }
                    self.saved_rng = self.rng;
                    self.txn_begin = t;
                    if ctx.throttle_delay <= 0.0 {
                        self.txn_scheduled = t;
                    }
                    self.command = 0;
                    self.state = State::StartCommand;
                }
                State::StartCommand => {
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
                            self.state = State::Aborted;
                        } else {
                            self.state = State::EndTx;
                        }
                        continue;
                    }
                    if ctx.cfg.report_per_command {
                        self.stmt_begin = now.get(&ctx.clock);
                    }
                    self.state = crate::exec::start_command(self, ctx, now);
                    if self.state == State::Aborted && self.estatus == ErrStatus::None {
                        self.estatus = ErrStatus::MetaCommand;
                    }
                    if self.state == State::WaitResult {
                        if ctx.cfg.debug {
                            // pgbench polls once right after sending.
                            messages::debug(
                                ctx.progname(),
                                &format!("client {} receiving", self.id),
                            );
                        }
                        return self.wait_socket();
                    }
                }
                State::SkipCommand => {
                    crate::exec::skip_command(self, ctx);
                }
                State::WaitResult => {
                    if ctx.cfg.debug {
                        messages::debug(ctx.progname(), &format!("client {} receiving", self.id));
                    }
                    match crate::sql::poll_results(self, ctx) {
                        crate::sql::Poll::Pending => return self.wait_socket(),
                        crate::sql::Poll::Done => {
                            self.state = State::EndCommand;
                        }
                        crate::sql::Poll::Failed => {
                            let continue_on_error =
                                ctx.cfg.continue_on_error && self.estatus == ErrStatus::Other;
                            self.state = if self.estatus.retryable() || continue_on_error {
                                State::Error
                            } else {
                                State::Aborted
                            };
                        }
                    }
                }
                State::Sleep => {
                    let t = now.get(&ctx.clock);
                    if t < self.sleep_until {
                        return Wait::Until(self.sleep_until);
                    }
                    self.state = State::EndCommand;
                }
                State::EndCommand => {
                    if ctx.cfg.report_per_command {
                        let t = now.get(&ctx.clock);
                        ctx.stats.record_command(
                            self.script,
                            self.command,
                            (t - self.stmt_begin) as f64,
                        );
                    }
                    self.command += 1;
                    self.state = if self.cond.active() {
                        State::StartCommand
                    } else {
                        State::SkipCommand
                    };
                }
                State::Error => {
                    self.cond.reset();
                    self.pipeline = Pipeline::Off;
                    match self.tx_status {
                        TransactionStatus::InTransaction | TransactionStatus::Failed => {
                            if ctx.cfg.debug {
                                messages::debug(
                                    ctx.progname(),
                                    &format!("client {} sending ROLLBACK", self.id),
                                );
                            }
                            crate::sql::send_rollback(self);
                            if !self.flush_output() {
                                messages::error(
                                    ctx.progname(),
                                    &format!(
                                        "client {} aborted: failed to send sql command for rolling back the failed transaction",
                                        self.id
                                    ),
                                );
                                self.state = State::Aborted;
                                continue;
                            }
                            self.state = State::WaitRollbackResult;
                            return self.wait_socket();
                        }
                        TransactionStatus::Idle => {
                            self.state = self.after_error(ctx, now);
                        }
                    }
                }
                State::WaitRollbackResult => {
                    if ctx.cfg.debug {
                        messages::debug(ctx.progname(), &format!("client {} receiving", self.id));
                    }
                    match crate::sql::poll_rollback(self, ctx) {
                        crate::sql::Poll::Pending => return self.wait_socket(),
                        crate::sql::Poll::Done => {
                            self.state = self.after_error(ctx, now);
                        }
                        crate::sql::Poll::Failed => self.state = State::Aborted,
                    }
                }
                State::Retry => {
                    if ctx.cfg.verbose_errors {
                        self.verbose_retry_message(ctx, now, true);
                    }
                    self.tries += 1;
                    ctx.stats.record_command_retry(self.script, self.command);
                    self.rng = self.saved_rng;
                    self.command = 0;
                    self.estatus = ErrStatus::None;
                    self.state = State::StartCommand;
                }
                State::Failure => {
                    ctx.stats.record_command_failure(self.script, self.command);
                    if ctx.cfg.verbose_errors {
                        self.verbose_retry_message(ctx, now, false);
                    }
                    self.state = State::EndTx;
                }
                State::EndTx => {
                    self.record_tx(ctx, now, false);
                    match self.tx_status {
                        TransactionStatus::Idle => {}
                        _ => {
                            messages::error(
                                ctx.progname(),
                                &format!(
                                    "client {} aborted: end of script reached without completing the last transaction",
                                    self.id
                                ),
                            );
                            self.state = State::Aborted;
                            continue;
                        }
                    }
                    if ctx.cfg.connect_per_tx {
                        let start = now.get(&ctx.clock);
                        self.disconnect(ctx);
                        let t = now.refresh(&ctx.clock);
                        ctx.stats.add_conn_time_us((t - start).max(0) as u64);
                    }
                    let limit_reached = match ctx.cfg.length {
                        RunLength::Transactions(n) => self.cnt >= u64::from(n),
                        RunLength::Duration(_) => false,
                    };
                    if limit_reached || ctx.timer_exceeded {
                        self.state = State::Finished;
                        continue;
                    }
                    self.state = State::ChooseScript;
                    return Wait::Now;
                }
                State::Aborted | State::Finished => {
                    self.disconnect(ctx);
                    return Wait::Done;
                }
            }
        }
    }

    /// Where to go once a retryable error has been cleaned up.
    fn after_error(&mut self, ctx: &mut ThreadCtx<'_>, now: &mut LazyNow) -> State {
        if ctx.timer_exceeded {
            State::Finished
        } else if self.can_retry(ctx, now) {
            State::Retry
        } else {
            State::Failure
        }
    }

    /// pgbench's `doRetry`.
    fn can_retry(&self, ctx: &ThreadCtx<'_>, now: &mut LazyNow) -> bool {
        if !self.estatus.retryable() {
            return false;
        }
        let max = ctx.cfg.max_tries;
        if max != 0 && self.tries >= max {
            return false;
        }
        if ctx.cfg.latency_limit_us > 0 {
            let t = now.get(&ctx.clock);
            if t - self.txn_scheduled > ctx.cfg.latency_limit_us {
                return false;
            }
        }
        !ctx.timer_exceeded
    }

    fn verbose_retry_message(&self, ctx: &ThreadCtx<'_>, now: &mut LazyNow, retry: bool) {
        let mut msg = if retry {
            format!(
                "client {} repeats the transaction after the error (try {}",
                self.id, self.tries
            )
        } else {
            format!(
                "client {} ends the failed transaction (try {}",
                self.id, self.tries
            )
        };
        if ctx.cfg.max_tries != 0 {
            msg.push_str(&format!("/{}", ctx.cfg.max_tries));
        }
        if ctx.cfg.latency_limit_us > 0 {
            let t = now.get(&ctx.clock);
            let pct = 100.0 * (t - self.txn_scheduled) as f64 / ctx.cfg.latency_limit_us as f64;
            msg.push_str(", ");
            pgrush_stats::cfmt::push_fixed(&mut msg, pct, 3);
            msg.push_str("% of the maximum time of tries was used");
        }
        msg.push(')');
        messages::info(ctx.progname(), &msg);
    }

    fn under_tx_limit(&self, ctx: &ThreadCtx<'_>) -> bool {
        match ctx.cfg.length {
            RunLength::Transactions(n) => self.cnt < u64::from(n),
            RunLength::Duration(_) => true,
        }
    }

    /// pgbench's `processXactStats`: counts the transaction and logs it.
    fn record_tx(&mut self, ctx: &mut ThreadCtx<'_>, now: &mut LazyNow, skipped: bool) {
        let outcome = if skipped {
            TxOutcome::Skipped
        } else {
            match self.estatus {
                ErrStatus::None | ErrStatus::MetaCommand => TxOutcome::Success,
                ErrStatus::Serialization => TxOutcome::SerializationFailure,
                ErrStatus::Deadlock => TxOutcome::DeadlockFailure,
                ErrStatus::Other => TxOutcome::OtherFailure,
            }
        };
        let mut latency = 0.0;
        let mut lag = 0.0;
        if ctx.detailed && outcome == TxOutcome::Success {
            let t = now.get(&ctx.clock);
            latency = (t - self.txn_scheduled) as f64;
            lag = (self.txn_begin - self.txn_scheduled) as f64;
        }
        let rec = TxRecord {
            script: self.script,
            outcome,
            latency_us: latency,
            lag_us: lag,
            tries: self.tries,
        };
        let t = now.get(&ctx.clock);
        ctx.stats.record_tx_at(&rec, t);
        self.cnt += 1;
        if ctx.log.is_some() {
            ctx.log_tx(self.id, self.cnt, &rec, t);
        }
    }

    fn wait_socket(&mut self) -> Wait {
        Wait::Socket
    }

    /// Writes pending output; false on a socket error.
    pub fn flush_output(&mut self) -> bool {
        match self.conn.as_mut() {
            Some(c) => match c.flush() {
                Ok(all) => {
                    self.out_pending = !all;
                    true
                }
                Err(_) => false,
            },
            None => false,
        }
    }

    /// Closes the connection (deregistering it first).
    pub fn disconnect(&mut self, ctx: &mut ThreadCtx<'_>) {
        if let Some(conn) = self.conn.take() {
            if self.registered {
                ctx.deregister(&conn);
                self.registered = false;
            }
            let _ = conn.close();
        }
        self.out_pending = false;
        self.pipeline = Pipeline::Off;
    }
}
