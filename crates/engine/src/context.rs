//! The per-thread context the client state machine works with: configuration,
//! per-run plan, clock, statistics, the thread's generators, the `-R` schedule,
//! the `-T` end, the transaction log and the `Network` that opens and watches
//! connections. It knows nothing of clients.

use pgrush_script::{CommandKind, ThreadRngs};
use pgrush_stats::live::LiveRecorder;
use pgrush_stats::{QueryMode, ThreadStats, TxRecord};
use pgrush_wire::{BindHead, EncodeRefusal};

use crate::clock::{Clock, Micros};
use crate::config::EngineConfig;
use crate::plan::Plan;
use crate::stage_run::StageRun;
use crate::stage_timeline::Arrival;
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
    /// A run in stages: the timeline, the clients' activation and the statistics of
    /// each stage (`None` without stages: one compare on the paths that look).
    pub(crate) stages: Option<Box<StageRun>>,
    /// `--metrics-listen`: the thread's live figures (`None` without: one compare on
    /// the path that records a transaction).
    pub(crate) live: Option<Box<LiveRecorder>>,
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
            stages: None,
            live: None,
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

    /// The next `-R` slot: without stages the last one plus a Poisson delay (pgbench's
    /// draw); with stages the next arrival of the stages' schedule from `now`.
    #[inline]
    pub(crate) fn next_slot(&mut self, now: Micros) -> Micros {
        match &self.stages {
            None => self.throttle_trigger += self.poisson_delay(),
            Some(run) => {
                let draw = -(1.0 - self.rngs.throttle.double()).ln();
                self.throttle_trigger = match run.next_slot(self.throttle_trigger, now, draw) {
                    Arrival::At(t) | Arrival::ClosedFrom(t) => t,
                };
            }
        }
        self.throttle_trigger
    }

    /// With stages, when client `id` (not active at `now`) may go on: `None` when it
    /// is active (or there are no stages).
    #[inline]
    pub(crate) fn idle_until(&self, id: u32, now: Micros) -> Option<Micros> {
        self.stages.as_ref()?.idle_until(id, now)
    }

    /// Until when client `id`, active at `now`, stays active for certain: the end of
    /// the stage's segment it is in (`Micros::MAX` without stages).
    #[inline]
    pub(crate) fn active_until(&self, id: u32, now: Micros) -> Micros {
        self.stages
            .as_ref()
            .map_or(Micros::MAX, |run| run.active_until(id, now))
    }

    /// With stages, whether `now` falls in a closed-loop stage of a throttled run.
    #[inline]
    pub(crate) fn closed_loop_at(&self, now: Micros) -> bool {
        self.stages
            .as_ref()
            .is_some_and(|run| run.timeline.closed_at(now))
    }

    /// Records a measured transaction ended at `now`: in the run's statistics and,
    /// with stages, in those of the stage of its scheduled start.
    #[inline]
    pub(crate) fn record_measured_tx(&mut self, rec: &TxRecord, scheduled: Micros, now: Micros) {
        match self.stages.as_mut() {
            None => self.stats.record_tx_at(rec, now),
            Some(run) => run.record_measured_tx(&mut self.stats, rec, (scheduled, now)),
        }
    }

    /// With stages, a command's latency (`-r`) in the statistics of its stage.
    #[inline]
    pub(crate) fn record_stage_command(
        &mut self,
        scheduled: Micros,
        script: usize,
        command: usize,
        latency_us: f64,
    ) {
        if let Some(stats) = self.stages.as_mut().and_then(|run| run.stats_at(scheduled)) {
            stats.record_command(script, command, latency_us);
        }
    }

    /// Writes a transaction scheduled at `scheduled` to the `-l` log, if there is one
    /// (with stages, its stage number as the last column).
    #[inline]
    pub(crate) fn log_tx(
        &mut self,
        client_id: u32,
        tx_no: u64,
        rec: &TxRecord,
        now: Micros,
        scheduled: Micros,
    ) {
        if let Some(log) = self.log.as_mut() {
            let epoch = self.clock.epoch_us(now).max(0) as u64;
            let stage = self.stages.as_ref().map(|run| run.number_at(scheduled));
            log.write_tx(
                &self.cfg.output.progname,
                &mut self.rngs.sample,
                client_id,
                (tx_no, stage),
                rec,
                epoch,
            );
        }
    }

    /// With `--metrics-listen`, records a measured transaction in the live figures of
    /// the stage of its scheduled start.
    #[inline]
    pub(crate) fn record_live(&mut self, rec: &TxRecord, scheduled: Micros) {
        if let Some(live) = self.live.as_mut() {
            let slot = self
                .stages
                .as_ref()
                .map_or(1, |run| run.number_at(scheduled).max(1));
            live.record(rec, slot);
        }
    }

    /// A `--warmup` transaction: only the `-P` counters and the live figures (as the
    /// warm-up's) see it (progress lines during the warm-up show its throughput);
    /// statistics, time series and log do not.
    #[cold]
    #[inline(never)]
    pub(crate) fn warmup_tx(&mut self, rec: &TxRecord) {
        if let Some(live) = self.live.as_mut() {
            live.record(rec, 0);
        }
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
