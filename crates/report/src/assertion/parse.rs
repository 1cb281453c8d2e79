//! The text of an assertion: `[SCRIPT:]METRIC OP VALUE[UNIT]` or `[SCRIPT:]METRIC OP
//! [FACTOR*]baseline`, and its checks against what a run can produce.

use std::fmt;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterOrEqual,
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
}

impl Op {
    /// Every operator, two-character ones first (so `<=` is not read as `<`).
    const ALL: [Op; 6] = [
        Op::LessOrEqual,
        Op::GreaterOrEqual,
        Op::Equal,
        Op::NotEqual,
        Op::Less,
        Op::Greater,
    ];

    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Less => "<",
            Op::LessOrEqual => "<=",
            Op::Greater => ">",
            Op::GreaterOrEqual => ">=",
            Op::Equal => "==",
            Op::NotEqual => "!=",
        }
    }

    /// `measured OP threshold`; false when either is NaN.
    pub fn holds(self, measured: f64, threshold: f64) -> bool {
        match self {
            Op::Less => measured < threshold,
            Op::LessOrEqual => measured <= threshold,
            Op::Greater => measured > threshold,
            Op::GreaterOrEqual => measured >= threshold,
            Op::Equal => measured == threshold,
            Op::NotEqual => measured != threshold && !measured.is_nan() && !threshold.is_nan(),
        }
    }
}

/// What is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// Successful transactions per second.
    Tps,
    /// The report's `latency average`.
    LatencyAverage,
    /// Latency standard deviation.
    LatencyStddev,
    /// Maximum latency of a successful transaction.
    LatencyMax,
    /// A latency percentile, in (0, 100].
    Percentile(f64),
    /// Failed transactions.
    Failed,
    /// Transactions retried.
    Retried,
    /// Successful transactions above the `-L` limit.
    Late,
    /// Average schedule lag (`-R`).
    LagAverage,
    /// Maximum schedule lag (`-R`).
    LagMax,
    /// Initial connection time (average connection time with `-C`).
    ConnectionTime,
    /// `--workload tpcc`: New-Orders committed per minute (the server's count when read).
    Nopm,
    /// `--workload tpcc`: successful transactions per minute (the clients' count).
    Tpm,
}

/// How a metric's value is expressed, which decides the units it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Transactions per second: no unit.
    Rate,
    /// A duration: `ms` (default), `us`, `s`.
    Time,
    /// A count: no unit, or `%` for a share of the transactions.
    Count,
}

/// Named metrics: (name, aliases, metric).
const NAMED: [(&str, &[&str], Metric); 12] = [
    ("tps", &[], Metric::Tps),
    ("latency-avg", &["avg", "latency"], Metric::LatencyAverage),
    ("latency-stddev", &["stddev"], Metric::LatencyStddev),
    ("latency-max", &["max"], Metric::LatencyMax),
    ("failed", &[], Metric::Failed),
    ("retried", &[], Metric::Retried),
    ("late", &[], Metric::Late),
    ("lag-avg", &["lag"], Metric::LagAverage),
    ("lag-max", &[], Metric::LagMax),
    ("connection-time", &["conn-time"], Metric::ConnectionTime),
    ("nopm", &[], Metric::Nopm),
    ("tpm", &[], Metric::Tpm),
];

/// The metric names an error message lists.
const KNOWN_METRICS: &str = "tps, latency-avg, latency-stddev, latency-max, pNN (e.g. p99, p99.9), \
failed, retried, late, lag-avg, lag-max, connection-time, nopm, tpm (--workload tpcc)";

impl Metric {
    /// Reads a metric name (`tps`, `p99.9`, an alias).
    fn from_name(name: &str) -> Option<Metric> {
        if let Some(found) = NAMED
            .iter()
            .find(|(canonical, aliases, _)| *canonical == name || aliases.contains(&name))
        {
            return Some(found.2);
        }
        let digits = name.strip_prefix('p')?;
        let p = plain_number(digits)?;
        crate::percentiles::is_percentile(p).then_some(Metric::Percentile(p))
    }

    /// The canonical name (`p99.9` for percentiles).
    pub fn name(self) -> String {
        match self {
            Metric::Percentile(p) => format!("p{p}"),
            other => NAMED
                .iter()
                .find(|(_, _, m)| *m == other)
                .map_or_else(String::new, |(name, _, _)| name.to_string()),
        }
    }

