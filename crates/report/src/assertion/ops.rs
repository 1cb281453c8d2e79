//! Assertions over `pgrush ops` results (`pgrush report [--baseline BASE.json] OPS.json
//! --assert 'load<=60s'`): each assertion names a step and bounds its duration, and is
//! checked at every scale the results asked for, labelled with the scale. A step
//! repeated (`--repeat`) is measured by the median of its rounds that ran. A step or
//! scale with no measurement (skipped, the series stopped early) fails with a note
//! saying why; with a baseline, a scale or step the baseline lacks fails its
//! `…*baseline` assertions.
//!
//! Only the fields the gate needs are read ([`OpsResults`]): the document's schema
//! (`schema/pgrush-ops.v1.schema.json`) is the contract, its Rust types live in a crate
//! above this one.

use super::{StepAssertion, Threshold, Verdict};
use serde::Deserialize;

/// The `schema` of `pgrush ops --json` documents.
pub const SCHEMA: &str = "pgrush-ops/1";

/// The steps an ops assertion can name, in running order.
pub const STEPS: [&str; 9] = [
    "load",
    "dump",
    "restore",
    "reindex",
    "basebackup",
    "crash-recovery",
    "pitr",
    "switchover",
    "failover",
];

/// What the gate reads of a `pgrush ops --json` document.
#[derive(Debug, Clone, Deserialize)]
pub struct OpsResults {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// What was asked for.
    pub settings: OpsSettings,
    /// The scales that ran (or started).
    pub scales: Vec<ScaleResults>,
    /// Why the series ended early; `None` when complete.
    pub stopped: Option<String>,
}

/// The settings the gate reads.
#[derive(Debug, Clone, Deserialize)]
pub struct OpsSettings {
    /// The scales asked for.
    pub scales: Vec<u32>,
}

/// One scale's step results.
#[derive(Debug, Clone, Deserialize)]
pub struct ScaleResults {
    /// The scale factor.
    pub scale: u32,
    /// Each step's result per round.
    pub steps: Vec<StepRound>,
}

/// One round of one step.
#[derive(Debug, Clone, Deserialize)]
pub struct StepRound {
    /// The step's name.
    pub step: String,
    /// Wall-clock seconds of the step's main operation.
    pub seconds: f64,
    /// Why the step did not run, when it did not.
    pub skipped: Option<String>,
}

/// A document's `schema` field alone: every other field is skipped, not built.
#[derive(Deserialize)]
struct SchemaProbe {
    #[serde(default)]
    schema: Option<String>,
}

/// True when `text` is a JSON document with `"schema": "pgrush-ops/1"`.
pub fn is_ops_text(text: &str) -> bool {
    serde_json::from_str::<SchemaProbe>(text).is_ok_and(|p| p.schema.as_deref() == Some(SCHEMA))
}

/// [`is_ops_text`] for a file (or any reader), read through a buffer and never held
/// whole: a large run document costs no more than its bytes going by.
pub fn is_ops_reader(reader: impl std::io::Read) -> bool {
    serde_json::from_reader::<_, SchemaProbe>(std::io::BufReader::new(reader))
        .is_ok_and(|p| p.schema.as_deref() == Some(SCHEMA))
}

/// [`is_ops_reader`] for the file at `path` (false when it cannot be opened).
pub fn is_ops_file(path: impl AsRef<std::path::Path>) -> bool {
    std::fs::File::open(path).is_ok_and(is_ops_reader)
}

/// Reads the ops results in `text`; `Err` says why they cannot be gated.
pub fn parse_results(text: &str) -> Result<OpsResults, String> {
    let doc: OpsResults = serde_json::from_str(text)
        .map_err(|e| format!("not a pgrush ops result (schema {SCHEMA}): {e}"))?;
    if doc.schema != SCHEMA {
        return Err(format!("not a pgrush ops result (schema {SCHEMA})"));
    }
    Ok(doc)
}

/// The `--assert` expressions as step assertions; `Err` is the first complaint.
pub fn parse_assertions(expressions: &[String]) -> Result<Vec<StepAssertion>, String> {
    expressions
        .iter()
        .map(|e| {
            StepAssertion::parse(e, &STEPS)
                .map_err(|why| format!("invalid assertion \"{e}\": {why}"))
        })
        .collect()
}

