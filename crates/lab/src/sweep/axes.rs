//! The axes of a sweep (`--vary NAME=V1,V2,...`): what varies, its values, and the
//! command-line arguments each value gives the child `pgrush` processes.
//!
//! Three kinds: initialization options (the database is initialized again when one of
//! them changes; `warehouses` is `-s` of `--workload tpcc`), run options, and server
//! settings (`set:NAME`, applied with `ALTER SYSTEM`).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// An option of `pgrush -i` that an axis can vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitOption {
    /// `-F`/`--fillfactor` (10 to 100).
    Fillfactor,
    /// `--unlogged-tables` (`on`/`off`).
    Unlogged,
    /// `-s`/`--scale`.
    Scale,
    /// `-s`/`--scale` of `--workload tpcc`: the number of warehouses.
    Warehouses,
    /// `--partitions`.
    Partitions,
    /// `--partition-method` (`range`/`hash`).
    PartitionMethod,
    /// `--foreign-keys` (`on`/`off`).
    ForeignKeys,
}

/// An option of a benchmark run that an axis can vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOption {
    /// `-c`/`--client`.
    Clients,
    /// `-j`/`--jobs`.
    Jobs,
    /// `-M`/`--protocol`.
    Protocol,
    /// `-R`/`--rate` (transactions per second).
    Rate,
    /// The script: a builtin's name (`-b`) or a file (`-f`).
    Script,
}

/// What an axis varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisKind {
    /// An initialization option.
    Init(InitOption),
    /// A run option.
    Run(RunOption),
    /// A server setting, by name (`set:NAME`).
    Setting(String),
}

/// Why a `--vary` specification is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AxisError {
    /// Not of the form `NAME=V1,V2,...`.
    #[error("\"{0}\" is not of the form NAME=VALUE1,VALUE2,...")]
    Syntax(String),
    /// An axis name pgrush does not know.
    #[error(
        "unknown axis \"{0}\" (known: fillfactor, unlogged, scale, warehouses, partitions, \
         partition-method, foreign-keys, clients, jobs, protocol, rate, script, set:SETTING)"
    )]
    UnknownAxis(String),
    /// A setting name with characters a setting name cannot have.
    #[error("invalid setting name \"{0}\"")]
    SettingName(String),
    /// A value the axis does not accept.
    #[error("invalid value \"{value}\" for axis {axis}: {expected}")]
    Value {
        /// The axis.
        axis: String,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// The same value twice.
    #[error("value \"{value}\" appears twice in axis {axis}")]
    DuplicateValue {
        /// The axis.
        axis: String,
        /// The repeated value.
        value: String,
    },
    /// The same axis twice.
    #[error("axis {0} is varied twice")]
    DuplicateAxis(String),
    /// Two axes that set the same option (`scale` and `warehouses`).
    #[error("axes {0} and {1} both set --{2}: vary one of them")]
    SameOption(String, String, &'static str),
}

/// One axis: what varies and the values it takes, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "AxisSpec", try_from = "AxisSpec")]
pub struct Axis {
    /// What varies.
    pub kind: AxisKind,
    /// The values, normalized (`on`/`off` for switches, a builtin's full name).
    pub values: Vec<String>,
}

/// An axis as stored in `sweep.json`: its name and values.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct AxisSpec {
    name: String,
    values: Vec<String>,
}

impl From<Axis> for AxisSpec {
    fn from(axis: Axis) -> Self {
        AxisSpec {
            name: axis.name(),
            values: axis.values,
        }
    }
}

impl TryFrom<AxisSpec> for Axis {
    type Error = AxisError;
    fn try_from(spec: AxisSpec) -> Result<Self, AxisError> {
        Axis::new(&spec.name, spec.values.iter().map(String::as_str))
    }
}

