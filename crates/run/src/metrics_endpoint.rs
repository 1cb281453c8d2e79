//! The run's HTTP endpoints: `--metrics-listen ADDR`, `/metrics` for Prometheus, and
//! `--dashboard ADDR`, a live page (`/`, `/data.json`; [`dashboard`]), for the whole
//! run (warm-up and stages included) until the report is written, and
//! `--metrics-linger` seconds after it.
//!
//! The addresses are bound before the run starts (a bad one ends the run there, status
//! 1); one address given to both options is one listener serving both. One thread of
//! its own sleeps in `epoll` until a connection comes, the dashboard's next interval is
//! due, or it is told to stop (a [`mio::Waker`]), and answers the requests one after
//! the other: at each scrape it takes the deltas the engine's threads published
//! ([`LiveTotals::absorb`]), reads the client machine's load since the previous scrape,
//! and renders the page ([`pgrush_report::metrics_text`]); with the dashboard it also
//! closes an interval every second. It wakes only for these, so between scrapes it
//! costs nothing, and the engine's threads never wait for it. Any other path is a 404;
//! a request that does not come within a few seconds is dropped.

mod dashboard;
mod http;

use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};

use pgrush_monitor::latest::{LatestSlot, ServerLatest};
use pgrush_monitor::machine::{MachineInterval, MachineReading};
use pgrush_report::metrics_text::{Gauge, MetricsFormat, MetricsPage, render};
use pgrush_script::Script;
use pgrush_stats::live::{LiveMetrics, LiveShape, LiveTotals};

pub use dashboard::FinalPage;

use crate::failure::Failure;
use crate::plan::RunPlan;
use dashboard::Dashboard;
use http::{Reply, Request};

/// The token of the waker that tells the serving thread to stop; listener `i` has
/// token `i`.
const STOP: Token = Token(usize::MAX);

/// The endpoint of one run; dropping it stops serving.
#[derive(Debug)]
pub struct MetricsEndpoint {
    live: Arc<LiveMetrics>,
    server: LatestSlot,
    final_page: Option<FinalPage>,
    linger: Duration,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<()>>,
}

/// What one listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Routes {
    metrics: bool,
    dashboard: bool,
}

/// What the serving thread keeps between requests.
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
    /// `--dashboard`: its intervals so far.
    dashboard: Option<Dashboard>,
}

