//! `--server-stats`: the server samplers around a benchmark run (the run's own
//! server, and with `--target` each other target's, on a connection of its own to
//! the first of its hosts that answers), and what the client side adds to their
//! findings (tps per interval, the client's CPU time).

use std::time::{Duration, Instant};

use pgrush_engine::messages;
use pgrush_monitor::latest::LatestSlot;
use pgrush_monitor::{Monitor, MonitorConfig, RunFacts};
use pgrush_report::document::{RunDocument, TimeSeriesDoc};
use pgrush_stats::RunSummary;
use pgrush_stats::server::ServerTimeline;
use pgrush_wire::conninfo::ConnParams;

use crate::plan::RunPlan;

/// The sampler of one run, from its start to its end.
pub struct ServerSampling {
    params: ConnParams,
    interval: Duration,
    /// `-C`: the benchmark's backends flush their statistics as each exits.
    connection_per_transaction: bool,
    monitor: Option<Monitor>,
    cpu_at_start: Option<f64>,
    /// `--metrics-listen`: where the sampler also puts its latest values.
    latest: Option<LatestSlot>,
    /// The samplers of the `--target` servers other than the run's own.
    targets: Vec<TargetSampler>,
}

/// The sampler of one `--target` server.
struct TargetSampler {
    /// The target's index in the report's targets.
    index: usize,
    params: ConnParams,
    monitor: Option<Monitor>,
}

/// What one `--target` server's sampler found.
#[derive(Debug)]
pub struct TargetTimeline {
    /// The target's index in the report's targets.
    pub index: usize,
    /// Its timeline.
    pub timeline: ServerTimeline,
    /// Whether the server it reached was a standby in recovery (when it said).
    pub in_recovery: Option<bool>,
}

impl std::fmt::Debug for ServerSampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSampling")
            .field("interval", &self.interval)
            .field("running", &self.monitor.is_some())
            .field("targets", &self.targets.len())
            .finish()
    }
}

impl ServerSampling {
    /// The sampler the plan asks for, if any.
    pub fn for_run(plan: &RunPlan, params: &ConnParams) -> Option<ServerSampling> {
        plan.outputs.server_sampling.then(|| ServerSampling {
            params: params.clone(),
            interval: plan.outputs.server_interval,
            connection_per_transaction: plan.options.connect_per_transaction,
            monitor: None,
            cpu_at_start: None,
            latest: None,
            targets: Vec::new(),
        })
    }

    /// Also samples these `--target` servers: each one's index in the report's
    /// targets, and its parameters.
    pub fn sample_targets(&mut self, servers: Vec<(usize, ConnParams)>) {
        self.targets = servers
            .into_iter()
            .map(|(index, params)| TargetSampler {
                index,
                params,
                monitor: None,
            })
            .collect();
    }

    /// Has the sampler also put its latest values into `slot` (for the metrics endpoint).
    pub fn publish_to(&mut self, slot: LatestSlot) {
        self.latest = Some(slot);
    }

    /// Starts sampling (call when the run starts); `origin` is where the run's time
    /// series starts (now, or a shard's agreed start). A sampler that cannot start is
    /// a warning: the benchmark runs without it.
    pub fn start(&mut self, prog: &str, origin: Instant) {
        self.cpu_at_start = process_cpu_seconds();
        let config = MonitorConfig {
            connection_per_transaction: self.connection_per_transaction,
            ..MonitorConfig::every(self.interval)
        };
        let own = MonitorConfig {
            latest: self.latest.clone(),
            ..config.clone()
        };
        match Monitor::start(&self.params, own, origin) {
            Ok(m) => self.monitor = Some(m),
            Err(e) => messages::warning(prog, &format!("server statistics: {e}")),
        }
        for t in &mut self.targets {
            match Monitor::start(&t.params, config.clone(), origin) {
                Ok(m) => t.monitor = Some(m),
                Err(e) => messages::warning(
                    prog,
                    &format!("server statistics of target {}: {e}", t.index + 1),
                ),
            }
        }
    }

    /// Stops sampling, keeping nothing (a run that measured nothing).
    pub fn stop(&mut self) {
        let targets = self.targets.iter_mut().filter_map(|t| t.monitor.take());
        for m in self.monitor.take().into_iter().chain(targets) {
            m.stop();
        }
    }

    /// Stops sampling and returns the timeline, with findings drawn from the client's
    /// side of the run too.
    pub fn finish(
        &mut self,
        summary: &RunSummary,
        series: Option<&TimeSeriesDoc>,
    ) -> Option<ServerTimeline> {
        let monitor = self.monitor.take()?;
        let cpu = self
            .cpu_at_start
            .zip(process_cpu_seconds())
            .map(|(a, b)| b - a);
        let facts = run_facts(summary, series, cpu);
        Some(monitor.finish(&facts))
    }

    /// Stops the `--target` servers' samplers and returns their timelines, with
    /// findings drawn from the whole run's figures (the client's CPU time aside).
    pub fn finish_targets(
        &mut self,
        summary: &RunSummary,
        series: Option<&TimeSeriesDoc>,
    ) -> Vec<TargetTimeline> {
        let facts = run_facts(summary, series, None);
        self.targets
            .iter_mut()
            .filter_map(|t| {
                let monitor = t.monitor.take()?;
                let in_recovery = monitor.in_recovery();
                Some(TargetTimeline {
                    index: t.index,
                    timeline: monitor.finish(&facts),
                    in_recovery,
                })
            })
            .collect()
    }
}

/// What the findings need from the client's side of a run.
fn run_facts(
    summary: &RunSummary,
    series: Option<&TimeSeriesDoc>,
    client_cpu_s: Option<f64>,
) -> RunFacts {
    RunFacts {
        tps_intervals: series
            .map(|s| {
                s.intervals
                    .iter()
                    .map(|i| (i.start_s, i.duration_s, i.tps))
                    .collect()
            })
            .unwrap_or_default(),
        clients: summary.config.clients,
        threads: summary.config.threads,
        scale: (summary.config.scale > 0).then_some(summary.config.scale),
        client_cpu_s,
        elapsed_s: summary.bench_duration_s(),
    }
}

/// Explains a merged run's server timeline (one shard's, see
/// [`pgrush_report::merge`]) again with the whole run's figures: its tps series,
/// clients, threads and scale (the clients' CPU time is not known).
pub fn explain_merged(summary: &RunSummary, doc: &mut RunDocument) {
    let facts = run_facts(summary, doc.time_series.as_ref(), None);
    if let Some(t) = doc.server_stats.as_mut() {
        t.findings = pgrush_monitor::findings::explain(t, &facts);
    }
}

/// User plus system CPU time of this process so far (s).
fn process_cpu_seconds() -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: getrusage succeeded, so the struct is initialized.
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(usage.ru_utime) + secs(usage.ru_stime))
}
