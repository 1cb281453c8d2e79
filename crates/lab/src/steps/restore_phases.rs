//! The parts of a restore, told apart by `pg_restore --verbose`'s lines: the schema
//! (pre-data), the data, and the indexes and constraints (post-data). With `-j N` the
//! parts overlap (an index is built once its own table is loaded), so each part runs
//! from the first line of its kind to the first line of the next.

use crate::result::RestorePhases;

/// Which part a verbose line starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Table data (`processing data for table`, `launching item N TABLE DATA`).
    Data,
    /// Indexes and constraints (`creating INDEX`, `creating CONSTRAINT`,
    /// `creating FK CONSTRAINT`, or their `launching item` lines).
    PostData,
}

fn part_of(line: &str) -> Option<Part> {
    let line = line.strip_prefix("pg_restore: ").unwrap_or(line);
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
    let post = first(Part::PostData).unwrap_or(total);
    let data = first(Part::Data).unwrap_or(post).min(post);
    RestorePhases {
        schema_seconds: data,
        data_seconds: post - data,
        index_and_constraint_seconds: total - post,
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
