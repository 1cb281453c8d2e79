//! `pgrush capacity`: the highest rate a server sustains while every SLO holds.
//!
//! Unless `--start-rate` is given, a closed-loop probe (the user's options, no `-R`)
//! measures the throughput the clients can push; the search starts at half of it. Each
//! step is an open-loop run at an offered rate (`-R`, latency counted from each
//! transaction's scheduled start) after a discarded warm-up ([`step`]); the rate
//! doubles while every step holds and halves while none has, then the search bisects
//! between the highest rate that held and the lowest that failed until they are within
//! `--precision` of each other ([`search`]). SLOs ([`slo`]) are `--assert` expressions;
//! percentile and failure-share SLOs are decided on the step's transaction counts with
//! a binomial interval ([`binomial`]), and a step too short to decide is repeated. The
//! result ([`CapacityResult`]) renders as text ([`output`]), JSON and HTML ([`html`]);
//! saved results are read back and compared by [`compare`] (`pgrush report`).
//! Ctrl-C stops the running step and keeps the bracket found so far.
//!
//! Modules: `config`, `error`, `binomial`, `slo`, `search` (the state machine), `step`
//! (one step's rounds, as children run by [`crate::child`]), `result`, `output`, `html`.

pub mod binomial;
pub mod compare;
mod config;
mod error;
pub mod html;
pub mod output;
mod result;
pub mod search;
pub mod slo;
mod step;

pub use config::CapacityConfig;
pub use error::CapacityError;
pub use result::{CapacityResult, Probe, SCHEMA, SearchSettings, StepRecord, rate_text};
pub use slo::{Slo, SloError, SloKind, SloVerdict};
pub use step::{DELIVERED_SHARE, LAG_GROWTH_LIMIT, MAX_ROUNDS};

use crate::child::Launcher;
use crate::ticker::{Announce, Ticker};
use search::{Limits, Search};
use std::io::Write;
use std::time::{Duration, Instant};
use step::StepRunner;

/// The prefix of the search's lines.
const PREFIX: &str = "pgrush capacity";
/// The children's output, in the scratch directory (quoted when a child fails).
const LOG_FILE: &str = "capacity.log";
/// Most steps of one search (a guard: the bisection ends long before).
const MAX_STEPS: usize = 40;
/// The search climbs at most to this multiple of the probe's tps.
const CLIMB_OVER_PROBE: f64 = 8.0;

/// Runs the search; a line per step goes to `console`. Ctrl-C ends it early with
/// `interrupted` set and the steps so far.
pub fn run_capacity(
    cfg: &CapacityConfig,
    console: &mut dyn Write,
) -> Result<CapacityResult, CapacityError> {
    let io = |e: std::io::Error| CapacityError::Io(format!("scratch directory: {e}"));
    let scratch = tempfile::tempdir().map_err(io)?;
    let launcher = Launcher::new(&cfg.exe, &scratch.path().join(LOG_FILE))?;
    let runner = StepRunner {
        launcher: &launcher,
        dir: scratch.path(),
        cfg,
    };
    if let Some(rate) = cfg.start_rate {
        check_measurable(cfg, rate)?;
    }
    let mut result = empty_result(cfg);
    let start = match cfg.start_rate {
        Some(rate) => rate,
        None => match probe(&runner, console)? {
            Some(p) => {
                let rate = round_rate(p.tps / 2.0);
                result.probe = Some(p);
                rate
            }
            None => {
                result.interrupted = true;
                return Ok(result);
            }
        },
    };
    check_measurable(cfg, start)?;
    result.settings.start_rate = start;
    let fewest = step::fewest_transactions(&cfg.slos) as f64;
    let limits = Limits {
        precision: cfg.precision,
        lowest_rate: (fewest / f64::from(cfg.max_step_s)).max(0.1),
        highest_rate: result
            .probe
            .as_ref()
            .map_or(1e9, |p| p.tps * CLIMB_OVER_PROBE),
    };
    let mut search = Search::start(start);
    while let Some(rate) = search.next_rate() {
        if launcher.interrupted() {
            result.interrupted = true;
            break;
        }
        if result.steps.len() >= MAX_STEPS {
            break;
        }
        let rate = round_rate(rate);
        let number = result.steps.len() + 1;
        let seconds = runner.round_seconds(rate) + cfg.warmup_s;
        let ticker = Ticker::start(
            PREFIX,
            format!("step {number}: {} tps", rate_text(rate)),
            Some((Instant::now() + Duration::from_secs(u64::from(seconds)), "")),
            Announce::Silent,
            true,
        );
        let record = runner.run(number, rate, &|label| ticker.relabel(label));
        drop(ticker);
        let Some(record) = record? else {
            result.interrupted = true;
            break;
        };
        say(console, &output::step_line(&record));
        search = search.after(rate, record.held, &limits);
        result.steps.push(record);
    }
    finish(&mut result, &search);
    Ok(result)
}

