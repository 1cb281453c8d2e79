//! `--explain-analyze`: the executor-overhead experiment from pg_test_timing's
//! documentation, automated. A temporary table of 100000 rows is counted with
//! `SELECT count(*)` and with `EXPLAIN ANALYZE SELECT count(*)`, alternately,
//! several times each (after one warm-up of each); the difference of the
//! median round-trip times, divided by the number of rows, is the per-row cost
//! of EXPLAIN ANALYZE's timing (two clock readings per row, plus bookkeeping).

use crate::clock::monotonic_ns;
use pgrush_wire::Connection;
use serde::Serialize;

/// Rows in the temporary table.
pub const ROWS: u64 = 100_000;
/// Timed runs of each statement.
pub const RUNS: usize = 7;

const TABLE: &str = "pgrush_timing_rows";

/// What the experiment measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainResult {
    /// Rows counted per run.
    pub rows: u64,
    /// Timed runs of each statement.
    pub runs: usize,
    /// Median time of `SELECT count(*)`, in ns.
    pub select_median_ns: i64,
    /// Median time of `EXPLAIN ANALYZE SELECT count(*)`, in ns.
    pub explain_analyze_median_ns: i64,
    /// (explain median − select median) / rows.
    pub overhead_ns_per_row: f64,
    /// The server's `server_version`.
    pub server_version: String,
}

/// Why the experiment failed.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// A statement failed; the message is libpq's rendering of the error.
    #[error("query failed: {message}")]
    Query {
        /// libpq-style error text.
        message: String,
        /// The statement.
        sql: String,
    },
    /// `SELECT count(*)` did not return the expected number.
    #[error("unexpected result from \"{sql}\": {got}")]
    Unexpected {
        /// The statement.
        sql: String,
        /// What came back.
        got: String,
    },
}

/// Runs `sql`, returning the first value of its last result.
fn exec(conn: &mut Connection, sql: &str) -> Result<Option<String>, ExplainError> {
    let results = conn.simple_query(sql).map_err(|e| ExplainError::Query {
        message: e.libpq_message(Some(sql)),
        sql: sql.to_string(),
    })?;
    Ok(results.last().and_then(|r| r.get(0, 0)).map(str::to_string))
}

/// Runs `sql` and returns its round-trip time in ns.
fn timed(conn: &mut Connection, sql: &str) -> Result<(i64, Option<String>), ExplainError> {
    let t0 = monotonic_ns();
    let v = exec(conn, sql)?;
    Ok((monotonic_ns() - t0, v))
}

/// The median of `v` (mean of the middle two for an even count).
pub fn median(v: &mut [i64]) -> i64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

/// Per-row overhead from the two medians.
pub fn overhead_per_row(select_ns: i64, explain_ns: i64, rows: u64) -> f64 {
    (explain_ns - select_ns) as f64 / rows.max(1) as f64
}

/// Runs the experiment on `conn`, a session of its own that has no temporary
/// table yet (it leaves it without one). No `DROP ... IF EXISTS` up front: on a
/// session without a temporary schema that prints the server's NOTICE
/// `schema "pg_temp" does not exist` to standard error.
pub fn run(conn: &mut Connection) -> Result<ExplainResult, ExplainError> {
    exec(conn, "SET max_parallel_workers_per_gather = 0")?;
    exec(
        conn,
        &format!(
            "CREATE TEMPORARY TABLE {TABLE} AS SELECT g AS n FROM generate_series(1, {ROWS}) AS g"
        ),
    )?;
    exec(conn, &format!("VACUUM ANALYZE {TABLE}"))?;
    let select = format!("SELECT count(*) FROM {TABLE}");
    let explain = format!("EXPLAIN ANALYZE SELECT count(*) FROM {TABLE}");
    let got = exec(conn, &select)?;
    if got.as_deref() != Some(ROWS.to_string().as_str()) {
        return Err(ExplainError::Unexpected {
            sql: select,
            got: got.unwrap_or_default(),
        });
    }
    exec(conn, &explain)?;
    let mut selects = Vec::with_capacity(RUNS);
    let mut explains = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        selects.push(timed(conn, &select)?.0);
        explains.push(timed(conn, &explain)?.0);
    }
    exec(conn, &format!("DROP TABLE pg_temp.{TABLE}"))?;
    let select_median_ns = median(&mut selects);
    let explain_analyze_median_ns = median(&mut explains);
    Ok(ExplainResult {
        rows: ROWS,
        runs: RUNS,
        select_median_ns,
        explain_analyze_median_ns,
        overhead_ns_per_row: overhead_per_row(select_median_ns, explain_analyze_median_ns, ROWS),
        server_version: conn.server_version().to_string(),
    })
}

/// The text section, ending with the `EXPLAIN ANALYZE timing overhead` line
/// beside the clock's cost per reading.
pub fn text(r: &ExplainResult, clock_cost_ns: Option<f64>) -> String {
    let ms = |ns: i64| ns as f64 / 1e6;
    let mut out = format!(
        "\nEXPLAIN ANALYZE experiment ({} rows, median of {} runs each, server {}):\n",
        r.rows, r.runs, r.server_version
    );
    out.push_str(&format!(
        "SELECT count(*): {:.3} ms\nEXPLAIN ANALYZE SELECT count(*): {:.3} ms\n",
        ms(r.select_median_ns),
        ms(r.explain_analyze_median_ns)
    ));
    out.push_str(&format!(
        "EXPLAIN ANALYZE timing overhead: {:.1} ns per row",
        r.overhead_ns_per_row
    ));
    if let Some(cost) = clock_cost_ns {
        out.push_str(&format!(" (clock cost per reading: {cost:.2} ns)"));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&mut [5, 1, 3]), 3);
        assert_eq!(median(&mut [4, 1, 3, 2]), 2);
        assert_eq!(median(&mut []), 0);
    }

    #[test]
    fn overhead_and_text() {
        assert_eq!(overhead_per_row(4_000_000, 8_500_000, 100_000), 45.0);
        let r = ExplainResult {
            rows: 100_000,
            runs: 7,
            select_median_ns: 4_000_000,
            explain_analyze_median_ns: 8_512_345,
            overhead_ns_per_row: overhead_per_row(4_000_000, 8_512_345, 100_000),
            server_version: "18.1".into(),
        };
        let t = text(&r, Some(20.314));
        assert!(t.contains("SELECT count(*): 4.000 ms\n"));
        assert!(t.contains("EXPLAIN ANALYZE SELECT count(*): 8.512 ms\n"));
        assert!(t.ends_with(
            "EXPLAIN ANALYZE timing overhead: 45.1 ns per row (clock cost per reading: 20.31 ns)\n"
        ));
    }
}
