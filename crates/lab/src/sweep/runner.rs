//! Running a plan: initializations when an initialization axis changes (each followed
//! by the same `VACUUM ANALYZE` and `CHECKPOINT`), server settings, and the measured
//! run of each step (after its own discarded `--warmup`), as child `pgrush` processes. Each
//! measured run's document is written as `runs/<name>.json.partial` and renamed when
//! the run succeeded, beside `runs/<name>.facts.json` (what the sweep saw: tables'
//! persistence and storage options, settings); finished runs are skipped.

use super::config::{SweepConfig, Target};
use super::error::SweepError;
use super::plan::{Cell, Plan, Step};
use super::server::Server;
use super::settings::Settings;
use crate::child::{ChildEnd, Launcher};
use pgrush_report::RunDocument;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::ticker::{Announce, Ticker, duration_text};

/// The subdirectory of the output directory holding the runs.
pub const RUNS_DIR: &str = "runs";
/// The children's output.
pub const LOG_FILE: &str = "sweep.log";
/// The tables whose persistence and options are recorded after each initialization.
const PGBENCH_TABLES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_tellers",
    "pgbench_history",
];

/// The tables the sweep's initializations create: pgbench's, or with `--workload tpcc`
/// the nine TPC-C-like ones.
fn tables(key: &super::plan::PlanKey) -> &'static [&'static str] {
    if key.tpcc() {
        &pgrush_init::tpcc::ddl::TABLES
    } else {
        &PGBENCH_TABLES
    }
}

/// A table as the sweep saw it after the initialization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFacts {
    /// Table name.
    pub table: String,
    /// `pg_class.relpersistence`: `p` (permanent) or `u` (unlogged).
    pub persistence: String,
    /// `pg_class.reloptions`, comma-separated (`fillfactor=80`).
    pub options: String,
}

/// What the sweep saw around one measured run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunFacts {
    /// The tables after the initialization (pgbench's, or the TPC-C-like ones).
    pub tables: Vec<TableFacts>,
    /// The `set:` settings, as `current_setting` showed them before the run.
    pub settings: BTreeMap<String, String>,
}

/// What a sweep did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// Runs measured by this invocation.
    pub ran: usize,
    /// Runs already finished by an earlier invocation.
    pub skipped: usize,
    /// Stopped by Ctrl-C (the finished runs are kept).
    pub interrupted: bool,
}

/// The path of a step's document in `dir`.
pub fn document_path(dir: &Path, step: &Step) -> PathBuf {
    dir.join(RUNS_DIR).join(step.document_name())
}

/// The path of a step's facts file in `dir`.
pub fn facts_path(dir: &Path, step: &Step) -> PathBuf {
    let name = step.document_name();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    dir.join(RUNS_DIR).join(format!("{stem}.facts.json"))
}

/// The step's document, when it exists, parses, and the run was neither interrupted
/// nor aborted.
pub fn finished_document(dir: &Path, step: &Step) -> Option<RunDocument> {
    let text = std::fs::read_to_string(document_path(dir, step)).ok()?;
    let doc = RunDocument::from_json(&text).ok()?;
    (!doc.results.interrupted && !doc.results.aborted).then_some(doc)
}