    pub(crate) fn kind(self) -> Kind {
        match self {
            Metric::Tps | Metric::Nopm | Metric::Tpm => Kind::Rate,
            Metric::Failed | Metric::Retried | Metric::Late => Kind::Count,
            _ => Kind::Time,
        }
    }

    /// Whether the metric exists per script (the report's per-script blocks).
    pub fn per_script(self) -> bool {
        !matches!(
            self,
            Metric::Late
                | Metric::LagAverage
                | Metric::LagMax
                | Metric::ConnectionTime
                | Metric::Nopm
                | Metric::Tpm
        )
    }

    /// Whether the metric exists per stage (the report's stage blocks).
    pub fn per_stage(self) -> bool {
        !matches!(
            self,
            Metric::Late | Metric::ConnectionTime | Metric::Nopm | Metric::Tpm
        )
    }
}

/// The unit written after a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// No unit: a rate, a count, or milliseconds for durations.
    None,
    /// `ms`.
    Milliseconds,
    /// `us`.
    Microseconds,
    /// `s`.
    Seconds,
    /// `%`: a share of the transactions.
    Percent,
}

impl Unit {
    fn from_suffix(text: &str) -> Option<Unit> {
        match text {
            "" => Some(Unit::None),
            "ms" => Some(Unit::Milliseconds),
            "us" => Some(Unit::Microseconds),
            "s" => Some(Unit::Seconds),
            "%" => Some(Unit::Percent),
            _ => None,
        }
    }

    /// The unit as written (`""` for none).
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Milliseconds => "ms",
            Unit::Microseconds => "us",
            Unit::Seconds => "s",
            Unit::Percent => "%",
        }
    }

    /// Milliseconds per unit for durations (1 for none, which means milliseconds).
    pub fn ms_per_unit(self) -> f64 {
        match self {
            Unit::Microseconds => 0.001,
            Unit::Seconds => 1000.0,
            _ => 1.0,
        }
    }
}

/// The right-hand side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// A fixed value in `unit`.
    Value {
        /// The number as written.
        value: f64,
        /// Its unit.
        unit: Unit,
    },
    /// `FACTOR*baseline`: the same metric in the baseline run, times `factor`.
    Baseline {
        /// The factor (1 for plain `baseline`).
        factor: f64,
    },
}

/// Which script an assertion is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptKey {
    /// The script's number, from 1 (as `SQL script N:` in the report).
    Number(usize),
    /// A builtin name (`select-only`) or a file name as given.
    Name(String),
}

impl fmt::Display for ScriptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptKey::Number(n) => write!(f, "{n}"),
            ScriptKey::Name(name) => f.write_str(name),
        }
    }
}

/// One parsed `--assert` expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Assertion {
    /// The expression as given.
    pub source: String,
    /// The script, when the assertion is about one script.
    pub script: Option<ScriptKey>,
    /// The stage (from 1, `stageN:`), when the assertion is about one stage of a run
    /// in stages.
    pub stage: Option<usize>,
    /// What is measured.
    pub metric: Metric,
    /// The comparison.
    pub op: Op,
    /// What the value is compared with.
    pub threshold: Threshold,
}

/// A malformed expression.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssertionError {
    /// Nothing but blanks.
    #[error("empty expression")]
    Empty,
    /// No comparison operator.
    #[error("no comparison operator (expected one of <, <=, >, >=, ==, !=)")]
    NoOperator,
    /// Nothing before the operator.
    #[error("no metric before the operator")]
    NoMetric,
    /// `SCRIPT:` with nothing before the colon.
    #[error("empty script name before \":\"")]
    EmptyScript,
    /// Script number 0.
    #[error("script numbers start at 1")]
    ScriptZero,
    /// An unknown metric name.
    #[error("unknown metric \"{0}\" (known: {KNOWN_METRICS})")]
    UnknownMetric(String),
    /// Nothing after the operator.
    #[error("no value after the operator")]
    NoValue,
    /// The value is not a finite number.
    #[error("invalid number \"{0}\"")]
    InvalidNumber(String),
    /// An unknown unit.
    #[error("unknown unit \"{0}\" (known: ms, us, s, %)")]
    UnknownUnit(String),
    /// A unit the metric cannot take.
    #[error("metric {metric} cannot be compared in \"{unit}\" ({allowed})")]
    WrongUnit {
        /// The metric's name.
        metric: String,
        /// The unit given.
        unit: String,
        /// What the metric takes.
        allowed: &'static str,
    },
    /// A metric without per-script values.
    #[error("metric {0} is not measured per script")]
    NotPerScript(String),
    /// A metric without per-stage values.
    #[error("metric {0} is not measured per stage")]
    NotPerStage(String),
    /// A step name the results do not know (`pgrush ops` results).
    #[error("unknown step \"{step}\" (known: {known})")]
    UnknownStep {
        /// The name given.
        step: String,
        /// The steps known, comma-separated.
        known: String,
    },
}

