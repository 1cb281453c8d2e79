//! `pgrush report A.json B.json …`: a side-by-side table of saved runs (throughput, latency
//! percentiles, per-command latencies, failures, and the settings that differ), as aligned
//! text, Markdown or CSV.

use crate::document::{RunDocument, StageDoc};

use crate::percentiles::label;
use pgrush_stats::server::EventKind;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Output flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned plain text.
    Text,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// RFC 4180 CSV (`section,metric,run…`).
    Csv,
}

/// One row of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Section (`results`, `latency`, `commands`, `settings`).
    pub section: &'static str,
    /// What the row shows.
    pub metric: String,
    /// One cell per run (`-` when the run has no value).
    pub cells: Vec<String>,
    /// How many trailing characters of `metric` the text table keeps when it shortens
    /// it (a statement's ` (ms)`), 0 for most rows.
    pub tail: usize,
}

/// A comparison: run names and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Column headers (file names).
    pub runs: Vec<String>,
    /// Rows, in display order.
    pub rows: Vec<Row>,
}

const NONE: &str = "-";

/// The widest line of the text table (in characters), as long as the runs' columns fit.
pub const TEXT_WIDTH: usize = 100;
/// The metric column never gets narrower than this to make room for the runs' columns.
const MIN_LABEL_WIDTH: usize = 30;
/// A run's column never gets narrower than this.
const MIN_CELL_WIDTH: usize = 10;

/// `text` cut to `width` characters, its last one replaced by "…" when it was longer.
pub fn shorten(text: &str, width: usize) -> String {
    shorten_keeping(text, width, 0)
}

/// `text` cut to `width` characters when it is longer: its start, "…", and its last
/// `tail` characters (a unit, say) when they leave room for the start.
pub fn shorten_keeping(text: &str, width: usize, tail: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_string();
    }
    let tail = if tail + 2 <= width { tail } else { 0 };
    let head: String = text.chars().take(width.saturating_sub(1 + tail)).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{head}…{end}")
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => NONE.to_string(),
    }
}

/// The settings of a run, flattened (`name` → value) for the "differ" rows.
fn settings(d: &RunDocument) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let c = &d.config;
    let mut put = |k: &str, v: String| {
        m.insert(k.to_string(), v);
    };
    put("transaction type", c.transaction_type.clone());
    put(
        "scripts",
        d.scripts
            .iter()
            .map(|s| format!("{}@{}", s.description, s.weight))
            .collect::<Vec<_>>()
            .join(" "),
    );
    put("scaling factor", c.scale.to_string());
    put(
        "partitions",
        match (&c.partition_method, c.partitions) {
            (Some(m), Some(n)) => format!("{n} ({m})"),
            _ => "0".to_string(),
        },
    );
    put("query mode", c.query_mode.clone());
    put("clients", c.clients.to_string());
    put("threads", c.threads.to_string());
    put("maximum number of tries", c.max_tries.to_string());
    put(
        "transactions per client",
        c.transactions_per_client
            .map_or(NONE.to_string(), |v| v.to_string()),
    );
    put(
        "duration (s)",
        c.duration_s.map_or(NONE.to_string(), |v| v.to_string()),
    );
    put(
        "warm-up (s)",
        c.warmup_s.map_or(NONE.to_string(), |v| v.to_string()),
    );
    put(
        "rate limit (tps)",
        c.rate_tps.map_or(NONE.to_string(), |v| v.to_string()),
    );
    put(
        "latency limit (ms)",
        c.latency_limit_ms
            .map_or(NONE.to_string(), |v| v.to_string()),
    );
    put(
        "connect per transaction",
        c.connect_per_transaction.to_string(),
    );
    put("pgrush version", d.pgrush_version.clone());
    put("client CPUs", d.client.cpus.to_string());
    put(
        "client OS",
        d.client
            .os_description
            .clone()
            .unwrap_or_else(|| d.client.os.clone()),
    );
    put(
        "client host",
        d.client
            .hostname
            .clone()
            .unwrap_or_else(|| NONE.to_string()),
    );
    if let Some(s) = &d.server {
        put("server version", s.version.clone());
        for (k, v) in &s.settings {
            put(k, v.clone());
        }
    }
    m
}

