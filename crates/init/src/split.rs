//! Splitting pgbench_accounts into ranges loaded by concurrent streams.

use crate::config::{InitConfig, Partitioning};
use crate::ddl::{partition_name, range_partition_rows};

/// Where a chunk of accounts is copied to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The pgbench_accounts table itself (the server routes rows when partitioned).
    Accounts,
    /// One range partition, directly.
    Partition {
        /// 1-based partition number.
        index: u32,
        /// The chunk covers the whole partition, so it may truncate it and COPY FREEZE.
        whole: bool,
    },
}

impl Target {
    /// The table name COPY writes into.
    pub fn table(&self) -> String {
        match self {
            Target::Accounts => "pgbench_accounts".to_string(),
            Target::Partition { index, .. } => partition_name(*index),
        }
    }
}

/// A range of account ids `lo..=hi` for one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// First account id.
    pub lo: i64,
    /// Last account id (inclusive).
    pub hi: i64,
    /// Destination table.
    pub target: Target,
}

/// Splits `lo..=hi` into at most `parts` nearly equal non-empty ranges.
pub fn split_range(lo: i64, hi: i64, parts: u32) -> Vec<(i64, i64)> {
    if hi < lo {
        return Vec::new();
    }
    let n = hi - lo + 1;
    let parts = i64::from(parts.max(1)).min(n);
    let base = n / parts;
    let extra = n % parts;
    let mut out = Vec::with_capacity(parts as usize);
    let mut start = lo;
    for i in 0..parts {
        let len = base + i64::from(i < extra);
        out.push((start, start + len - 1));
        start += len;
    }
    out
}

/// Plans the account chunks for `jobs` streams. With range partitions every chunk lies
/// inside one partition; when there are at least as many partitions as jobs, each
/// partition is one whole chunk (`freeze_partitions` then allows COPY FREEZE into it).
pub fn plan_accounts(cfg: &InitConfig, jobs: u32, freeze_partitions: bool) -> Vec<Chunk> {
    let total = cfg.accounts();
    match cfg.partitioning {
        Partitioning::Range(parts) if parts > 0 => {
            let pieces = jobs.div_ceil(parts).max(1);
            let mut out = Vec::new();
            for p in 1..=parts {
                let (lo, hi) = range_partition_rows(cfg, p);
                let ranges = split_range(lo, hi, pieces);
                let whole = ranges.len() == 1 && freeze_partitions;
                out.extend(ranges.into_iter().map(|(lo, hi)| Chunk {
                    lo,
                    hi,
                    target: Target::Partition { index: p, whole },
                }));
            }
            out
        }
        _ => split_range(1, total, jobs)
            .into_iter()
            .map(|(lo, hi)| Chunk {
                lo,
                hi,
                target: Target::Accounts,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(chunks: &[Chunk], total: i64) {
        let mut ranges: Vec<(i64, i64)> = chunks.iter().map(|c| (c.lo, c.hi)).collect();
        ranges.sort();
        let mut next = 1;
        for (lo, hi) in ranges {
            assert_eq!(lo, next);
            assert!(hi >= lo);
            next = hi + 1;
        }
        assert_eq!(next, total + 1);
    }

    #[test]
    fn split_is_exact() {
        assert_eq!(split_range(1, 10, 3), vec![(1, 4), (5, 7), (8, 10)]);
        assert_eq!(split_range(1, 2, 5), vec![(1, 1), (2, 2)]);
        assert!(split_range(5, 4, 2).is_empty());
        assert_eq!(split_range(1, 7, 0), vec![(1, 7)]);
    }

    #[test]
    fn plain_and_hash_tables_split_by_jobs() {
        let cfg = InitConfig {
            scale: 3,
            ..InitConfig::default()
        };
        let chunks = plan_accounts(&cfg, 4, true);
        assert_eq!(chunks.len(), 4);
        assert!(chunks.iter().all(|c| c.target == Target::Accounts));
        covers(&chunks, 300_000);
        let hash = InitConfig {
            partitioning: Partitioning::Hash(5),
            ..cfg
        };
        covers(&plan_accounts(&hash, 2, true), 300_000);
    }

    #[test]
    fn range_partitions_are_whole_when_enough() {
        let cfg = InitConfig {
            scale: 2,
            partitioning: Partitioning::Range(3),
            ..InitConfig::default()
        };
        let chunks = plan_accounts(&cfg, 2, true);
        assert_eq!(chunks.len(), 3);
        assert!(
            chunks
                .iter()
                .all(|c| matches!(c.target, Target::Partition { whole: true, .. }))
        );
        covers(&chunks, 200_000);
        let many = plan_accounts(&cfg, 4, true);
        assert_eq!(many.len(), 6);
        assert!(
            many.iter()
                .all(|c| matches!(c.target, Target::Partition { whole: false, .. }))
        );
        covers(&many, 200_000);
        assert!(
            plan_accounts(&cfg, 2, false)
                .iter()
                .all(|c| matches!(c.target, Target::Partition { whole: false, .. }))
        );
    }

    #[test]
    fn more_partitions_than_rows() {
        let cfg = InitConfig {
            scale: 1,
            partitioning: Partitioning::Range(300_000),
            ..InitConfig::default()
        };
        let chunks = plan_accounts(&cfg, 2, true);
        covers(&chunks, 100_000);
        assert_eq!(chunks.len(), 100_000);
    }
}
