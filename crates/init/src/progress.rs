//! Progress of client-side loading: pgbench 18's lines when stderr is not a terminal
//! (every 100000 rows, or every 5 s with `-q`), a bar with rate and time left on a terminal.

use crate::console::Console;
use std::time::{Duration, Instant};

/// Rows between two progress lines in normal mode.
const LINE_EVERY: i64 = 100_000;
/// Rows between two clock checks in quiet mode.
const QUIET_CHECK_EVERY: i64 = 100;
/// Seconds between two progress lines in quiet mode (pgbench's `LOG_STEP_SECONDS`).
const QUIET_STEP_SECONDS: f64 = 5.0;
/// Minimum time between two redraws of the bar.
const BAR_REDRAW: Duration = Duration::from_millis(100);
/// Width of the bar itself, in characters.
const BAR_WIDTH: usize = 30;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// pgbench's line every 100000 rows.
    Lines,
    /// pgbench's `-q` line every 5 seconds.
    Quiet,
    /// A redrawn bar (stderr is a terminal).
    Bar,
}

/// Progress of loading one table; rows may be reported in batches.
pub struct Progress<'a> {
    console: &'a Console,
    table: &'static str,
    total: i64,
    done: i64,
    start: Instant,
    mode: Mode,
    /// Next quiet-mode deadline, in units of 5 seconds.
    log_interval: f64,
    last_draw: Option<Instant>,
    drawn_chars: usize,
}

impl<'a> Progress<'a> {
    /// Starts tracking `total` rows of `table`.
    pub fn new(console: &'a Console, table: &'static str, total: i64, quiet: bool) -> Self {
        let mode = if console.is_tty() {
            Mode::Bar
        } else if quiet {
            Mode::Quiet
        } else {
            Mode::Lines
        };
        let start = Instant::now();
        Progress {
            console,
            table,
            total,
            done: 0,
            start,
            mode,
            log_interval: 1.0,
            // The first draw waits one redraw interval: a rate over a few
            // milliseconds means nothing, and fast tables show no bar at all.
            last_draw: Some(start),
            drawn_chars: 0,
        }
    }

    /// Records `rows` more rows and prints what pgbench would have printed meanwhile.
    pub fn advance(&mut self, rows: i64) {
        let old = self.done;
        self.done = (old + rows).min(self.total);
        let new = self.done;
        match self.mode {
            Mode::Lines => {
                let mut j = (old / LINE_EVERY + 1) * LINE_EVERY;
                while j <= new {
                    let elapsed = self.start.elapsed().as_secs_f64();
                    self.console.line(&self.pgbench_line(j, elapsed));
                    j += LINE_EVERY;
                }
            }
            Mode::Quiet => {
                let mut j = (old / QUIET_CHECK_EVERY + 1) * QUIET_CHECK_EVERY;
                while j <= new {
                    let elapsed = self.start.elapsed().as_secs_f64();
                    if j == self.total || elapsed >= self.log_interval * QUIET_STEP_SECONDS {
                        self.console.line(&self.pgbench_line(j, elapsed));
                        self.log_interval = (elapsed / QUIET_STEP_SECONDS).ceil();
                    }
                    j += QUIET_CHECK_EVERY;
                }
            }
            Mode::Bar => {
                let now = Instant::now();
                let due = self
                    .last_draw
                    .is_none_or(|t| now.duration_since(t) >= BAR_REDRAW);
                if due && new > old {
                    self.last_draw = Some(now);
                    self.draw_bar(now.duration_since(self.start).as_secs_f64());
                }
            }
        }
    }

    /// Ends the display (on a terminal the bar is erased, as pgbench 18 erases its line).
    pub fn finish(&mut self) {
        if self.mode == Mode::Bar && self.drawn_chars > 0 {
            self.console
                .write(&format!("{}\r", " ".repeat(self.drawn_chars)));
            self.drawn_chars = 0;
        }
    }

    /// pgbench 18's progress line for `j` rows after `elapsed` seconds.
    pub fn pgbench_line(&self, j: i64, elapsed: f64) -> String {
        progress_line(j, self.total, self.table, elapsed)
    }

    fn draw_bar(&mut self, elapsed: f64) {
        let text = bar_text(self.table, self.done, self.total, elapsed);
        let pad = self.drawn_chars.saturating_sub(text.chars().count());
        self.drawn_chars = text.chars().count();
        self.console.write(&format!("{text}{}\r", " ".repeat(pad)));
    }
}

