//! The plan of a sweep: its cells (the product of the axes), the order of its runs,
//! and `sweep.json`, the file that lets a second invocation resume.
//!
//! Order: for each repeat, the groups of cells that share their initialization
//! options are shuffled, and the cells inside each group too, with one seeded PRNG.
//! Repeats are thus interleaved (drift over time spreads over every cell) while the
//! database is initialized again only when an initialization option changes.

use super::axes::Axis;
use serde::{Deserialize, Serialize};
use std::path::Path;
use thiserror::Error;

/// The `format` field of `sweep.json`.
pub const PLAN_FORMAT: &str = "pgrush-sweep-plan";
/// The name of the plan file in the output directory.
pub const PLAN_FILE: &str = "sweep.json";

/// One configuration: a value of each axis (same order as the axes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// The value of each axis.
    pub values: Vec<String>,
}

impl Cell {
    /// `fillfactor=80 clients=4`: the cell's values with their axes' names.
    pub fn label(&self, axes: &[Axis]) -> String {
        axes.iter()
            .zip(&self.values)
            .map(|(a, v)| format!("{}={v}", a.name()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The values of the initialization axes only: cells with equal keys share a
    /// database initialization.
    pub fn init_key(&self, axes: &[Axis]) -> Vec<String> {
        axes.iter()
            .zip(&self.values)
            .filter(|(a, _)| a.is_init())
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// One run of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Index into the cells.
    pub cell: usize,
    /// Repeat number, from 1.
    pub repeat: u32,
}

impl Step {
    /// The run's document name: `cell-03-repeat-2.json` (cells counted from 1).
    pub fn document_name(&self) -> String {
        format!("cell-{:02}-repeat-{}.json", self.cell + 1, self.repeat)
    }
}

/// Everything that defines a sweep's results: a second invocation may resume only
/// when these are equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanKey {
    /// The axes.
    pub axes: Vec<Axis>,
    /// Runs per cell.
    pub repeats: u32,
    /// Warm-up seconds before each measured run.
    pub warmup_s: u32,
    /// Extra `pgrush -i` arguments given on the command line.
    pub init_args: Vec<String>,
    /// Extra run arguments given on the command line.
    pub run_args: Vec<String>,
    /// Where the runs go: `throwaway cluster` or the connection arguments.
    pub target: String,
}

/// The initialization argument that selects the TPC-C-like tables.
pub const TPCC_WORKLOAD_ARG: &str = "--workload=tpcc";

impl PlanKey {
    /// True for a sweep of `--workload tpcc` (its initializations load the TPC-C-like
    /// tables).
    pub fn tpcc(&self) -> bool {
        self.init_args.iter().any(|a| a == TPCC_WORKLOAD_ARG)
    }
}

/// The plan file: the key, the seed, the cells and the order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Always `pgrush-sweep-plan`.
    pub format: String,
    /// What defines the results.
    #[serde(flatten)]
    pub key: PlanKey,
    /// The seed of the order.
    pub seed: u64,
    /// The cells, the first axis varying slowest.
    pub cells: Vec<Cell>,
    /// The runs, in order.
    pub steps: Vec<Step>,
}

/// Why a plan cannot be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The directory holds a plan for another sweep.
    #[error(
        "{path} holds a different sweep ({what} differ); use another --out directory, or \
         the command line that started it"
    )]
    Differs {
        /// The plan file.
        path: String,
        /// What differs.
        what: String,
    },
    /// The plan file cannot be read or parsed.
    #[error("cannot read {path}: {reason}")]
    Unreadable {
        /// The plan file.
        path: String,
        /// Why.
        reason: String,
    },
    /// No axis, or too many cells.
    #[error("{0}")]
    Shape(String),
}

/// The most cells a sweep may have.
pub const MAX_CELLS: usize = 10_000;

impl Plan {
    /// A new plan: the cells of `key.axes` and a shuffled order from `seed`.
    pub fn new(key: PlanKey, seed: u64) -> Result<Plan, PlanError> {
        let cells = product(&key.axes)?;
        let steps = order(&key.axes, &cells, key.repeats, seed);
        Ok(Plan {
            format: PLAN_FORMAT.to_string(),
            key,
            seed,
            cells,
            steps,
        })
    }