impl Assertion {
    /// Parses `[SCRIPT:]METRIC OP VALUE[UNIT]` (blanks around the parts are allowed).
    pub fn parse(text: &str) -> Result<Assertion, AssertionError> {
        if text.trim().is_empty() {
            return Err(AssertionError::Empty);
        }
        // Metric, operator and value never contain ':', file names may.
        let (script, rest) = match text.rsplit_once(':') {
            Some((script, rest)) => (Some(script_key(script)?), rest),
            None => (None, text),
        };
        // `stageN:` is a stage, not a script.
        let stage = script.as_ref().and_then(stage_number);
        let script = script.filter(|_| stage.is_none());
        let (at, op) = find_operator(rest).ok_or(AssertionError::NoOperator)?;
        let (lhs, rhs) = (rest[..at].trim(), rest[at + op.as_str().len()..].trim());
        if lhs.is_empty() {
            return Err(AssertionError::NoMetric);
        }
        let metric =
            Metric::from_name(lhs).ok_or_else(|| AssertionError::UnknownMetric(lhs.to_string()))?;
        if script.is_some() && !metric.per_script() {
            return Err(AssertionError::NotPerScript(metric.name()));
        }
        if stage.is_some() && !metric.per_stage() {
            return Err(AssertionError::NotPerStage(metric.name()));
        }
        let threshold = threshold(rhs, metric)?;
        Ok(Assertion {
            source: text.to_string(),
            script,
            stage,
            metric,
            op,
            threshold,
        })
    }

    /// The expression written the canonical way: `select-only: p99.9 <= 20 ms`.
    pub fn normalized(&self) -> String {
        let script = match (&self.script, self.stage) {
            (_, Some(n)) => format!("stage{n}: "),
            (Some(s), None) => format!("{s}: "),
            (None, None) => String::new(),
        };
        let rhs = match self.threshold {
            Threshold::Value { value, unit } => match unit {
                Unit::None => format!("{value}"),
                Unit::Percent => format!("{value}%"),
                unit => format!("{value} {}", unit.as_str()),
            },
            Threshold::Baseline { factor: 1.0 } => "baseline".to_string(),
            Threshold::Baseline { factor } => format!("{factor} * baseline"),
        };
        format!("{script}{} {} {rhs}", self.metric.name(), self.op.as_str())
    }

    /// Checks the assertion against what the run produces and resolves its script
    /// (`Ok(None)`: the whole run).
    pub fn check(&self, facts: &RunFacts) -> Result<Option<usize>, ContextError> {
        match self.metric {
            Metric::LagAverage | Metric::LagMax if !facts.rate => {
                return Err(ContextError::NeedsRate(self.metric.name()));
            }
            Metric::Late if !facts.latency_limit => return Err(ContextError::NeedsLatencyLimit),
            _ => {}
        }
        if matches!(self.threshold, Threshold::Baseline { .. }) && !facts.baseline {
            return Err(ContextError::NoBaseline);
        }
        if let Some(n) = self.stage
            && n > facts.stages
        {
            return Err(ContextError::UnknownStage {
                stage: n,
                stages: facts.stages,
            });
        }
        let Some(key) = &self.script else {
            return Ok(None);
        };
        let found = match key {
            ScriptKey::Number(n) => (*n <= facts.scripts.len()).then(|| n - 1),
            ScriptKey::Name(name) => facts
                .scripts
                .iter()
                .position(|names| names.iter().any(|n| n == name)),
        };
        found.map(Some).ok_or_else(|| ContextError::UnknownScript {
            script: key.to_string(),
            known: facts
                .scripts
                .iter()
                .enumerate()
                .map(|(i, names)| format!("{} ({})", i + 1, names.join(", ")))
                .collect::<Vec<_>>()
                .join("; "),
        })
    }
}