/// The axis names and what they vary.
const NAMES: &[(&str, AxisKindName)] = &[
    ("fillfactor", AxisKindName::Init(InitOption::Fillfactor)),
    ("unlogged", AxisKindName::Init(InitOption::Unlogged)),
    ("scale", AxisKindName::Init(InitOption::Scale)),
    ("warehouses", AxisKindName::Init(InitOption::Warehouses)),
    ("partitions", AxisKindName::Init(InitOption::Partitions)),
    (
        "partition-method",
        AxisKindName::Init(InitOption::PartitionMethod),
    ),
    ("foreign-keys", AxisKindName::Init(InitOption::ForeignKeys)),
    ("clients", AxisKindName::Run(RunOption::Clients)),
    ("jobs", AxisKindName::Run(RunOption::Jobs)),
    ("protocol", AxisKindName::Run(RunOption::Protocol)),
    ("rate", AxisKindName::Run(RunOption::Rate)),
    ("script", AxisKindName::Run(RunOption::Script)),
];

#[derive(Debug, Clone, Copy)]
enum AxisKindName {
    Init(InitOption),
    Run(RunOption),
}

impl Axis {
    /// Parses `NAME=V1,V2,...` (`--vary`'s argument).
    pub fn parse(spec: &str) -> Result<Axis, AxisError> {
        let (name, values) = spec
            .split_once('=')
            .ok_or_else(|| AxisError::Syntax(spec.to_string()))?;
        if values.is_empty() {
            return Err(AxisError::Syntax(spec.to_string()));
        }
        Axis::new(name.trim(), values.split(','))
    }

    /// An axis from its name and its values (each checked and normalized).
    pub fn new<'a>(name: &str, values: impl Iterator<Item = &'a str>) -> Result<Axis, AxisError> {
        let kind = kind_of(name)?;
        let mut axis = Axis {
            kind,
            values: Vec::new(),
        };
        for raw in values {
            let value = axis.normalize(raw.trim())?;
            if axis.values.contains(&value) {
                return Err(AxisError::DuplicateValue {
                    axis: axis.name(),
                    value,
                });
            }
            axis.values.push(value);
        }
        if axis.values.is_empty() {
            return Err(AxisError::Syntax(name.to_string()));
        }
        Ok(axis)
    }

    /// The axis' name as `--vary` writes it (`fillfactor`, `set:work_mem`).
    pub fn name(&self) -> String {
        match &self.kind {
            AxisKind::Setting(name) => format!("set:{name}"),
            AxisKind::Init(opt) => name_of(AxisKindName::Init(*opt)).to_string(),
            AxisKind::Run(opt) => name_of(AxisKindName::Run(*opt)).to_string(),
        }
    }

    /// True for an initialization option.
    pub fn is_init(&self) -> bool {
        matches!(self.kind, AxisKind::Init(_))
    }

    /// The long names of the pgbench options this axis sets (a command line that also
    /// gives one of them conflicts with the axis).
    pub fn option_names(&self) -> &'static [&'static str] {
        match &self.kind {
            AxisKind::Setting(_) => &[],
            AxisKind::Init(opt) => match opt {
                InitOption::Fillfactor => &["fillfactor"],
                InitOption::Unlogged => &["unlogged-tables"],
                InitOption::Scale | InitOption::Warehouses => &["scale"],
                InitOption::Partitions => &["partitions"],
                InitOption::PartitionMethod => &["partition-method"],
                InitOption::ForeignKeys => &["foreign-keys"],
            },
            AxisKind::Run(opt) => match opt {
                RunOption::Clients => &["client"],
                RunOption::Jobs => &["jobs"],
                RunOption::Protocol => &["protocol"],
                RunOption::Rate => &["rate"],
                RunOption::Script => &["builtin", "file", "select-only", "skip-some-updates"],
            },
        }
    }

    /// The arguments `value` adds to the child's command line (`-i` for an init axis,
    /// a run otherwise; none for a setting).
    pub fn args(&self, value: &str) -> Vec<String> {
        let opt = |name: &str| vec![format!("--{name}={value}")];
        match &self.kind {
            AxisKind::Setting(_) => Vec::new(),
            AxisKind::Init(InitOption::Unlogged) | AxisKind::Init(InitOption::ForeignKeys) => {
                if value == "on" {
                    vec![format!("--{}", self.option_names()[0])]
                } else {
                    Vec::new()
                }
            }
            AxisKind::Run(RunOption::Script) => {
                if pgrush_script::builtin_by_prefix(value).is_ok_and(|b| b.name == value) {
                    opt("builtin")
                } else {
                    opt("file")
                }
            }
            _ => opt(self.option_names()[0]),
        }
    }

    /// Checks one value and returns its normal form.
    fn normalize(&self, value: &str) -> Result<String, AxisError> {
        let bad = |expected: &'static str| AxisError::Value {
            axis: self.name(),
            value: value.to_string(),
            expected,
        };
        let int_in = |lo: i64, hi: i64, expected: &'static str| {
            value
                .parse::<i64>()
                .ok()
                .filter(|n| (lo..=hi).contains(n))
                .map(|n| n.to_string())
                .ok_or_else(|| bad(expected))
        };
        match &self.kind {
            AxisKind::Setting(_) => {
                if value.is_empty() {
                    Err(bad("a setting value"))
                } else {
                    Ok(value.to_string())
                }
            }
            AxisKind::Init(opt) => match opt {
                InitOption::Fillfactor => int_in(10, 100, "an integer from 10 to 100"),
                InitOption::Scale | InitOption::Warehouses => {
                    int_in(1, i64::from(i32::MAX), "a positive integer")
                }
                InitOption::Partitions => int_in(0, i64::from(i32::MAX), "a non-negative integer"),
                InitOption::PartitionMethod => match value {
                    "range" | "hash" => Ok(value.to_string()),
                    _ => Err(bad("range or hash")),
                },
                InitOption::Unlogged | InitOption::ForeignKeys => {
                    switch(value).ok_or_else(|| bad("on or off"))
                }
            },
            AxisKind::Run(opt) => match opt {
                RunOption::Clients | RunOption::Jobs => {
                    int_in(1, i64::from(i32::MAX), "a positive integer")
                }
                RunOption::Protocol => match value {
                    "simple" | "extended" | "prepared" => Ok(value.to_string()),
                    _ => Err(bad("simple, extended or prepared")),
                },
                RunOption::Rate => value
                    .parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r > 0.0)
                    .map(|_| value.to_string())
                    .ok_or_else(|| bad("a positive number of transactions per second")),
                RunOption::Script => script_value(value)
                    .ok_or_else(|| bad("a builtin script name or an existing script file")),
            },
        }
    }
}

