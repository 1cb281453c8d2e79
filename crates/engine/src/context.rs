//! The per-thread context the client state machine works with: configuration,
//! per-run plan, clock, statistics, the thread's generators, the `-R` schedule,
//! the `-T` end, the transaction log and the `Network` that opens and watches
//! connections. It knows nothing of clients.

use pgrush_script::{CommandKind, ThreadRngs};
use pgrush_stats::{QueryMode, ThreadStats, TxRecord};
use pgrush_wire::{BindHead, EncodeRefusal};

use crate::clock::{Clock, Micros};
use crate::config::EngineConfig;
use crate::plan::Plan;
use crate::txlog::TxLog;

/// What one worker thread shares with all its clients.
pub(crate) struct ThreadCtx<'a, N> {
    /// Run configuration.
    pub(crate) cfg: &'a EngineConfig,
    /// Per-run constants (statement names, weights, formats, express script).
    pub(crate) plan: &'a Plan<'a>,
    /// The run's clock.
    pub(crate) clock: Clock,
    /// The thread's statistics.
    pub(crate) stats: ThreadStats,
    /// The thread's generators (script choice, throttle, log sampling).
    pub(crate) rngs: ThreadRngs,
    /// Last `-R` slot (µs).
    pub(crate) throttle_trigger: Micros,
    /// Mean `-R` delay of this thread (µs; 0 = no throttling).
    pub(crate) throttle_delay: f64,
    /// `-T` is over (or the run was interrupted): clients finish.
    pub(crate) timer_exceeded: bool,
    /// When `-T` ends.
    pub(crate) end_time: Option<Micros>,
    /// Transactions scheduled before this instant are `--warmup`'s and not counted
    /// (`Micros::MIN` without a warm-up: one compare that never holds).
    pub(crate) measure_from: Micros,
    /// The `-l` log.
    pub(crate) log: Option<TxLog>,
    /// Opens and watches client connections.
    pub(crate) net: N,
}

impl<'a, N> ThreadCtx<'a, N> {
    /// A context before the run starts (no schedule, no end time yet).
    pub(crate) fn new(
        cfg: &'a EngineConfig,
        plan: &'a Plan<'a>,
        clock: Clock,
        stats: ThreadStats,
        rngs: ThreadRngs,
        log: Option<TxLog>,
        net: N,
    ) -> Self {
        ThreadCtx {
            cfg,
            plan,
            clock,
            stats,
            rngs,
            throttle_trigger: 0,
            throttle_delay: cfg.throttle_delay_us(),
            timer_exceeded: false,
            end_time: None,
            measure_from: Micros::MIN,
            log,
            net,
        }
    }

    /// Program name for messages.
    #[inline]
    pub(crate) fn progname(&self) -> &str {
        &self.cfg.output.progname
    }

    /// Picks the script of the next transaction (no draw with a single script).
    #[inline]
    pub(crate) fn choose_script(&mut self) -> usize {
        pgrush_script::choose_script(&mut self.rngs.choose, &self.plan.weights)
    }

    /// Next Poisson-distributed throttle delay (µs).
    #[inline]
    pub(crate) fn poisson_delay(&mut self) -> Micros {
        pgrush_script::throttle_delay_us(&mut self.rngs.throttle, self.throttle_delay)
    }

    /// Global prepared-statement index of a script command.
    #[inline]
    pub(crate) fn stmt_index(&self, script: usize, command: usize) -> usize {
        self.plan.stmt_index[script][command]
    }

    /// Name (`P_<k>`) of prepared statement `k`.
    #[inline]
    pub(crate) fn stmt_name(&self, k: usize) -> &'a str {
        &self.plan.stmt_names[k]
    }

    /// The Bind head of statement `k` (see [`Plan::bind_heads`]).
    #[inline]
    pub(crate) fn bind_head(&self, k: usize) -> Result<&'a BindHead, EncodeRefusal> {
        self.plan.bind_heads[k].as_ref().map_err(|refusal| *refusal)
    }

    /// The `$n` text of prepared statement `k` (for error positions).
    pub(crate) fn stmt_text(&self, k: usize) -> &[u8] {
        let (s, c) = self.plan.stmt_origin[k];
        match &self.cfg.scripts[s].commands[c].kind {
            CommandKind::Sql(sql) => &sql.extended_text,
            _ => b"",
        }
    }

    /// The statement text libpq would show in `LINE n:` for a command (`sent` is
    /// the text sent in simple mode), as bytes.
    pub(crate) fn query_text<'s>(
        &'s self,
        script: usize,
        command: usize,
        sent: &'s [u8],
    ) -> Option<&'s [u8]> {
        match self.cfg.query_mode {
            QueryMode::Simple => Some(sent),
            QueryMode::Extended => match &self.cfg.scripts[script].commands.get(command)?.kind {
                CommandKind::Sql(sql) => Some(&sql.extended_text),
                _ => None,
            },
            QueryMode::Prepared => None,
        }
    }

    /// Whether command `command` of `script` is an `\endpipeline` (its reads collect
    /// the results of the whole pipeline).
    #[inline]
    pub(crate) fn ends_pipeline(&self, script: usize, command: usize) -> bool {
        self.cfg.scripts[script]
            .commands
            .get(command)
            .is_some_and(|c| matches!(c.kind, CommandKind::EndPipeline))
    }

    /// Writes a transaction to the `-l` log, if there is one.
    #[inline]
    pub(crate) fn log_tx(&mut self, client_id: u32, tx_no: u64, rec: &TxRecord, now: Micros) {
        if let Some(log) = self.log.as_mut() {
            let epoch = self.clock.epoch_us(now).max(0) as u64;
            log.write_tx(
                &self.cfg.output.progname,
                &mut self.rngs.sample,
                client_id,
                tx_no,
                rec,
                epoch,
            );
        }
    }

    /// A `--warmup` transaction: only the `-P` counters see it (progress lines during
    /// the warm-up show its throughput); statistics, time series and log do not.
    #[cold]
    #[inline(never)]
    pub(crate) fn warmup_tx(&self, rec: &TxRecord) {
        if let Some(p) = self.stats.progress() {
            p.record(
                rec.outcome,
                rec.latency_us,
                rec.lag_us,
                rec.tries,
                self.throttle_delay > 0.0,
            );
        }
    }

    /// Whether a transaction scheduled at `scheduled` is counted (not `--warmup`'s).
    #[inline(always)]
    pub(crate) fn measured(&self, scheduled: Micros) -> bool {
        scheduled >= self.measure_from
    }

    /// `--warmup`: the `-l` aggregates start at its end `edge` (nothing was logged before).
    pub(crate) fn restart_log_aggregate(&mut self, edge: Micros) {
        let epoch = self.clock.epoch_us(edge).max(0) as u64;
        if let Some(log) = self.log.as_mut() {
            log.restart_aggregate(epoch);
        }
    }

    /// End of the run: closes the log (pending aggregate written).
    pub(crate) fn finish_log(&mut self, now: Micros) {
        let epoch = self.clock.epoch_us(now).max(0) as u64;
        if let Some(log) = self.log.as_mut() {
            log.finish(&self.cfg.output.progname, epoch);
        }
    }

    /// Whether `-l` lines were lost (a write failed).
    pub(crate) fn log_failed(&self) -> bool {
        self.log.as_ref().is_some_and(TxLog::failed)
    }

    /// `--exit-on-abort`: flushes the log as C's `exit()` does.
    pub(crate) fn flush_log(&mut self) {
        if let Some(log) = self.log.as_mut() {
            log.flush(&self.cfg.output.progname);
        }
    }
}
