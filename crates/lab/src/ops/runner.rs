//! The series: the disk estimate of every scale said first, then for each scale a disk
//! check and each round's steps in order; the
//! document is handed to the caller after every step so that a later failure (a full
//! disk, Ctrl-C) keeps what was measured.

use crate::ops::config::{OpsConfig, StepKind};
use crate::ops::error::OpsError;
use crate::ops::result::{OpsDocument, OpsSettings, SCHEMA, ScaleResult, StepResult};
use crate::ops::server::Server;
use crate::ops::steps::{RoundState, run_step};
use crate::ops::{disk, progress};

/// What the series produced: the document (absent when nothing could start) and the
/// error that ended it early, if any.
#[derive(Debug)]
pub struct Outcome {
    /// The results so far.
    pub document: Option<OpsDocument>,
    /// Why the series stopped before its end.
    pub error: Option<OpsError>,
}

/// Runs the series. `on_step` gets the document once the server is open (with
/// `None`), after each step (with that step's result) and once more at the end.
pub fn run(cfg: &OpsConfig, on_step: &mut dyn FnMut(&OpsDocument, Option<&StepResult>)) -> Outcome {
    if let Err(e) = check_config(cfg) {
        return Outcome {
            document: None,
            error: Some(e),
        };
    }
    let server = match Server::open(cfg) {
        Ok(server) => server,
        Err(e) => {
            return Outcome {
                document: None,
                error: Some(e),
            };
        }
    };
    let estimates: Vec<(u32, u64)> = cfg
        .scales
        .iter()
        .map(|&scale| (scale, disk::estimate(cfg, scale)))
        .collect();
    let error = match disk::free_bytes(&server.scratch) {
        Ok(free) => {
            progress::disk_estimate(&estimates, free, &server.scratch);
            None
        }
        Err(e) => Some(e),
    };
    let mut doc = new_document(cfg, &server);
    on_step(&doc, None);
    let error = error.or_else(|| run_scales(cfg, &server, &mut doc, &estimates, on_step).err());
    if let Some(e) = &error {
        doc.stopped = Some(e.to_string());
    }
    on_step(&doc, None);
    drop(server);
    Outcome {
        document: Some(doc),
        error,
    }
}

fn check_config(cfg: &OpsConfig) -> Result<(), OpsError> {
    if cfg.scales.is_empty() || cfg.scales.contains(&0) {
        return Err(OpsError::Usage("scales must be positive integers".into()));
    }
    if cfg.repeat == 0 {
        return Err(OpsError::Usage("--repeat must be at least 1".into()));
    }
    Ok(())
}

/// Runs every scale (`estimates`: each scale and the disk space it needs).
fn run_scales(
    cfg: &OpsConfig,
    server: &Server,
    doc: &mut OpsDocument,
    estimates: &[(u32, u64)],
    on_step: &mut dyn FnMut(&OpsDocument, Option<&StepResult>),
) -> Result<(), OpsError> {
    for &(scale, estimated_bytes) in estimates {
        let free_bytes = disk::free_bytes(&server.scratch)?;
        if estimated_bytes > free_bytes {
            return Err(OpsError::Disk {
                scale,
                need_mb: estimated_bytes / 1_000_000,
                free_mb: free_bytes / 1_000_000,
                dir: server.scratch.clone(),
            });
        }
        doc.scales.push(ScaleResult {
            scale,
            estimated_bytes,
            free_bytes,
            steps: Vec::new(),
        });
        for round in 1..=cfg.repeat {
            let mut state = RoundState::default();
            for &step in &cfg.steps {
                if crate::ops::interrupt::requested() {
                    return Err(OpsError::Interrupted);
                }
                let ticker = progress::step_started(scale, step);
                let result = run_step(step, server, cfg, scale, round, &mut state, &ticker);
                drop(ticker);
                let result = result.map_err(|e| in_step(step, scale, e, server))?;
                if let Some(last) = doc.scales.last_mut() {
                    last.steps.push(result.clone());
                }
                on_step(doc, Some(&result));
            }
        }
    }
    Ok(())
}

/// How many lines of the throwaway cluster's log a failure shows (the cluster, and its
/// log, are removed afterwards).
const LOG_LINES: usize = 15;

/// Says which step failed (Ctrl-C speaks for itself), with the end of the throwaway
/// cluster's log.
fn in_step(step: StepKind, scale: u32, e: OpsError, server: &Server) -> OpsError {
    if matches!(e, OpsError::Interrupted) {
        return e;
    }
    let mut text = format!("{step} at scale {scale}: {e}");
    if let Some(cluster) = &server.cluster {
        let log = cluster.log_contents();
        let lines: Vec<&str> = log.lines().collect();
        text.push_str("\nthe server log's last lines:\n");
        text.push_str(&lines[lines.len().saturating_sub(LOG_LINES)..].join("\n"));
    }
    OpsError::Unexpected(text)
}

fn new_document(cfg: &OpsConfig, server: &Server) -> OpsDocument {
    let unix_us = pgrush_stats::wall_clock::unix_time_us();
    OpsDocument {
        schema: SCHEMA.to_string(),
        pgrush_version: env!("CARGO_PKG_VERSION").to_string(),
        server_version: server.version.clone(),
        server_version_num: server.version_num,
        target: server.kind().to_string(),
        started_at: pgrush_report::utc_time::rfc3339_utc(unix_us),
        settings: OpsSettings {
            scales: cfg.scales.clone(),
            steps: cfg.steps.clone(),
            jobs: cfg.jobs,
            dump_format: cfg.dump_format.name().to_string(),
            repeat: cfg.repeat,
            workload_seconds: cfg.workload_seconds,
            fillfactor: cfg.init.fillfactor,
            unlogged_tables: cfg.init.unlogged,
            partitions: cfg.init.partitioning.count(),
            init_steps: cfg.init.steps.iter().map(|&s| step_letter(s)).collect(),
        },
        scales: Vec::new(),
        stopped: None,
    }
}

/// `-I`'s letter for an initialization step.
fn step_letter(step: pgrush_init::Step) -> char {
    use pgrush_init::Step;
    match step {
        Step::Drop => 'd',
        Step::CreateTables => 't',
        Step::ClientGenerate => 'g',
        Step::ServerGenerate => 'G',
        Step::Vacuum => 'v',
        Step::PrimaryKeys => 'p',
        Step::ForeignKeys => 'f',
    }
}