impl MetricsEndpoint {
    /// Binds `--metrics-listen`'s and `--dashboard`'s addresses and starts serving, if
    /// the plan asks for either.
    pub fn open(plan: &RunPlan, scripts: &[Script]) -> Result<Option<MetricsEndpoint>, Failure> {
        let opts = &plan.options;
        let listeners = bind(plan)?;
        if listeners.is_empty() {
            return Ok(None);
        }
        let shape = LiveShape {
            scripts: scripts.len(),
            stages: plan.stages.len(),
            throttled: plan.throttle_rate() > 0.0,
        };
        let live = LiveMetrics::new(plan.threads as usize, shape);
        let server = LatestSlot::default();
        let names: Vec<String> = scripts
            .iter()
            .map(|s| String::from_utf8_lossy(&s.desc).into_owned())
            .collect();
        let dashboard = opts
            .dashboard
            .map(|_| Dashboard::new(shape, names.clone(), command_line()));
        let final_page = dashboard.as_ref().map(Dashboard::final_page);
        let origin = Instant::now();
        let serving = Serving {
            live: Arc::clone(&live),
            server: Arc::clone(&server),
            totals: LiveTotals::new(shape),
            scripts: names,
            shard: opts.shard.as_ref().map_or(0, |s| s.index),
            clients: opts.clients,
            origin,
            machine: MachineReading::read(0),
            machine_load: Vec::new(),
            dashboard,
        };
        let start_failed = |e: std::io::Error| {
            Failure::error(format!("could not start the metrics endpoint: {e}"))
        };
        let poll = Poll::new().map_err(start_failed)?;
        for (i, (listener, _)) in listeners.iter().enumerate() {
            poll.registry()
                .register(
                    &mut SourceFd(&listener.as_raw_fd()),
                    Token(i),
                    Interest::READABLE,
                )
                .map_err(start_failed)?;
        }
        let waker = Arc::new(Waker::new(poll.registry(), STOP).map_err(start_failed)?);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || serve(&listeners, poll, serving, &flag))
            .map_err(start_failed)?;
        Ok(Some(MetricsEndpoint {
            live,
            server,
            final_page,
            linger: Duration::from_secs(u64::from(opts.metrics_linger_s)),
            stop,
            waker,
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

    /// With `--dashboard`: where the final report goes (the `--html` page), served at
    /// `/` from then on.
    pub fn final_page(&self) -> Option<FinalPage> {
        self.final_page.clone()
    }

    /// The report is written: serves `--metrics-linger` seconds more, then stops.
    pub fn linger(self) {
        std::thread::sleep(self.linger);
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // A failed wake leaves the thread to notice the flag at its next wake-up: the
        // dashboard's interval, or the next connection.
        let _ = self.waker.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The listeners the options ask for: one per address, serving what was asked there.
fn bind(plan: &RunPlan) -> Result<Vec<(TcpListener, Routes)>, Failure> {
    let opts = &plan.options;
    let mut wanted: Vec<(SocketAddr, Routes)> = Vec::new();
    if let Some(addr) = opts.metrics_listen {
        wanted.push((
            addr,
            Routes {
                metrics: true,
                dashboard: false,
            },
        ));
    }
    if let Some(addr) = opts.dashboard {
        dashboard::check_address(&opts.progname, addr, opts.dashboard_bind_any)?;
        match wanted.iter_mut().find(|(a, _)| *a == addr) {
            Some((_, routes)) => routes.dashboard = true,
            None => wanted.push((
                addr,
                Routes {
                    metrics: false,
                    dashboard: true,
                },
            )),
        }
    }
    wanted
        .into_iter()
        .map(|(addr, routes)| {
            let what = if routes.metrics {
                "metrics"
            } else {
                "the dashboard"
            };
            let fail = |e: std::io::Error| {
                Failure::error(format!("could not listen for {what} on {addr}: {e}"))
            };
            let listener = TcpListener::bind(addr).map_err(fail)?;
            listener.set_nonblocking(true).map_err(fail)?;
            Ok((listener, routes))
        })
        .collect()
}

/// The command line the dashboard shows, passwords redacted.
fn command_line() -> String {
    crate::output::redacted_argv().join(" ")
}

/// The thread: the requests one after the other, and the dashboard's intervals, until
/// told to stop. It sleeps in `poll` until a listener has a connection, the next
/// dashboard interval is due, or the waker says stop.
fn serve(
    listeners: &[(TcpListener, Routes)],
    mut poll: Poll,
    mut serving: Serving,
    stop: &AtomicBool,
) {
    let mut events = Events::with_capacity(listeners.len() + 1);
    while !stop.load(Ordering::Acquire) {
        let timeout = serving.dashboard.as_ref().map(Dashboard::until_due);
        if let Err(e) = poll.poll(&mut events, timeout)
            && e.kind() != std::io::ErrorKind::Interrupted
        {
            // Not expected of epoll; look again after a while rather than spin.
            std::thread::sleep(Duration::from_millis(100));
        }
        for event in &events {
            let Some((listener, routes)) = listeners.get(event.token().0) else {
                continue;
            };
            // The registration is edge-triggered: take every waiting connection.
            while let Ok((stream, _)) = listener.accept() {
                let _ = stream.set_nonblocking(false);
                http::answer(stream, |request| serving.reply(request, *routes));
            }
        }
        if let Some(d) = serving.dashboard.as_mut()
            && d.interval_due()
        {
            serving
                .totals
                .absorb_also_into(&serving.live, Some(d.open_interval()));
            let server = serving
                .server
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            d.close_interval(serving.live.gauges(), &server);
        }
    }
}

impl Serving {
    /// The answer to `request` on a listener serving `routes`.
    fn reply(&mut self, request: &Request, routes: Routes) -> Reply {
        match request.path.as_str() {
            "/metrics" if routes.metrics => {
                let (content_type, body) = self.page(request.accept.as_deref());
                Reply::ok(content_type, body)
            }
            _ if routes.dashboard => match self.dashboard.as_mut() {
                Some(d) => d.reply(request),
                None => Reply::not_found(),
            },
            _ => Reply::not_found(),
        }
    }

    /// The page for a scrape whose `Accept` header is `accept`: content type and body.
    fn page(&mut self, accept: Option<&str>) -> (&'static str, String) {
        self.totals.absorb_also_into(
            &self.live,
            self.dashboard.as_mut().map(Dashboard::open_interval),
        );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::sync::mpsc;

    /// A loopback address with a port nothing listens on (bound and released).
    fn free_address() -> SocketAddr {
        let probe = TcpListener::bind("127.0.0.1:0").expect("bind a probe");
        probe.local_addr().expect("probe address")
    }

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .expect("send");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("read");
        answer
    }

    /// Without the dashboard the thread sleeps without a timeout: a connection wakes
    /// it, and dropping the endpoint (its waker) ends it.
    #[test]
    fn the_thread_wakes_for_a_request_and_for_the_end() {
        let addr = free_address();
        let plan = RunPlan::resolve(Options {
            metrics_listen: Some(addr),
            ..Options::default()
        });
        let endpoint = MetricsEndpoint::open(&plan, &[])
            .ok()
            .flatten()
            .expect("an endpoint");
        for _ in 0..3 {
            let answer = get(addr, "/metrics");
            assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
            assert!(answer.contains("pgrush_clients_connected"), "{answer}");
        }
        assert!(get(addr, "/other").starts_with("HTTP/1.1 404"));
        let (done, ended) = mpsc::channel();
        std::thread::spawn(move || {
            drop(endpoint);
            let _ = done.send(());
        });
        assert!(
            ended.recv_timeout(Duration::from_secs(10)).is_ok(),
            "the serving thread did not stop"
        );
        assert!(TcpStream::connect(addr).is_err(), "still listening");
    }
}
