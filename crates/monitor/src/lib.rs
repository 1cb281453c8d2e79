//! What the server was doing during a benchmark (`--server-stats`).
//!
//! [`Monitor::start`] opens one extra connection and samples, on a thread of its own:
//! every wait period (100 ms by default) the waits of the benchmark's backends (found
//! by application name), the checkpointer and the autovacuum workers, the waiting
//! lock requests, `pg_stat_database`, `pg_stat_wal`'s records and the live transaction
//! id and WAL positions; every interval (1 s by default) the cumulative counters of
//! `pg_stat_checkpointer` or `pg_stat_bgwriter`, `pg_stat_io` and the pgbench tables.
//! The lagging counters are rebuilt at the client's interval edges
//! ([`counter_curve`]). The views and columns are
//! chosen from the catalog, so servers 13 to 18 work. [`Monitor::finish`] stops it and
//! returns the [`ServerTimeline`], with the [`findings`] that explain the result.
//!
//! The sampler never disturbs the benchmark: when its connection fails it stops and
//! says so in the timeline's warnings.

pub mod catalog;
pub mod counter_curve;
mod error;
pub mod findings;
mod intervals;
pub mod latest;
pub mod machine;
pub mod machine_sampler;
mod sampler;
pub mod snapshot;
pub mod waits;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pgrush_stats::server::{ServerTimeline, WaitShare};
use pgrush_wire::conninfo::ConnParams;
use pgrush_wire::{ConnectConfig, Connection};

pub use catalog::SAMPLER_APPLICATION_NAME;
pub use error::MonitorError;
pub use findings::RunFacts;
use sampler::{Periods, Sampled};

/// How often to sample.
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    /// Counter interval (`--server-stats=INTERVAL`).
    pub interval: Duration,
    /// Wait sampling period.
    pub wait_period: Duration,
    /// Where the sampler also puts its latest values (`--metrics-listen`), if anywhere.
    pub latest: Option<latest::LatestSlot>,
    /// Whether the benchmark connects for each transaction (`-C`): its backends then
    /// flush their statistics as they exit, not once a second.
    pub connection_per_transaction: bool,
}

impl MonitorConfig {
    /// Counters every `interval`, waits ten times as often (at most every 100 ms).
    pub fn every(interval: Duration) -> MonitorConfig {
        MonitorConfig {
            interval,
            wait_period: (interval / 10).min(Duration::from_millis(100)),
            latest: None,
            connection_per_transaction: false,
        }
    }
}

/// A running sampler.
pub struct Monitor {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Sampled>,
    caps: catalog::Capabilities,
    config: MonitorConfig,
    in_recovery: Option<bool>,
}

impl Monitor {
    /// Connects with `params` and starts sampling; `start` is the run's start.
    pub fn start(
        params: &ConnParams,
        config: MonitorConfig,
        start: Instant,
    ) -> Result<Monitor, MonitorError> {
        let benchmark_app = params
            .effective_application_name()
            .unwrap_or_default()
            .to_string();
        let mut cfg =
            ConnectConfig::from_params(params).map_err(|e| MonitorError::Connect(e.to_string()))?;
        cfg.application_name = Some(SAMPLER_APPLICATION_NAME.to_string());
        cfg.startup
            .retain(|(k, _)| k != "application_name" && k != "fallback_application_name");
        if !cfg.startup.is_empty() {
            cfg.startup.push((
                "application_name".to_string(),
                SAMPLER_APPLICATION_NAME.to_string(),
            ));
        }
        let mut conn =
            Connection::connect_config(&cfg).map_err(|e| MonitorError::Connect(e.to_string()))?;
        let caps = catalog::Capabilities::read(&mut conn)?;
        let in_recovery = conn.parameter("in_hot_standby").map(|v| v == "on");
        let stop = Arc::new(AtomicBool::new(false));
        let periods = Periods {
            interval: config.interval,
            wait: config.wait_period,
        };
        let thread = {
            let (stop, caps) = (Arc::clone(&stop), caps.clone());
            let latest = config.latest.clone();
            std::thread::Builder::new()
                .name("server-stats".into())
                .spawn(move || {
                    let who = (benchmark_app.as_str(), latest.as_ref());
                    sampler::run(conn, &caps, who, periods, start, &stop)
                })
                .map_err(|e| MonitorError::Connect(e.to_string()))?
        };
        Ok(Monitor {
            stop,
            thread,
            caps,
            config,
            in_recovery,
        })
    }

    /// Whether the sampled server is a standby in recovery, as it reported on
    /// connecting (`in_hot_standby`, PostgreSQL 14 and later; `None` before).
    pub fn in_recovery(&self) -> Option<bool> {
        self.in_recovery
    }

    /// Stops sampling and closes the connection, building nothing (a run that measured
    /// nothing).
    pub fn stop(self) {
        if let Some(c) = self.join().conn {
            let _ = c.close();
        }
    }

    /// Tells the thread to stop and waits for what it sampled.
    fn join(self) -> Sampled {
        self.stop.store(true, Ordering::Release);
        self.thread.thread().unpark();
        self.thread.join().unwrap_or_default()
    }

    /// Stops sampling (reading the counters once more) and builds the timeline.
    pub fn finish(self, facts: &RunFacts) -> ServerTimeline {
        let (caps, config) = (self.caps.clone(), self.config.clone());
        let mut sampled = self.join();
        let mut warnings: Vec<String> = caps.privilege_warning().into_iter().collect();
        warnings.extend(sampled.failure.take());
        let fillfactors = sampled
            .conn
            .as_mut()
            .map(catalog::fillfactors)
            .unwrap_or_default();
        if let Some(c) = sampled.conn.take() {
            let _ = c.close();
        }
        let mut tables = snapshot::table_deltas(&sampled.last.tables, &sampled.first.tables);
        for t in &mut tables {
            t.fillfactor = fillfactors
                .iter()
                .find(|(n, _)| *n == t.name)
                .and_then(|(_, f)| *f);
        }
        let mut waits: Vec<WaitShare> = sampled
            .waits
            .shares()
            .into_iter()
            .map(|(wait, share)| WaitShare { wait, share })
            .collect();
        waits.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.wait.cmp(&b.wait)));
        let interval_s = config.interval.as_secs_f64();
        let (intervals, database) = intervals::build(
            &sampled,
            interval_s,
            caps.step_window(config.connection_per_transaction),
        );
        let mut timeline = ServerTimeline {
            interval_s,
            wait_sample_s: config.wait_period.as_secs_f64(),
            server_version_num: caps.version_num,
            database,
            intervals,
            waits,
            events: sampled.tracker.finish(),
            tables,
            warnings,
            findings: Vec::new(),
        };
        findings::confirm_checkpoints(&mut timeline);
        timeline.findings = findings::explain(&timeline, facts);
        timeline
    }
}