/// The facts recorded beside a step's document.
pub fn read_facts(dir: &Path, step: &Step) -> Option<RunFacts> {
    let text = std::fs::read_to_string(facts_path(dir, step)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Runs the steps of `plan` not finished yet; restores the settings at the end, also
/// after an error or Ctrl-C.
pub fn run_plan(
    cfg: &SweepConfig,
    plan: &Plan,
    console: &mut dyn Write,
) -> Result<RunReport, SweepError> {
    let todo: Vec<&Step> = plan
        .steps
        .iter()
        .filter(|s| finished_document(&cfg.out_dir, s).is_none())
        .collect();
    let skipped = plan.steps.len() - todo.len();
    // A journal matters only on a given server: a throwaway cluster is new each time.
    let journal = matches!(cfg.target, Target::Given { .. })
        .then(|| cfg.out_dir.join(super::settings::JOURNAL_FILE));
    let mut settings = Settings::new(journal.as_deref());
    if todo.is_empty() && !settings.pending() {
        say(
            console,
            &format!("all {} runs are already done", plan.steps.len()),
        );
        return Ok(RunReport {
            ran: 0,
            skipped,
            interrupted: false,
        });
    }
    if skipped > 0 {
        say(
            console,
            &format!("resuming: {skipped} runs done, {} to go", todo.len()),
        );
    }
    let launcher = Launcher::new(&cfg.exe, &cfg.out_dir.join(LOG_FILE))?;
    let mut server = match &cfg.target {
        Target::Throwaway => Server::throwaway()?,
        Target::Given {
            request,
            child_args,
        } => Server::given(request.clone(), child_args.clone()),
    };
    let line = format!("server: {}", server.describe());
    say(console, &line);
    let mut session = Session {
        cfg,
        plan,
        server: &mut server,
        settings: &mut settings,
        launcher: &launcher,
        init_key: None,
        tables: Vec::new(),
        checkpoint_refused: false,
        notes: Vec::new(),
    };
    let outcome = session.run_steps(&todo, console);
    let restored = settings.restore(&mut server);
    if let Ok(names) = &restored
        && !names.is_empty()
    {
        say(console, &format!("restored settings: {}", names.join(", ")));
    }
    let (ran, interrupted) = outcome?;
    restored?;
    Ok(RunReport {
        ran,
        skipped,
        interrupted,
    })
}

/// One line on the console, prefixed.
fn say(console: &mut dyn Write, line: &str) {
    let _ = writeln!(console, "pgrush sweep: {line}");
}

/// The state of a running sweep.
struct Session<'a> {
    cfg: &'a SweepConfig,
    plan: &'a Plan,
    server: &'a mut Server,
    settings: &'a mut Settings,
    launcher: &'a Launcher,
    /// The initialization axes' values the database has now (`None`: unknown).
    init_key: Option<Vec<String>>,
    /// The tables after the last initialization.
    tables: Vec<TableFacts>,
    /// True once CHECKPOINT was refused (said once).
    checkpoint_refused: bool,
    /// Lines for the console.
    notes: Vec<String>,
}

impl Session<'_> {
    /// Runs `todo`; returns the number of runs measured and whether Ctrl-C stopped it.
    /// While a child runs, a terminal shows which run it is, the time it has taken and
    /// the time left in the sweep; each measured run ends with a line (its tps, and the
    /// time left once known).
    fn run_steps(
        &mut self,
        todo: &[&Step],
        console: &mut dyn Write,
    ) -> Result<(usize, bool), SweepError> {
        let axes = &self.plan.key.axes;
        let clock = SweepClock::new(&self.plan.key);
        for (done, step) in todo.iter().enumerate() {
            if self.launcher.interrupted() {
                return Ok((done, true));
            }
            let cell = &self.plan.cells[step.cell];
            let progress = format!("[{}/{}]", done + 1, todo.len());
            let left = clock.left(done, todo.len());
            let ticker = |what: &str| {
                Ticker::start(
                    PREFIX,
                    format!("{progress} {what}"),
                    left.map(|d| (Instant::now() + d, " in the sweep")),
                    Announce::Silent,
                    true,
                )
            };
            let key = cell.init_key(axes);
            if self.init_key.as_ref() != Some(&key) {
                say(console, &format!("{progress} initializing"));
                let shown = ticker("initializing");
                let end = self.initialize(cell);
                drop(shown);
                let end = end?;
                for note in self.notes.drain(..) {
                    say(console, &note);
                }
                if end == ChildEnd::Interrupted {
                    return Ok((done, true));
                }
                self.init_key = Some(key);
            }
            let wanted = setting_values(self.plan, cell);
            let settings = self.settings.apply(self.server, &wanted)?;
            let label = format!(
                "cell {} ({}) repeat {}",
                step.cell + 1,
                cell.label(axes),
                step.repeat
            );
            let shown = ticker(&label);
            let phase = |what: &str| shown.relabel(format!("{progress} {label}: {what}"));
            let measured = self.measure(step, cell, (&label, &phase), settings);
            drop(shown);
            match measured? {
                None => return Ok((done, true)),
                Some(tps) => {
                    let left = clock
                        .left(done + 1, todo.len())
                        .filter(|_| done + 1 < todo.len())
                        .map_or_else(String::new, |d| {
                            format!("; about {} left", duration_text(d))
                        });
                    say(console, &format!("{progress} {label}: {tps}{left}"));
                }
            }
        }
        Ok((todo.len(), false))
    }

    /// `pgrush -i` with the cell's initialization options, then `VACUUM ANALYZE` and
    /// `CHECKPOINT`, then the tables' facts.
    fn initialize(&mut self, cell: &Cell) -> Result<ChildEnd, SweepError> {
        let mut args = vec!["--initialize".to_string()];
        args.extend(self.plan.key.init_args.iter().cloned());
        args.extend(axis_args(self.plan, cell, true));
        args.extend(self.server.child_args().iter().cloned());
        let end = self.launcher.run("initialization", &args)?;
        if end == ChildEnd::Interrupted {
            return Ok(end);
        }
        let tables = tables(&self.plan.key);
        self.server
            .query(&format!("VACUUM ANALYZE {}", tables.join(", ")))?;
        // CHECKPOINT needs a superuser or pg_checkpoint: without it the sweep goes on,
        // and says so once.
        if let Err(e) = self.server.query("CHECKPOINT")
            && !self.checkpoint_refused
        {
            self.checkpoint_refused = true;
            self.notes.push(format!(
                "warning: {e}; the cells start without a checkpoint after initialization"
            ));
        }
        let results = self.server.query(&format!(
            "SELECT c.relname, c.relpersistence, \
             coalesce(pg_catalog.array_to_string(c.reloptions, ','), '') \
             FROM pg_catalog.pg_class c WHERE c.relname IN ('{}') \
             AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1",
            tables.join("', '")
        ))?;
        self.tables = results
            .last()
            .map(|r| {
                r.rows()
                    .iter()
                    .map(|row| {
                        let col = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
                        TableFacts {
                            table: col(0),
                            persistence: col(1),
                            options: col(2),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(end)
    }

    /// The measured run, after its own `--warmup` (discarded); returns the tps text (and
    /// NOPM with `--workload tpcc`), or `None` when Ctrl-C interrupted.
    fn measure(
        &mut self,
        step: &Step,
        cell: &Cell,
        (label, phase): (&str, &dyn Fn(&str)),
        settings: BTreeMap<String, String>,
    ) -> Result<Option<String>, SweepError> {
        let key = &self.plan.key;
        let conn = self.server.child_args();
        let run_axes = axis_args(self.plan, cell, false);
        let final_path = document_path(&self.cfg.out_dir, step);
        let partial = final_path.with_extension("json.partial");
        let mut args = key.run_args.clone();
        args.extend(run_axes);
        if !args.iter().any(|a| a == "--report-per-command") {
            args.push("--report-per-command".into());
        }
        args.push(format!("--json={}", partial.display()));
        args.extend(conn.iter().cloned());
        let title = if key.warmup_s > 0 {
            args.push(format!("--warmup={}", key.warmup_s));
            phase("warm-up and measured run");
            format!("{label}: warm-up and measured run")
        } else {
            phase("measured run");
            label.to_string()
        };
        if self.launcher.run(&title, &args)? == ChildEnd::Interrupted {
            let _ = std::fs::remove_file(&partial);
            return Ok(None);
        }
        let facts = RunFacts {
            tables: self.tables.clone(),
            settings,
        };
        let io = |e: std::io::Error| SweepError::Io(format!("{}: {e}", final_path.display()));
        let text =
            serde_json::to_string_pretty(&facts).map_err(|e| SweepError::Io(e.to_string()))?;
        pgrush_cluster::write_atomically(
            &facts_path(&self.cfg.out_dir, step),
            (text + "\n").as_bytes(),
        )
        .map_err(io)?;
        std::fs::rename(&partial, &final_path).map_err(io)?;
        let doc = finished_document(&self.cfg.out_dir, step);
        let mut said = doc
            .as_ref()
            .and_then(|d| d.results.tps)
            .map_or("no tps".to_string(), |t| format!("{t:.1} tps"));
        if let Some(tpcc) = doc.as_ref().and_then(|d| d.tpcc.as_ref()) {
            said.push_str(&format!(", {:.1} NOPM", tpcc.nopm));
        }
        Ok(Some(said))
    }
}

/// The prefix of the sweep's lines.
const PREFIX: &str = "pgrush sweep";

/// The time a sweep has taken, for the time left: the mean time of the runs this
/// invocation finished, or before the first, the warm-up and `--time` of the plan.
struct SweepClock {
    started: Instant,
    planned_per_run: Option<Duration>,
}

impl SweepClock {
    fn new(key: &super::plan::PlanKey) -> SweepClock {
        let run_s = key
            .run_args
            .iter()
            .find_map(|a| a.strip_prefix("--time=")?.parse::<u64>().ok());
        SweepClock {
            started: Instant::now(),
            planned_per_run: run_s.map(|s| Duration::from_secs(s + u64::from(key.warmup_s))),
        }
    }

    /// The time left with `done` of `total` runs finished (`None` when not known yet).
    fn left(&self, done: usize, total: usize) -> Option<Duration> {
        let per_run = match u32::try_from(done) {
            Ok(n) if n > 0 => Some(self.started.elapsed() / n),
            _ => self.planned_per_run,
        }?;
        Some(per_run * u32::try_from(total.saturating_sub(done)).unwrap_or(u32::MAX))
    }
}

/// The arguments of the cell's initialization (`init`) or run axes.
fn axis_args(plan: &Plan, cell: &Cell, init: bool) -> Vec<String> {
    plan.key
        .axes
        .iter()
        .zip(&cell.values)
        .filter(|(a, _)| a.is_init() == init)
        .flat_map(|(a, v)| a.args(v))
        .collect()
}

/// The cell's `set:` settings as (name, value).
fn setting_values(plan: &Plan, cell: &Cell) -> Vec<(String, String)> {
    plan.key
        .axes
        .iter()
        .zip(&cell.values)
        .filter_map(|(a, v)| match &a.kind {
            super::axes::AxisKind::Setting(name) => Some((name.clone(), v.clone())),
            _ => None,
        })
        .collect()
}