/// The median seconds of `step` at `scale` over the rounds that ran, or why there is
/// none.
fn measure(doc: &OpsResults, scale: u32, step: &str) -> Result<f64, String> {
    let Some(results) = doc.scales.iter().find(|s| s.scale == scale) else {
        return Err(match &doc.stopped {
            Some(why) => format!("the series stopped before scale {scale}: {why}"),
            None => format!("no results for scale {scale}"),
        });
    };
    let rounds: Vec<&StepRound> = results.steps.iter().filter(|r| r.step == step).collect();
    let mut ran: Vec<f64> = rounds
        .iter()
        .filter(|r| r.skipped.is_none())
        .map(|r| r.seconds)
        .collect();
    if ran.is_empty() {
        return Err(match rounds.iter().find_map(|r| r.skipped.as_ref()) {
            Some(why) => format!("{step} was skipped: {why}"),
            None => format!("{step} did not run at scale {scale}"),
        });
    }
    ran.sort_by(f64::total_cmp);
    let mid = ran.len() / 2;
    Ok(if ran.len() % 2 == 1 {
        ran[mid]
    } else {
        (ran[mid - 1] + ran[mid]) / 2.0
    })
}

/// The verdicts of every scale the results asked for × assertion, scale by scale, each
/// labelled with its scale (`[scale 10] load <= 60 s`).
pub fn verdicts(
    assertions: &[StepAssertion],
    doc: &OpsResults,
    baseline: Option<&OpsResults>,
) -> Vec<Verdict> {
    let mut out = Vec::new();
    for &scale in &doc.settings.scales {
        for a in assertions {
            out.push(verdict(a, scale, doc, baseline));
        }
    }
    out
}

fn verdict(a: &StepAssertion, scale: u32, doc: &OpsResults, base: Option<&OpsResults>) -> Verdict {
    let measured = measure(doc, scale, &a.step);
    let (threshold, base_value) = match a.threshold {
        Threshold::Value { value, .. } => (Ok(value), None),
        Threshold::Baseline { factor } => {
            let b = base
                .ok_or_else(|| "no baseline results".to_string())
                .and_then(|b| measure(b, scale, &a.step))
                .map(|s| a.in_unit(s));
            (b.clone().map(|v| v * factor), Some(b))
        }
    };
    let passed = match (&measured, &threshold) {
        (Ok(m), Ok(t)) => a.op.holds(a.in_unit(*m), *t),
        _ => false,
    };
    let note = match (&measured, &base_value) {
        (Err(why), _) => Some(format!("not measured: {why}")),
        (_, Some(Err(why))) => Some(format!("no baseline value: {why}")),
        _ => None,
    };
    Verdict {
        expression: a.source.clone(),
        assertion: format!("[scale {scale}] {}", a.normalized()),
        passed,
        measured: measured.ok().map(|s| a.in_unit(s)),
        threshold: threshold.ok(),
        baseline: base_value.and_then(Result::ok),
        unit: a.unit().as_str().to_string(),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(stopped: Option<&str>) -> OpsResults {
        let round = |step: &str, seconds: f64, skipped: Option<&str>| StepRound {
            step: step.into(),
            seconds,
            skipped: skipped.map(str::to_string),
        };
        OpsResults {
            schema: SCHEMA.into(),
            settings: OpsSettings {
                scales: vec![1, 10],
            },
            scales: vec![ScaleResults {
                scale: 1,
                steps: vec![
                    round("load", 3.0, None),
                    round("load", 1.0, None),
                    round("dump", 0.0, Some("no pg_dump")),
                ],
            }],
            stopped: stopped.map(str::to_string),
        }
    }

    #[test]
    fn rounds_give_their_median_and_missing_steps_say_why() {
        let doc = results(Some("not enough disk space"));
        assert_eq!(measure(&doc, 1, "load"), Ok(2.0));
        assert_eq!(
            measure(&doc, 1, "dump"),
            Err("dump was skipped: no pg_dump".to_string())
        );
        assert_eq!(
            measure(&doc, 1, "pitr"),
            Err("pitr did not run at scale 1".to_string())
        );
        assert_eq!(
            measure(&doc, 10, "load"),
            Err("the series stopped before scale 10: not enough disk space".to_string())
        );
        let a = parse_assertions(&["load<=2500ms".to_string()]).unwrap();
        let v = verdicts(&a, &doc, None);
        assert_eq!(
            v[0].line(),
            "assertion passed: [scale 1] load <= 2500 ms (measured 2000.000 ms)"
        );
        assert!(!v[1].passed);
    }
}
