//! One benchmark client: pgbench's per-client state machine.
//!
//! [`Client::advance`] runs the machine until the client has to wait for
//! something (the server, a deadline) or is done, and returns a [`Wait`]. Each
//! state has one step method that does the state's work and returns a [`Next`]:
//! the following [`State`] and, when the client must hand control back to its
//! thread, what it waits for. [`State::may_become`] lists the legal transitions
//! (checked by a `debug_assert!`). The states keep pgbench's `CSTATE_*` names so
//! behaviour can be compared state by state.
//!
//! The steps live in submodules: `transaction` (choosing, throttling, starting
//! and ending a transaction), `command` (running and skipping commands,
//! meta-commands), `send` and `results` (SQL in the three query modes; the
//! progress of reading results in `read_state`), `recovery` (errors, ROLLBACK,
//! retries, failures).

mod command;
mod express;
mod outage;
mod parked;
mod read_state;
mod reconnect;
mod recovery;
mod results;
mod send;
mod targets;
mod transaction;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

use pgrush_script::{CardDeck, Prng, Variables};
use pgrush_stats::ServerIdentity;
use pgrush_wire::TransactionStatus;

use crate::clock::{Clock, LazyNow, Micros};
use crate::cond::CondStack;
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;
use crate::messages;

use read_state::ReadState;

/// What a client waits for after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
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
pub(crate) enum State {
    /// Pick the script of the next transaction; next: PrepareThrottle, StartTx or Finished (-T over);
    /// with stages, a client not active in the current stage waits here.
    ChooseScript,
    /// Draw the next `-R` slot (skipping late ones under `-L`); next: Throttle or Finished
    /// (StartTx at once in a closed-loop stage).
    PrepareThrottle,
    /// Wait for the scheduled start; next: StartTx or Finished.
    Throttle,
    /// Connect if needed (`-C`), save the random state, note the start; next: StartCommand,
    /// Reconnect (the connection was lost, `--reconnect`), Aborted.
    StartTx,
    /// Open a new connection after a lost one (`--reconnect`), without blocking the
    /// thread; next: StartTx, Aborted (timeout), Finished (-T over) or itself.
    Reconnect,
    /// Run the current command; next: WaitResult, Sleep, EndCommand, EndTx, Error (a
    /// send on a lost connection, `--reconnect`), Aborted.
    StartCommand,
    /// Skip commands of an inactive `\if` branch; next: StartCommand, EndTx or itself.
    SkipCommand,
    /// Wait for the results of an SQL command (or a pipeline); next: EndCommand, Error, Aborted.
    WaitResult,
    /// `\sleep` in progress; next: EndCommand.
    Sleep,
    /// Account the command's latency and move on; next: StartCommand or SkipCommand.
    EndCommand,
    /// A retryable error: roll back if needed; next: WaitRollbackResult, Retry, Failure, Finished, Aborted.
    Error,
    /// Wait for the ROLLBACK after an error; next: Retry, Failure, Finished, Aborted.
    WaitRollbackResult,
    /// Restart the transaction with the saved random state; next: StartCommand.
    Retry,
    /// Count the failed transaction; next: EndTx.
    Failure,
    /// Record the transaction; next: ChooseScript, Finished, Aborted.
    EndTx,
    /// The client stopped on an error (final).
    Aborted,
    /// The client completed its work (final).
    Finished,
}

