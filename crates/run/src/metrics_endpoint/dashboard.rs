//! `--dashboard ADDR`: the live page (`/`) and its data (`/data.json?since=N`, the
//! intervals from the N-th on, so that a poll costs what is new, not the run's
//! length), then, once the report is written, the report's HTML page at `/`.
//!
//! Every second the serving thread closes an interval: the deltas the engine's
//! threads published since the last one (the same ones `/metrics` counts), the client
//! machine's load over it (`/proc`) and the server sampler's latest values. An interval
//! is under a kilobyte, and at most [`DEFAULT_LIMIT`] are kept (a longer run's merge
//! into longer ones, [`LiveSeries`]): a few megabytes however long the run.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pgrush_monitor::latest::ServerLatest;
use pgrush_monitor::machine::MachineReading;
use pgrush_report::dashboard::{
    DEFAULT_LIMIT, LiveInterval, LivePageInfo, LiveSeries, LiveServer, data_json, live_page,
};
use pgrush_stats::live::{LiveShape, LiveTotals, ThreadGauges};

use super::http::{Reply, Request};
use crate::failure::Failure;
use crate::machine_load::interval_doc;

/// Where the final report (the `--html` page) goes once it is written.
pub type FinalPage = Arc<Mutex<Option<String>>>;

/// How long an interval of the dashboard lasts.
const INTERVAL: Duration = Duration::from_secs(1);

/// The dashboard's intervals so far, and the one being filled.
pub(super) struct Dashboard {
    shape: LiveShape,
    scripts: Vec<String>,
    command_line: String,
    started: Instant,
    /// The deltas of the open interval, and when it opened.
    open: LiveTotals,
    opened: Instant,
    intervals: LiveSeries,
    machine: Option<MachineReading>,
    /// The server's WAL bytes and checkpoints at the first reading.
    server_base: Option<(u64, u64)>,
    final_page: FinalPage,
}

impl Dashboard {
    /// A dashboard of a run of `shape` whose scripts are `scripts`.
    pub(super) fn new(shape: LiveShape, scripts: Vec<String>, command_line: String) -> Dashboard {
        let now = Instant::now();
        Dashboard {
            shape,
            scripts,
            command_line,
            started: now,
            open: LiveTotals::new(shape),
            opened: now,
            intervals: LiveSeries::new(DEFAULT_LIMIT),
            machine: MachineReading::read(0),
            server_base: None,
            final_page: FinalPage::default(),
        }
    }

    /// Where the final report goes.
    pub(super) fn final_page(&self) -> FinalPage {
        Arc::clone(&self.final_page)
    }

    /// Whether the open interval has lasted its second.
    pub(super) fn interval_due(&self) -> bool {
        self.opened.elapsed() >= INTERVAL
    }

    /// How long until the open interval has lasted its second (nothing when it has).
    pub(super) fn until_due(&self) -> Duration {
        INTERVAL.saturating_sub(self.opened.elapsed())
    }

    /// The deltas of the open interval, for the thread to add the published ones to.
    pub(super) fn open_interval(&mut self) -> &mut LiveTotals {
        &mut self.open
    }

    /// Closes the open interval with the threads' `gauges` and the server's latest
    /// values, and opens the next.
    pub(super) fn close_interval(&mut self, gauges: ThreadGauges, server: &ServerLatest) {
        let now = Instant::now();
        let t_s = now.duration_since(self.started).as_secs_f64();
        let duration_s = now.duration_since(self.opened).as_secs_f64();
        let open = std::mem::replace(&mut self.open, LiveTotals::new(self.shape));
        let mut interval = LiveInterval::from_cells(&open, t_s, duration_s);
        interval.stage = gauges.stage_slot;
        interval.clients_connected = gauges.connected;
        let t_us = (t_s * 1e6) as i64;
        if let Some(before) = &self.machine
            && let Some(reading) = MachineReading::read(t_us)
        {
            interval.machine = Some(interval_doc(t_s - duration_s, &reading.delta(before)));
            self.machine = Some(reading);
        }
        interval.server = self.server(server);
        self.intervals.push(interval);
        self.opened = now;
    }

