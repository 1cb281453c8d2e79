//! One worker thread: a mio event loop over its clients (pgbench's `threadRun`).
//!
//! Phases, one method each: [`Worker::set_up`] (event loop, waker, Ctrl-C pipe,
//! log file), [`Worker::connect_clients`] (the initial connections, between the
//! READY and GO barriers), [`Worker::start`] (the clock starts), the event loop
//! ([`Worker::event_loop`]: sleep until a socket, a deadline, a progress report or
//! the `-T` end; then give due clients their turn), progress reports (thread 0,
//! `progress`), and [`Worker::shut_down`] (Ctrl-C grace period, closing
//! connections and the log).
//!
//! Token `i` is client `i` (global ids); [`SIGNAL_TOKEN`] is the Ctrl-C self-pipe,
//! [`WAKE_TOKEN`] the `--exit-on-abort` waker.

mod live;
mod progress;
pub(crate) mod sched;

use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use pgrush_script::{ThreadRngs, Variables};
use pgrush_stats::live::LiveRecorder;
use pgrush_stats::{RunLimit, ThreadStats};
use pgrush_wire::Connection;

use crate::client::{Client, State};
use crate::clock::{LazyNow, Micros};
use crate::config::EngineConfig;
use crate::conn::Sockets;
use crate::context::ThreadCtx;
use crate::error::EngineError;
use crate::messages;
use crate::plan::Plan;
use crate::shared::Shared;
use crate::stage_run::StageRun;
use crate::txlog::TxLog;

use progress::ProgressReporter;
use sched::Scheduler;

/// Token of the Ctrl-C self-pipe.
const SIGNAL_TOKEN: Token = Token(usize::MAX - 1);

/// Token of the `--exit-on-abort` waker.
const WAKE_TOKEN: Token = Token(usize::MAX - 2);

/// Grace period for in-flight transactions after Ctrl-C (µs).
const INTERRUPT_GRACE_US: Micros = 1_000_000;

/// What one thread hands back.
pub(crate) struct ThreadResult {
    /// Its statistics.
    pub(crate) stats: ThreadStats,
    /// When its benchmark started (after the initial connections), on the shared clock.
    pub(crate) bench_start: Micros,
    /// When its initial connections were done, on the shared clock.
    pub(crate) connected: Micros,
    /// Whether one of its clients aborted.
    pub(crate) aborted: bool,
    /// Whether a write of its `-l` log failed.
    pub(crate) log_failed: bool,
    /// With stages, the statistics of each stage.
    pub(crate) stages: Vec<ThreadStats>,
    /// The variables each of its clients ended with, in client order.
    pub(crate) variables: Vec<Variables>,
}

/// What a thread records into: its statistics and, with stages, those of each stage.
pub(crate) struct Recorders {
    /// The run's statistics.
    pub(crate) stats: ThreadStats,
    /// With stages: the timeline, the clients' activation and per-stage statistics.
    pub(crate) stages: Option<Box<StageRun>>,
    /// With `--metrics-listen`: the thread's live figures.
    pub(crate) live: Option<Box<LiveRecorder>>,
}

/// Runs one worker thread to completion. Every thread passes the READY and GO
/// gates even when one of them failed, so none waits forever; a thread that
/// stopped because another one failed returns `Ok(None)`. Never inlined: called once
/// per thread, it stays a frame of its own in profiles (and in the PGO profile's check).
#[inline(never)]
pub(crate) fn run_thread(
    tid: usize,
    cfg: &EngineConfig,
    plan: &Plan,
    clients: Vec<Client<Connection>>,
    shared: &Shared,
    rngs: ThreadRngs,
    recorders: Recorders,
) -> Result<Option<ThreadResult>, EngineError> {
    let set_up = Worker::set_up(tid, cfg, plan, clients, shared, rngs, recorders);
    if set_up.is_err() {
        shared.fail();
    }
    shared.ready.wait();
    let connected = set_up.and_then(|mut worker| {
        if shared.failed() {
            return Ok(None);
        }
        worker.connect_clients()?;
        Ok(Some(worker))
    });
    if connected.is_err() {
        shared.fail();
    }
    shared.go.wait();
    let result = match connected {
        Ok(Some(mut worker)) if !shared.failed() => {
            worker.wait_for_start();
            worker.start();
            worker.event_loop();
            Ok(Some(worker.shut_down()))
        }
        Ok(_) => Ok(None),
        Err(e) => Err(e),
    };
    if shared.handle_signals {
        crate::signal::worker_settled();
    }
    result
}

