//! The express lane: the turn of a client whose run has an [`ExpressScript`]
//! and that waits for an SQL result.
//!
//! In such a run every transaction walks the same states: `WaitResult`, then
//! per command `EndCommand` and `StartCommand` (a `\set`, or an SQL command
//! sent), and after the last one `EndTx`, `ChooseScript` and `StartTx`. The
//! express lane walks them in that order without dispatching on the state, and
//! takes each command from the script's steps instead of through the
//! configuration. Every state's work is the general machine's own code
//! (`poll_results_of`, `set_variable`, `run_sql`, `end_tx`, and of `ChooseScript`
//! and `StartTx` what is left when transactions chain: `reset_error_state` and
//! `begin_tx`), so the effects are the same, message for message. Whatever leaves
//! that path (an error, a failed `\set`, the end of the run) hands the rest of the
//! turn to [`Client::advance`] in the state the step chose.

use super::results::Poll;
use super::{Client, Next, State, Wait};
use crate::clock::LazyNow;
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;
use crate::plan::{ExpressScript, ExpressStep};

impl<C: ClientConn> Client<C> {
    /// The turn of a client in `WaitResult` with the run's `express` script:
    /// reads the results; when they are in, runs the commands that follow up to
    /// the next SQL command sent (into the next transaction, when the turn may
    /// chain). Returns what the client waits for.
    #[inline(always)]
    pub(super) fn express_turn<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
        express: &ExpressScript<'_>,
    ) -> Wait {
        debug_assert_eq!(self.state, State::WaitResult);
        match self.poll_results_of(ctx, true, false) {
            Poll::Pending => {
                self.wait = Wait::Socket;
                return Wait::Socket;
            }
            Poll::Done => {}
            Poll::Failed => {
                let next = self.after_failed_command(ctx);
                return self.continue_general(ctx, now, Next::go(next));
            }
        }
        self.trace(State::EndCommand);
        let steps = &express.steps;
        let mut k = self.command + 1;
        loop {
            if k == steps.len() {
                self.command = k;
                self.trace(State::StartCommand);
                if let Some(next) = self.express_next_tx(ctx, now) {
                    return self.continue_general(ctx, now, next);
                }
                k = 0;
            }
            self.command = k;
            self.trace(State::StartCommand);
            match steps[k] {
                ExpressStep::Set { var, expr, fast } => {
                    let next = self.set_variable(ctx, var, expr, fast);
                    now.reset();
                    if next != State::EndCommand {
                        self.note_abort(next);
                        return self.continue_general(ctx, now, Next::go(next));
                    }
                    self.trace(State::EndCommand);
                }
                ExpressStep::Sql { sql, stmt } => {
                    let next = self.run_sql(ctx, sql, stmt);
                    self.note_abort(next);
                    let next = if next == State::WaitResult {
                        Next::wait(next, Wait::Socket)
                    } else {
                        Next::go(next)
                    };
                    return self.continue_general(ctx, now, next);
                }
            }
            k += 1;
        }
    }

    /// `EndTx`, `ChooseScript` and `StartTx`: None when the next transaction has
    /// started (at command 0), else where the general machine goes on.
    ///
    /// An express run chains, so `ChooseScript` has one script to choose (and
    /// draws nothing), no `-R` slot to prepare and no `--debug` line to print, and
    /// `end_tx` went there only before the `-T` end; with stages it has nothing to
    /// decide before the client's `active_until`; `StartTx` has its connection
    /// (no `-C`). What is left of them is theirs: [`Client::reset_error_state`]
    /// and [`Client::begin_tx`].
    #[inline(always)]
    fn express_next_tx<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Option<Next> {
        self.trace(State::EndTx);
        let next = self.end_tx(ctx, now);
        if next != Next::go(State::ChooseScript) {
            return Some(next);
        }
        debug_assert!(ctx.plan.chain && !ctx.timer_exceeded && self.conn.is_some());
        let t = now.get(&ctx.clock);
        if t >= self.active_until {
            // With stages: whether the client is still active is `ChooseScript`'s.
            return Some(next);
        }
        self.trace(State::ChooseScript);
        self.script = 0;
        self.reset_error_state();
        self.trace(State::StartTx);
        self.begin_tx(t, false);
        None
    }

    /// Enters `next`'s state and, unless it waits, lets the general machine run
    /// the rest of the turn.
    fn continue_general<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
        next: Next,
    ) -> Wait {
        self.state = next.state;
        self.trace(next.state);
        match next.wait {
            Some(wait) => {
                self.wait = wait;
                wait
            }
            None => self.advance(ctx, now),
        }
    }
}
