//! Stages of a run (`--stage SPEC`, `--stages FILE`): what each stage asks for, as
//! written (`DURATION[,clients=N][,rate=TPS][,ramp][,label=NAME]`), and resolved
//! against the previous stage (the value a stage leaves out is the previous one's;
//! the first stage's previous values are `-c` and `-R`).
//!
//! The engine runs them (active clients, the open-loop rate), the reports print and
//! record them. A rate of 0 is a closed loop (no `-R` schedule).

use std::fmt;

/// One stage as written on the command line or in a `--stages` file.
#[derive(Debug, Clone, PartialEq)]
pub struct StageSpec {
    /// The text it was parsed from.
    pub text: String,
    /// Its length in seconds (at least 1).
    pub duration_s: u32,
    /// `clients=N`: active clients (at the end of a ramp).
    pub clients: Option<u32>,
    /// `rate=TPS`: transactions per second (0: closed loop; at the end of a ramp).
    pub rate: Option<f64>,
    /// `ramp`: clients and rate move linearly from the previous stage's values.
    pub ramp: bool,
    /// `label=NAME`.
    pub label: Option<String>,
}

/// Why a stage specification was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum StageSpecError {
    /// The spec is empty.
    Empty,
    /// The duration is not whole seconds from 1 (with an optional `s`).
    Duration(String),
    /// `clients=` is not a whole number.
    Clients(String),
    /// `rate=` is not a number from 0.
    Rate(String),
    /// `label=` is empty or holds a `"`.
    Label(String),
    /// A part that is none of `clients=`, `rate=`, `ramp`, `label=`.
    Unknown(String),
    /// A part given twice.
    Repeated(&'static str),
    /// `clients=` above `-c`.
    TooManyClients {
        /// The stage's clients.
        stage: u32,
        /// `-c`.
        max: u32,
    },
}

impl fmt::Display for StageSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StageSpecError::Empty => write!(f, "empty stage"),
            StageSpecError::Duration(v) => write!(
                f,
                "invalid duration \"{v}\" (whole seconds from 1, e.g. 30 or 30s)"
            ),
            StageSpecError::Clients(v) => {
                write!(f, "invalid clients \"{v}\" (a whole number from 0)")
            }
            StageSpecError::Rate(v) => write!(f, "invalid rate \"{v}\" (a number from 0)"),
            StageSpecError::Label(v) => write!(f, "invalid label \"{v}\" (not empty, no '\"')"),
            StageSpecError::Unknown(v) => write!(
                f,
                "unknown part \"{v}\" (expected clients=N, rate=TPS, ramp or label=NAME)"
            ),
            StageSpecError::Repeated(what) => write!(f, "{what} given twice"),
            StageSpecError::TooManyClients { stage, max } => write!(
                f,
                "{stage} clients is more than the number of clients ({max})"
            ),
        }
    }
}

impl std::error::Error for StageSpecError {}

/// Whole seconds from 1 with an optional `s` (`30`, `30s`), as `--warmup` takes them.
pub fn parse_duration_s(text: &str) -> Option<u32> {
    let digits = text.strip_suffix('s').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u32>().ok().filter(|&n| n >= 1)
}

impl StageSpec {
    /// Parses `DURATION[,clients=N][,rate=TPS][,ramp][,label=NAME]` (surrounding
    /// blanks of each part ignored).
    pub fn parse(text: &str) -> Result<StageSpec, StageSpecError> {
        let text = text.trim();
        let mut parts = text.split(',').map(str::trim);
        let first = parts.next().unwrap_or_default();
        if first.is_empty() {
            return Err(StageSpecError::Empty);
        }
        let duration_s =
            parse_duration_s(first).ok_or_else(|| StageSpecError::Duration(first.to_string()))?;
        let mut spec = StageSpec {
            text: text.to_string(),
            duration_s,
            clients: None,
            rate: None,
            ramp: false,
            label: None,
        };
        for part in parts {
            spec.apply_part(part)?;
        }
        Ok(spec)
    }