/// The rows of a comparison under construction, over the compared documents.
struct Rows<'a> {
    /// The runs' documents, one column each.
    docs: Vec<&'a RunDocument>,
    /// The rows so far, in display order.
    rows: Vec<Row>,
}

impl Rows<'_> {
    /// Appends a row with the given cells.
    fn push(&mut self, section: &'static str, metric: String, cells: Vec<String>) {
        self.rows.push(Row {
            section,
            metric,
            cells,
            tail: 0,
        });
    }

    /// Appends a row like [`Rows::add`] whose metric ends with `tail` (kept when the
    /// text table shortens the metric).
    fn add_with_tail(
        &mut self,
        section: &'static str,
        (metric, tail): (String, &str),
        cell: &dyn Fn(&RunDocument) -> String,
    ) {
        self.add(section, format!("{metric}{tail}"), cell);
        if let Some(row) = self.rows.last_mut() {
            row.tail = tail.chars().count();
        }
    }

    /// Appends a row whose cells are `cell` of each run's document.
    fn add(
        &mut self,
        section: &'static str,
        metric: String,
        cell: &dyn Fn(&RunDocument) -> String,
    ) {
        let cells = self.docs.iter().map(|d| cell(d)).collect();
        self.push(section, metric, cells);
    }

    /// The `results` section: start time, tps (and, with several runs, relative to the
    /// first run), transaction
    /// counts, failures, retries and duration.
    fn results(&mut self) {
        self.add("results", "start time".into(), &|d| d.start_time.clone());
        self.add("results", "tps".into(), &|d| opt(d.results.tps, 3));
        if self.docs.len() > 1 {
            // The first run is the base: its cell says so rather than compare it with itself.
            let base = self.docs.first().and_then(|d| d.results.tps);
            let mut cells = vec!["base".to_string()];
            cells.extend(self.docs[1..].iter().map(|d| match (base, d.results.tps) {
                (Some(b), Some(t)) if b > 0.0 => format!("{:+.1}", 100.0 * (t - b) / b),
                _ => NONE.to_string(),
            }));
            self.push("results", "tps vs first run (%)".into(), cells);
        }
        self.add("results", "transactions processed".into(), &|d| {
            d.results.transactions.processed.to_string()
        });
        self.add("results", "failed transactions".into(), &|d| {
            d.results.transactions.failed.to_string()
        });
        self.add("results", "serialization failures".into(), &|d| {
            d.results.transactions.serialization_failures.to_string()
        });
        self.add("results", "deadlock failures".into(), &|d| {
            d.results.transactions.deadlock_failures.to_string()
        });
        self.add("results", "other failures".into(), &|d| {
            d.results.transactions.other_failures.to_string()
        });
        self.add("results", "retries".into(), &|d| {
            d.results.transactions.retries.to_string()
        });
        self.add("results", "duration (s)".into(), &|d| {
            opt(Some(d.results.duration_s), 3)
        });
    }

    /// The `latency` section: average, stddev, the union of the runs' percentiles (ascending),
    /// max, and the schedule lag when some run has one.
    fn latency(&mut self) {
        self.add("latency", "average (ms)".into(), &|d| {
            opt(d.results.latency_average_ms, 3)
        });
        self.add("latency", "stddev (ms)".into(), &|d| {
            opt(d.results.latency_stddev_ms, 3)
        });
        // Union of the percentile lists, ascending.
        let mut pcts: Vec<f64> = self
            .docs
            .iter()
            .flat_map(|d| d.percentiles.clone())
            .collect();
        if pcts.is_empty() {
            pcts = crate::percentiles::DEFAULT_PERCENTILES.to_vec();
        }
        pcts.sort_by(f64::total_cmp);
        pcts.dedup();
        for &p in &pcts {
            self.add("latency", format!("{} (ms)", label(p)), &|d| {
                opt(d.latency.as_ref().and_then(|l| l.percentile_ms(p)), 3)
            });
        }
        self.add("latency", "max (ms)".into(), &|d| {
            opt(d.latency.as_ref().map(|l| l.max_ms), 3)
        });
        if self.docs.iter().any(|d| d.results.lag_average_ms.is_some()) {
            self.add("latency", "schedule lag average (ms)".into(), &|d| {
                opt(d.results.lag_average_ms, 3)
            });
        }
    }

    /// The per-command keys (script number, text) of the runs with per-command latencies,
    /// in first-seen order.
    fn command_keys(&self) -> Vec<(usize, String)> {
        let mut keys: Vec<(usize, String)> = Vec::new();
        for d in &self.docs {
            if !d.config.per_command {
                continue;
            }
            for (i, s) in d.scripts.iter().enumerate() {
                for c in &s.commands {
                    let k = (i, c.text.clone());
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
            }
        }
        keys
    }

    /// The `commands` section: each command's average latency, and its failures/retries when
    /// some run has any; commands are prefixed by their script number when a run has several.
    fn commands(&mut self) {
        let keys = self.command_keys();
        let several_scripts = self.docs.iter().any(|d| d.scripts.len() > 1);
        for (i, text) in &keys {
            let find = |d: &RunDocument| {
                if !d.config.per_command {
                    return None;
                }
                d.scripts
                    .get(*i)?
                    .commands
                    .iter()
                    .find(|c| &c.text == text)
                    .cloned()
            };
            let name = if several_scripts {
                format!("[{}] {text}", i + 1)
            } else {
                text.clone()
            };
            self.add_with_tail("commands", (name.clone(), " (ms)"), &|d| {
                opt(find(d).map(|c| c.average_ms), 3)
            });
            if self
                .docs
                .iter()
                .any(|d| find(d).is_some_and(|c| c.failures > 0 || c.retries > 0))
            {
                self.add_with_tail("commands", (name, " failures/retries"), &|d| {
                    find(d).map_or(NONE.to_string(), |c| {
                        format!("{}/{}", c.failures, c.retries)
                    })
                });
            }
        }
    }

    /// The `settings` section: the settings whose values are not the same in every run.
    fn settings(&mut self) {
        let maps: Vec<BTreeMap<String, String>> = self.docs.iter().map(|d| settings(d)).collect();
        let mut names: Vec<&String> = maps.iter().flat_map(|m| m.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let cells: Vec<String> = maps
                .iter()
                .map(|m| m.get(name).cloned().unwrap_or_else(|| NONE.to_string()))
                .collect();
            if cells.iter().any(|c| c != &cells[0]) {
                self.push("settings", name.clone(), cells);
            }
        }
    }
}