    /// The plan stored in `dir` when there is one and it matches `key` (and `seed`,
    /// when one was asked for); a new plan otherwise. Refuses a directory holding
    /// another sweep.
    pub fn load_or_new(dir: &Path, key: PlanKey, seed: Option<u64>) -> Result<Plan, PlanError> {
        let path = dir.join(PLAN_FILE);
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Plan::new(key, seed.unwrap_or_else(|| fastrand::u64(..)));
            }
            Err(e) => {
                return Err(PlanError::Unreadable {
                    path: shown,
                    reason: e.to_string(),
                });
            }
        };
        let stored: Plan = serde_json::from_str(&text).map_err(|e| PlanError::Unreadable {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        stored.check(&shown)?;
        if let Some(what) = differences(&stored.key, &key, seed.filter(|s| *s != stored.seed)) {
            return Err(PlanError::Differs { path: shown, what });
        }
        Ok(stored)
    }

    /// Checks that the cells are the product of the axes and the steps name cells (a
    /// file read back may have been edited); `path` names it in the error.
    pub fn check(&self, path: &str) -> Result<(), PlanError> {
        if self.cells != product(&self.key.axes)?
            || self.steps.iter().any(|s| s.cell >= self.cells.len())
        {
            return Err(PlanError::Unreadable {
                path: path.to_string(),
                reason: "its cells or steps do not match its axes".into(),
            });
        }
        Ok(())
    }

    /// Writes `sweep.json` into `dir`, whole or not at all.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        text.push('\n');
        pgrush_cluster::write_atomically(&dir.join(PLAN_FILE), text.as_bytes())
    }
}

/// Which parts of two keys differ, named for a person; `None` when equal.
fn differences(stored: &PlanKey, asked: &PlanKey, other_seed: Option<u64>) -> Option<String> {
    let mut what = Vec::new();
    if stored.axes != asked.axes {
        what.push("the axes");
    }
    if stored.repeats != asked.repeats {
        what.push("the repeats");
    }
    if stored.warmup_s != asked.warmup_s {
        what.push("the warm-up");
    }
    if stored.init_args != asked.init_args || stored.run_args != asked.run_args {
        what.push("the pgbench options");
    }
    if stored.target != asked.target {
        what.push("the server");
    }
    if other_seed.is_some() {
        what.push("the seeds");
    }
    (!what.is_empty()).then(|| what.join(", "))
}

/// The cells: every combination of the axes' values, the first axis varying slowest.
pub fn product(axes: &[Axis]) -> Result<Vec<Cell>, PlanError> {
    if axes.is_empty() {
        return Err(PlanError::Shape(
            "nothing to compare: give at least one --vary NAME=V1,V2".into(),
        ));
    }
    let count = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|n| *n <= MAX_CELLS)
        .ok_or_else(|| PlanError::Shape(format!("more than {MAX_CELLS} cells")))?;
    let mut cells = vec![Cell { values: Vec::new() }];
    for axis in axes {
        cells = cells
            .into_iter()
            .flat_map(|cell| {
                axis.values.iter().map(move |v| {
                    let mut values = cell.values.clone();
                    values.push(v.clone());
                    Cell { values }
                })
            })
            .collect();
    }
    debug_assert_eq!(cells.len(), count);
    Ok(cells)
}