impl State {
    /// Whether a step may go from `self` to `next` (a waiting state may stay).
    pub(crate) fn may_become(self, next: State) -> bool {
        use State::*;
        let allowed: &[State] = match self {
            ChooseScript => &[ChooseScript, PrepareThrottle, StartTx, Finished],
            PrepareThrottle => &[Throttle, StartTx, Finished],
            Throttle => &[Throttle, StartTx, Finished],
            StartTx => &[StartCommand, Reconnect, Aborted],
            Reconnect => &[Reconnect, StartTx, Aborted, Finished],
            StartCommand => &[WaitResult, Sleep, EndCommand, EndTx, Error, Aborted],
            SkipCommand => &[SkipCommand, StartCommand, EndTx],
            WaitResult => &[WaitResult, EndCommand, Error, Aborted],
            Sleep => &[Sleep, EndCommand],
            EndCommand => &[StartCommand, SkipCommand],
            Error => &[WaitRollbackResult, Retry, Failure, Finished, Aborted],
            WaitRollbackResult => &[WaitRollbackResult, Retry, Failure, Finished, Aborted],
            Retry => &[StartCommand],
            Failure => &[EndTx],
            EndTx => &[ChooseScript, Finished, Aborted],
            Aborted => &[Aborted],
            Finished => &[Finished],
        };
        allowed.contains(&next)
    }
}

/// What a step decided: the next state and, when the client must hand control
/// back to its thread, what it waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Next {
    state: State,
    wait: Option<Wait>,
}

impl Next {
    /// Go on at once with `state`.
    #[inline]
    fn go(state: State) -> Next {
        Next { state, wait: None }
    }

    /// Enter `state`, then wait for `wait`.
    #[inline]
    fn wait(state: State, wait: Wait) -> Next {
        Next {
            state,
            wait: Some(wait),
        }
    }
}

/// Why the current transaction is in error (pgbench's `EStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrStatus {
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
    /// The connection is lost (a `FATAL` error, or the socket closed): aborts, even
    /// with `--continue-on-error`, as pgbench 19; with `--reconnect` the transaction
    /// fails and the client reconnects.
    ConnectionLost,
}

impl ErrStatus {
    /// From a SQLSTATE.
    pub(crate) fn from_sqlstate(code: &[u8]) -> ErrStatus {
        match code {
            b"40001" => ErrStatus::Serialization,
            b"40P01" => ErrStatus::Deadlock,
            _ => ErrStatus::Other,
        }
    }

    /// Serialization and deadlock failures can be retried.
    pub(crate) fn retryable(self) -> bool {
        matches!(self, ErrStatus::Serialization | ErrStatus::Deadlock)
    }

    /// Whether the client goes on after this failure (retry, or count it and go on
    /// under `--continue-on-error`, or reconnect under `--reconnect`) rather than abort.
    pub(crate) fn recoverable(self, continue_on_error: bool, reconnect: bool) -> bool {
        self.retryable()
            || (continue_on_error && self == ErrStatus::Other)
            || (reconnect && self == ErrStatus::ConnectionLost)
    }
}

/// Pipeline mode of the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pipeline {
    /// Not in a pipeline.
    Off,
    /// Between `\startpipeline` and `\endpipeline`.
    On {
        /// Sync messages queued (by `\syncpipeline`).
        syncs: u32,
    },
}

/// What happened when the worker gave a client its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// Only pending output was written; the client still waits for its socket.
    Flushed,
    /// The machine ran and now waits for this.
    Ran(Wait),
}

