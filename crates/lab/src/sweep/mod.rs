//! `pgrush sweep`: compares configurations. The cells are the product of the axes
//! ([`Axis`]: initialization options, run options, server settings); each cell runs
//! `repeats` times in a shuffled, interleaved order ([`Plan`], seeded); the database
//! is initialized again only when an initialization option changes, followed by the
//! same `VACUUM ANALYZE` and `CHECKPOINT`; each measured run begins with a discarded
//! warm-up (its `--warmup`). Every run is an ordinary `pgrush --json` run document under the output
//! directory, so a second invocation resumes ([`run_sweep`]). The results
//! ([`SweepSummary`]) give medians with bootstrap intervals ([`stats`]) and compare
//! the cells that differ in one axis; [`output`] renders them as tables, [`html`] as a
//! page with charts.
//!
//! Modules: `axes` (what varies), `config` (what to run, where), `error`, `plan`
//! (cells, order, `sweep.json`), `server` (throwaway cluster or given server),
//! `settings` (`set:` axes), `runner` (the loop; its children run with [`crate::child`]),
//! `stats`, `summary`, `output`.

mod axes;
mod config;
mod error;
pub mod html;
pub mod output;
mod plan;
mod runner;
mod server;
mod settings;
pub mod stats;
mod summary;

pub use axes::{Axis, AxisError, AxisKind, InitOption, RunOption, check_distinct};
pub use config::{SweepConfig, Target};
pub use error::SweepError;
pub use plan::{Cell, PLAN_FILE, Plan, PlanError, PlanKey, Step, TPCC_WORKLOAD_ARG};
pub use runner::{LOG_FILE, RUNS_DIR, RunFacts, RunReport, TableFacts};
pub use summary::{CellSummary, Comparison, RunRecord, SweepSummary};

use std::io::Write;
use std::path::Path;

/// Runs (or resumes) a sweep, then reads every finished run back; progress lines go
/// to `console`.
pub fn run_sweep(
    cfg: &SweepConfig,
    console: &mut dyn Write,
) -> Result<(SweepSummary, RunReport), SweepError> {
    let io = |e: std::io::Error| SweepError::Io(format!("{}: {e}", cfg.out_dir.display()));
    check_out_dir(&cfg.out_dir)?;
    std::fs::create_dir_all(cfg.out_dir.join(RUNS_DIR)).map_err(io)?;
    let plan = Plan::load_or_new(&cfg.out_dir, cfg.key.clone(), cfg.seed)?;
    plan.save(&cfg.out_dir).map_err(io)?;
    let _ = writeln!(
        console,
        "pgrush sweep: {} cells x {} repeats = {} runs, results in {}; order seed {} \
         (--seed {} repeats this order)",
        plan.cells.len(),
        plan.key.repeats,
        plan.steps.len(),
        cfg.out_dir.display(),
        plan.seed,
        plan.seed
    );
    let report = runner::run_plan(cfg, &plan, console)?;
    Ok((summarize(&cfg.out_dir, &plan), report))
}

/// True when `dir` holds a sweep (its [`PLAN_FILE`]), finished or not.
pub fn is_saved_sweep(dir: &Path) -> bool {
    dir.join(PLAN_FILE).is_file()
}

/// Refuses an output directory that holds files pgrush did not write: one that
/// exists without `sweep.json` must be empty (or hold only the empty `runs` directory
/// a sweep stopped before its plan was saved leaves).
fn check_out_dir(dir: &Path) -> Result<(), SweepError> {
    let io = |e: std::io::Error| SweepError::Io(format!("{}: {e}", dir.display()));
    if is_saved_sweep(dir) {
        return Ok(());
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io)?;
        let empty_runs = entry.file_name() == RUNS_DIR
            && std::fs::read_dir(entry.path()).is_ok_and(|mut d| d.next().is_none());
        if !empty_runs {
            return Err(SweepError::ForeignOutDir(dir.to_path_buf()));
        }
    }
    Ok(())
}

/// The summary of the runs finished so far in `dir` (a saved sweep).
pub fn load_summary(dir: &Path) -> Result<SweepSummary, SweepError> {
    let path = dir.join(PLAN_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| SweepError::Io(format!("{}: {e}", path.display())))?;
    let plan: Plan = serde_json::from_str(&text).map_err(|e| {
        SweepError::Plan(PlanError::Unreadable {
            path: path.display().to_string(),
            reason: e.to_string(),
        })
    })?;
    plan.check(&path.display().to_string())?;
    Ok(summarize(dir, &plan))
}

/// Reads the finished runs of each cell and builds the summary.
fn summarize(dir: &Path, plan: &Plan) -> SweepSummary {
    let mut runs: Vec<summary::CellRuns> = vec![Vec::new(); plan.cells.len()];
    for step in &plan.steps {
        if let Some(doc) = runner::finished_document(dir, step) {
            let facts = runner::read_facts(dir, step).unwrap_or_default();
            let file = format!("{RUNS_DIR}/{}", step.document_name());
            runs[step.cell].push((step.repeat, file, doc, facts));
        }
    }
    for cell in &mut runs {
        cell.sort_by_key(|(repeat, ..)| *repeat);
    }
    SweepSummary::build(plan, &runs)
}

#[cfg(test)]
mod tests {
    use super::{PLAN_FILE, RUNS_DIR, SweepError, check_out_dir, is_saved_sweep};

    #[test]
    fn out_dir_must_be_new_empty_or_a_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        assert!(check_out_dir(&out).is_ok(), "a new directory");
        std::fs::create_dir_all(out.join(RUNS_DIR)).unwrap();
        assert!(check_out_dir(&out).is_ok(), "only the empty runs directory");
        std::fs::write(out.join(RUNS_DIR).join("cell-01-repeat-1.json"), "{}").unwrap();
        assert!(matches!(
            check_out_dir(&out),
            Err(SweepError::ForeignOutDir(_))
        ));
        assert!(!is_saved_sweep(&out));
        std::fs::write(out.join(PLAN_FILE), "{}").unwrap();
        assert!(is_saved_sweep(&out));
        assert!(check_out_dir(&out).is_ok(), "a sweep's directory resumes");
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("notes.txt"), "x").unwrap();
        let err = check_out_dir(&other).unwrap_err().to_string();
        assert!(err.contains("is not empty and holds no sweep"), "{err}");
    }
}
