//! One worker thread: a mio event loop over its clients (pgbench's `threadRun`).
//!
//! Token `i` is client `i` of the thread; [`SIGNAL_TOKEN`] is the Ctrl-C self-pipe.
//! The poll timeout is the earliest client deadline (throttle slot, `\sleep`),
//! the next progress report (thread 0) and the `-T` end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::AsRawFd;
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use pgrush_stats::{
    AggregateInterval, LogFormat, ProgressSnapshot, ThreadStats, TxLogRecord, TxRecord,
};
use pgrush_wire::Connection;

use crate::client::{Client, State, Wait};
use crate::clock::{Clock, LazyNow, Micros};
use crate::config::{EngineConfig, RunLength, ThreadRngs};
use crate::messages;
use crate::plan::Plan;
use crate::shared::Shared;

/// Token of the Ctrl-C self-pipe.
pub const SIGNAL_TOKEN: Token = Token(usize::MAX - 1);

/// Token of the `--exit-on-abort` waker.
pub const WAKE_TOKEN: Token = Token(usize::MAX - 2);

/// Grace period for in-flight transactions after Ctrl-C (µs).
const INTERRUPT_GRACE_US: Micros = 1_000_000;

/// Transaction log of one thread.
pub struct TxLog {
    file: BufWriter<File>,
    format: LogFormat,
    sampling_rate: f64,
    agg: Option<AggregateInterval>,
    line: String,
}

/// The thread-wide state the client state machine works with.
pub struct ThreadCtx<'a> {
    /// Run configuration.
    pub cfg: &'a EngineConfig,
    /// Precomputed statement names.
    pub plan: &'a Plan,
    /// Prepared statement names (`P_<k>`), by global index.
    pub stmt_names: &'a [String],
    /// The thread's clock.
    pub clock: Clock,
    /// Statistics.
    pub stats: ThreadStats,
    /// Thread generators.
    pub rngs: ThreadRngs,
    /// Last throttle slot (µs).
    pub throttle_trigger: Micros,
    /// Mean throttle delay per thread (µs; 0 = off).
    pub throttle_delay: f64,
    /// `-T` over (or interrupted).
    pub timer_exceeded: bool,
    /// `-T` end instant.
    pub end_time: Option<Micros>,
    /// Whether latencies are measured per transaction.
    pub detailed: bool,
    /// Transaction log.
    pub log: Option<TxLog>,
    registry: mio::Registry,
    /// Set when a log write failed (reported once).
    log_error: bool,
}

impl<'a> ThreadCtx<'a> {
    /// Program name for messages.
    pub fn progname(&self) -> &str {
        &self.cfg.progname
    }

    /// Picks the script of the next transaction (no draw with a single script).
    pub fn choose_script(&mut self) -> usize {
        pgrush_script::choose_script(&mut self.rngs.choose, &self.plan.weights)
    }

    /// Next Poisson-distributed throttle delay (µs).
    pub fn poisson_delay(&mut self) -> Micros {
        pgrush_script::throttle_delay_us(&mut self.rngs.throttle, self.throttle_delay)
    }

    /// Global prepared-statement index of a script command.
    pub fn stmt_index(&self, script: usize, command: usize) -> usize {
        self.plan.stmt_index[script][command]
    }

    /// The `$n` text of prepared statement `k` (for error positions).
    pub fn stmt_text(&self, k: usize) -> &[u8] {
        let (s, c) = self.plan.stmt_origin[k];
        match &self.cfg.scripts[s].commands[c].kind {
            pgrush_script::CommandKind::Sql(sql) => &sql.extended_text,
            _ => b"",
        }
    }