/// One client: its connection, variables, generator and position in its script.
pub(crate) struct Client<C> {
    /// Global client number.
    id: u32,
    state: State,
    /// What it waits for.
    wait: Wait,
    /// Its connection (None between transactions under `-C`, and when done).
    conn: Option<C>,
    /// Whether the connection is registered in the thread's poll.
    registered: bool,
    /// Output still to be written to the socket.
    out_pending: bool,
    /// Whether the poll registration includes writability.
    write_interest: bool,
    vars: Variables,
    /// Generator of the expression functions.
    rng: Prng,
    /// The generator's state at the start of the transaction (restored on retry).
    saved_rng: Prng,
    /// Script of the current transaction.
    script: usize,
    /// Current command index.
    command: usize,
    /// Transactions ended (successful, skipped and failed).
    tx_count: u64,
    /// Tries of the current transaction (1 = first).
    tries: u32,
    estatus: ErrStatus,
    /// Scheduled start of the transaction.
    txn_scheduled: Micros,
    /// With stages, until when the client is active for certain (set by
    /// `ChooseScript`; the express lane hands over to it from then on);
    /// `Micros::MAX` without.
    active_until: Micros,
    /// Actual start of the transaction.
    txn_begin: Micros,
    /// Start of the current command (`-r`).
    stmt_begin: Micros,
    /// End of the current `\sleep`.
    sleep_until: Micros,
    /// `\if` nesting.
    cond: CondStack,
    /// Per prepared statement (global `P_k` index): prepared on this connection?
    prepared: Vec<bool>,
    pipeline: Pipeline,
    /// Reading state of the command in flight.
    read: ReadState,
    /// The statement text sent in simple mode (an error's `LINE` context).
    buf: Vec<u8>,
    /// Transaction status from the last ReadyForQuery.
    tx_status: TransactionStatus,
    /// The outage in progress (`--reconnect`): from a lost connection to the first
    /// success after it.
    outage: Option<Box<outage::Outage>>,
    /// The server of the connection (`--reconnect` only; boxed: the hot path's
    /// client stays small).
    server: Option<Box<ServerIdentity>>,
    /// SQLSTATE of the error the server ended the session with (`--reconnect`).
    lost_sqlstate: Option<[u8; 5]>,
    /// This turn may go on into the next transaction once (set when the turn
    /// starts with a socket wait and [`Plan::chain`](crate::plan::Plan::chain); see `end_tx`).
    chain: bool,
    /// Its deck of script cards ([`crate::ScriptChoice::Deck`]); `None`: the thread's
    /// weighted draw.
    deck: Option<CardDeck>,
    /// The target (`--target`) of `conn` (0: the run's server).
    target: usize,
    /// The connections to the other targets, by target (`--target` with scripts on
    /// several targets; empty otherwise): see `targets`.
    parked: Vec<parked::Parked<C>>,
    /// Every state entered, in order (unit tests only).
    #[cfg(test)]
    trace: Vec<State>,
}

impl<C: ClientConn> Client<C> {
    /// The variables the client ended with, taken out of it (at the end of the run).
    pub(crate) fn take_variables(&mut self) -> Variables {
        std::mem::take(&mut self.vars)
    }

