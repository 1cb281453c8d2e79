//! `--reconnect`: a client whose connection is lost counts the transaction as a
//! connection failure, then (`RECONNECT`) opens a new connection through the
//! conninfo's host list without blocking its thread (the [`Network`] connects in a
//! thread of its own), with a backoff between attempts, and goes on; after the
//! timeout without a connection it aborts. The outage lasts until the client's
//! first successful transaction, and is recorded in the thread's statistics.

use pgrush_wire::TransactionStatus;

use super::outage::Outage;
use super::{Client, Next, Pipeline, State, Wait};
use crate::clock::{LazyNow, Micros};
use crate::conn::{ClientConn, Network, Opened};
use crate::context::ThreadCtx;
use crate::messages;

/// How often a client looks whether its connection attempt is done, µs.
const POLL_US: Micros = 2_000;

impl<C: ClientConn> Client<C> {
    /// The connection is lost (`--reconnect`): closes it, counts the failure in
    /// the outage (opening one), and leaves the transaction to be counted as failed.
    #[cold]
    #[inline(never)]
    pub(super) fn lose_connection<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) {
        let t = now.get(&ctx.clock);
        messages::error(
            ctx.progname(),
            &format!(
                "client {} lost its connection in command {} of script {}; reconnecting",
                self.id, self.command, self.script
            ),
        );
        self.disconnect(ctx);
        self.tx_status = TransactionStatus::Idle;
        let sqlstate = self
            .lost_sqlstate
            .take()
            .map(|code| String::from_utf8_lossy(&code).into_owned());
        let before = self.server.take().map(|server| *server);
        self.outage
            .get_or_insert_with(|| Box::new(Outage::new(t, sqlstate, before)))
            .lost(t);
    }

    /// `RECONNECT`: starts an attempt when the backoff allows, looks whether the
    /// one in progress is done, and gives up after the timeout.
    #[cold]
    #[inline(never)]
    pub(super) fn reconnect<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        now: &mut LazyNow,
    ) -> Next {
        let token = self.id as usize;
        if ctx.timer_exceeded {
            ctx.net.abandon_connect(token);
            return Next::go(State::Finished);
        }
        let t = now.get(&ctx.clock);
        let timeout = ctx.cfg.errors.reconnect_timeout_us.unwrap_or(0);
        let Some(outage) = self.outage.as_mut() else {
            return Next::go(State::StartTx);
        };
        if outage.connecting {
            match ctx.net.poll_connect(token, self.target) {
                None => return Next::wait(State::Reconnect, Wait::Until(t + POLL_US)),
                Some(Ok(opened)) => {
                    outage.connecting = false;
                    return Next::go(self.install(ctx, opened));
                }
                Some(Err(e)) => outage.attempt_failed(t, e),
            }
        }
        let give_up_at = outage.lost_at.saturating_add(timeout);
        if t >= give_up_at {
            let msg = format!(
                "client {} aborted: no connection within the reconnect timeout of {} s; {}",
                self.id,
                timeout as f64 / 1e6,
                outage.last_error
            );
            messages::error(ctx.progname(), &pgrush_wire::lossless::to_bytes(&msg));
            return Next::go(State::Aborted);
        }
        if t >= outage.next_try {
            ctx.net.begin_connect(token, self.target);
            outage.connecting = true;
            return Next::wait(State::Reconnect, Wait::Until(t + POLL_US));
        }
        Next::wait(
            State::Reconnect,
            Wait::Until(outage.next_try.min(give_up_at)),
        )
    }

    /// Takes the new connection: registered, nothing prepared on it yet.
    fn install<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        opened: Opened<C>,
    ) -> State {
        self.conn = Some(opened.conn);
        self.server = opened.server.map(Box::new);
        self.forget_prepared(ctx);
        self.pipeline = Pipeline::Off;
        self.tx_status = TransactionStatus::Idle;
        if self.register(ctx) {
            State::StartTx
        } else {
            State::Aborted
        }
    }

    /// The first success after an outage ends it (at `t`): it goes to the
    /// thread's statistics.
    #[cold]
    #[inline(never)]
    pub(super) fn end_outage<N>(&mut self, ctx: &mut ThreadCtx<'_, N>, t: Micros) {
        if let Some(outage) = self.outage.take() {
            ctx.stats.outages.push(outage.into_record(
                self.id,
                Some(t),
                self.server.as_deref().cloned(),
            ));
        }
    }

    /// An outage still open when the client stops (the run ended, or it aborted).
    #[cold]
    pub(crate) fn close_outage<N>(&mut self, ctx: &mut ThreadCtx<'_, N>) {
        if let Some(outage) = self.outage.take() {
            ctx.stats
                .outages
                .push(outage.into_record(self.id, None, None));
        }
    }
}