    /// The server's figures for the page: none before the sampler read anything.
    fn server(&mut self, s: &ServerLatest) -> Option<LiveServer> {
        if !s.counters_read && s.waits.is_empty() {
            return None;
        }
        let (wal_base, checkpoint_base) = if s.counters_read {
            *self.server_base.get_or_insert((s.wal_bytes, s.checkpoints))
        } else {
            (s.wal_bytes, s.checkpoints)
        };
        Some(LiveServer {
            waits: s.waits.iter().cloned().collect(),
            wal_mb: s.wal_bytes.saturating_sub(wal_base) as f64 / 1e6,
            checkpoints: s.checkpoints.saturating_sub(checkpoint_base),
        })
    }

    /// The answer to a request for the dashboard.
    pub(super) fn reply(&self, request: &Request) -> Reply {
        let finished = self.final_report();
        let info = LivePageInfo {
            command_line: &self.command_line,
            scripts: &self.scripts,
        };
        match request.path.as_str() {
            "/" | "/index.html" => match finished {
                Some(report) => Reply::ok(HTML, report),
                None => Reply::ok(
                    HTML,
                    live_page(&info, &data_json(&info, &self.intervals, 0, false)),
                ),
            },
            "/data.json" => {
                let since = request.param("since").and_then(|v| v.parse().ok());
                let generation = request.param("generation").and_then(|v| v.parse().ok());
                let first = self.intervals.start(since.unwrap_or(0), generation);
                let body = data_json(&info, &self.intervals, first, finished.is_some());
                Reply::ok("application/json", body)
            }
            _ => Reply::not_found(),
        }
    }

    /// The final report, once written.
    fn final_report(&self) -> Option<String> {
        self.final_page
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The content type of the pages.
const HTML: &str = "text/html; charset=utf-8";

/// Refuses an address other machines can reach unless `bind_any` (then warns: the
/// page shows the command line, passwords redacted, and the run's figures).
pub(super) fn check_address(prog: &str, addr: SocketAddr, bind_any: bool) -> Result<(), Failure> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !bind_any {
        return Err(Failure::error(format!(
            "--dashboard {addr} is not a loopback address: other machines could open the page; give --dashboard-bind-any to allow it"
        )));
    }
    pgrush_engine::messages::warning(
        prog,
        &format!(
            "the dashboard on {addr} can be opened from other machines: it shows the command line (passwords redacted) and the run's figures"
        ),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_without_the_flag() {
        let v4: SocketAddr = "127.0.0.1:0".parse().expect("addr");
        let v6: SocketAddr = "[::1]:0".parse().expect("addr");
        let any: SocketAddr = "0.0.0.0:8080".parse().expect("addr");
        assert!(check_address("pgrush", v4, false).is_ok());
        assert!(check_address("pgrush", v6, false).is_ok());
        assert!(check_address("pgrush", any, false).is_err());
        assert!(check_address("pgrush", any, true).is_ok());
    }

    #[test]
    fn data_is_sent_from_the_cursor_on() {
        let shape = LiveShape {
            scripts: 1,
            stages: 0,
            throttled: false,
        };
        let mut d = Dashboard::new(shape, vec!["s".into()], "pgrush -S".into());
        let server = ServerLatest {
            wal_bytes: 5_000_000,
            counters_read: true,
            ..ServerLatest::default()
        };
        for wal in [0, 2_000_000, 4_000_000] {
            let s = ServerLatest {
                wal_bytes: server.wal_bytes + wal,
                ..server.clone()
            };
            d.close_interval(ThreadGauges::default(), &s);
        }
        let get = |path: &str| {
            let (path, query) = match path.split_once('?') {
                Some((p, q)) => (p.to_string(), Some(q.to_string())),
                None => (path.to_string(), None),
            };
            d.reply(&Request {
                method: "GET".into(),
                path,
                query,
                accept: None,
            })
        };
        let Reply::Ok(_, body) = get("/data.json?since=2&generation=0") else {
            panic!("no data");
        };
        let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(v["next"], 3);
        assert_eq!(v["finished"], false);
        assert_eq!(v["intervals"].as_array().map(Vec::len), Some(1));
        assert_eq!(v["intervals"][0]["server"]["wal_mb"], 4.0);
        let Reply::Ok(_, page) = get("/") else {
            panic!("no page");
        };
        assert!(page.contains("pgrush: live run") && page.contains("pgrush -S"));
        *d.final_page.lock().expect("lock") = Some("the report".into());
        assert_eq!(get("/"), Reply::Ok(HTML, "the report".into()));
        assert_eq!(get("/nothing"), Reply::NotFound);
    }
}
