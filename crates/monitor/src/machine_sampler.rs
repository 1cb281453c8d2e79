//! The client machine sampled during a run: a small thread of its own that sleeps to
//! each interval edge of the run's time series (`0, INTERVAL, 2 INTERVAL, ...` from its
//! origin), reads `/proc` there ([`MachineReading::read`], two small files) and once more
//! when stopped. It wakes once per interval and never touches the engine's threads, so
//! the benchmark does not feel it. [`MachineReadings::intervals`] pairs the readings
//! with the client's intervals.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::machine::{MachineInterval, MachineReading};

/// A running machine sampler.
#[derive(Debug)]
pub struct MachineSampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<MachineReading>>,
    origin: Instant,
}

/// What a sampler read: one reading per edge it reached, and the one taken when it
/// stopped (the end of the run).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineReadings {
    /// Readings at the interval edges, in time order.
    pub edges: Vec<MachineReading>,
    /// The reading taken when the sampler stopped.
    pub last: Option<MachineReading>,
}

/// µs from `origin` to `now` (negative before it).
fn micros_since(origin: Instant, now: Instant) -> i64 {
    match now.checked_duration_since(origin) {
        Some(d) => d.as_micros() as i64,
        None => -(origin.duration_since(now).as_micros() as i64),
    }
}

impl MachineSampler {
    /// Starts reading the machine at `origin + k * interval`; `None` where `/proc/stat`
    /// cannot be read (not Linux) or no thread can be started.
    pub fn start(origin: Instant, interval: Duration) -> Option<MachineSampler> {
        MachineReading::read(0)?;
        let interval = interval.max(Duration::from_millis(1));
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("machine-load".into())
            .spawn(move || sample(origin, interval, &flag))
            .ok()?;
        Some(MachineSampler {
            stop,
            thread,
            origin,
        })
    }

    /// Stops the thread, reads the machine once more and returns the readings.
    pub fn finish(self) -> MachineReadings {
        self.stop.store(true, Ordering::Release);
        self.thread.thread().unpark();
        let edges = self.thread.join().unwrap_or_default();
        let last = MachineReading::read(micros_since(self.origin, Instant::now()));
        MachineReadings { edges, last }
    }
}

/// The thread: a reading at each edge from the origin on until told to stop (an edge
/// missed while late is skipped, not read twice).
fn sample(origin: Instant, interval: Duration, stop: &AtomicBool) -> Vec<MachineReading> {
    let mut out = Vec::new();
    let mut next = origin;
    while !stop.load(Ordering::Acquire) {
        let now = Instant::now();
        if now < next {
            std::thread::park_timeout(next - now);
            continue;
        }
        if let Some(r) = MachineReading::read(micros_since(origin, now)) {
            out.push(r);
        }
        while next <= now {
            next += interval;
        }
    }
    out
}

impl MachineReadings {
    /// The machine over each of the client's `count` intervals of `interval_s`: from the
    /// reading nearest the interval's start edge to the one nearest its end edge (the
    /// last interval ends with the reading taken at the end), with the edge as start (s).
    pub fn intervals(&self, interval_s: f64, count: usize) -> Vec<(f64, MachineInterval)> {
        let nearest = |t_s: f64| {
            let t_us = (t_s * 1e6).round() as i64;
            self.edges
                .iter()
                .chain(&self.last)
                .min_by_key(|r| (r.t_us - t_us).unsigned_abs())
        };
        (0..count)
            .filter_map(|i| {
                let start_s = i as f64 * interval_s;
                let from = nearest(start_s)?;
                let to = match i + 1 < count {
                    true => nearest(start_s + interval_s)?,
                    false => self.last.as_ref()?,
                };
                Some((start_s, to.delta(from)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{NetBytes, ProcStat};

    fn reading(t_us: i64, ctxt: u64) -> MachineReading {
        MachineReading {
            t_us,
            stat: ProcStat {
                context_switches: ctxt,
                ..ProcStat::default()
            },
            net: NetBytes::default(),
        }
    }

    #[test]
    fn each_client_interval_takes_the_readings_at_its_edges() {
        let readings = MachineReadings {
            edges: vec![
                reading(2_000, 0),
                reading(1_001_000, 100),
                reading(2_003_000, 400),
            ],
            last: Some(reading(2_500_000, 500)),
        };
        let iv = readings.intervals(1.0, 3);
        let starts: Vec<f64> = iv.iter().map(|(s, _)| *s).collect();
        assert_eq!(starts, [0.0, 1.0, 2.0]);
        let durations: Vec<f64> = iv.iter().map(|(_, i)| i.duration_s).collect();
        assert_eq!(durations, [0.999, 1.002, 0.497]);
        assert_eq!(iv[1].1.context_switches_per_s, 300.0 / 1.002);
        assert!(MachineReadings::default().intervals(1.0, 3).is_empty());
    }

    #[test]
    fn a_sampler_reads_at_the_edges_and_at_the_end() {
        let origin = Instant::now();
        let s = MachineSampler::start(origin, Duration::from_millis(20)).expect("Linux");
        std::thread::sleep(Duration::from_millis(50));
        let r = s.finish();
        let last = r.last.as_ref().map_or(0, |l| l.t_us);
        assert!(last >= 50_000, "{last}");
        // One reading per 20 ms edge reached (never two for one edge), from the origin on.
        assert!(r.edges.iter().all(|e| e.t_us >= 0));
        assert!(
            r.edges.len() as i64 <= last / 20_000 + 1,
            "{}",
            r.edges.len()
        );
        let slot = |m: &MachineReading| m.t_us / 20_000;
        assert!(r.edges.windows(2).all(|w| slot(&w[0]) < slot(&w[1])));
    }
}