    /// One `key=value` or `ramp` part.
    fn apply_part(&mut self, part: &str) -> Result<(), StageSpecError> {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        match (key.trim(), value.trim()) {
            ("ramp", "") if !part.contains('=') => {
                if std::mem::replace(&mut self.ramp, true) {
                    return Err(StageSpecError::Repeated("ramp"));
                }
            }
            ("clients", v) => {
                let n = v
                    .parse::<u32>()
                    .ok()
                    .filter(|_| v.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| StageSpecError::Clients(v.to_string()))?;
                if self.clients.replace(n).is_some() {
                    return Err(StageSpecError::Repeated("clients"));
                }
            }
            ("rate", v) => {
                let r = v
                    .parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r >= 0.0)
                    .ok_or_else(|| StageSpecError::Rate(v.to_string()))?;
                if self.rate.replace(r).is_some() {
                    return Err(StageSpecError::Repeated("rate"));
                }
            }
            ("label", v) => {
                if v.is_empty() || v.contains('"') {
                    return Err(StageSpecError::Label(v.to_string()));
                }
                if self.label.replace(v.to_string()).is_some() {
                    return Err(StageSpecError::Repeated("label"));
                }
            }
            _ => return Err(StageSpecError::Unknown(part.to_string())),
        }
        Ok(())
    }
}

/// The specs of a `--stages` file: one per line, `#` comments and blank lines
/// skipped. Errors name the line (1-based).
pub fn parse_stages_file(text: &str) -> Result<Vec<StageSpec>, (usize, StageSpecError)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line
            .split_once('#')
            .map_or(line, |(before, _)| before)
            .trim();
        if line.is_empty() {
            continue;
        }
        out.push(StageSpec::parse(line).map_err(|e| (i + 1, e))?);
    }
    Ok(out)
}

/// A stage with its values resolved: clients and rate at its start and its end
/// (equal unless it ramps).
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// What was written.
    pub spec: StageSpec,
    /// Seconds from the start of the measured interval to the stage's start.
    pub start_s: u32,
    /// Active clients at the start and at the end.
    pub clients: (u32, u32),
    /// Rate (tps, whole run) at the start and at the end; 0 = unthrottled.
    pub rate: (f64, f64),
}

impl Stage {
    /// Seconds from the start of the measured interval to the stage's end.
    pub fn end_s(&self) -> u32 {
        self.start_s + self.spec.duration_s
    }

    /// Whether the stage runs a closed loop (no rate at either end).
    pub fn closed_loop(&self) -> bool {
        self.rate.0 <= 0.0 && self.rate.1 <= 0.0
    }

    /// The report's header of stage `number` (1-based), e.g.
    /// `stage 2 "climb": 60 s, clients 4->16, rate unthrottled`.
    pub fn header(&self, number: usize) -> String {
        let mut s = format!("stage {number}");
        if let Some(label) = &self.spec.label {
            s.push_str(&format!(" \"{label}\""));
        }
        s.push_str(&format!(
            ": {} s, clients {}",
            self.spec.duration_s, self.clients.0
        ));
        if self.clients.1 != self.clients.0 {
            s.push_str(&format!("->{}", self.clients.1));
        }
        s.push_str(", rate ");
        s.push_str(&rate_text(self.rate.0));
        if self.rate.1 != self.rate.0 {
            s.push_str("->");
            s.push_str(&rate_text(self.rate.1));
        }
        s
    }
}

/// `400 tps`, or `unthrottled` for 0.
fn rate_text(rate: f64) -> String {
    if rate > 0.0 {
        format!("{rate} tps")
    } else {
        "unthrottled".to_string()
    }
}

/// Resolves the specs in order: a value left out is the previous stage's (the first
/// stage's previous values are `clients` (`-c`) and `rate` (`-R`, 0 = none)); a stage
/// without `ramp` holds its values over its whole length, one with `ramp` moves from
/// the previous stage's end values to its own.
pub fn resolve(specs: &[StageSpec], clients: u32, rate: f64) -> Result<Vec<Stage>, StageSpecError> {
    let mut prev = (clients, rate);
    let mut start_s = 0u32;
    let mut out = Vec::with_capacity(specs.len());
    for spec in specs {
        let c = spec.clients.unwrap_or(prev.0);
        if c > clients {
            return Err(StageSpecError::TooManyClients {
                stage: c,
                max: clients,
            });
        }
        let r = spec.rate.unwrap_or(prev.1);
        let from = if spec.ramp { prev } else { (c, r) };
        out.push(Stage {
            spec: spec.clone(),
            start_s,
            clients: (from.0, c),
            rate: (from.1, r),
        });
        start_s = start_s.saturating_add(spec.duration_s);
        prev = (c, r);
    }
    Ok(out)
}