/// `%ld of %ld tuples (%d%%) of %s done (elapsed %.2f s, remaining %.2f s)`.
pub fn progress_line(j: i64, total: i64, table: &str, elapsed: f64) -> String {
    let remaining = (total - j) as f64 * elapsed / j as f64;
    let percent = if total > 0 { j * 100 / total } else { 0 };
    format!(
        "{j} of {total} tuples ({percent}%) of {table} done (elapsed {elapsed:.2} s, remaining {remaining:.2} s)"
    )
}

/// The terminal bar: table, bar, percent, rows, rate and time left.
pub fn bar_text(table: &str, done: i64, total: i64, elapsed: f64) -> String {
    let frac = if total > 0 {
        done as f64 / total as f64
    } else {
        1.0
    };
    let filled = ((frac * BAR_WIDTH as f64) as usize).min(BAR_WIDTH);
    let rate = if elapsed > 0.0 {
        done as f64 / elapsed
    } else {
        0.0
    };
    let left = if rate > 0.0 {
        (total - done) as f64 / rate
    } else {
        0.0
    };
    format!(
        "{table} [{}{}] {:3}% {done}/{total} rows, {rate:.0} rows/s, {left:.1} s left",
        "#".repeat(filled),
        "-".repeat(BAR_WIDTH - filled),
        (frac * 100.0) as i64
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::capture::Captured;

    #[test]
    fn line_format() {
        assert_eq!(
            progress_line(100000, 200000, "pgbench_accounts", 0.5),
            "100000 of 200000 tuples (50%) of pgbench_accounts done (elapsed 0.50 s, remaining 0.50 s)"
        );
    }

    #[test]
    fn lines_every_100000_rows_with_batches() {
        let cap = Captured::default();
        let console = Console::new(Box::new(cap.clone()), false);
        let mut p = Progress::new(&console, "pgbench_accounts", 300_000, false);
        p.advance(99_999);
        p.advance(150_001);
        p.advance(50_000);
        p.finish();
        let text = cap.text();
        let firsts: Vec<&str> = text
            .lines()
            .map(|l| l.split(" tuples").next().unwrap())
            .collect();
        assert_eq!(
            firsts,
            ["100000 of 300000", "200000 of 300000", "300000 of 300000"]
        );
        assert!(text.contains("(66%) of pgbench_accounts done"));
    }

    #[test]
    fn quiet_prints_only_final_line_when_fast() {
        let cap = Captured::default();
        let console = Console::new(Box::new(cap.clone()), false);
        let mut p = Progress::new(&console, "pgbench_tellers", 100, true);
        p.advance(100);
        let mut q = Progress::new(&console, "pgbench_branches", 7, true);
        q.advance(7);
        let mut r = Progress::new(&console, "pgbench_accounts", 300_000, true);
        for _ in 0..300 {
            r.advance(1000);
        }
        let lines: Vec<String> = cap.text().lines().map(str::to_string).collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("100 of 100 tuples (100%) of pgbench_tellers done"));
        assert!(lines[1].starts_with("300000 of 300000 tuples (100%) of pgbench_accounts"));
    }

    #[test]
    fn small_tables_print_nothing_in_normal_mode() {
        let cap = Captured::default();
        let console = Console::new(Box::new(cap.clone()), false);
        let mut p = Progress::new(&console, "pgbench_tellers", 10, false);
        p.advance(10);
        p.finish();
        assert_eq!(cap.text(), "");
    }

    #[test]
    fn bar_is_drawn_and_erased_on_tty() {
        let cap = Captured::default();
        let console = Console::new(Box::new(cap.clone()), true);
        let mut p = Progress::new(&console, "pgbench_accounts", 1000, false);
        p.advance(100);
        assert_eq!(cap.text(), "", "no bar before the first redraw interval");
        std::thread::sleep(BAR_REDRAW);
        p.advance(400);
        p.finish();
        let text = cap.text();
        assert!(
            text.starts_with(
                "pgbench_accounts [###############---------------]  50% 500/1000 rows"
            )
        );
        assert!(text.ends_with("     \r"));
        assert!(!text.contains('\n'));
        assert!(bar_text("t", 10, 20, 1.0).ends_with("10 rows/s, 1.0 s left"));
    }
}
