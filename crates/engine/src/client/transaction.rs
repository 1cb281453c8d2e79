//! Transaction boundaries: choosing the script (`CHOOSE_SCRIPT`), the `-R`
//! schedule (`PREPARE_THROTTLE`, `THROTTLE`), starting (`START_TX`) and ending
//! (`END_TX`) a transaction, and pgbench's `processXactStats`.

use pgrush_stats::{RunLimit, TxOutcome, TxRecord};
use pgrush_wire::TransactionStatus;

use super::{Client, ErrStatus, Next, Pipeline, State, Wait};
use crate::clock::{LazyNow, Micros};
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;
use crate::messages;

impl<C: ClientConn> Client<C> {
    /// `CHOOSE_SCRIPT`: picks the script, resets the error state.
    pub(super) fn choose_script<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        if ctx.stages.is_some() && !ctx.timer_exceeded {
            let t = now.get(&ctx.clock);
            if let Some(until) = ctx.idle_until(self.id, t) {
                // Not active in this stage: wait, connected, until it is.
                return Next::wait(State::ChooseScript, Wait::Until(until));
            }
            self.active_until = ctx.active_until(self.id, t);
        }
        self.script = match self.deck.as_mut() {
            Some(deck) => deck.deal(),
            None => ctx.choose_script(),
        };
        self.reset_error_state();
        if ctx.cfg.output.debug {
            let mut msg = messages::concat(
                &format!("client {} executing script \"", self.id),
                &ctx.cfg.scripts[self.script].desc,
            );
            msg.push(b'"');
            messages::debug(ctx.progname(), &msg);
        }
        Next::go(if ctx.timer_exceeded {
            State::Finished
        } else if ctx.throttle_delay > 0.0 {
            State::PrepareThrottle
        } else {
            State::StartTx
        })
    }

    /// `PREPARE_THROTTLE`: draws the next `-R` slot; under `-L`, slots already too
    /// late are counted as skipped transactions.
    #[inline(never)]
    pub(super) fn prepare_throttle<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        if ctx.stages.is_some() && ctx.closed_loop_at(now.get(&ctx.clock)) {
            return self.closed_loop_stage(ctx, now);
        }
        self.txn_scheduled = ctx.next_slot(now.get(&ctx.clock));
        if ctx.cfg.pacing.latency_limit_us > 0 {
            let t = now.get(&ctx.clock);
            while ctx.throttle_trigger < t - ctx.cfg.pacing.latency_limit_us
                && self.under_tx_limit(ctx)
            {
                self.record_tx(ctx, now, true);
                self.txn_scheduled = ctx.next_slot(t);
            }
            if !self.under_tx_limit(ctx) {
                return Next::go(State::Finished);
            }
        }
        Next::go(match ctx.end_time {
            Some(end) if self.txn_scheduled > end => State::Finished,
            _ => State::Throttle,
        })
    }

    /// A throttled run in a stage without rate: a closed loop, the transaction is
    /// scheduled now (the `-R` schedule resumes at the stage's end).
    #[cold]
    fn closed_loop_stage<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        let t = now.get(&ctx.clock);
        ctx.throttle_trigger = ctx.throttle_trigger.max(t);
        self.txn_scheduled = t;
        Next::go(State::StartTx)
    }

    /// `THROTTLE`: waits for the scheduled start.
    #[inline(never)]
    pub(super) fn throttle<N: Network<Conn = C>>(
        &mut self,
        ctx: &ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        let t = now.get(&ctx.clock);
        if t < self.txn_scheduled && !ctx.timer_exceeded {
            return Next::wait(State::Throttle, Wait::Until(self.txn_scheduled));
        }
        Next::go(if ctx.timer_exceeded {
            State::Finished
        } else {
            State::StartTx
        })
    }

    /// `START_TX`: connects under `-C`, saves the generator, notes the start.
    pub(super) fn start_tx<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        let mut t = now.get(&ctx.clock);
        if ctx.plan.switching {
            let to = ctx.plan.script_target[self.script];
            if to != self.target && !self.switch_target(ctx, to) {
                return Next::go(State::Aborted);
            }
        }
        if self.conn.is_none() {
            if self.outage.is_some() {
                return Next::go(State::Reconnect);
            }
            let start = t;
            let Some(conn) = ctx.net.connect(self.target) else {
                messages::error(
                    ctx.progname(),
                    &format!("client {} aborted while establishing connection", self.id),
                );
                return Next::go(State::Aborted);
            };
            self.conn = Some(conn);
            self.forget_prepared(ctx);
            self.pipeline = Pipeline::Off;
            self.tx_status = TransactionStatus::Idle;
            if !self.register(ctx) {
                return Next::go(State::Aborted);
            }
            t = now.refresh(&ctx.clock);
            if ctx.measured(start) {
                ctx.stats.add_conn_time_us((t - start).max(0) as u64);
            }
        }
        self.begin_tx(t, ctx.throttle_delay > 0.0);
        Next::go(State::StartCommand)
    }

    /// A new transaction has no error and is at its first try.
    #[inline(always)]
    pub(super) fn reset_error_state(&mut self) {
        self.estatus = ErrStatus::None;
        self.tries = 1;
    }

    /// The transaction starts at `t` (connected): the generator is saved for
    /// retries, and without `-R` (`throttled`) it was scheduled then too.
    #[inline(always)]
    pub(super) fn begin_tx(&mut self, t: Micros, throttled: bool) {
        self.saved_rng = self.rng;
        self.txn_begin = t;
        if !throttled {
            self.txn_scheduled = t;
        }
        self.command = 0;
    }

    /// `END_TX`: records the transaction, disconnects under `-C`, and yields to the
    /// other clients before the next transaction (a script of meta-commands only
    /// cannot spin forever), unless the turn may chain: a transaction that waited
    /// for the server is followed at once by the next one, as any client but
    /// pgbench would, once per turn ([`Plan::chain`](crate::plan::Plan::chain) says when that cannot be
    /// told apart from pgbench but by the timing).
    pub(super) fn end_tx<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        self.record_tx(ctx, now, false);
        if self.tx_status != TransactionStatus::Idle {
            messages::error(
                ctx.progname(),
                &format!(
                    "client {} aborted: end of script reached without completing the last transaction",
                    self.id
                ),
            );
            return Next::go(State::Aborted);
        }
        if ctx.cfg.connect_per_tx {
            let start = now.get(&ctx.clock);
            self.disconnect(ctx);
            let t = now.refresh(&ctx.clock);
            if ctx.measured(self.txn_scheduled) {
                ctx.stats.add_conn_time_us((t - start).max(0) as u64);
            }
        }
        if !self.under_tx_limit(ctx) || ctx.timer_exceeded {
            return Next::go(State::Finished);
        }
        if std::mem::take(&mut self.chain) {
            return Next::go(State::ChooseScript);
        }
        Next::wait(State::ChooseScript, Wait::Now)
    }

    /// Whether `-t` leaves transactions to run.
    fn under_tx_limit<N>(&self, ctx: &ThreadCtx<'_, N>) -> bool {
        match ctx.cfg.limit {
            RunLimit::Transactions(n) => self.tx_count < u64::from(n),
            RunLimit::Duration(_) => true,
        }
    }

    /// pgbench's `processXactStats`: counts the transaction and logs it.
    pub(super) fn record_tx<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
        skipped: bool,
    ) {
        // One clock read for the latency, the time series and the log line.
        let t = now.get(&ctx.clock);
        let outcome = if skipped {
            TxOutcome::Skipped
        } else {
            match self.estatus {
                ErrStatus::None | ErrStatus::MetaCommand => TxOutcome::Success,
                ErrStatus::ConnectionLost => TxOutcome::ConnectionFailure,
                ErrStatus::Serialization => TxOutcome::SerializationFailure,
                ErrStatus::Deadlock => TxOutcome::DeadlockFailure,
                ErrStatus::Other => TxOutcome::OtherFailure,
            }
        };
        // Latency is measured for every transaction: pgbench measures it only when
        // `-P`, `-R`, `-L`, `-l` or several scripts need it; pgrush's per-interval
        // statistics (`--percentiles`, `--json`, `--html`) need it, and the clock is read
        // here anyway. The text report picks measured or derived averages itself.
        let (latency_us, lag_us) = if outcome == TxOutcome::Success {
            (
                (t - self.txn_scheduled) as f64,
                (self.txn_begin - self.txn_scheduled) as f64,
            )
        } else {
            (0.0, 0.0)
        };
        if outcome == TxOutcome::Success && self.outage.is_some() {
            self.end_outage(ctx, t);
        }
        let rec = TxRecord {
            script: self.script,
            outcome,
            latency_us,
            lag_us,
            tries: self.tries,
        };
        if !ctx.measured(self.txn_scheduled) {
            ctx.warmup_tx(&rec);
            return;
        }
        ctx.record_measured_tx(&rec, self.txn_scheduled, t);
        ctx.record_live(&rec, self.txn_scheduled);
        self.tx_count += 1;
        ctx.log_tx(self.id, self.tx_count, &rec, t, self.txn_scheduled);
    }
}