/// The total length of the stages in seconds.
pub fn total_duration_s(stages: &[Stage]) -> u32 {
    stages.last().map_or(0, Stage::end_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_spec_parses() {
        let s = StageSpec::parse(" 60s, clients=16 ,ramp,label=climb,rate=2.5").unwrap();
        assert_eq!(s.duration_s, 60);
        assert_eq!(s.clients, Some(16));
        assert_eq!(s.rate, Some(2.5));
        assert!(s.ramp);
        assert_eq!(s.label.as_deref(), Some("climb"));
        assert_eq!(StageSpec::parse("7").unwrap().duration_s, 7);
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let err = |t: &str| StageSpec::parse(t).unwrap_err().to_string();
        assert_eq!(err(""), "empty stage");
        assert!(err("0s").starts_with("invalid duration \"0s\""));
        assert!(err("1m").starts_with("invalid duration \"1m\""));
        assert!(err("-3").starts_with("invalid duration"));
        assert!(err("5,clients=-1").starts_with("invalid clients \"-1\""));
        assert!(err("5,clients=+2").starts_with("invalid clients \"+2\""));
        assert!(err("5,rate=fast").starts_with("invalid rate \"fast\""));
        assert!(err("5,rate=-1").starts_with("invalid rate"));
        assert!(err("5,rate=inf").starts_with("invalid rate"));
        assert!(err("5,label=").starts_with("invalid label"));
        assert!(err("5,ramp=1").starts_with("unknown part \"ramp=1\""));
        assert!(err("5,speed=3").starts_with("unknown part \"speed=3\""));
        assert_eq!(err("5,rate=1,rate=2"), "rate given twice");
        assert_eq!(err("5,ramp,ramp"), "ramp given twice");
    }

    #[test]
    fn values_left_out_are_the_previous_stages() {
        let specs: Vec<StageSpec> = [
            "30s,clients=4",
            "60s,clients=16,ramp,label=climb",
            "30s,rate=400",
        ]
        .iter()
        .map(|t| StageSpec::parse(t).unwrap())
        .collect();
        let st = resolve(&specs, 16, 0.0).unwrap();
        assert_eq!((st[0].clients, st[0].rate), ((4, 4), (0.0, 0.0)));
        assert_eq!((st[1].clients, st[1].start_s), ((4, 16), 30));
        assert_eq!((st[2].clients, st[2].rate), ((16, 16), (400.0, 400.0)));
        assert_eq!(total_duration_s(&st), 120);
        assert_eq!(
            st[1].header(2),
            "stage 2 \"climb\": 60 s, clients 4->16, rate unthrottled"
        );
        assert_eq!(st[2].header(3), "stage 3: 30 s, clients 16, rate 400 tps");
        assert!(st[0].closed_loop() && !st[2].closed_loop());
        // The first stage ramps from -c and -R.
        let first = resolve(&[StageSpec::parse("2,rate=10,ramp").unwrap()], 3, 5.0).unwrap();
        assert_eq!((first[0].clients, first[0].rate), ((3, 3), (5.0, 10.0)));
    }

    #[test]
    fn more_clients_than_c_are_refused() {
        let specs = [StageSpec::parse("5,clients=9").unwrap()];
        assert_eq!(
            resolve(&specs, 8, 0.0).unwrap_err().to_string(),
            "9 clients is more than the number of clients (8)"
        );
    }

    #[test]
    fn a_stages_file_skips_comments_and_blank_lines() {
        let specs = parse_stages_file("# warm\n\n10s,clients=2  # low\n 20s,rate=5\n").unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].text, "10s,clients=2");
        assert_eq!(specs[1].rate, Some(5.0));
        let (line, e) = parse_stages_file("1s\n\nbad\n").unwrap_err();
        assert_eq!(line, 3);
        assert!(matches!(e, StageSpecError::Duration(_)));
    }
}