/// When the event loop may sleep until.
enum Wake {
    /// Some client can go on at once: do not wait (nor look at the sockets).
    Now,
    /// Sleep until a socket event, or at most this long.
    After(Option<Micros>),
}

/// One worker thread and its clients.
struct Worker<'a> {
    tid: usize,
    shared: &'a Shared,
    ctx: ThreadCtx<'a, Sockets<'a>>,
    clients: Vec<Client<Connection>>,
    poll: Poll,
    events: Events,
    /// Which clients get a turn in each pass (index = id - first id).
    sched: Scheduler,
    first_id: usize,
    /// Whether the sweep of every client after the `-T` end or Ctrl-C was done.
    swept: bool,
    /// Clients not done yet.
    remaining: usize,
    /// When the initial connections started.
    conn_start: Micros,
    /// When the initial connections were done (GO).
    connected: Micros,
    /// When the benchmark started (after GO, or at the agreed start).
    bench_start: Micros,
    progress: Option<ProgressReporter>,
    /// End of the grace period after Ctrl-C.
    interrupt_deadline: Option<Micros>,
    /// End of `--warmup` while it lasts: then the `-R` schedule restarts.
    warmup_end: Option<Micros>,
    /// With `--metrics-listen`: the next publication edge.
    live_next: Option<Micros>,
    /// Passes since the loop last looked at the edge (see `live.rs`).
    live_passes: u32,
    aborted: bool,
}