    /// The statement text libpq would show in `LINE n:` for a command
    /// (`sent` is the text sent in simple mode), as bytes.
    pub fn query_text<'s>(
        &'s self,
        script: usize,
        command: usize,
        sent: &'s [u8],
    ) -> Option<&'s [u8]> {
        match self.cfg.query_mode {
            pgrush_stats::QueryMode::Simple => Some(sent),
            pgrush_stats::QueryMode::Extended => {
                match &self.cfg.scripts[script].commands.get(command)?.kind {
                    pgrush_script::CommandKind::Sql(sql) => Some(&sql.extended_text),
                    _ => None,
                }
            }
            pgrush_stats::QueryMode::Prepared => None,
        }
    }

    /// Opens a client connection (blocking), printing libpq's message on failure.
    pub fn connect(&mut self) -> Option<Connection> {
        connect_client(self.cfg)
    }

    /// Registers the client's connection in the poll.
    pub fn register(&mut self, cl: &mut Client) -> bool {
        let Some(conn) = cl.conn.as_ref() else {
            return false;
        };
        let fd = conn.as_raw_fd();
        let token = Token(cl.id as usize);
        match self
            .registry
            .register(&mut SourceFd(&fd), token, Interest::READABLE)
        {
            Ok(()) => {
                cl.registered = true;
                cl.write_interest = false;
                true
            }
            Err(e) => {
                messages::error(
                    self.progname(),
                    &format!("could not register connection of client {}: {e}", cl.id),
                );
                false
            }
        }
    }

    /// Asks for writability events only while output is pending (edge-triggered
    /// write-space events would otherwise wake the loop after every send).
    pub fn sync_write_interest(&mut self, cl: &mut Client) {
        if !cl.registered || cl.out_pending == cl.write_interest {
            return;
        }
        let Some(conn) = cl.conn.as_ref() else {
            return;
        };
        let fd = conn.as_raw_fd();
        let interest = if cl.out_pending {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        if self
            .registry
            .reregister(&mut SourceFd(&fd), Token(cl.id as usize), interest)
            .is_ok()
        {
            cl.write_interest = cl.out_pending;
        }
    }

    /// Removes a connection from the poll.
    pub fn deregister(&mut self, conn: &Connection) {
        let fd = conn.as_raw_fd();
        let _ = self.registry.deregister(&mut SourceFd(&fd));
    }

    /// Writes the transaction to the `-l` log (sampling and aggregation applied).
    pub fn log_tx(&mut self, client_id: u32, tx_no: u64, rec: &TxRecord, now: Micros) {
        let epoch = self.clock.epoch_us(now).max(0) as u64;
        let Some(log) = self.log.as_mut() else {
            return;
        };
        log.line.clear();
        if let Some(agg) = log.agg.as_mut() {
            agg.record(epoch, rec, &mut log.line);
        } else {
            if log.sampling_rate > 0.0
                && !pgrush_script::sample(&mut self.rngs.sample, log.sampling_rate)
            {
                return;
            }
            let lag = if rec.outcome == pgrush_stats::TxOutcome::Success {
                rec.lag_us
            } else {
                0.0
            };
            TxLogRecord {
                client_id,
                tx_no,
                outcome: rec.outcome,
                latency_us: rec.latency_us,
                script: rec.script,
                end_epoch_us: epoch,
                lag_us: lag,
                tries: rec.tries,
            }
            .write_line(&log.format, &mut log.line);
        }
        if !log.line.is_empty()
            && log.file.write_all(log.line.as_bytes()).is_err()
            && !self.log_error
        {
            self.log_error = true;
            messages::error(&self.cfg.progname, "could not write to log file");
        }
    }

    fn finish_log(&mut self, now: Micros) {
        let epoch = self.clock.epoch_us(now).max(0) as u64;
        if let Some(log) = self.log.as_mut() {
            log.line.clear();
            if let Some(agg) = log.agg.as_mut() {
                agg.finish(epoch, &mut log.line);
            }
            let _ = log.file.write_all(log.line.as_bytes());
            let _ = log.file.flush();
        }
    }
}

/// Connects one benchmark client (blocking) and switches it to non-blocking mode.
pub fn connect_client(cfg: &EngineConfig) -> Option<Connection> {
    match Connection::connect(&cfg.conn) {
        Ok(mut c) => {
            if c.set_nonblocking(true).is_err() {
                return None;
            }
            Some(c)
        }
        Err(e) => {
            messages::error(&cfg.progname, &e.to_string());
            None
        }
    }
}

/// What one thread hands back.
pub struct ThreadResult {
    /// Its statistics.
    pub stats: ThreadStats,
    /// When its benchmark started (after the initial connections), on the shared clock.
    pub bench_start: Micros,
    /// When it started connecting.
    pub started: Micros,
    /// Whether one of its clients aborted.
    pub aborted: bool,
}