/// `on`/`off` from the usual spellings of a switch.
fn switch(value: &str) -> Option<String> {
    match value.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some("on".into()),
        "off" | "false" | "no" | "0" => Some("off".into()),
        _ => None,
    }
}

/// A builtin's full name (from an unambiguous prefix, as `-b`), else an existing file.
fn script_value(value: &str) -> Option<String> {
    if let Ok(builtin) = pgrush_script::builtin_by_prefix(value) {
        return Some(builtin.name.to_string());
    }
    std::path::Path::new(value)
        .is_file()
        .then(|| value.to_string())
}

fn kind_of(name: &str) -> Result<AxisKind, AxisError> {
    if let Some(setting) = name.strip_prefix("set:") {
        let valid = !setting.is_empty()
            && setting
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        return if valid {
            Ok(AxisKind::Setting(setting.to_ascii_lowercase()))
        } else {
            Err(AxisError::SettingName(setting.to_string()))
        };
    }
    match NAMES.iter().find(|(n, _)| *n == name) {
        Some((_, AxisKindName::Init(opt))) => Ok(AxisKind::Init(*opt)),
        Some((_, AxisKindName::Run(opt))) => Ok(AxisKind::Run(*opt)),
        None => Err(AxisError::UnknownAxis(name.to_string())),
    }
}

fn name_of(kind: AxisKindName) -> &'static str {
    NAMES
        .iter()
        .find(|(_, k)| match (k, kind) {
            (AxisKindName::Init(a), AxisKindName::Init(b)) => *a == b,
            (AxisKindName::Run(a), AxisKindName::Run(b)) => *a == b,
            _ => false,
        })
        .map_or("?", |(n, _)| n)
}

