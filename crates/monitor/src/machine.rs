//! The client machine's own load, read from `/proc`: CPU time by kind (summed and per
//! core), the run queue, context switches and network bytes. A reading is taken once
//! per interval; [`MachineReading::delta`] turns two readings into the interval's
//! figures. Parsed by hand (a few fields of two text files; no crate in the workspace
//! reads `/proc`), tested on fixture text.

/// CPU time of one `cpu` line of `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// `user` plus `nice`.
    pub user: u64,
    /// `system` plus `irq` plus `softirq`.
    pub system: u64,
    /// `idle`.
    pub idle: u64,
    /// `iowait`.
    pub iowait: u64,
    /// `steal`: time the hypervisor gave another machine.
    pub steal: u64,
}

impl CpuTimes {
    /// The fields after `cpu` or `cpuN` (missing ones, on old kernels, are 0).
    fn parse(fields: &[u64]) -> CpuTimes {
        let f = |i: usize| fields.get(i).copied().unwrap_or(0);
        CpuTimes {
            user: f(0) + f(1),
            system: f(2) + f(5) + f(6),
            idle: f(3),
            iowait: f(4),
            steal: f(7),
        }
    }

    /// All the time counted.
    pub fn total(&self) -> u64 {
        self.user + self.system + self.idle + self.iowait + self.steal
    }

    /// `self - earlier`, field by field (0 where a counter went back).
    fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// What `/proc/stat` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// The `cpu` line: every core summed.
    pub all: CpuTimes,
    /// The `cpuN` lines, by N.
    pub cores: Vec<CpuTimes>,
    /// `ctxt`: context switches since boot.
    pub context_switches: u64,
    /// `procs_running`: threads running or ready to run now.
    pub procs_running: u64,
}

impl ProcStat {
    /// Parses the text of `/proc/stat`; lines it does not know are skipped.
    pub fn parse(text: &str) -> ProcStat {
        let mut out = ProcStat::default();
        for line in text.lines() {
            let mut words = line.split_ascii_whitespace();
            let Some(key) = words.next() else {
                continue;
            };
            let numbers: Vec<u64> = words.map_while(|w| w.parse().ok()).collect();
            match key {
                "cpu" => out.all = CpuTimes::parse(&numbers),
                "ctxt" => out.context_switches = numbers.first().copied().unwrap_or(0),
                "procs_running" => out.procs_running = numbers.first().copied().unwrap_or(0),
                _ => {
                    if let Some(n) = key
                        .strip_prefix("cpu")
                        .and_then(|n| n.parse::<usize>().ok())
                    {
                        if out.cores.len() <= n {
                            out.cores.resize(n + 1, CpuTimes::default());
                        }
                        out.cores[n] = CpuTimes::parse(&numbers);
                    }
                }
            }
        }
        out
    }
}

/// Bytes received and sent, from `/proc/net/dev`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetBytes {
    /// Received, every interface but the loopback.
    pub rx: u64,
    /// Sent, every interface but the loopback.
    pub tx: u64,
    /// Received on the loopback (a server on this machine reached over TCP).
    pub loopback_rx: u64,
    /// Sent on the loopback.
    pub loopback_tx: u64,
}

impl NetBytes {
    /// Parses the text of `/proc/net/dev` (two header lines, then `name: rx_bytes
    /// packets errs drop fifo frame compressed multicast tx_bytes ...`).
    pub fn parse(text: &str) -> NetBytes {
        let mut out = NetBytes::default();
        for line in text.lines() {
            let Some((name, rest)) = line.split_once(':') else {
                continue;
            };
            let fields: Vec<u64> = rest
                .split_ascii_whitespace()
                .map_while(|w| w.parse().ok())
                .collect();
            let (Some(&rx), Some(&tx)) = (fields.first(), fields.get(8)) else {
                continue;
            };
            if name.trim() == "lo" {
                out.loopback_rx += rx;
                out.loopback_tx += tx;
            } else {
                out.rx += rx;
                out.tx += tx;
            }
        }
        out
    }
}

/// One reading of the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineReading {
    /// When it was taken, µs from the run's start.
    pub t_us: i64,
    /// `/proc/stat`.
    pub stat: ProcStat,
    /// `/proc/net/dev`.
    pub net: NetBytes,
}

/// The machine over one interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineInterval {
    /// Length (s).
    pub duration_s: f64,
    /// Shares of all CPU time (every core): user, system, I/O wait, steal.
    pub user: f64,
    /// See `user`.
    pub system: f64,
    /// See `user`.
    pub iowait: f64,
    /// See `user`.
    pub steal: f64,
    /// Per core: the share of its time that was not idle (nor I/O wait).
    pub core_busy: Vec<f64>,
    /// Context switches per second.
    pub context_switches_per_s: f64,
    /// Threads running or ready at the interval's end.
    pub procs_running: u64,
    /// Network bytes in the interval (received, sent; loopback apart).
    pub net: NetBytes,
}