/// What a run can produce, for [`Assertion::check`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFacts {
    /// `-R` was given (schedule lag is measured).
    pub rate: bool,
    /// `-L` was given (late transactions are counted).
    pub latency_limit: bool,
    /// A baseline run is there to compare with.
    pub baseline: bool,
    /// For each script in order, the names it answers to (builtin name, file name,
    /// description).
    pub scripts: Vec<Vec<String>>,
    /// The number of stages (`--stage`, `--stages`; 0 without).
    pub stages: usize,
}

/// A well-formed assertion that does not fit the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// Lag without `-R`.
    #[error("metric {0} needs a rate limit (-R)")]
    NeedsRate(String),
    /// Late without `-L`.
    #[error("metric late needs a latency limit (-L)")]
    NeedsLatencyLimit,
    /// `baseline` without a baseline run.
    #[error(
        "\"baseline\" needs a saved run to compare with (pgrush report --baseline BASE.json NEW.json)"
    )]
    NoBaseline,
    /// No such stage.
    #[error("no stage {stage} in this run ({stages} stages)")]
    UnknownStage {
        /// The stage as written.
        stage: usize,
        /// The run's number of stages.
        stages: usize,
    },
    /// No such script.
    #[error("no script \"{script}\" in this run (scripts: {known})")]
    UnknownScript {
        /// The script as written.
        script: String,
        /// The run's scripts.
        known: String,
    },
}

/// The stage of a `stageN` prefix (N from 1), if it is one.
fn stage_number(key: &ScriptKey) -> Option<usize> {
    let ScriptKey::Name(name) = key else {
        return None;
    };
    let digits = name.strip_prefix("stage")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n >= 1)
}

/// The script part before `:`: a number from 1 or a name.
fn script_key(text: &str) -> Result<ScriptKey, AssertionError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AssertionError::EmptyScript);
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return match text.parse::<usize>() {
            Ok(0) => Err(AssertionError::ScriptZero),
            Ok(n) => Ok(ScriptKey::Number(n)),
            // Too many digits for any run: keep it as a name, which will not be found.
            Err(_) => Ok(ScriptKey::Name(text.to_string())),
        };
    }
    Ok(ScriptKey::Name(text.to_string()))
}

/// The first operator in `text` and its byte position.
pub(super) fn find_operator(text: &str) -> Option<(usize, Op)> {
    text.match_indices(['<', '>', '=', '!'])
        .find_map(|(at, _)| {
            Op::ALL
                .into_iter()
                .find(|op| text[at..].starts_with(op.as_str()))
                .map(|op| (at, op))
        })
}