/// Checks that no axis is given twice, and that no two axes set the same option.
pub fn check_distinct(axes: &[Axis]) -> Result<(), AxisError> {
    for (i, axis) in axes.iter().enumerate() {
        if axes[..i].iter().any(|a| a.name() == axis.name()) {
            return Err(AxisError::DuplicateAxis(axis.name()));
        }
        for earlier in &axes[..i] {
            if let Some(option) = earlier
                .option_names()
                .iter()
                .find(|n| axis.option_names().contains(n))
            {
                return Err(AxisError::SameOption(earlier.name(), axis.name(), option));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_normalizes_each_kind() {
        let ff = Axis::parse("fillfactor=100,80").unwrap();
        assert_eq!(ff.kind, AxisKind::Init(InitOption::Fillfactor));
        assert_eq!(ff.values, ["100", "80"]);
        assert_eq!(ff.args("80"), ["--fillfactor=80"]);
        let unlogged = Axis::parse("unlogged=off,YES").unwrap();
        assert_eq!(unlogged.values, ["off", "on"]);
        assert_eq!(unlogged.args("on"), ["--unlogged-tables"]);
        assert!(unlogged.args("off").is_empty());
        let script = Axis::parse("script=tpcb,simple-update").unwrap();
        assert_eq!(script.values, ["tpcb-like", "simple-update"]);
        assert_eq!(script.args("tpcb-like"), ["--builtin=tpcb-like"]);
        let set = Axis::parse("set:Synchronous_Commit=on,off").unwrap();
        assert_eq!(set.name(), "set:synchronous_commit");
        assert!(set.args("on").is_empty());
        assert!(!set.is_init() && ff.is_init());
        assert_eq!(
            Axis::parse("clients=1,10").unwrap().args("10"),
            ["--client=10"]
        );
    }

    #[test]
    fn refuses_bad_specifications() {
        assert!(matches!(
            Axis::parse("fillfactor"),
            Err(AxisError::Syntax(_))
        ));
        assert!(matches!(
            Axis::parse("colour=red"),
            Err(AxisError::UnknownAxis(_))
        ));
        assert!(matches!(
            Axis::parse("fillfactor=5"),
            Err(AxisError::Value { .. })
        ));
        assert!(matches!(
            Axis::parse("clients=1,1"),
            Err(AxisError::DuplicateValue { .. })
        ));
        assert!(matches!(
            Axis::parse("set:a;b=1"),
            Err(AxisError::SettingName(_))
        ));
        assert!(matches!(
            Axis::parse("script=no-such-script.sql"),
            Err(AxisError::Value { .. })
        ));
        let axes = [
            Axis::parse("clients=1").unwrap(),
            Axis::parse("clients=2").unwrap(),
        ];
        assert_eq!(
            check_distinct(&axes),
            Err(AxisError::DuplicateAxis("clients".into()))
        );
        let axes = [
            Axis::parse("scale=1").unwrap(),
            Axis::parse("warehouses=1,2").unwrap(),
        ];
        assert_eq!(
            check_distinct(&axes).unwrap_err().to_string(),
            "axes scale and warehouses both set --scale: vary one of them"
        );
    }

    #[test]
    fn warehouses_reload_with_their_scale() {
        let axis = Axis::parse("warehouses=2,1").unwrap();
        assert_eq!(axis.kind, AxisKind::Init(InitOption::Warehouses));
        assert!(axis.is_init());
        assert_eq!(axis.name(), "warehouses");
        assert_eq!(axis.args("2"), ["--scale=2"]);
        assert!(matches!(
            Axis::parse("warehouses=0"),
            Err(AxisError::Value { .. })
        ));
    }

    #[test]
    fn round_trips_through_json() {
        let axis = Axis::parse("set:work_mem=4MB,64MB").unwrap();
        let text = serde_json::to_string(&axis).unwrap();
        assert_eq!(text, r#"{"name":"set:work_mem","values":["4MB","64MB"]}"#);
        assert_eq!(serde_json::from_str::<Axis>(&text).unwrap(), axis);
    }
}
