//! Assertions on operation durations (`pgrush ops` results): `STEP OP VALUE[UNIT]` or
//! `STEP OP [FACTOR*]baseline`, e.g. `load<=60s`, `restore<=1.2*baseline`. A value
//! without a unit is in seconds (operations take seconds to hours); `ms` and `us` are
//! accepted too.

use super::parse::{AssertionError, Metric, Op, Threshold, Unit, find_operator, threshold};

/// One parsed duration assertion on a named step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAssertion {
    /// The expression as given.
    pub source: String,
    /// The step's name (`load`, `crash-recovery`…).
    pub step: String,
    /// The comparison.
    pub op: Op,
    /// What the duration is compared with (a value without a unit is in seconds).
    pub threshold: Threshold,
}

impl StepAssertion {
    /// Parses `STEP OP VALUE[UNIT]` or `STEP OP [FACTOR*]baseline`; `steps` are the
    /// step names the results know.
    pub fn parse(text: &str, steps: &[&str]) -> Result<StepAssertion, AssertionError> {
        if text.trim().is_empty() {
            return Err(AssertionError::Empty);
        }
        let (at, op) = find_operator(text).ok_or(AssertionError::NoOperator)?;
        let (lhs, rhs) = (text[..at].trim(), text[at + op.as_str().len()..].trim());
        if lhs.is_empty() {
            return Err(AssertionError::NoMetric);
        }
        if !steps.contains(&lhs) {
            return Err(AssertionError::UnknownStep {
                step: lhs.to_string(),
                known: steps.join(", "),
            });
        }
        if rhs.ends_with('%') {
            return Err(AssertionError::WrongUnit {
                metric: lhs.to_string(),
                unit: "%".to_string(),
                allowed: "s (the default), ms or us",
            });
        }
        // Any duration metric reads a duration's value and unit the same way.
        let threshold = threshold(rhs, Metric::LatencyMax)?;
        Ok(StepAssertion {
            source: text.to_string(),
            step: lhs.to_string(),
            op,
            threshold,
        })
    }

    /// The unit the verdict shows: the threshold's, seconds without one.
    pub fn unit(&self) -> Unit {
        match self.threshold {
            Threshold::Value {
                unit: Unit::Milliseconds,
                ..
            } => Unit::Milliseconds,
            Threshold::Value {
                unit: Unit::Microseconds,
                ..
            } => Unit::Microseconds,
            _ => Unit::Seconds,
        }
    }

    /// `seconds` in [`StepAssertion::unit`].
    pub fn in_unit(&self, seconds: f64) -> f64 {
        match self.unit() {
            Unit::Milliseconds => seconds * 1e3,
            Unit::Microseconds => seconds * 1e6,
            _ => seconds,
        }
    }

    /// The expression written the canonical way: `load <= 60 s`, `pitr <= 1.2 * baseline`.
    pub fn normalized(&self) -> String {
        let rhs = match self.threshold {
            Threshold::Value { value, .. } => format!("{value} {}", self.unit().as_str()),
            Threshold::Baseline { factor: 1.0 } => "baseline".to_string(),
            Threshold::Baseline { factor } => format!("{factor} * baseline"),
        };
        format!("{} {} {rhs}", self.step, self.op.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEPS: [&str; 3] = ["load", "dump", "crash-recovery"];

    fn parsed(text: &str) -> StepAssertion {
        StepAssertion::parse(text, &STEPS).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn reads_durations_in_seconds_by_default() {
        let a = parsed("load<=60");
        assert_eq!((a.step.as_str(), a.op), ("load", Op::LessOrEqual));
        assert_eq!(a.normalized(), "load <= 60 s");
        assert_eq!(a.in_unit(1.5), 1.5);
        let a = parsed(" crash-recovery < 250ms ");
        assert_eq!(a.normalized(), "crash-recovery < 250 ms");
        assert_eq!(a.in_unit(1.5), 1500.0);
        assert_eq!(
            parsed("dump<=1.2*baseline").normalized(),
            "dump <= 1.2 * baseline"
        );
        assert_eq!(parsed("dump<=baseline").unit(), Unit::Seconds);
    }

    #[test]
    fn rejects_unknown_steps_and_units() {
        let err = |text: &str| StepAssertion::parse(text, &STEPS).unwrap_err().to_string();
        assert_eq!(
            err("tps>=10"),
            "unknown step \"tps\" (known: load, dump, crash-recovery)"
        );
        assert!(err("load<=5%").contains("cannot be compared in \"%\""));
        assert!(err("load<=5h").contains("unknown unit \"h\""));
        assert_eq!(err("load<="), "no value after the operator");
        assert_eq!(err("load 5"), AssertionError::NoOperator.to_string());
        assert_eq!(err(""), "empty expression");
    }
}
