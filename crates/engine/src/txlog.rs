//! The `-l` transaction log of one thread (`<prefix>.<pid>[.<tid>]`): one line per
//! transaction (sampled with `--sampling-rate`) or one per `--aggregate-interval`.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};

use pgrush_script::Prng;
use pgrush_stats::{AggregateInterval, LogFormat, TxLogRecord, TxOutcome, TxRecord};

use crate::config::LogConfig;
use crate::messages;

/// The log file of one thread, with its reused line buffer.
pub(crate) struct TxLog {
    file: BufWriter<File>,
    format: LogFormat,
    sampling_rate: f64,
    aggregate: Option<AggregateInterval>,
    /// `--aggregate-interval` in seconds (0 = none).
    aggregate_s: u32,
    line: String,
    /// A write failed (reported once).
    write_failed: bool,
}

/// The log file could not be created.
#[derive(Debug)]
pub(crate) struct OpenError {
    /// The file name.
    pub(crate) name: String,
    /// Why.
    pub(crate) source: std::io::Error,
}

impl TxLog {
    /// Creates thread `tid`'s log file; aggregation intervals start at `start_epoch_us`.
    pub(crate) fn create(
        cfg: &LogConfig,
        tid: usize,
        format: LogFormat,
        start_epoch_us: u64,
    ) -> Result<TxLog, OpenError> {
        let name = pgrush_stats::log_file_name(Some(&cfg.prefix), cfg.pid, tid);
        let file = File::create(&name).map_err(|source| OpenError { name, source })?;
        Ok(TxLog {
            file: BufWriter::with_capacity(64 * 1024, file),
            format,
            sampling_rate: cfg.sampling_rate,
            aggregate: (cfg.aggregate_interval > 0)
                .then(|| AggregateInterval::new(start_epoch_us, cfg.aggregate_interval, format)),
            aggregate_s: cfg.aggregate_interval,
            line: String::with_capacity(256),
            write_failed: false,
        })
    }

    /// Writes one transaction (sampling and aggregation applied; `sampler` is the
    /// thread's sampling generator).
    pub(crate) fn write_tx(
        &mut self,
        progname: &str,
        sampler: &mut Prng,
        client_id: u32,
        (tx_no, stage): (u64, Option<usize>),
        rec: &TxRecord,
        epoch_us: u64,
    ) {
        self.line.clear();
        if let Some(agg) = self.aggregate.as_mut() {
            agg.record(epoch_us, rec, &mut self.line);
        } else {
            if self.sampling_rate > 0.0 && !pgrush_script::sample(sampler, self.sampling_rate) {
                return;
            }
            let lag = if rec.outcome == TxOutcome::Success {
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
                end_epoch_us: epoch_us,
                lag_us: lag,
                tries: rec.tries,
            }
            .write_line(&self.format, &mut self.line);
            if let Some(stage) = stage {
                push_last_column(&mut self.line, stage);
            }
        }
        if !self.line.is_empty()
            && self.file.write_all(self.line.as_bytes()).is_err()
            && !self.write_failed
        {
            self.write_failed = true;
            messages::error(progname, "could not write to log file");
        }
    }

    /// The aggregation intervals start again at `start_epoch_us` (`--warmup`'s end;
    /// nothing was recorded before).
    pub(crate) fn restart_aggregate(&mut self, start_epoch_us: u64) {
        if let Some(agg) = self.aggregate.as_mut() {
            let stage_starts = agg.stage_starts().to_vec();
            *agg = AggregateInterval::new(start_epoch_us, self.aggregate_s, self.format)
                .with_stage_starts(stage_starts);
        }
    }

    /// With stages: the aggregate lines end with the stage of their interval's start,
    /// the stages starting at `stage_starts_epoch_us` (µs since the epoch, in order).
    pub(crate) fn set_stage_starts(&mut self, stage_starts_epoch_us: Vec<u64>) {
        if let Some(agg) = self.aggregate.take() {
            self.aggregate = Some(agg.with_stage_starts(stage_starts_epoch_us));
        }
    }

    /// End of the run: writes the pending aggregate and flushes.
    pub(crate) fn finish(&mut self, progname: &str, epoch_us: u64) {
        self.line.clear();
        if let Some(agg) = self.aggregate.as_mut() {
            agg.finish(epoch_us, &mut self.line);
        }
        let written = self.file.write_all(self.line.as_bytes());
        let flushed = written.and_then(|()| self.file.flush());
        self.report(progname, flushed);
    }

    /// `--exit-on-abort`: as C's `exit()`, buffered lines are written, the pending
    /// aggregate is not.
    pub(crate) fn flush(&mut self, progname: &str) {
        let flushed = self.file.flush();
        self.report(progname, flushed);
    }

    /// Whether a line could not be written (some were lost).
    pub(crate) fn failed(&self) -> bool {
        self.write_failed
    }

    fn report(&mut self, progname: &str, result: std::io::Result<()>) {
        if result.is_err() && !self.write_failed {
            self.write_failed = true;
            messages::error(progname, "could not write to log file");
        }
    }
}

/// Puts ` stage` at the end of the line in `line` (before its newline).
fn push_last_column(line: &mut String, stage: usize) {
    let newline = line.ends_with('\n');
    if newline {
        line.pop();
    }
    let _ = write!(line, " {stage}");
    if newline {
        line.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format() -> LogFormat {
        LogFormat {
            throttled: false,
            latency_limit: false,
            max_tries: 1,
            failures_detailed: false,
            reconnect: false,
        }
    }

    fn tx(outcome: TxOutcome) -> TxRecord {
        TxRecord {
            script: 0,
            outcome,
            latency_us: 1500.0,
            lag_us: 0.0,
            tries: 1,
        }
    }

    #[test]
    fn one_line_per_transaction_in_each_threads_file() {
        let dir = tempfile::tempdir().expect("dir");
        let cfg = LogConfig {
            prefix: dir.path().join("log").to_string_lossy().into_owned(),
            pid: 7,
            sampling_rate: 0.0,
            aggregate_interval: 0,
        };
        let mut rng = Prng::from_seed(1);
        let mut log = TxLog::create(&cfg, 1, format(), 0).expect("create");
        log.write_tx(
            "pgrush",
            &mut rng,
            3,
            (1, None),
            &tx(TxOutcome::Success),
            1_700_000_000_250_000,
        );
        log.write_tx(
            "pgrush",
            &mut rng,
            3,
            (2, Some(4)),
            &tx(TxOutcome::Success),
            1_700_000_000_500_000,
        );
        log.finish("pgrush", 1_700_000_001_000_000);
        let text = std::fs::read_to_string(dir.path().join("log.7.1")).expect("log.7.1");
        assert_eq!(
            text,
            "3 1 1500 0 1700000000 250000\n3 2 1500 0 1700000000 500000 4\n"
        );
    }

    #[test]
    fn a_missing_directory_is_an_open_error() {
        let cfg = LogConfig {
            prefix: "/nonexistent-pgrush-dir/log".to_string(),
            pid: 7,
            sampling_rate: 0.0,
            aggregate_interval: 0,
        };
        let err = TxLog::create(&cfg, 0, format(), 0).err().expect("fails");
        assert_eq!(err.name, "/nonexistent-pgrush-dir/log.7");
        assert_eq!(err.source.kind(), std::io::ErrorKind::NotFound);
    }
}
