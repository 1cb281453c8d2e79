//! After an SQL error: `ERROR` (roll back if a transaction block is open),
//! `WAIT_ROLLBACK_RESULT`, `RETRY` (serialization and deadlock failures, within
//! `--max-tries` and `-L`) and `FAILURE` (the transaction is counted as failed).

use pgrush_wire::TransactionStatus;

use super::results::Poll;
use super::{Client, ErrStatus, Next, Pipeline, State, Wait};
use crate::clock::LazyNow;
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;
use crate::messages;

impl<C: ClientConn> Client<C> {
    /// `ERROR`: forgets the `\if` stack and the pipeline; sends ROLLBACK when the
    /// failed statement left a transaction block open.
    #[cold]
    #[inline(never)]
    pub(super) fn error<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        self.cond.reset();
        self.pipeline = Pipeline::Off;
        if self.estatus == ErrStatus::ConnectionLost {
            // `--reconnect`: nothing to roll back on a lost connection.
            self.lose_connection(ctx, now);
            return Next::go(if ctx.timer_exceeded {
                State::Finished
            } else {
                State::Failure
            });
        }
        match self.tx_status {
            TransactionStatus::InTransaction | TransactionStatus::Failed => {
                if ctx.cfg.output.debug {
                    messages::debug(
                        ctx.progname(),
                        &format!("client {} sending ROLLBACK", self.id),
                    );
                }
                if self.send_rollback().is_err() || !self.flush_output() {
                    messages::error(
                        ctx.progname(),
                        &format!(
                            "client {} aborted: failed to send sql command for rolling back the failed transaction",
                            self.id
                        ),
                    );
                    return Next::go(State::Aborted);
                }
                Next::wait(State::WaitRollbackResult, Wait::Socket)
            }
            TransactionStatus::Idle => Next::go(self.after_error(ctx, now)),
        }
    }

    /// `WAIT_ROLLBACK_RESULT`: reads the ROLLBACK's result.
    #[cold]
    #[inline(never)]
    pub(super) fn wait_rollback_result<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        if ctx.cfg.output.debug {
            super::results::debug_receiving(ctx, self.id);
        }
        match self.poll_rollback(ctx) {
            Poll::Pending => Next::wait(State::WaitRollbackResult, Wait::Socket),
            Poll::Done => Next::go(self.after_error(ctx, now)),
            Poll::Failed => Next::go(State::Aborted),
        }
    }

    /// `RETRY`: restarts the transaction with the generator saved at its start.
    #[cold]
    #[inline(never)]
    pub(super) fn retry<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        if ctx.cfg.errors.verbose_errors {
            self.verbose_retry_message(ctx, now, true);
        }
        self.tries += 1;
        if ctx.measured(self.txn_scheduled) {
            ctx.stats.record_command_retry(self.script, self.command);
        }
        self.rng = self.saved_rng;
        self.command = 0;
        self.estatus = ErrStatus::None;
        Next::go(State::StartCommand)
    }

    /// `FAILURE`: counts the failure against the command, then ends the transaction.
    #[cold]
    #[inline(never)]
    pub(super) fn failure<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        let t = now.get(&ctx.clock);
        if ctx.measured(self.txn_scheduled) {
            ctx.stats
                .record_command_failure_at(self.script, self.command, t);
        }
        if ctx.cfg.errors.verbose_errors {
            self.verbose_retry_message(ctx, now, false);
        }
        Next::go(State::EndTx)
    }

    /// Where to go once a retryable error has been cleaned up.
    fn after_error<N>(&self, ctx: &ThreadCtx<'_, N>, now: &mut LazyNow) -> State {
        if ctx.timer_exceeded {
            State::Finished
        } else if self.can_retry(ctx, now) {
            State::Retry
        } else {
            State::Failure
        }
    }

    /// pgbench's `doRetry`.
    fn can_retry<N>(&self, ctx: &ThreadCtx<'_, N>, now: &mut LazyNow) -> bool {
        if !self.estatus.retryable() {
            return false;
        }
        let max = ctx.cfg.errors.max_tries;
        if max != 0 && self.tries >= max {
            return false;
        }
        if ctx.cfg.pacing.latency_limit_us > 0 {
            let t = now.get(&ctx.clock);
            if t - self.txn_scheduled > ctx.cfg.pacing.latency_limit_us {
                return false;
            }
        }
        !ctx.timer_exceeded
    }

    /// `--verbose-errors`: `client N repeats the transaction after the error (try T/M...)`
    /// or `client N ends the failed transaction (try T/M...)`.
    fn verbose_retry_message<N>(&self, ctx: &ThreadCtx<'_, N>, now: &mut LazyNow, retry: bool) {
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
        if ctx.cfg.errors.max_tries != 0 {
            msg.push_str(&format!("/{}", ctx.cfg.errors.max_tries));
        }
        if ctx.cfg.pacing.latency_limit_us > 0 {
            let t = now.get(&ctx.clock);
            let pct =
                100.0 * (t - self.txn_scheduled) as f64 / ctx.cfg.pacing.latency_limit_us as f64;
            msg.push_str(", ");
            pgrush_stats::cfmt::push_fixed(&mut msg, pct, 3);
            msg.push_str("% of the maximum time of tries was used");
        }
        msg.push(')');
        messages::info(ctx.progname(), &msg);
    }
}