/// Runs one worker thread to completion.
pub fn run_thread(
    tid: usize,
    cfg: &EngineConfig,
    plan: &Plan,
    mut clients: Vec<Client>,
    shared: &Shared,
    rngs: ThreadRngs,
    stats: ThreadStats,
) -> ThreadResult {
    let clock = shared.clock;
    let started = clock.now();
    let mut poll = match Poll::new() {
        Ok(p) => p,
        Err(e) => {
            messages::error(&cfg.progname, &format!("could not create event loop: {e}"));
            std::process::exit(1);
        }
    };
    let registry = match poll.registry().try_clone() {
        Ok(r) => r,
        Err(e) => {
            messages::error(&cfg.progname, &format!("could not create event loop: {e}"));
            std::process::exit(1);
        }
    };
    match mio::Waker::new(&registry, WAKE_TOKEN) {
        Ok(w) => shared.set_waker(tid, w),
        Err(e) => {
            messages::error(&cfg.progname, &format!("could not create event loop: {e}"));
            std::process::exit(1);
        }
    }
    if let Some(fd) = shared.signal_fd {
        let _ = registry.register(&mut SourceFd(&fd), SIGNAL_TOKEN, Interest::READABLE);
    }
    // Open the log file when the thread starts.
    let log = cfg.log.as_ref().map(|lc| {
        let name = if tid == 0 {
            format!("{}.{}", lc.prefix, lc.pid)
        } else {
            format!("{}.{}.{}", lc.prefix, lc.pid, tid)
        };
        let file = match File::create(&name) {
            Ok(f) => f,
            Err(e) => {
                messages::error(
                    &cfg.progname,
                    &format!(
                        "could not open logfile \"{name}\": {}",
                        pgrush_wire::strerror(&e)
                    ),
                );
                std::process::exit(1);
            }
        };
        let format = plan.log_format;
        TxLog {
            file: BufWriter::with_capacity(64 * 1024, file),
            format,
            sampling_rate: lc.sampling_rate,
            agg: (lc.aggregate_interval > 0).then(|| {
                AggregateInterval::new(
                    clock.epoch_us(started).max(0) as u64,
                    lc.aggregate_interval,
                    format,
                )
            }),
            line: String::with_capacity(256),
        }
    });

    let mut ctx = ThreadCtx {
        cfg,
        plan,
        stmt_names: &plan.stmt_names,
        clock,
        stats,
        rngs,
        throttle_trigger: 0,
        throttle_delay: cfg.throttle_delay_us(),
        timer_exceeded: false,
        end_time: None,
        detailed: cfg.detailed_latency(),
        log,
        registry,
        log_error: false,
    };

    // Initial connections (not with -C).
    shared.ready.wait();
    let conn_start = clock.now();
    if !cfg.connect_per_tx {
        for cl in clients.iter_mut() {
            match connect_client(cfg) {
                Some(c) => {
                    cl.conn = Some(c);
                    if !ctx.register(cl) {
                        std::process::exit(1);
                    }
                }
                None => {
                    messages::error(
                        &cfg.progname,
                        &format!("could not create connection for client {}", cl.id),
                    );
                    std::process::exit(1);
                }
            }
        }
    }
    shared.go.wait();
    let bench_start = clock.now();
    if !cfg.connect_per_tx {
        ctx.stats
            .add_conn_time_us((bench_start - conn_start).max(0) as u64);
    }
    ctx.throttle_trigger = bench_start;
    if let RunLength::Duration(secs) = cfg.length {
        // As pgbench, the duration counts from the start of the run (before connecting).
        ctx.end_time = Some(shared.run_start + i64::from(secs) * 1_000_000);
    }
    let progress_us = i64::from(cfg.progress) * 1_000_000;
    let mut next_report = bench_start + progress_us;
    let mut last_report = bench_start;
    let mut last_snapshot = ProgressSnapshot::default();
    let mut interrupt_deadline: Option<Micros> = None;
    let mut aborted = false;

    // Client index by token: clients of this thread carry global ids.
    let base_id = clients.first().map(|c| c.id as usize).unwrap_or(0);
    let mut events = Events::with_capacity(clients.len() + 2);
    let mut readable: Vec<bool> = vec![false; clients.len()];
    let mut writable: Vec<bool> = vec![false; clients.len()];
    let mut remains = clients.len();

    'run: while remains > 0 {
        if shared.exit_requested() {
            break;
        }
        let mut now = LazyNow::new();
        // Compute how long we may sleep.
        let mut min_wait: Option<Micros> = None;
        let mut immediate = false;
        for cl in clients.iter() {
            match cl.wait {
                Wait::Now => {
                    immediate = true;
                    break;
                }
                Wait::Until(t) => {
                    let d = t - now.get(&clock);
                    min_wait = Some(min_wait.map_or(d, |m: Micros| m.min(d)));
                }
                Wait::Socket | Wait::Done => {}
            }
        }
        if tid == 0 && progress_us > 0 {
            let d = next_report - now.get(&clock);
            min_wait = Some(min_wait.map_or(d, |m: Micros| m.min(d)));
        }
        if let Some(end) = ctx.end_time
            && !ctx.timer_exceeded
        {
            let d = end - now.get(&clock);
            min_wait = Some(min_wait.map_or(d, |m: Micros| m.min(d)));
        }
        if let Some(deadline) = interrupt_deadline {
            let d = deadline - now.get(&clock);
            min_wait = Some(min_wait.map_or(d, |m: Micros| m.min(d)));
        }
        // As pgbench: when some client can go on at once, do not wait (nor look at
        // the sockets); pending readiness stays queued in epoll for the next poll.
        if !immediate {
            let timeout = min_wait.map(|d| Duration::from_micros(d.max(0) as u64));
            if let Err(e) = poll.poll(&mut events, timeout)
                && e.kind() != std::io::ErrorKind::Interrupted
            {
                messages::error(&cfg.progname, &format!("epoll_wait() failed: {e}"));
                break;
            }
            for ev in events.iter() {
                let t = ev.token();
                if t == SIGNAL_TOKEN || t == WAKE_TOKEN {
                    continue;
                }
                if let Some(idx) = t.0.checked_sub(base_id)
                    && idx < readable.len()
                {
                    readable[idx] |= ev.is_readable() || ev.is_read_closed() || ev.is_error();
                    writable[idx] |= ev.is_writable();
                }
            }
        }
        if shared.exit_requested() {
            break;
        }
        let mut now = LazyNow::new();
        if let Some(end) = ctx.end_time
            && now.get(&clock) >= end
        {
            ctx.timer_exceeded = true;
        }
        if shared.handle_signals && crate::signal::interrupted() && interrupt_deadline.is_none() {
            ctx.timer_exceeded = true;
            interrupt_deadline = Some(now.get(&clock) + INTERRUPT_GRACE_US);
            shared.set_interrupted();
        }
        if let Some(deadline) = interrupt_deadline
            && now.get(&clock) >= deadline
        {
            // Cancel what is still running and stop those clients.
            for cl in clients.iter_mut().filter(|c| !c.done()) {
                if let Some(conn) = cl.conn.as_ref() {
                    let _ = conn.cancel_token().cancel();
                }
                cl.state = State::Finished;
                cl.advance(&mut ctx, &mut now);
            }
            break;
        }

        for (i, cl) in clients.iter_mut().enumerate() {
            let (can_read, can_write) = (readable[i], writable[i]);
            let go = match cl.wait {
                Wait::Done => false,
                Wait::Now => true,
                Wait::Until(t) => now.get(&clock) >= t || ctx.timer_exceeded,
                Wait::Socket => can_read || (can_write && cl.out_pending),
            };
            if !go {
                continue;
            }
            readable[i] = false;
            writable[i] = false;
            if cl.out_pending && !cl.flush_output() {
                cl.state = State::Aborted;
                messages::error(
                    &cfg.progname,
                    &format!(
                        "client {} aborted in command {} (SQL) of script {}; perhaps the backend died while processing",
                        cl.id, cl.command, cl.script
                    ),
                );
            } else if matches!(cl.wait, Wait::Socket) && !can_read {
                // Only the output moved on: nothing to read yet.
                ctx.sync_write_interest(cl);
                continue;
            }
            // Each client reads the clock itself (lazily), as pgbench does, so the
            // time spent on the clients before it does not shorten its latency.
            let mut now = LazyNow::new();
            let w = cl.advance(&mut ctx, &mut now);
            if w == Wait::Socket {
                ctx.sync_write_interest(cl);
            }
            if w == Wait::Done {
                remains -= 1;
                if cl.state == State::Aborted {
                    aborted = true;
                    if cfg.exit_on_abort {
                        // pgbench calls exit(2) here, whose stdio flush keeps what
                        // every thread logged so far: stop all threads, each one
                        // flushing its log, and let the caller exit without report.
                        if shared.request_exit() {
                            messages::error(
                                &cfg.progname,
                                &format!("Run was aborted due to an error in thread {tid}"),
                            );
                        }
                        break 'run;
                    }
                }
            }
        }

        if tid == 0 && progress_us > 0 {
            let t = now.refresh(&clock);
            if t >= next_report {
                let cur = ProgressSnapshot::sum(shared.progress.iter().map(|a| a.as_ref()));
                let line = pgrush_report::progress::format_progress_line(
                    &plan.progress_opts,
                    &cur,
                    &last_snapshot,
                    &pgrush_report::progress::ProgressTime {
                        elapsed_us: (t - bench_start).max(0) as u64,
                        interval_us: (t - last_report).max(1) as u64,
                        now_epoch_us: clock.epoch_us(t).max(0) as u64,
                    },
                );
                eprintln!("{line}");
                last_snapshot = cur;
                last_report = t;
                while t >= next_report {
                    next_report += progress_us;
                }
            }
        }
    }
    if shared.exit_requested() {
        // As exit(): buffered log lines are written, the pending aggregate is not.
        if let Some(log) = ctx.log.as_mut() {
            let _ = log.file.flush();
        }
        return ThreadResult {
            stats: ctx.stats,
            bench_start,
            started,
            aborted,
        };
    }
    // Clients still holding connections (interrupted run).
    let mut now = LazyNow::new();
    for cl in clients.iter_mut() {
        cl.disconnect(&mut ctx);
    }
    ctx.finish_log(now.get(&clock));
    ThreadResult {
        stats: ctx.stats,
        bench_start,
        started,
        aborted,
    }
}