/// The order of the runs: per repeat, the initialization groups shuffled, and the
/// cells inside each group shuffled.
pub fn order(axes: &[Axis], cells: &[Cell], repeats: u32, seed: u64) -> Vec<Step> {
    let mut groups: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let key = cell.init_key(axes);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut steps = Vec::with_capacity(cells.len() * repeats as usize);
    for repeat in 1..=repeats {
        rng.shuffle(&mut groups);
        for (_, members) in &mut groups {
            rng.shuffle(members);
            steps.extend(members.iter().map(|&cell| Step { cell, repeat }));
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes(specs: &[&str]) -> Vec<Axis> {
        specs.iter().map(|s| Axis::parse(s).unwrap()).collect()
    }

    #[test]
    fn cells_are_the_product_first_axis_slowest() {
        let axes = axes(&["fillfactor=100,80", "clients=1,2,4"]);
        let cells = product(&axes).unwrap();
        assert_eq!(cells.len(), 6);
        assert_eq!(cells[0].values, ["100", "1"]);
        assert_eq!(cells[1].values, ["100", "2"]);
        assert_eq!(cells[3].values, ["80", "1"]);
        assert_eq!(cells[4].label(&axes), "fillfactor=80 clients=2");
        assert_eq!(cells[4].init_key(&axes), ["80"]);
        assert!(product(&[]).is_err());
    }

    #[test]
    fn order_runs_every_cell_once_per_repeat_grouped_by_init() {
        let axes = axes(&[
            "fillfactor=100,80,90",
            "clients=1,2,4",
            "protocol=simple,prepared",
        ]);
        let cells = product(&axes).unwrap();
        let steps = order(&axes, &cells, 3, 42);
        assert_eq!(steps.len(), 18 * 3);
        for repeat in 1..=3 {
            let mut seen: Vec<usize> = steps
                .iter()
                .filter(|s| s.repeat == repeat)
                .map(|s| s.cell)
                .collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..18).collect::<Vec<_>>());
        }
        // Repeats are not mixed: all of repeat 1, then 2, then 3.
        assert!(steps.windows(2).all(|w| w[0].repeat <= w[1].repeat));
        // One initialization per group and repeat: the init key changes 3 times per repeat.
        let changes = steps
            .windows(2)
            .filter(|w| cells[w[0].cell].init_key(&axes) != cells[w[1].cell].init_key(&axes))
            .count();
        assert!(changes < 3 * 3, "{changes}");
        // Same seed, same order; another seed, another order.
        assert_eq!(order(&axes, &cells, 3, 42), steps);
        assert_ne!(order(&axes, &cells, 3, 43), steps);
        // Shuffled: not the cells' own order in every repeat.
        let first: Vec<usize> = steps[..18].iter().map(|s| s.cell).collect();
        assert_ne!(first, (0..18).collect::<Vec<_>>());
    }

    fn key() -> PlanKey {
        PlanKey {
            axes: axes(&["clients=1,2"]),
            repeats: 2,
            warmup_s: 0,
            init_args: vec!["--scale=1".into()],
            run_args: vec!["--time=1".into()],
            target: "throwaway cluster".into(),
        }
    }

    #[test]
    fn plan_file_resumes_only_the_same_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan::load_or_new(dir.path(), key(), Some(7)).unwrap();
        assert_eq!(plan.seed, 7);
        plan.save(dir.path()).unwrap();
        // Same command without --seed: the stored seed and order.
        assert_eq!(Plan::load_or_new(dir.path(), key(), None).unwrap(), plan);
        let other_seed = Plan::load_or_new(dir.path(), key(), Some(8)).unwrap_err();
        assert!(
            other_seed.to_string().contains("the seeds differ"),
            "{other_seed}"
        );
        let mut more = key();
        more.repeats = 3;
        more.run_args.push("--protocol=prepared".into());
        let err = Plan::load_or_new(dir.path(), more, None).unwrap_err();
        assert!(
            err.to_string()
                .contains("(the repeats, the pgbench options differ)"),
            "{err}"
        );
        let mut broken = plan.clone();
        broken.steps[0].cell = 99;
        broken.save(dir.path()).unwrap();
        let err = Plan::load_or_new(dir.path(), key(), None).unwrap_err();
        assert!(err.to_string().contains("do not match its axes"), "{err}");
        std::fs::write(dir.path().join(PLAN_FILE), "{").unwrap();
        assert!(matches!(
            Plan::load_or_new(dir.path(), key(), None),
            Err(PlanError::Unreadable { .. })
        ));
        assert_eq!(
            Step { cell: 2, repeat: 1 }.document_name(),
            "cell-03-repeat-1.json"
        );
    }
}
