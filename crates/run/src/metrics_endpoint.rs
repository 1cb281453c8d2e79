//! `--metrics-listen ADDR`: `/metrics` over HTTP for the whole run (warm-up and stages
//! included) until the report is written, and `--metrics-linger` seconds after it.
//!
//! The address is bound before the run starts (a bad one ends the run there, status 1).
//! One thread of its own accepts the scrapes one after the other: at each it takes the
//! deltas the engine's threads published ([`LiveTotals::absorb`]), reads the client
//! machine's load since the previous scrape, and renders the page
//! ([`pgrush_report::metrics_text`]). The engine's threads never wait for it. Any other
//! path is a 404; a request that does not come within a few seconds is dropped.

mod http;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pgrush_monitor::latest::{LatestSlot, ServerLatest};
use pgrush_monitor::machine::{MachineInterval, MachineReading};
use pgrush_report::metrics_text::{Gauge, MetricsFormat, MetricsPage, render};
use pgrush_script::Script;
use pgrush_stats::live::{LiveMetrics, LiveShape, LiveTotals};

use crate::failure::Failure;
use crate::plan::RunPlan;

/// The endpoint of one run; dropping it stops serving.
#[derive(Debug)]
pub struct MetricsEndpoint {
    live: Arc<LiveMetrics>,
    server: LatestSlot,
    addr: SocketAddr,
    linger: Duration,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What the serving thread keeps between scrapes.
struct Serving {
    live: Arc<LiveMetrics>,
    server: LatestSlot,
    totals: LiveTotals,
    scripts: Vec<String>,
    shard: u32,
    clients: u32,
    /// When the endpoint started: the machine readings' origin.
    origin: Instant,
    /// The latest machine reading, and the gauges computed up to it.
    machine: Option<MachineReading>,
    machine_load: Vec<Gauge>,
}

impl MetricsEndpoint {
    /// Binds `--metrics-listen`'s address and starts serving, if the plan asks for it.
    pub fn open(plan: &RunPlan, scripts: &[Script]) -> Result<Option<MetricsEndpoint>, Failure> {
        let opts = &plan.options;
        let Some(addr) = opts.metrics_listen else {
            return Ok(None);
        };
        let listener = TcpListener::bind(addr)
            .map_err(|e| Failure::error(format!("could not listen for metrics on {addr}: {e}")))?;
        let addr = listener.local_addr().unwrap_or(addr);
        let shape = LiveShape {
            scripts: scripts.len(),
            stages: plan.stages.len(),
            throttled: plan.throttle_rate() > 0.0,
        };
        let live = LiveMetrics::new(plan.threads as usize, shape);
        let server = LatestSlot::default();
        let serving = Serving {
            live: Arc::clone(&live),
            server: Arc::clone(&server),
            totals: LiveTotals::new(shape),
            scripts: scripts
                .iter()
                .map(|s| String::from_utf8_lossy(&s.desc).into_owned())
                .collect(),
            shard: opts.shard.as_ref().map_or(0, |s| s.index),
            clients: opts.clients,
            origin: Instant::now(),
            machine: MachineReading::read(0),
            machine_load: Vec::new(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || serve(&listener, serving, &flag))
            .map_err(|e| Failure::error(format!("could not start the metrics endpoint: {e}")))?;
        Ok(Some(MetricsEndpoint {
            live,
            server,
            addr,
            linger: Duration::from_secs(u64::from(opts.metrics_linger_s)),
            stop,
            thread: Some(thread),
        }))
    }

    /// The figures the engine's threads publish to.
    pub fn live(&self) -> Arc<LiveMetrics> {
        Arc::clone(&self.live)
    }

    /// Where the server sampler (`--server-stats`) puts its latest values.
    pub fn server_slot(&self) -> LatestSlot {
        Arc::clone(&self.server)
    }

    /// The report is written: serves `--metrics-linger` seconds more, then stops.
    pub fn linger(self) {
        std::thread::sleep(self.linger);
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the thread from `accept`: a connection of our own.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread: one scrape after the other until told to stop.
fn serve(listener: &TcpListener, mut serving: Serving, stop: &AtomicBool) {
    for stream in listener.incoming() {
        if stop.load(Ordering::Acquire) {
            return;
        }
        if let Ok(stream) = stream {
            http::answer(stream, |accept| serving.page(accept));
        }
    }
}

impl Serving {
    /// The page for a scrape whose `Accept` header is `accept`: content type and body.
    fn page(&mut self, accept: Option<&str>) -> (&'static str, String) {
        self.totals.absorb(&self.live);
        let mut extra = self.machine_gauges();
        let server = self
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        extra.extend(server_gauges(&server));
        let format = MetricsFormat::for_accept(accept);
        let page = MetricsPage {
            scripts: &self.scripts,
            shard: self.shard,
            clients: self.clients,
            totals: &self.totals,
            gauges: self.live.gauges(),
            extra: &extra,
        };
        (format.content_type(), render(&page, format))
    }

    /// The client machine's load over the last half second or more (recomputed when
    /// the previous reading is at least that old, so that scrapes close together do
    /// not divide by nothing); none where `/proc` cannot be read.
    fn machine_gauges(&mut self) -> Vec<Gauge> {
        let t_us = self.origin.elapsed().as_micros() as i64;
        if let Some(before) = &self.machine
            && t_us - before.t_us >= MIN_MACHINE_INTERVAL_US
            && let Some(now) = MachineReading::read(t_us)
        {
            self.machine_load = machine_gauges(&now.delta(before));
            self.machine = Some(now);
        }
        self.machine_load.clone()
    }
}

/// The shortest interval the machine's load is computed over (µs).
const MIN_MACHINE_INTERVAL_US: i64 = 500_000;

/// The server sampler's latest values (none before it read any).
fn server_gauges(s: &ServerLatest) -> Vec<Gauge> {
    let mut out: Vec<Gauge> = s
        .waits
        .iter()
        .map(|(event, n)| Gauge {
            name: "pgrush_server_waits",
            help: "Server: the benchmark's backends by wait event (CPU: running) in the latest sample.",
            labels: vec![("event", event.clone())],
            value: *n as f64,
        })
        .collect();
    if !s.counters_read {
        return out;
    }
    let plain = |name, help, value| Gauge {
        name,
        help,
        labels: Vec::new(),
        value,
    };
    out.push(plain(
        "pgrush_server_wal_bytes",
        "Server: WAL bytes written since its statistics were reset (pg_stat_wal).",
        s.wal_bytes as f64,
    ));
    out.push(plain(
        "pgrush_server_checkpoints",
        "Server: checkpoints started since its statistics were reset.",
        s.checkpoints as f64,
    ));
    if let Some(ratio) = s.hit_ratio() {
        out.push(plain(
            "pgrush_server_hit_ratio",
            "Server: share of the database's buffer accesses found in shared buffers.",
            ratio,
        ));
    }
    out
}

/// The gauges of one machine interval.
fn machine_gauges(i: &MachineInterval) -> Vec<Gauge> {
    let gauge = |name, help, labels: Vec<(&'static str, String)>, value| Gauge {
        name,
        help,
        labels,
        value,
    };
    let per_s = |bytes: u64| bytes as f64 / i.duration_s;
    let mut out: Vec<Gauge> = [
        ("user", i.user),
        ("system", i.system),
        ("iowait", i.iowait),
        ("steal", i.steal),
    ]
    .into_iter()
    .map(|(mode, v)| {
        gauge(
            "pgrush_machine_cpu_ratio",
            "Client machine: share of all cores' time by mode since the previous scrape.",
            vec![("mode", mode.to_string())],
            v,
        )
    })
    .collect();
    out.push(gauge(
        "pgrush_machine_busiest_core_ratio",
        "Client machine: the busiest core's busy share since the previous scrape.",
        Vec::new(),
        i.core_busy.iter().copied().fold(0.0, f64::max),
    ));
    out.push(gauge(
        "pgrush_machine_run_queue",
        "Client machine: runnable tasks.",
        Vec::new(),
        i.procs_running as f64,
    ));
    out.push(gauge(
        "pgrush_machine_context_switches_per_second",
        "Client machine: context switches per second since the previous scrape.",
        Vec::new(),
        i.context_switches_per_s,
    ));
    for (direction, bytes) in [
        ("in", i.net.rx),
        ("out", i.net.tx),
        ("loopback", i.net.loopback_tx),
    ] {
        out.push(gauge(
            "pgrush_machine_network_bytes_per_second",
            "Client machine: network bytes per second since the previous scrape.",
            vec![("direction", direction.to_string())],
            per_s(bytes),
        ));
    }
    out
}