impl<'a> Worker<'a> {
    /// Creates the event loop, the waker and the log file, and watches the Ctrl-C pipe.
    fn set_up(
        tid: usize,
        cfg: &'a EngineConfig,
        plan: &'a Plan<'a>,
        clients: Vec<Client<Connection>>,
        shared: &'a Shared,
        rngs: ThreadRngs,
        recorders: Recorders,
    ) -> Result<Worker<'a>, EngineError> {
        let clock = shared.clock;
        let started = clock.now();
        let poll = Poll::new().map_err(EngineError::EventLoop)?;
        let registry = poll
            .registry()
            .try_clone()
            .map_err(EngineError::EventLoop)?;
        let waker = mio::Waker::new(&registry, WAKE_TOKEN).map_err(EngineError::EventLoop)?;
        shared.set_waker(tid, waker);
        if let Some(fd) = shared.signal_fd {
            registry
                .register(&mut SourceFd(&fd), SIGNAL_TOKEN, Interest::READABLE)
                .map_err(EngineError::EventLoop)?;
        }
        let log = match &cfg.output.log {
            Some(lc) => {
                let start_epoch = clock.epoch_us(started).max(0) as u64;
                let log = TxLog::create(lc, tid, plan.log_format, start_epoch).map_err(|e| {
                    EngineError::LogFile {
                        name: e.name,
                        source: e.source,
                    }
                })?;
                Some(log)
            }
            None => None,
        };
        let net = Sockets::new(&cfg.conn, &cfg.targets, &cfg.output.progname, registry);
        let mut ctx = ThreadCtx::new(cfg, plan, clock, recorders.stats, rngs, log, net);
        ctx.stages = recorders.stages;
        if let Some(run) = ctx.stages.as_mut() {
            run.hold_totals_of(&ctx.stats);
        }
        ctx.live = recorders.live;
        let n = clients.len();
        Ok(Worker {
            tid,
            shared,
            ctx,
            first_id: clients.first().map_or(0, |c| c.id() as usize),
            clients,
            poll,
            events: Events::with_capacity(n + 2),
            sched: Scheduler::new(n),
            swept: false,
            remaining: n,
            conn_start: started,
            connected: started,
            bench_start: started,
            progress: None,
            interrupt_deadline: None,
            warmup_end: None,
            live_next: None,
            live_passes: 0,
            aborted: false,
        })
    }

    /// The initial connections (not with `-C`), blocking, one client after the
    /// other; stops early when another thread failed.
    fn connect_clients(&mut self) -> Result<(), EngineError> {
        self.conn_start = self.ctx.clock.now();
        if self.ctx.cfg.connect_per_tx {
            return Ok(());
        }
        for client in &mut self.clients {
            if self.shared.failed() {
                break;
            }
            let id = client.id();
            match client.connect_initially(&mut self.ctx) {
                Ok(true) => {}
                Ok(false) => return Err(EngineError::Connection { client: id }),
                Err(source) => return Err(EngineError::Register { client: id, source }),
            }
        }
        Ok(())
    }

    /// After GO: notes that the connections are made, then, in a sharded run,
    /// sleeps until the agreed start (or Ctrl-C).
    fn wait_for_start(&mut self) {
        let clock = self.ctx.clock;
        self.connected = clock.now();
        let Some(start) = self.shared.start else {
            return;
        };
        /// Longest sleep between two looks at Ctrl-C.
        const NAP_US: Micros = 50_000;
        loop {
            let left = start - clock.now();
            if left <= 0 || (self.shared.handle_signals && crate::signal::interrupted()) {
                return;
            }
            std::thread::sleep(Duration::from_micros(left.min(NAP_US) as u64));
        }
    }

    /// GO (or the agreed start): the benchmark clock starts; the `-R` schedule
    /// counts from here, the `-T` end and the progress reports from the run start
    /// (before the initial connections, as pgbench) or from the agreed start. So
    /// the last `-P` line of a `-T` that is a multiple of `-P` falls on the end,
    /// and is printed in the loop's pass that sees the end, as pgbench prints it.
    /// With `--warmup`, `-T` and the measured interval count from its end, the
    /// progress lines before it say they are the warm-up's, and the aggregates of
    /// the `-l` log start there.
    fn start(&mut self) {
        let cfg = self.ctx.cfg;
        let now = self.ctx.clock.now();
        self.bench_start = now;
        if !cfg.connect_per_tx {
            let connecting = (self.connected - self.conn_start).max(0) as u64;
            self.ctx.stats.add_conn_time_us(connecting);
        }
        self.ctx.throttle_trigger = now;
        if self.ctx.live.is_some() {
            self.live_next = Some(now);
        }
        let origin = self.shared.measured_origin();
        if let Some(log) = self.ctx.log.as_mut()
            && !cfg.stages.is_empty()
        {
            let starts = cfg
                .stages
                .iter()
                .map(|st| {
                    let start = origin + i64::from(st.start_s) * 1_000_000;
                    self.ctx.clock.epoch_us(start).max(0) as u64
                })
                .collect();
            log.set_stage_starts(starts);
        }
        if let Some(edge) = self.shared.warmup_end {
            self.bench_start = now.max(edge);
            self.warmup_end = Some(edge);
            self.ctx.measure_from = edge;
            self.ctx.restart_log_aggregate(edge);
        }
        if let RunLimit::Duration(secs) = cfg.limit {
            self.ctx.end_time = Some(origin + i64::from(secs) * 1_000_000);
        }
        if self.tid == 0 && cfg.output.progress > 0 {
            let run_origin = self.shared.start.unwrap_or(self.shared.run_start);
            let mut progress =
                ProgressReporter::new(cfg.output.progress, run_origin, self.shared.warmup_end);
            if let Some(run) = &self.ctx.stages {
                progress = progress.with_stages(run.timeline.clone());
            }
            self.progress = Some(progress);
        }
    }

    /// The end of `--warmup`: the `-R` schedule restarts at it (a backlog of the
    /// warm-up does not become the measured lag).
    #[cold]
    fn end_warmup(&mut self, edge: Micros) {
        self.warmup_end = None;
        self.ctx.throttle_trigger = self.ctx.throttle_trigger.max(edge);
    }

    /// Runs until every client is done, the run is interrupted, or
    /// `--exit-on-abort` stops all threads.
    fn event_loop(&mut self) {
        while self.remaining > 0 && !self.shared.exit_requested() {
            // Whether the loop slept and woke without an event (a deadline).
            let mut timed_out = false;
            if let Wake::After(timeout) = self.next_wake() {
                if !self.poll_sockets(timeout) {
                    break;
                }
                timed_out = self.events.is_empty();
            }
            if self.shared.exit_requested() {
                break;
            }
            let mut now = LazyNow::new();
            if self.check_timers(&mut now) {
                self.interrupt_clients(&mut now);
                break;
            }
            let run = self.run_clients(&mut now);
            self.sched.end_pass();
            if !run {
                break;
            }
            if let Some(progress) = self.progress.as_mut() {
                let t = now.refresh(&self.ctx.clock);
                progress.report_if_due(t, self.shared, self.ctx.plan, &self.ctx.clock);
            }
            if self.live_next.is_some() {
                self.publish_live_if_due(&mut now, timed_out);
            }
        }
    }

    /// How long the loop may sleep: until the earliest client deadline, the next
    /// progress report, the `-T` end or the end of the Ctrl-C grace period; not at
    /// all when a client can go on at once.
    fn next_wake(&mut self) -> Wake {
        if self.sched.has_run_now() {
            return Wake::Now;
        }
        let clock = &self.ctx.clock;
        let mut now = LazyNow::new();
        let mut earliest: Option<Micros> = None;
        let mut consider = |t: Micros, now: &mut LazyNow| {
            let d = t - now.get(clock);
            earliest = Some(earliest.map_or(d, |m| m.min(d)));
        };
        if let Some(t) = self.sched.next_deadline() {
            consider(t, &mut now);
        }
        if let Some(progress) = &self.progress {
            consider(progress.next_report(), &mut now);
        }
        if let Some(end) = self.ctx.end_time
            && !self.ctx.timer_exceeded
        {
            consider(end, &mut now);
        }
        if let Some(deadline) = self.interrupt_deadline {
            consider(deadline, &mut now);
        }
        if let Some(edge) = self.warmup_end {
            consider(edge, &mut now);
        }
        // The publication edge only bounds a sleep that is bounded anyway (the clock is
        // read then): a loop that would wait for its sockets alone publishes when they wake it.
        if let Some(edge) = self.live_next
            && now.peek().is_some()
        {
            consider(edge, &mut now);
        }
        Wake::After(earliest)
    }

    /// Waits for socket events (at most `timeout` µs) and notes which clients'
    /// sockets are ready. False when polling failed (the run stops).
    fn poll_sockets(&mut self, timeout: Option<Micros>) -> bool {
        let timeout = timeout.map(|d| Duration::from_micros(d.max(0) as u64));
        if let Err(e) = self.poll.poll(&mut self.events, timeout)
            && e.kind() != std::io::ErrorKind::Interrupted
        {
            messages::error(self.ctx.progname(), &format!("epoll_wait() failed: {e}"));
            return false;
        }
        for event in self.events.iter() {
            let token = event.token();
            if token == SIGNAL_TOKEN || token == WAKE_TOKEN {
                continue;
            }
            // Events for tokens no client of this thread owns are ignored.
            if let Some(i) = token.0.checked_sub(self.first_id)
                && i < self.clients.len()
            {
                let readable = event.is_readable() || event.is_read_closed() || event.is_error();
                self.sched.socket_event(i, readable, event.is_writable());
            }
        }
        true
    }

    /// Notes the `-T` end and Ctrl-C (which starts a grace period for the
    /// transactions in flight). True when the grace period is over.
    fn check_timers(&mut self, now: &mut LazyNow) -> bool {
        let clock = self.ctx.clock;
        if let Some(edge) = self.warmup_end
            && now.get(&clock) >= edge
        {
            self.end_warmup(edge);
        }
        if let Some(end) = self.ctx.end_time
            && now.get(&clock) >= end
        {
            self.ctx.timer_exceeded = true;
        }
        if self.shared.handle_signals && crate::signal::interrupted() {
            if crate::signal::ending_at_once() {
                self.flush_and_await_end();
            }
            if self.interrupt_deadline.is_none() {
                self.ctx.timer_exceeded = true;
                let at = now.get(&clock);
                self.interrupt_deadline = Some(at + INTERRUPT_GRACE_US);
                self.shared.set_interrupted(at);
            }
        }
        self.interrupt_deadline
            .is_some_and(|deadline| now.get(&clock) >= deadline)
    }

    /// A signal ends the process at once: writes the complete lines of the log (not
    /// the pending aggregate) and waits for the signal's watchdog to end the process.
    #[cold]
    fn flush_and_await_end(&mut self) -> ! {
        self.ctx.flush_log();
        crate::signal::worker_settled();
        crate::signal::await_end()
    }

    /// Gives every due client its turn: the ready ones, or all of them once after
    /// the `-T` end or Ctrl-C. False when `--exit-on-abort` stops the run.
    fn run_clients(&mut self, now: &mut LazyNow) -> bool {
        let sweep = self.ctx.timer_exceeded && !self.swept;
        self.swept |= sweep;
        self.sched.begin_pass(now, &self.ctx.clock, sweep);
        let (remaining, aborted) = (&mut self.remaining, &mut self.aborted);
        let (shared, tid) = (self.shared, self.tid);
        let cfg = self.ctx.cfg;
        self.sched
            .run_ready(&mut self.clients, &mut self.ctx, now, |client| {
                *remaining -= 1;
                if client.state() != State::Aborted {
                    return true;
                }
                *aborted = true;
                if !cfg.errors.exit_on_abort {
                    return true;
                }
                // pgbench calls exit(2) here, whose stdio flush keeps what every
                // thread logged so far: stop all threads, each one flushing its
                // log, and let the caller exit without report.
                if shared.request_exit() {
                    messages::error(
                        &cfg.output.progname,
                        &format!("Run was aborted due to an error in thread {tid}"),
                    );
                }
                false
            })
    }

    /// End of the Ctrl-C grace period: cancels what is still running and stops
    /// those clients.
    fn interrupt_clients(&mut self, now: &mut LazyNow) {
        for client in self.clients.iter_mut().filter(|c| !c.done()) {
            client.interrupt(&mut self.ctx, now);
        }
    }

    /// Closes the connections still open (an interrupted run) and the log. After
    /// `--exit-on-abort` nothing is closed: as C's `exit()`, buffered log lines are
    /// written, the pending aggregate is not.
    fn shut_down(mut self) -> ThreadResult {
        if self.shared.exit_requested() {
            self.ctx.flush_log();
        } else {
            for client in &mut self.clients {
                client.disconnect(&mut self.ctx);
            }
            let end = self.ctx.clock.now();
            self.ctx.finish_log(end);
        }
        if self.ctx.live.is_some() {
            let end = self.ctx.clock.now();
            self.publish_live(end, true);
        }
        let log_failed = self.ctx.log_failed();
        let stages = match self.ctx.stages.take() {
            Some(run) => run.merge_into(&mut self.ctx.stats),
            None => Vec::new(),
        };
        let variables = self
            .clients
            .iter_mut()
            .map(Client::take_variables)
            .collect();
        ThreadResult {
            stages,
            variables,
            stats: self.ctx.stats,
            bench_start: self.bench_start,
            connected: self.connected,
            aborted: self.aborted,
            log_failed,
        }
    }
}
