//! One progress line for a long step, on standard error, shared by `pgrush ops` and
//! `pgrush sweep`.
//!
//! On a terminal the line says what the step is doing, how long it has taken and, where
//! known, how long is left: `pgrush ops: scale 1: crash-recovery (workload): 4 s, about
//! 6 s left`. It appears once the step has run for [`FIRST_DRAW`] (shorter steps leave
//! no trace), is redrawn in place (`\r`) every [`TICK`], and is erased when the step
//! ends. Elsewhere (a pipe, a log) nothing is redrawn: a caller that wants one line per
//! step asks for it when the step starts ([`Announce`]).

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a step runs before its line is drawn.
pub const FIRST_DRAW: Duration = Duration::from_secs(1);
/// How often the line is redrawn.
pub const TICK: Duration = Duration::from_secs(1);

/// What the line says now.
#[derive(Debug, Clone)]
struct Activity {
    /// What the step is doing.
    label: String,
    /// When the step started (the elapsed time counts from here).
    started: Instant,
    /// When what is left should be done, and what it is the end of (`""` for the
    /// step, `" in the sweep"`), when known.
    eta: Option<(Instant, &'static str)>,
    /// Not drawn (something else writes on the terminal now).
    hidden: bool,
}

/// The line's state, shared with the drawing thread.
struct Shared {
    /// `None` once the step ended.
    activity: Mutex<Option<Activity>>,
    /// Wakes the drawing thread when the step ends.
    ended: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Option<Activity>> {
        self.activity.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether a step is announced by a line of its own when standard error is no terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announce {
    /// `PREFIX: LABEL` when the step starts.
    Line,
    /// Nothing (the caller prints its own line when the step ends).
    Silent,
}

/// A progress line, drawn while it lives.
pub struct Ticker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts the line of the step `label`, prefixed by `prefix` (`pgrush ops`). `eta`:
    /// when the step (or what the suffix names) should end. `draw: false` draws
    /// nothing on a terminal (for a step that shows progress of its own).
    pub fn start(
        prefix: &'static str,
        label: String,
        eta: Option<(Instant, &'static str)>,
        announce: Announce,
        draw: bool,
    ) -> Ticker {
        let terminal = std::io::stderr().is_terminal();
        if !terminal && announce == Announce::Line {
            let _ = writeln!(std::io::stderr(), "{prefix}: {label}");
        }
        let shared = Arc::new(Shared {
            activity: Mutex::new(Some(Activity {
                label,
                started: Instant::now(),
                eta,
                hidden: false,
            })),
            ended: Condvar::new(),
        });
        let thread = (terminal && draw).then(|| {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || draw_until_ended(prefix, &shared))
        });
        Ticker { shared, thread }
    }

    /// Says what the step does now (`label`), keeping the time left as it was.
    pub fn relabel(&self, label: String) {
        if let Some(activity) = self.shared.lock().as_mut() {
            activity.label = label;
        }
    }

    /// Says what the step does now (`label`) without drawing it: the phase writes on
    /// the terminal itself (the line is erased meanwhile).
    pub fn phase_drawing_itself(&self, label: String) {
        let mut guard = self.shared.lock();
        if let Some(activity) = guard.as_mut() {
            activity.label = label;
            activity.eta = None;
            activity.hidden = true;
            if self.thread.is_some() {
                // Erased now, under the lock the drawing thread draws under.
                let _ = write!(std::io::stderr(), "\r\x1b[K");
                let _ = std::io::stderr().flush();
            }
        }
    }

    /// Says what the step does now (`label`) and when that should be done; the elapsed
    /// time still counts from the step's start.
    pub fn phase(&self, label: String, left: Option<Duration>) {
        if let Some(activity) = self.shared.lock().as_mut() {
            activity.label = label;
            activity.eta = left.map(|d| (Instant::now() + d, ""));
        }
    }
}

/// Draws the line every [`TICK`] from [`FIRST_DRAW`] on, until the step ends; erases it.
fn draw_until_ended(prefix: &str, shared: &Shared) {
    let mut wait = FIRST_DRAW;
    let mut drawn = false;
    let mut guard = shared.lock();
    loop {
        guard = shared
            .ended
            .wait_timeout(guard, wait)
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
        let Some(activity) = guard.as_ref() else {
            break;
        };
        wait = TICK;
        if activity.hidden {
            // Erased by `phase_drawing_itself`.
            drawn = false;
            continue;
        }
        let line = line_of(prefix, activity, Instant::now());
        let _ = write!(std::io::stderr(), "\r\x1b[K{line}");
        let _ = std::io::stderr().flush();
        drawn = true;
    }
    if drawn {
        let _ = write!(std::io::stderr(), "\r\x1b[K");
        let _ = std::io::stderr().flush();
    }
}

/// The line at `now`: `PREFIX: LABEL: ELAPSED[, about LEFT left[ SUFFIX]]`.
fn line_of(prefix: &str, activity: &Activity, now: Instant) -> String {
    let elapsed = now.saturating_duration_since(activity.started);
    let mut line = format!("{prefix}: {}: {}", activity.label, duration_text(elapsed));
    if let Some((end, of)) = activity.eta {
        let left = end.saturating_duration_since(now);
        line.push_str(&format!(", about {} left{of}", duration_text(left)));
    }
    line
}

/// `7 s`, `2 min 5 s`, `1 h 3 min` (whole seconds, rounded down).
pub fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        *self.shared.lock() = None;
        self.shared.ended.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_seconds_minutes_and_hours() {
        assert_eq!(duration_text(Duration::from_millis(999)), "0 s");
        assert_eq!(duration_text(Duration::from_secs(59)), "59 s");
        assert_eq!(duration_text(Duration::from_secs(125)), "2 min 5 s");
        assert_eq!(duration_text(Duration::from_secs(3_780)), "1 h 3 min");
    }

    #[test]
    fn the_line_shows_elapsed_and_what_is_left() {
        let started = Instant::now();
        let mut activity = Activity {
            label: "scale 1: crash-recovery (workload)".into(),
            started,
            eta: Some((started + Duration::from_secs(10), "")),
            hidden: false,
        };
        let at = started + Duration::from_secs(4);
        assert_eq!(
            line_of("pgrush ops", &activity, at),
            "pgrush ops: scale 1: crash-recovery (workload): 4 s, about 6 s left"
        );
        // Past the estimate: nothing left, not a negative time.
        let late = started + Duration::from_secs(12);
        assert!(line_of("p", &activity, late).ends_with("12 s, about 0 s left"));
        activity.eta = Some((started + Duration::from_secs(400), " in the sweep"));
        assert!(line_of("p", &activity, at).ends_with("4 s, about 6 min 36 s left in the sweep"));
        activity.eta = None;
        assert_eq!(
            line_of("p", &activity, at),
            "p: scale 1: crash-recovery (workload): 4 s"
        );
    }
}
