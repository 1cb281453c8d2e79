//! The parts of a restore, told apart by `pg_restore --verbose`'s lines: the schema
//! (pre-data), the data, and the indexes and constraints (post-data). The data part
//! runs from the first data line to the last table's `finished item` line (with
//! `-j N`, where small tables' indexes are built while the large one still loads) or
//! else to the first index or constraint line (a serial restore); the rest is the
//! indexes and constraints part.

use crate::ops::result::RestorePhases;

/// Which part a verbose line starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Table data (`processing data for table`, `launching item N TABLE DATA`).
    Data,
    /// Indexes and constraints (`creating INDEX`, `creating CONSTRAINT`,
    /// `creating FK CONSTRAINT`, or their `launching item` lines).
    PostData,
    /// A parallel worker's table data done (`finished item N TABLE DATA`).
    DataFinished,
}

fn part_of(line: &str) -> Option<Part> {
    let line = line.strip_prefix("pg_restore: ").unwrap_or(line);
    if line
        .strip_prefix("finished item ")
        .is_some_and(|l| l.contains(" TABLE DATA "))
    {
        return Some(Part::DataFinished);
    }
    let launched = line.strip_prefix("launching item ");
    if line.starts_with("processing data for table")
        || launched.is_some_and(|l| l.contains(" TABLE DATA "))
    {
        return Some(Part::Data);
    }
    let post = [" INDEX ", " CONSTRAINT ", " FK CONSTRAINT "];
    if [
        "creating INDEX",
        "creating CONSTRAINT",
        "creating FK CONSTRAINT",
    ]
    .iter()
    .any(|p| line.starts_with(p))
        || launched.is_some_and(|l| post.iter().any(|p| l.contains(p)))
    {
        return Some(Part::PostData);
    }
    None
}

/// The parts' seconds from `pg_restore --verbose`'s timestamped lines and the total.
pub fn phases(lines: &[(f64, String)], total: f64) -> RestorePhases {
    let first = |part: Part| {
        lines
            .iter()
            .find(|(_, l)| part_of(l) == Some(part))
            .map(|(t, _)| *t)
    };
    let last_finished = lines
        .iter()
        .rev()
        .find(|(_, l)| part_of(l) == Some(Part::DataFinished))
        .map(|(t, _)| *t);
    let data_end = last_finished
        .or_else(|| first(Part::PostData))
        .unwrap_or(total)
        .min(total);
    let data_start = first(Part::Data).unwrap_or(data_end).min(data_end);
    RestorePhases {
        schema_seconds: data_start,
        data_seconds: data_end - data_start,
        index_and_constraint_seconds: total - data_end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(list: &[(f64, &str)]) -> Vec<(f64, String)> {
        list.iter().map(|(t, l)| (*t, l.to_string())).collect()
    }

    #[test]
    fn serial_restore_parts() {
        let log = lines(&[
            (0.01, "pg_restore: connecting to database for restore"),
            (
                0.05,
                "pg_restore: creating TABLE \"public.pgbench_accounts\"",
            ),
            (
                0.10,
                "pg_restore: processing data for table \"public.pgbench_accounts\"",
            ),
            (
                2.00,
                "pg_restore: creating CONSTRAINT \"public.pgbench_accounts pgbench_accounts_pkey\"",
            ),
        ]);
        let p = phases(&log, 3.0);
        assert_eq!(p.schema_seconds, 0.10);
        assert_eq!(p.data_seconds, 1.90);
        assert_eq!(p.index_and_constraint_seconds, 1.0);
    }

    #[test]
    fn parallel_lines_and_missing_parts() {
        let log = lines(&[
            (
                0.2,
                "pg_restore: launching item 3215 TABLE DATA public pgbench_accounts",
            ),
            (
                0.3,
                "pg_restore: finished item 3216 TABLE DATA public pgbench_branches",
            ),
            (
                0.4,
                "pg_restore: launching item 3071 CONSTRAINT public pgbench_branches_pkey",
            ),
            (
                1.5,
                "pg_restore: finished item 3215 TABLE DATA public pgbench_accounts",
            ),
            (
                1.5,
                "pg_restore: launching item 3070 CONSTRAINT public pgbench_accounts_pkey",
            ),
        ]);
        let p = phases(&log, 2.0);
        assert_eq!((p.schema_seconds, p.data_seconds), (0.2, 1.3));
        assert_eq!(p.index_and_constraint_seconds, 0.5);
        let none = phases(&[], 2.0);
        assert_eq!(none.schema_seconds, 2.0);
        assert_eq!(none.data_seconds + none.index_and_constraint_seconds, 0.0);
    }
}
