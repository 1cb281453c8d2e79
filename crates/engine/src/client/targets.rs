//! `--target`: a client whose scripts use several targets holds one connection to
//! each. The connection in use is the client's own (`conn`, with the server it
//! identified and its outage); the others wait parked, one slot per target, and
//! a transaction whose script's target is not the last one's swaps them
//! (`switch_target`, in `START_TX`). Only the connection in use is registered in the
//! thread's poll. Prepared statements need no swap: each statement belongs to one
//! script, so to one target's connection.

use super::parked::Parked;
use super::{Client, Pipeline};
use crate::conn::{ClientConn, Network};
use crate::context::ThreadCtx;

impl<C: ClientConn> Client<C> {
    /// Puts the connection in use (to `self.target`) into its parked slot,
    /// deregistered; the client is left without a connection.
    pub(super) fn park<N: Network<Conn = C>>(&mut self, ctx: &mut ThreadCtx<'_, N>) {
        if self.parked.is_empty() {
            let n = ctx.cfg.targets.servers.len() + 1;
            self.parked.resize_with(n, Parked::default);
        }
        if self.registered
            && let Some(conn) = self.conn.as_ref()
        {
            ctx.net.deregister(conn);
        }
        self.registered = false;
        self.write_interest = false;
        self.out_pending = false;
        self.pipeline = Pipeline::Off;
        let slot = &mut self.parked[self.target];
        slot.conn = self.conn.take();
        slot.server = self.server.take();
        slot.outage = self.outage.take();
    }

    /// Makes target `to`'s connection the one in use (registered); false, with the
    /// message printed, when it cannot be registered.
    #[cold]
    #[inline(never)]
    pub(super) fn switch_target<N: Network<Conn = C>>(
        &mut self,
        ctx: &mut ThreadCtx<'_, N>,
        to: usize,
    ) -> bool {
        self.park(ctx);
        let slot = std::mem::take(&mut self.parked[to]);
        self.target = to;
        self.conn = slot.conn;
        self.server = slot.server;
        self.outage = slot.outage;
        self.conn.is_none() || self.register(ctx)
    }

    /// Closes the parked connections (the client stops); their open outages go to
    /// the thread's statistics.
    #[cold]
    pub(super) fn close_parked<N: Network<Conn = C>>(&mut self, ctx: &mut ThreadCtx<'_, N>) {
        for slot in std::mem::take(&mut self.parked) {
            if slot.outage.is_some() {
                self.outage = slot.outage;
                self.close_outage(ctx);
            }
            if let Some(conn) = slot.conn {
                conn.close();
            }
        }
    }

    /// Marks the statements sent on the connection in use as not prepared (a new
    /// connection): all of them, or with several targets those of its target's scripts.
    pub(super) fn forget_prepared<N>(&mut self, ctx: &ThreadCtx<'_, N>) {
        let plan = ctx.plan;
        if !plan.switching {
            self.prepared.iter_mut().for_each(|p| *p = false);
            return;
        }
        for (stmt, prepared) in self.prepared.iter_mut().enumerate() {
            if plan.stmt_on_target(stmt, self.target) {
                *prepared = false;
            }
        }
    }
}
