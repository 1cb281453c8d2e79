//! The outcome of one assertion ([`Verdict`]): stored in the run document and printed
//! after the report.

use serde::{Deserialize, Serialize};

/// The outcome of one assertion, as printed after the report and stored in the JSON
/// document (`assertions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The expression as given.
    pub expression: String,
    /// The assertion written the canonical way (`p99 < 5 ms`).
    pub assertion: String,
    /// Whether the assertion holds (false when the value could not be measured).
    pub passed: bool,
    /// The measured value, in `unit` (`null` when the run has none).
    pub measured: Option<f64>,
    /// The value compared with, in `unit` (`null` when the baseline has none).
    pub threshold: Option<f64>,
    /// The baseline run's value, in `unit` (comparisons with a baseline only).
    pub baseline: Option<f64>,
    /// The unit of `measured`, `threshold` and `baseline`: `ms`, `us`, `s`, `%` or empty.
    pub unit: String,
    /// Why a value is missing.
    pub note: Option<String>,
}

impl Verdict {
    /// The line printed after the report:
    /// `assertion passed: tps >= 1000 (measured 1234.567)`,
    /// `assertion FAILED: p99 < 5 ms (measured 7.210 ms)`.
    pub fn line(&self) -> String {
        let state = if self.passed { "passed" } else { "FAILED" };
        let show = |v: f64| {
            let number = if self.unit.is_empty() && v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{v:.0}")
            } else {
                format!("{v:.3}")
            };
            match self.unit.as_str() {
                "" => number,
                "%" => format!("{number}%"),
                unit => format!("{number} {unit}"),
            }
        };
        let mut facts = Vec::new();
        if let Some(m) = self.measured {
            facts.push(format!("measured {}", show(m)));
        }
        if let Some(b) = self.baseline {
            facts.push(format!("baseline {}", show(b)));
        }
        if let (Some(t), Some(_)) = (self.threshold, self.baseline) {
            facts.push(format!("limit {}", show(t)));
        }
        if let Some(note) = &self.note {
            facts.push(note.clone());
        }
        format!(
            "assertion {state}: {} ({})",
            self.assertion,
            facts.join(", ")
        )
    }
}