    /// Client `id` in its initial state, with no connection yet.
    pub(crate) fn new(id: u32, vars: Variables, rng: Prng, n_prepared: usize) -> Self {
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
            tx_count: 0,
            tries: 1,
            estatus: ErrStatus::None,
            txn_scheduled: 0,
            active_until: Micros::MAX,
            txn_begin: 0,
            stmt_begin: 0,
            sleep_until: 0,
            cond: CondStack::default(),
            prepared: vec![false; n_prepared],
            pipeline: Pipeline::Off,
            read: ReadState::default(),
            buf: Vec::with_capacity(256),
            tx_status: TransactionStatus::Idle,
            outage: None,
            server: None,
            lost_sqlstate: None,
            chain: false,
            deck: None,
            target: 0,
            parked: Vec::new(),
            #[cfg(test)]
            trace: Vec::new(),
        }
    }

    /// Chooses its scripts from `deck` (`None`: the thread's weighted draw).
    pub(crate) fn set_deck(&mut self, deck: Option<CardDeck>) {
        self.deck = deck;
    }

    /// Starts on target `target` (`--target`: the first its scripts use).
    pub(crate) fn set_target(&mut self, target: usize) {
        self.target = target;
    }

    /// Global client number (the poll token of its connection).
    #[inline]
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// Whether the client holds an open connection.
    pub(crate) fn connected(&self) -> bool {
        self.conn.is_some()
    }

    /// Current state.
    #[inline]
    pub(crate) fn state(&self) -> State {
        self.state
    }

    /// What it waits for since its last step.
    #[inline]
    pub(crate) fn wait(&self) -> Wait {
        self.wait
    }

    /// True when the client will do nothing more.
    #[inline]
    pub(crate) fn done(&self) -> bool {
        matches!(self.state, State::Aborted | State::Finished)
    }

    /// Connects the client before the run (blocking; the initial connections): one
    /// connection to each target its scripts use. Returns false, with libpq's
    /// message printed, when a server refused.
    pub(crate) fn connect_initially<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
    ) -> Result<bool, std::io::Error> {
        let plan = ctx.plan;
        if !plan.switching {
            self.target = plan.targets_used.first().copied().unwrap_or(0);
            return self.connect_target(ctx);
        }
        for &target in &plan.targets_used {
            if self.conn.is_some() {
                self.park(ctx);
            }
            self.target = target;
            if !self.connect_target(ctx)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Opens the connection to `self.target` (blocking), registered.
    fn connect_target<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
    ) -> Result<bool, std::io::Error> {
        let target = self.target;
        let conn = if ctx.cfg.errors.reconnect_timeout_us.is_some() {
            ctx.net.connect_identified(target).map(|opened| {
                self.server = opened.server.map(Box::new);
                opened.conn
            })
        } else {
            ctx.net.connect(target)
        };
        let Some(conn) = conn else {
            return Ok(false);
        };
        ctx.net.register(self.id as usize, &conn)?;
        self.conn = Some(conn);
        self.registered = true;
        self.write_interest = false;
        Ok(true)
    }

    /// Whether the client's turn has come: `now` has passed its deadline, or its
    /// socket is `readable` (or `writable` while output is pending).
    #[inline]
    pub(crate) fn is_due(
        &self,
        now: &mut LazyNow,
        clock: &Clock,
        timer_exceeded: bool,
        readable: bool,
        writable: bool,
    ) -> bool {
        match self.wait {
            Wait::Done => false,
            Wait::Now => true,
            Wait::Until(t) => now.get(clock) >= t || timer_exceeded,
            Wait::Socket => readable || (writable && self.out_pending),
        }
    }

    /// The client's turn in the event loop: writes pending output first (aborting
    /// on a socket error), then runs the machine unless only the output could move.
    /// In line in the scheduler's loop (its one caller): a call costs more than
    /// its work.
    #[inline(always)]
    pub(crate) fn take_turn<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        readable: bool,
    ) -> Turn {
        if self.out_pending && !self.flush_output() {
            if ctx.cfg.errors.reconnect_timeout_us.is_some() {
                self.estatus = ErrStatus::ConnectionLost;
                self.state = State::Error;
            } else {
                self.state = State::Aborted;
                messages::error(
                    ctx.progname(),
                    &format!(
                        "client {} aborted in command {} (SQL) of script {}; perhaps the backend died while processing",
                        self.id, self.command, self.script
                    ),
                );
            }
        } else if self.wait == Wait::Socket && !readable {
            // Only the output moved on: nothing to read yet.
            self.sync_write_interest(ctx);
            return Turn::Flushed;
        }
        // Each client reads the clock itself (lazily), as pgbench does, so the
        // time spent on the clients before it does not shorten its latency.
        let mut now = LazyNow::new();
        // A transaction that waited for the server may be followed at once by the
        // next one; a turn that did not wait yields at its end, so a script of
        // meta-commands only cannot keep the thread.
        let plan = ctx.plan;
        self.chain = plan.chain && self.wait == Wait::Socket;
        let wait = match &plan.express {
            Some(express) if self.state == State::WaitResult => {
                self.express_turn(ctx, &mut now, express)
            }
            _ => self.advance(ctx, &mut now),
        };
        if wait == Wait::Socket {
            self.sync_write_interest(ctx);
        }
        Turn::Ran(wait)
    }

    /// Stops the client at the end of an interrupted run: cancels the statement in
    /// progress and closes the connection.
    pub(crate) fn interrupt<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) {
        if let Some(conn) = self.conn.as_ref() {
            conn.cancel();
        }
        self.state = State::Finished;
        self.advance(ctx, now);
    }

    /// Runs the state machine until the client must wait; returns what for.
    pub(crate) fn advance<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Wait {
        let wait = loop {
            let next = self.step(ctx, now);
            debug_assert!(
                self.state.may_become(next.state),
                "illegal transition {:?} -> {:?}",
                self.state,
                next.state
            );
            self.state = next.state;
            self.trace(next.state);
            if let Some(wait) = next.wait {
                break wait;
            }
        };
        self.wait = wait;
        wait
    }

    /// Notes a state entered, for the unit tests (nothing otherwise).
    #[inline(always)]
    fn trace(&mut self, _state: State) {
        #[cfg(test)]
        self.trace.push(_state);
    }

    /// Does the work of the current state. Inlined into the loop of
    /// [`Client::advance`]: as a call of its own, its prologue and epilogue (it
    /// inlines most steps) would cost more than the dispatch, about ten times a
    /// transaction.
    #[inline(always)]
    fn step<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        match self.state {
            State::ChooseScript => self.choose_script(ctx, now),
            State::PrepareThrottle => self.prepare_throttle(ctx, now),
            State::Throttle => self.throttle(ctx, now),
            State::StartTx => self.start_tx(ctx, now),
            State::Reconnect => self.reconnect(ctx, now),
            State::StartCommand => self.start_command(ctx, now),
            State::SkipCommand => Next::go(self.skip_command(ctx)),
            State::WaitResult => self.wait_result(ctx),
            State::Sleep => self.sleep(ctx, now),
            State::EndCommand => self.end_command(ctx, now),
            State::Error => self.error(ctx, now),
            State::WaitRollbackResult => self.wait_rollback_result(ctx, now),
            State::Retry => self.retry(ctx, now),
            State::Failure => self.failure(ctx, now),
            State::EndTx => self.end_tx(ctx, now),
            State::Aborted | State::Finished => {
                if self.outage.is_some() {
                    self.close_outage(ctx);
                }
                self.disconnect(ctx);
                if !self.parked.is_empty() {
                    self.close_parked(ctx);
                }
                Next::wait(self.state, Wait::Done)
            }
        }
    }

    /// Writes pending output; false on a socket error (or no connection).
    fn flush_output(&mut self) -> bool {
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

    /// Registers a new connection in the thread's poll; false (message printed) on failure.
    fn register<N: Network<Conn = C>>(&mut self, ctx: &mut ThreadCtx<'_, N>) -> bool {
        let Some(conn) = self.conn.as_ref() else {
            return false;
        };
        match ctx.net.register(self.id as usize, conn) {
            Ok(()) => {
                self.registered = true;
                self.write_interest = false;
                true
            }
            Err(e) => {
                messages::error(
                    ctx.progname(),
                    &format!("could not register connection of client {}: {e}", self.id),
                );
                false
            }
        }
    }

    /// Asks for writability events only while output is pending (edge-triggered
    /// write-space events would otherwise wake the loop after every send).
    fn sync_write_interest<N: Network<Conn = C>>(&mut self, ctx: &mut ThreadCtx<'_, N>) {
        if !self.registered || self.out_pending == self.write_interest {
            return;
        }
        let Some(conn) = self.conn.as_ref() else {
            return;
        };
        // On failure the registration stays as it was and the next turn tries again.
        if ctx
            .net
            .watch_writable(self.id as usize, conn, self.out_pending)
            .is_ok()
        {
            self.write_interest = self.out_pending;
        }
    }

    /// Closes the connection (deregistering it first).
    #[inline(never)]
    pub(crate) fn disconnect<N: Network<Conn = C>>(&mut self, ctx: &mut ThreadCtx<'_, N>) {
        if let Some(conn) = self.conn.take() {
            if self.registered {
                ctx.net.deregister(&conn);
                self.registered = false;
            }
            conn.close();
        }
        self.out_pending = false;
        self.pipeline = Pipeline::Off;
    }

    /// `client N aborted in command C (what) of script S; message`; returns Aborted.
    #[cold]
    #[inline(never)]
    fn command_failed<N: Network<Conn = C>>(
        &self,
        ctx: &ThreadCtx<'_, N>,
        what: &str,
        message: &str,
    ) -> State {
        messages::error(
            ctx.progname(),
            &format!(
                "client {} aborted in command {} ({}) of script {}; {}",
                self.id, self.command, what, self.script, message
            ),
        );
        State::Aborted
    }
}
