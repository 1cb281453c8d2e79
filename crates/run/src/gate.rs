//! Benchmarks as CI gates: the `--assert` verdicts of a run (or of a saved run with
//! `pgrush report`), their lines after the report, the `--junit` file and the exit status.
//! The gates of a saved sweep are the binary's (they read `pgrush-lab`'s sweep files).

use std::io::Write;

use pgrush_report::assertion::{Assertion, RunFacts, Verdict, evaluate};
use pgrush_report::document::RunDocument;

use crate::options::{Options, ScriptSource, ScriptSpec};

/// The exit status of a run whose report is fine but an assertion failed (0, 1 and 2
/// keep pgbench's meanings).
pub const ASSERTION_FAILED: i32 = 3;

/// What a run with these options can produce (`-R`, `-L`, its scripts; no baseline).
pub fn run_facts(opts: &Options) -> RunFacts {
    RunFacts {
        rate: opts.rate > 0.0 || opts.stages.iter().any(|s| s.rate.is_some_and(|r| r > 0.0)),
        latency_limit: opts.latency_limit_us > 0,
        baseline: false,
        scripts: script_names(&opts.scripts_to_run()),
        stages: opts.stages.len(),
    }
}

/// The names each script of a run answers to: its number is its position; a builtin
/// answers to its name and description, a file to its name as given.
pub fn script_names(specs: &[ScriptSpec]) -> Vec<Vec<String>> {
    specs
        .iter()
        .map(|spec| match &spec.source {
            ScriptSource::Builtin(name) => builtin_names(name),
            ScriptSource::File(path) => vec![String::from_utf8_lossy(path).into_owned()],
        })
        .collect()
}

/// A builtin's name and description (`select-only`, `<builtin: select only>`).
fn builtin_names(name: &str) -> Vec<String> {
    let mut names = vec![name.to_string()];
    if let Some(b) = pgrush_script::builtin_by_name(name) {
        names.push(b.desc.to_string());
    }
    names
}

/// What a saved run can produce: its options and the names of its scripts (the
/// description the report shows, and the builtin's name for builtins).
pub fn document_facts(doc: &RunDocument, baseline: bool) -> RunFacts {
    RunFacts {
        rate: doc.config.rate_tps.is_some(),
        latency_limit: doc.config.latency_limit_ms.is_some(),
        baseline,
        scripts: doc
            .scripts
            .iter()
            .map(|s| {
                let builtin = pgrush_script::BUILTINS
                    .iter()
                    .find(|b| b.desc == s.description);
                let mut names = vec![s.description.clone()];
                names.extend(builtin.map(|b| b.name.to_string()));
                names
            })
            .collect(),
        stages: doc.stages.as_ref().map_or(0, Vec::len),
    }
}

/// Checks every assertion against `facts`; returns each one's script, or the first
/// complaint as `invalid assertion "EXPR": why`.
pub fn resolve(assertions: &[Assertion], facts: &RunFacts) -> Result<Vec<Option<usize>>, String> {
    assertions
        .iter()
        .map(|a| {
            a.check(facts)
                .map_err(|e| format!("invalid assertion \"{}\": {e}", a.source))
        })
        .collect()
}

/// Evaluates the assertions on `doc` (against `baseline` when given), in order. The
/// assertions must have passed [`resolve`] with the same run.
pub fn verdicts(
    assertions: &[Assertion],
    facts: &RunFacts,
    doc: &RunDocument,
    baseline: Option<&RunDocument>,
) -> Vec<Verdict> {
    assertions
        .iter()
        .map(|a| {
            // Resolution was checked before the run; a failure here measures nothing.
            let script = a.check(facts).ok().flatten();
            evaluate(a, script, doc, baseline)
        })
        .collect()
}

/// The verdict lines, one per assertion.
pub fn verdict_lines(verdicts: &[Verdict]) -> String {
    verdicts.iter().map(|v| format!("{}\n", v.line())).collect()
}

/// Prints the verdict lines on `out`.
pub fn print_verdicts(verdicts: &[Verdict], out: &mut dyn Write) {
    let _ = out.write_all(verdict_lines(verdicts).as_bytes());
    let _ = out.flush();
}

/// True when every assertion held.
pub fn all_passed(verdicts: &[Verdict]) -> bool {
    verdicts.iter().all(|v| v.passed)
}
