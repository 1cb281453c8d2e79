//! The client machine's own load during a run that ends with a run document: a
//! [`MachineSampler`] reading `/proc` at the time series' interval edges (on a thread of
//! its own that wakes once per interval, never the engine's), turned into the
//! document's `machine` series, one interval per interval of the time series.

use std::mem::ManuallyDrop;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use pgrush_monitor::machine::MachineInterval;
use pgrush_monitor::machine_sampler::{MachineReadings, MachineSampler};
use pgrush_report::machine::{MachineDoc, MachineIntervalDoc, server_machine_label};
use pgrush_stats::RunSummary;
use pgrush_wire::Connection;

/// The machine sampling of one run, from its start to its end.
#[derive(Debug)]
pub struct MachineSampling {
    interval: Duration,
    same_machine_as_server: bool,
    sampler: Option<MachineSampler>,
    readings: Option<MachineReadings>,
}

impl MachineSampling {
    /// Sampling at the time series' interval (`-P`, else 1 s); `con` tells whether the
    /// server is on this machine.
    pub fn for_run(progress_s: u32, con: &Connection) -> MachineSampling {
        MachineSampling {
            interval: Duration::from_secs(u64::from(progress_s.max(1))),
            same_machine_as_server: server_on_this_machine(con),
            sampler: None,
            readings: None,
        }
    }

    /// Starts reading at the series' origin (now, after a warm-up, or a shard's start).
    pub fn start(&mut self, origin: Instant) {
        self.sampler = MachineSampler::start(origin, self.interval);
    }

    /// Stops reading (call when the engine has ended), with a last reading there.
    pub fn stop(&mut self) {
        if let Some(s) = self.sampler.take() {
            self.readings = Some(s.finish());
        }
    }

    /// The series, one interval per interval of `summary`'s time series (none without
    /// one, or where `/proc` could not be read); stops reading first if still running.
    pub fn finish(&mut self, summary: &RunSummary) -> Option<MachineDoc> {
        self.stop();
        let readings = self.readings.take()?;
        let count = summary.stats.series.as_ref()?.intervals().len();
        Some(self.document(&readings, count))
    }

    fn document(&self, readings: &MachineReadings, count: usize) -> MachineDoc {
        let interval_s = self.interval.as_secs_f64();
        let cores = readings
            .last
            .as_ref()
            .map_or(0, |r| r.stat.cores.len() as u32);
        MachineDoc {
            same_machine_as_server: self.same_machine_as_server,
            server_machine: server_machine_label(self.same_machine_as_server).into(),
            cores,
            interval_s,
            intervals: readings
                .intervals(interval_s, count)
                .iter()
                .map(|(start_s, i)| interval_doc(*start_s, i))
                .collect(),
        }
    }
}

/// One interval as the document says it (percentages, rates per second).
pub(crate) fn interval_doc(start_s: f64, i: &MachineInterval) -> MachineIntervalDoc {
    let per_s = |bytes: u64| {
        if i.duration_s > 0.0 {
            bytes as f64 / i.duration_s
        } else {
            0.0
        }
    };
    MachineIntervalDoc {
        start_s,
        duration_s: i.duration_s,
        cpu_user_pct: i.user * 100.0,
        cpu_system_pct: i.system * 100.0,
        cpu_iowait_pct: i.iowait * 100.0,
        cpu_steal_pct: i.steal * 100.0,
        busiest_core_pct: i.core_busy.iter().copied().fold(0.0, f64::max) * 100.0,
        run_queue: i.procs_running,
        context_switches_per_s: i.context_switches_per_s,
        net_in_bytes_per_s: per_s(i.net.rx),
        net_out_bytes_per_s: per_s(i.net.tx),
        // Every byte sent over the loopback is received over it too: counted once.
        loopback_bytes_per_s: per_s(i.net.loopback_tx),
    }
}

/// Whether `con`'s server runs on this machine: a Unix socket, or a TCP peer at a
/// loopback address or at this end's own address (one of this machine's).
fn server_on_this_machine(con: &Connection) -> bool {
    let fd = con.as_raw_fd();
    // SAFETY: `fd` is the open socket `con` owns for as long as this borrow lasts; the
    // wrappers only ask for its addresses and are never dropped, so never close it.
    let tcp = ManuallyDrop::new(unsafe { TcpStream::from_raw_fd(fd) });
    if let (Ok(local), Ok(peer)) = (tcp.local_addr(), tcp.peer_addr()) {
        let (peer, local) = (peer.ip().to_canonical(), local.ip().to_canonical());
        return peer.is_loopback() || peer == local;
    }
    // SAFETY: as above.
    let unix = ManuallyDrop::new(unsafe { UnixStream::from_raw_fd(fd) });
    unix.peer_addr().is_ok()
}