/// Stage `n` (from 0) of a run in stages, if it has one.
fn stage_of(d: &RunDocument, n: usize) -> Option<&StageDoc> {
    d.stages.as_ref()?.get(n)
}

impl Rows<'_> {
    /// The `stages` section (runs in stages): per stage number, its tps, p99 and
    /// failures, the stage named as the first run that has it names it; a run without
    /// that stage has no value there.
    fn stages(&mut self) {
        let count = self
            .docs
            .iter()
            .map(|d| d.stages.as_ref().map_or(0, Vec::len))
            .max();
        for n in 0..count.unwrap_or(0) {
            let name = self
                .docs
                .iter()
                .find_map(|d| stage_of(d, n))
                .map(StageDoc::name)
                .unwrap_or_default();
            self.add_with_tail("stages", (name.clone(), ": tps"), &|d| {
                opt(stage_of(d, n).and_then(|st| st.tps), 3)
            });
            self.add_with_tail("stages", (name.clone(), ": p99 (ms)"), &|d| {
                opt(
                    stage_of(d, n).and_then(|st| st.latency.as_ref()?.percentile_ms(99.0)),
                    3,
                )
            });
            self.add_with_tail("stages", (name, ": failed"), &|d| {
                stage_of(d, n).map_or(NONE.to_string(), |st| st.transactions.failed.to_string())
            });
        }
    }

    /// The `server` section (runs with `--server-stats`): the waits that took at least
    /// 5% of backend time in some run, checkpoints, HOT shares, hit ratio, WAL per commit.
    fn server(&mut self) {
        if self.docs.iter().all(|d| d.server_stats.is_none()) {
            return;
        }
        let pct =
            |v: Option<f64>| v.map_or_else(|| NONE.to_string(), |v| format!("{:.1}%", v * 100.0));
        let mut waits: Vec<String> = self
            .docs
            .iter()
            .filter_map(|d| d.server_stats.as_ref())
            .flat_map(|s| {
                s.waits
                    .iter()
                    .filter(|w| w.share >= 0.05)
                    .map(|w| w.wait.clone())
            })
            .collect();
        waits.sort();
        waits.dedup();
        for wait in waits {
            self.add("server", format!("backend time in {wait}"), &|d| {
                pct(d.server_stats.as_ref().map(|s| {
                    s.waits
                        .iter()
                        .find(|w| w.wait == wait)
                        .map_or(0.0, |w| w.share)
                }))
            });
        }
        self.add("server", "checkpoints".into(), &|d| {
            d.server_stats.as_ref().map_or_else(
                || NONE.to_string(),
                |s| {
                    s.events
                        .iter()
                        .filter(|e| e.kind == EventKind::Checkpoint)
                        .count()
                        .to_string()
                },
            )
        });
        let mut tables: Vec<String> = self
            .docs
            .iter()
            .filter_map(|d| d.server_stats.as_ref())
            .flat_map(|s| {
                s.tables
                    .iter()
                    .filter(|t| t.updates > 0)
                    .map(|t| t.name.clone())
            })
            .collect();
        tables.sort();
        tables.dedup();
        for table in tables {
            self.add("server", format!("HOT updates on {table}"), &|d| {
                pct(d
                    .server_stats
                    .as_ref()
                    .and_then(|s| s.tables.iter().find(|t| t.name == table))
                    .and_then(|t| t.hot_share()))
            });
        }
        self.add("server", "buffer cache hit ratio".into(), &|d| {
            pct(d.server_stats.as_ref().and_then(|s| s.database.hit_ratio()))
        });
        self.add("server", "WAL bytes per commit".into(), &|d| {
            opt(
                d.server_stats.as_ref().and_then(|s| {
                    let wal: u64 = s.intervals.iter().map(|i| i.wal_bytes).sum();
                    (s.database.commits > 0).then(|| wal as f64 / s.database.commits as f64)
                }),
                0,
            )
        });
    }
}