/// The closed-loop probe; `None` when Ctrl-C stopped it.
fn probe(runner: &StepRunner<'_>, console: &mut dyn Write) -> Result<Option<Probe>, CapacityError> {
    let seconds = runner.cfg.step_s;
    let ticker = Ticker::start(
        PREFIX,
        "closed-loop probe".to_string(),
        Some((
            Instant::now() + Duration::from_secs(u64::from(seconds + runner.cfg.warmup_s)),
            "",
        )),
        Announce::Silent,
        true,
    );
    let doc = runner.run_child(
        "closed-loop probe",
        &[format!("--time={seconds}")],
        "probe.json",
    );
    drop(ticker);
    let Some(doc) = doc? else {
        return Ok(None);
    };
    let tps = doc.results.tps.filter(|t| *t > 0.0);
    let (Some(tps), Some(latency)) = (tps, doc.results.latency_average_ms) else {
        return Err(CapacityError::EmptyProbe);
    };
    let probe = Probe {
        duration_s: doc.results.duration_s,
        tps,
        latency_average_ms: latency,
    };
    say(
        console,
        &format!(
            "closed-loop probe: {tps:.1} tps, latency average {latency:.3} ms; starting at {} tps",
            rate_text(round_rate(tps / 2.0))
        ),
    );
    Ok(Some(probe))
}

/// Refuses SLOs that a step at `rate` cannot decide within `--max-step`.
fn check_measurable(cfg: &CapacityConfig, rate: f64) -> Result<(), CapacityError> {
    let gives = (rate * f64::from(cfg.max_step_s)).floor() as u64;
    for slo in &cfg.slos {
        let needed = slo.fewest_transactions();
        if needed > gives {
            return Err(CapacityError::Unmeasurable {
                slo: slo.name(),
                needed,
                rate: rate_text(rate),
                max_step_s: cfg.max_step_s,
                gives,
            });
        }
    }
    Ok(())
}

/// `rate` to 4 significant digits.
fn round_rate(rate: f64) -> f64 {
    if rate <= 0.0 || !rate.is_finite() {
        return rate;
    }
    let scale = 10f64.powi(3 - rate.log10().floor() as i32);
    (rate * scale).round() / scale
}

/// The result before any step.
fn empty_result(cfg: &CapacityConfig) -> CapacityResult {
    CapacityResult {
        schema: SCHEMA.to_string(),
        pgrush_version: env!("CARGO_PKG_VERSION").to_string(),
        settings: SearchSettings {
            slos: cfg.slos.iter().map(Slo::name).collect(),
            start_rate: cfg.start_rate.unwrap_or(0.0),
            precision: cfg.precision,
            step_s: cfg.step_s,
            max_step_s: cfg.max_step_s,
            warmup_s: cfg.warmup_s,
            run_args: pgrush_wire::conninfo::redact_argv(&cfg.run_args),
        },
        probe: None,
        capacity_tps: None,
        first_failing_tps: None,
        first_failure: None,
        bracket_width: None,
        steps: Vec::new(),
        complete: false,
        interrupted: false,
    }
}

/// Fills the bracket from the search's end (or where it stopped).
fn finish(result: &mut CapacityResult, search: &Search) {
    let (good, bad) = search.bracket();
    result.capacity_tps = good;
    result.first_failing_tps = bad;
    result.first_failure = bad.and_then(|b| {
        result
            .steps
            .iter()
            .rev()
            .find(|s| s.offered_tps == b)
            .and_then(|s| s.failure.clone())
    });
    result.bracket_width = good.zip(bad).map(|(g, b)| (b - g) / g);
    result.complete = matches!(
        search,
        Search::Done {
            good: Some(_),
            bad: Some(_)
        }
    );
}

/// One line on the console, prefixed.
fn say(console: &mut dyn Write, line: &str) {
    let _ = writeln!(console, "{PREFIX}: {line}");
    let _ = console.flush();
}

#[cfg(test)]
mod tests {
    use super::round_rate;

    #[test]
    fn rates_keep_four_digits() {
        assert_eq!(round_rate(781.234), 781.2);
        assert_eq!(round_rate(12345.6), 12350.0);
        assert_eq!(round_rate(0.123456), 0.1235);
    }
}