/// A plain decimal number (`12`, `0.95`, `1e3`; no sign, no `inf`/`nan`), finite.
fn plain_number(text: &str) -> Option<f64> {
    let starts_with_digit = text
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'.');
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !starts_with_digit || !plain {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The right-hand side: `VALUE[UNIT]` or `[FACTOR*]baseline`.
pub(super) fn threshold(text: &str, metric: Metric) -> Result<Threshold, AssertionError> {
    if text.is_empty() {
        return Err(AssertionError::NoValue);
    }
    if let Some(factor) = text.strip_suffix("baseline") {
        let factor = factor.trim_end();
        let factor = match factor.strip_suffix('*') {
            Some(number) => number_value(number.trim())?,
            None if factor.is_empty() => 1.0,
            None => return Err(AssertionError::InvalidNumber(text.to_string())),
        };
        return Ok(Threshold::Baseline { factor });
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .unwrap_or(text.len());
    // The number ends at the first character no number has (`5ms` -> `5`, `ms`).
    let (number, unit) = text.split_at(split);
    if number.trim().is_empty() {
        return Err(AssertionError::InvalidNumber(text.to_string()));
    }
    let value = number_value(number.trim())?;
    let unit = unit.trim();
    let unit = Unit::from_suffix(unit).ok_or_else(|| AssertionError::UnknownUnit(unit.into()))?;
    let allowed = match (metric.kind(), unit) {
        (Kind::Rate, Unit::None) | (Kind::Count, Unit::None | Unit::Percent) => None,
        (Kind::Time, u) if u != Unit::Percent => None,
        (Kind::Rate, _) => Some("no unit"),
        (Kind::Count, _) => Some("no unit for a count, % for a share of the transactions"),
        (Kind::Time, _) => Some("ms, us or s; ms without a unit"),
    };
    if let Some(allowed) = allowed {
        return Err(AssertionError::WrongUnit {
            metric: metric.name(),
            unit: unit.as_str().to_string(),
            allowed,
        });
    }
    Ok(Threshold::Value { value, unit })
}

fn number_value(text: &str) -> Result<f64, AssertionError> {
    if text.is_empty() {
        return Err(AssertionError::NoValue);
    }
    plain_number(text).ok_or_else(|| AssertionError::InvalidNumber(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Assertion {
        Assertion::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn reads_the_documented_examples() {
        let a = parsed("tps>=1000");
        assert_eq!(
            (a.metric, a.op, a.script),
            (Metric::Tps, Op::GreaterOrEqual, None)
        );
        assert_eq!(
            a.threshold,
            Threshold::Value {
                value: 1000.0,
                unit: Unit::None
            }
        );
        let a = parsed("p99<5ms");
        assert_eq!((a.metric, a.op), (Metric::Percentile(99.0), Op::Less));
        assert_eq!(a.normalized(), "p99 < 5 ms");
        assert_eq!(parsed("failed==0").normalized(), "failed == 0");
        let a = parsed("select-only:p99.9<=20ms");
        assert_eq!(a.script, Some(ScriptKey::Name("select-only".into())));
        assert_eq!(a.normalized(), "select-only: p99.9 <= 20 ms");
        assert_eq!(parsed("2:tps>1").script, Some(ScriptKey::Number(2)));
        assert_eq!(
            parsed(" latency  < 1.5 s ").normalized(),
            "latency-avg < 1.5 s"
        );
        assert_eq!(parsed("retried<=0.5%").normalized(), "retried <= 0.5%");
        assert_eq!(parsed("max!=1e3us").normalized(), "latency-max != 1000 us");
        assert_eq!(
            parsed("dir/a:b.sql:failed<1").script,
            Some(ScriptKey::Name("dir/a:b.sql".into()))
        );
    }

    #[test]
    fn reads_stages() {
        let a = parsed("stage2: p99 < 5ms");
        assert_eq!((a.stage, &a.script), (Some(2), &None));
        assert_eq!(a.normalized(), "stage2: p99 < 5 ms");
        assert_eq!(parsed("stage1:lag-max<=1s").stage, Some(1));
        // Not a stage: a script named so.
        assert_eq!(parsed("stage:tps>1").stage, None);
        assert_eq!(parsed("stage0:tps>1").stage, None);
        assert_eq!(
            parsed("stages.sql:tps>1").script,
            Some(ScriptKey::Name("stages.sql".into()))
        );
    }

    #[test]
    fn reads_baselines() {
        assert_eq!(
            parsed("tps>=0.95*baseline").threshold,
            Threshold::Baseline { factor: 0.95 }
        );
        assert_eq!(
            parsed("p99 <= 1.1 * baseline").normalized(),
            "p99 <= 1.1 * baseline"
        );
        assert_eq!(
            parsed("failed<=baseline").normalized(),
            "failed <= baseline"
        );
    }

    #[test]
    fn rejects_malformed_expressions() {
        use AssertionError as E;
        let err = |t: &str| Assertion::parse(t).err();
        assert_eq!(err(""), Some(E::Empty));
        assert_eq!(err("tps 1000"), Some(E::NoOperator));
        assert_eq!(err(">=1"), Some(E::NoMetric));
        assert_eq!(err(":tps>1"), Some(E::EmptyScript));
        assert_eq!(err("0:tps>1"), Some(E::ScriptZero));
        assert_eq!(err("tsp>1"), Some(E::UnknownMetric("tsp".into())));
        assert_eq!(err("p0<1"), Some(E::UnknownMetric("p0".into())));
        assert_eq!(err("p100.1<1"), Some(E::UnknownMetric("p100.1".into())));
        assert_eq!(err("tps>="), Some(E::NoValue));
        assert_eq!(err("tps>=x"), Some(E::InvalidNumber("x".into())));
        assert_eq!(err("tps>=inf"), Some(E::InvalidNumber("inf".into())));
        assert_eq!(err("tps>=-1"), Some(E::InvalidNumber("-1".into())));
        assert_eq!(err("p99<5min"), Some(E::UnknownUnit("min".into())));
        assert_eq!(err("tps=>1"), Some(E::UnknownMetric("tps=".into())));
        assert_eq!(
            err("tps>=baselines"),
            Some(E::InvalidNumber("baselines".into()))
        );
        assert!(matches!(err("tps>1ms"), Some(E::WrongUnit { .. })));
        assert!(matches!(err("p99<1%"), Some(E::WrongUnit { .. })));
        assert!(matches!(err("failed<1ms"), Some(E::WrongUnit { .. })));
        assert_eq!(err("1:lag<1"), Some(E::NotPerScript("lag-avg".into())));
        assert_eq!(err("stage1:late<1"), Some(E::NotPerStage("late".into())));
        assert_eq!(err("tps>=x*baseline"), Some(E::InvalidNumber("x".into())));
    }

    #[test]
    fn checks_against_the_run() {
        let facts = RunFacts {
            rate: false,
            latency_limit: true,
            baseline: false,
            scripts: vec![vec!["select-only".into(), "<builtin: select only>".into()]],
            stages: 2,
        };
        assert_eq!(parsed("tps>1").check(&facts), Ok(None));
        assert_eq!(parsed("stage2:p99<5ms").check(&facts), Ok(None));
        assert_eq!(
            parsed("stage3:p99<5ms").check(&facts),
            Err(ContextError::UnknownStage {
                stage: 3,
                stages: 2
            })
        );
        assert_eq!(parsed("select-only:tps>1").check(&facts), Ok(Some(0)));
        assert_eq!(parsed("1:tps>1").check(&facts), Ok(Some(0)));
        assert!(matches!(
            parsed("2:tps>1").check(&facts),
            Err(ContextError::UnknownScript { .. })
        ));
        assert_eq!(
            parsed("lag<1").check(&facts),
            Err(ContextError::NeedsRate("lag-avg".into()))
        );
        assert_eq!(parsed("late==0").check(&facts), Ok(None));
        assert_eq!(
            parsed("tps>baseline").check(&facts),
            Err(ContextError::NoBaseline)
        );
    }

    #[test]
    fn operators_compare_as_written() {
        assert!(Op::Less.holds(1.0, 2.0) && !Op::Less.holds(2.0, 2.0));
        assert!(Op::LessOrEqual.holds(2.0, 2.0));
        assert!(Op::Greater.holds(3.0, 2.0) && Op::GreaterOrEqual.holds(2.0, 2.0));
        assert!(Op::Equal.holds(0.0, 0.0) && Op::NotEqual.holds(1.0, 0.0));
        assert!(!Op::NotEqual.holds(f64::NAN, 0.0) && !Op::GreaterOrEqual.holds(f64::NAN, 0.0));
    }

    /// What parses prints back as text that parses to the same assertion.
    fn round_trips(text: &str) -> Result<(), String> {
        let Ok(a) = Assertion::parse(text) else {
            return Ok(());
        };
        let again = Assertion::parse(&a.normalized()).map_err(|e| format!("{text:?}: {e}"))?;
        let same = (again.script == a.script)
            && (again.metric == a.metric)
            && (again.op == a.op)
            && (again.threshold == a.threshold);
        if same {
            Ok(())
        } else {
            Err(format!("{text:?} -> {:?} -> {again:?}", a.normalized()))
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
            proptest::prop_assert_eq!(round_trips(&text), Ok(()));
        }

        #[test]
        fn operator_soup_never_panics(text in "([a-z0-9]{0,3}:)?(p[0-9.]{1,4}|tps|failed|max)[<>=! ]{1,3}[0-9.e* ]{0,6}(ms|us|s|%|baseline)?") {
            proptest::prop_assert_eq!(round_trips(&text), Ok(()));
        }
    }
}