impl Comparison {
    /// Builds the comparison of `runs` (name, document), in the given order.
    pub fn build(runs: &[(String, RunDocument)]) -> Self {
        let mut rows = Rows {
            docs: runs.iter().map(|(_, d)| d).collect(),
            rows: Vec::new(),
        };
        rows.results();
        rows.latency();
        rows.stages();
        rows.commands();
        rows.server();
        rows.settings();
        Comparison {
            runs: runs.iter().map(|(n, _)| n.clone()).collect(),
            rows: rows.rows,
        }
    }

    /// Renders the table.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.text(),
            Format::Markdown => self.markdown(),
            Format::Csv => self.csv(),
        }
    }

    /// The aligned text table, at most [`TEXT_WIDTH`] columns wide for up to three runs:
    /// the cells keep their width up to what leaves the metric column
    /// [`MIN_LABEL_WIDTH`] columns, longer cells and metrics (SQL statements) are
    /// shortened with "…".
    fn text(&self) -> String {
        let widths = self.cell_widths();
        let cells_width: usize = widths.iter().map(|w| w + 2).sum();
        let label_w = self
            .rows
            .iter()
            .map(|r| r.metric.chars().count())
            .chain(std::iter::once("metric".len()))
            .max()
            .unwrap_or(6)
            .min(TEXT_WIDTH.saturating_sub(cells_width).max(MIN_LABEL_WIDTH));
        let mut s = String::new();
        let pad = |s: &mut String, (text, tail): (&str, usize), w: usize, right: bool| {
            let text = shorten_keeping(text, w, tail);
            let n = w.saturating_sub(text.chars().count());
            if right {
                s.extend(std::iter::repeat_n(' ', n));
                s.push_str(&text);
            } else {
                s.push_str(&text);
                s.extend(std::iter::repeat_n(' ', n));
            }
        };
        pad(&mut s, ("metric", 0), label_w, false);
        for (i, r) in self.runs.iter().enumerate() {
            s.push_str("  ");
            pad(&mut s, (r, 0), widths[i], true);
        }
        let trimmed_len = s.trim_end().len();
        s.truncate(trimmed_len);
        s.push('\n');
        let mut section = "";
        for row in &self.rows {
            if row.section != section {
                section = row.section;
                let _ = writeln!(s, "{section}:");
            }
            let mut line = String::new();
            pad(&mut line, (&row.metric, row.tail), label_w, false);
            for (i, c) in row.cells.iter().enumerate() {
                line.push_str("  ");
                pad(&mut line, (c, 0), widths.get(i).copied().unwrap_or(0), true);
            }
            s.push_str(line.trim_end());
            s.push('\n');
        }
        s
    }

    /// The width of each run's column: its widest cell (or name), all of them cut to
    /// one share of what [`TEXT_WIDTH`] leaves beside [`MIN_LABEL_WIDTH`] when they
    /// would not fit (never below [`MIN_CELL_WIDTH`]).
    fn cell_widths(&self) -> Vec<usize> {
        let widths: Vec<usize> = (0..self.runs.len())
            .map(|i| {
                self.rows
                    .iter()
                    .filter_map(|r| r.cells.get(i))
                    .chain(std::iter::once(&self.runs[i]))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(1)
            })
            .collect();
        let room = TEXT_WIDTH - MIN_LABEL_WIDTH;
        if widths.iter().map(|w| w + 2).sum::<usize>() <= room {
            return widths;
        }
        let share = (room / widths.len().max(1))
            .saturating_sub(2)
            .max(MIN_CELL_WIDTH);
        widths.into_iter().map(|w| w.min(share)).collect()
    }

    fn markdown(&self) -> String {
        let cell = |t: &str| {
            t.replace('\\', "\\\\")
                .replace('|', "\\|")
                .replace('\n', " ")
        };
        let mut s = String::from("| section | metric |");
        for r in &self.runs {
            let _ = write!(s, " {} |", cell(r));
        }
        s.push_str("\n|---|---|");
        for _ in &self.runs {
            s.push_str("---:|");
        }
        s.push('\n');
        for row in &self.rows {
            let _ = write!(s, "| {} | {} |", row.section, cell(&row.metric));
            for c in &row.cells {
                let _ = write!(s, " {} |", cell(c));
            }
            s.push('\n');
        }
        s
    }

    fn csv(&self) -> String {
        let field = |t: &str| {
            if t.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", t.replace('"', "\"\""))
            } else {
                t.to_string()
            }
        };
        let mut s = String::from("section,metric");
        for r in &self.runs {
            s.push(',');
            s.push_str(&field(r));
        }
        s.push('\n');
        for row in &self.rows {
            s.push_str(row.section);
            s.push(',');
            s.push_str(&field(&row.metric));
            for c in &row.cells {
                s.push(',');
                s.push_str(&field(c));
            }
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_are_shortened_by_characters_keeping_their_tail() {
        assert_eq!(shorten("SELECT 1;", 9), "SELECT 1;");
        assert_eq!(shorten("SELECT 'ü' FROM t", 10), "SELECT 'ü…");
        assert_eq!(
            shorten_keeping("SELECT * FROM t (ms)", 12, 5),
            "SELECT… (ms)"
        );
        // No room for the tail: the start alone.
        assert_eq!(shorten_keeping("SELECT * FROM t (ms)", 6, 5), "SELEC…");
    }
}