impl MachineReading {
    /// Reads `/proc/stat` and `/proc/net/dev` now (`t_us` from the run's start);
    /// `None` where `/proc/stat` cannot be read (not Linux). Without
    /// `/proc/net/dev` (no network namespace) the bytes stay 0.
    pub fn read(t_us: i64) -> Option<MachineReading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let net = std::fs::read_to_string("/proc/net/dev").unwrap_or_default();
        Some(MachineReading {
            t_us,
            stat: ProcStat::parse(&stat),
            net: NetBytes::parse(&net),
        })
    }

    /// The interval from `earlier` to this reading.
    pub fn delta(&self, earlier: &MachineReading) -> MachineInterval {
        let duration_s = (self.t_us - earlier.t_us) as f64 / 1e6;
        let cpu = self.stat.all.since(&earlier.stat.all);
        let share = |v: u64| match cpu.total() {
            0 => 0.0,
            total => v as f64 / total as f64,
        };
        let core_busy = self
            .stat
            .cores
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let d = c.since(earlier.stat.cores.get(i).unwrap_or(&CpuTimes::default()));
                match d.total() {
                    0 => 0.0,
                    total => (d.user + d.system + d.steal) as f64 / total as f64,
                }
            })
            .collect();
        let switches = self
            .stat
            .context_switches
            .saturating_sub(earlier.stat.context_switches);
        let (n, e) = (&self.net, &earlier.net);
        MachineInterval {
            duration_s,
            user: share(cpu.user),
            system: share(cpu.system),
            iowait: share(cpu.iowait),
            steal: share(cpu.steal),
            core_busy,
            context_switches_per_s: if duration_s > 0.0 {
                switches as f64 / duration_s
            } else {
                0.0
            },
            procs_running: self.stat.procs_running,
            net: NetBytes {
                rx: n.rx.saturating_sub(e.rx),
                tx: n.tx.saturating_sub(e.tx),
                loopback_rx: n.loopback_rx.saturating_sub(e.loopback_rx),
                loopback_tx: n.loopback_tx.saturating_sub(e.loopback_tx),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_0: &str = "cpu  100 10 50 800 20 5 5 10 0 0
cpu0 60 5 25 390 10 3 2 5 0 0
cpu1 40 5 25 410 10 2 3 5 0 0
intr 12345 0 0
ctxt 1000
btime 1700000000
processes 500
procs_running 3
procs_blocked 0
";

    const STAT_1: &str = "cpu  200 10 100 1000 40 5 5 40 0 0
cpu0 130 5 55 440 20 3 2 25 0 0
cpu1 70 5 45 560 20 2 3 15 0 0
ctxt 3000
procs_running 5
";

    const NET_0: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0: 5000      50    0    0    0     0          0         0     7000      70    0    0    0     0       0          0
";

    const NET_1: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 4000      40    0    0    0     0          0         0     4500      40    0    0    0     0       0          0
  eth0: 5500      55    0    0    0     0          0         0     9000      90    0    0    0     0       0          0
";

    #[test]
    fn proc_stat_lines_are_read() {
        let s = ProcStat::parse(STAT_0);
        assert_eq!(
            s.all,
            CpuTimes {
                user: 110,
                system: 60,
                idle: 800,
                iowait: 20,
                steal: 10
            }
        );
        assert_eq!(s.cores.len(), 2);
        assert_eq!(s.cores[1].user, 45);
        assert_eq!(s.context_switches, 1000);
        assert_eq!(s.procs_running, 3);
    }

    #[test]
    fn net_dev_keeps_the_loopback_apart() {
        let n = NetBytes::parse(NET_0);
        assert_eq!(
            n,
            NetBytes {
                rx: 5000,
                tx: 7000,
                loopback_rx: 1000,
                loopback_tx: 1000
            }
        );
    }

    #[test]
    fn this_machine_can_be_read() {
        let r = MachineReading::read(0).expect("/proc/stat on Linux");
        assert!(!r.stat.cores.is_empty() && r.stat.all.total() > 0, "{r:?}");
        assert!(r.stat.context_switches > 0, "{r:?}");
    }

    #[test]
    fn an_interval_is_the_difference_of_two_readings() {
        let a = MachineReading {
            t_us: 0,
            stat: ProcStat::parse(STAT_0),
            net: NetBytes::parse(NET_0),
        };
        let b = MachineReading {
            t_us: 2_000_000,
            stat: ProcStat::parse(STAT_1),
            net: NetBytes::parse(NET_1),
        };
        let i = b.delta(&a);
        // 100 user + 50 system + 200 idle + 20 iowait + 30 steal = 400 ticks.
        assert_eq!(i.duration_s, 2.0);
        assert_eq!(
            (i.user, i.system, i.iowait, i.steal),
            (0.25, 0.125, 0.05, 0.075)
        );
        // cpu0: 70 + 30 + 20 busy of 70 + 30 + 50 + 10 + 20 = 180 ticks.
        assert!((i.core_busy[0] - 120.0 / 180.0).abs() < 1e-12, "{i:?}");
        assert_eq!(i.context_switches_per_s, 1000.0);
        assert_eq!(i.procs_running, 5);
        assert_eq!((i.net.rx, i.net.tx), (500, 2000));
        assert_eq!((i.net.loopback_rx, i.net.loopback_tx), (3000, 3500));
    }
}
