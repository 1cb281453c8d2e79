//! What `pgrush merge` refuses: documents that are not shards, shards of different
//! benchmarks (another configuration, other scripts, other `--target` servers),
//! duplicate and missing shards.

use crate::document::{RunDocument, ShardDoc};

/// Why shard documents cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no shard document given")]
    NoShards,
    /// A run document without a `shard` block.
    #[error("\"{file}\" is not a shard: its run has no shard block (run with --shard INDEX/COUNT)")]
    NotAShard {
        /// The document's file.
        file: String,
    },
    /// An index that is not below the count.
    #[error("\"{file}\": shard index {index} is not below the shard count {count}")]
    BadIndex {
        /// The document's file.
        file: String,
        /// Its index.
        index: u32,
        /// Its count.
        count: u32,
    },
    /// Two documents of the same shard.
    #[error("\"{first}\" and \"{second}\" are both shard {index}")]
    Duplicate {
        /// The first document of that shard.
        first: String,
        /// The second one.
        second: String,
        /// The shard index.
        index: u32,
    },
    /// A document of another benchmark.
    #[error("\"{file}\" is a shard of another benchmark than \"{first}\": {what} differs")]
    OtherBenchmark {
        /// The document that differs.
        file: String,
        /// The first document, the reference.
        first: String,
        /// What differs (`benchmark_id`, `shard count`, `configuration`, …).
        what: String,
    },
    /// Shards not given.
    #[error("missing shards: {missing} of {count}")]
    Missing {
        /// The missing indexes, comma-separated (`2, 3`).
        missing: String,
        /// The shard count.
        count: u32,
    },
    /// A document whose statistics cannot be read back.
    #[error("\"{file}\": {problem}")]
    Unreadable {
        /// The document's file.
        file: String,
        /// What is wrong.
        problem: String,
    },
}

/// One shard to merge: its file name, document and shard block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shard<'a> {
    pub file: &'a str,
    pub doc: &'a RunDocument,
    pub shard: &'a ShardDoc,
}

/// Checks that `docs` are all the shards of one benchmark, and returns them by index.
pub(crate) fn check_shards(docs: &[(String, RunDocument)]) -> Result<Vec<Shard<'_>>, MergeError> {
    let mut shards = Vec::with_capacity(docs.len());
    for (file, doc) in docs {
        let Some(shard) = doc.shard.as_ref() else {
            return Err(MergeError::NotAShard { file: file.clone() });
        };
        if shard.index >= shard.count {
            return Err(MergeError::BadIndex {
                file: file.clone(),
                index: shard.index,
                count: shard.count,
            });
        }
        shards.push(Shard { file, doc, shard });
    }
    let Some(first) = shards.first().copied() else {
        return Err(MergeError::NoShards);
    };
    for s in &shards[1..] {
        if let Some(what) = difference(&first, s) {
            return Err(MergeError::OtherBenchmark {
                file: s.file.to_string(),
                first: first.file.to_string(),
                what,
            });
        }
    }
    shards.sort_by_key(|s| s.shard.index);
    for pair in shards.windows(2) {
        if pair[0].shard.index == pair[1].shard.index {
            return Err(MergeError::Duplicate {
                first: pair[0].file.to_string(),
                second: pair[1].file.to_string(),
                index: pair[0].shard.index,
            });
        }
    }
    let count = first.shard.count;
    if shards.len() != count as usize {
        let present: Vec<u32> = shards.iter().map(|s| s.shard.index).collect();
        return Err(MergeError::Missing {
            missing: missing_list(&present, count),
            count,
        });
    }
    Ok(shards)
}

/// Missing indexes named in full up to this many; beyond, a count.
const MISSING_NAMED: usize = 20;

/// The indexes of `0..count` not in `present` (sorted), comma-separated: the first
/// [`MISSING_NAMED`], then how many more (`0, 1, …, 19 and 980 more`).
fn missing_list(present: &[u32], count: u32) -> String {
    let total = u64::from(count) - present.len() as u64;
    let mut named: Vec<String> = Vec::new();
    let mut next = 0u32;
    for bound in present.iter().copied().chain(std::iter::once(count)) {
        while next < bound && named.len() < MISSING_NAMED {
            named.push(next.to_string());
            next += 1;
        }
        if named.len() >= MISSING_NAMED {
            break;
        }
        next = bound.saturating_add(1);
    }
    let more = total - named.len() as u64;
    if more > 0 {
        format!("{} and {more} more", named.join(", "))
    } else {
        named.join(", ")
    }
}

/// What makes `b` a shard of another benchmark than `a`, if anything.
fn difference(a: &Shard<'_>, b: &Shard<'_>) -> Option<String> {
    let (sa, sb) = (a.shard, b.shard);
    let scripts = |d: &RunDocument| -> Vec<(String, u32, Vec<String>)> {
        d.scripts
            .iter()
            .map(|s| {
                let texts = s.commands.iter().map(|c| c.text.clone()).collect();
                (s.description.clone(), s.weight, texts)
            })
            .collect()
    };
    let interval = |d: &RunDocument| d.time_series.as_ref().map(|t| t.interval_s);
    let targets = |d: &RunDocument| -> Option<Vec<(String, Vec<usize>)>> {
        d.targets.as_ref().map(|ts| {
            ts.iter()
                .map(|t| (t.name.clone(), t.scripts.clone()))
                .collect()
        })
    };
    let checks = [
        ("benchmark_id", sa.benchmark_id != sb.benchmark_id),
        ("shard count", sa.count != sb.count),
        (
            "total number of clients",
            sa.clients_total != sb.clients_total,
        ),
        ("configuration", a.doc.config != b.doc.config),
        ("scripts", scripts(a.doc) != scripts(b.doc)),
        ("time series interval", interval(a.doc) != interval(b.doc)),
        ("targets (--target)", targets(a.doc) != targets(b.doc)),
    ];
    checks
        .iter()
        .find(|(_, differs)| *differs)
        .map(|(what, _)| (*what).to_string())
}

#[cfg(test)]
mod tests {
    use super::missing_list;

    #[test]
    fn missing_shards_are_listed_briefly() {
        assert_eq!(missing_list(&[0, 1], 4), "2, 3");
        assert_eq!(missing_list(&[1, 3], 4), "0, 2");
        assert_eq!(missing_list(&[], 3), "0, 1, 2");
        assert_eq!(
            missing_list(&[0], u32::MAX),
            format!(
                "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and {} more",
                u64::from(u32::MAX) - 21
            )
        );
        assert_eq!(missing_list(&[5, 30], 31).split(", ").count(), 20);
    }
}
