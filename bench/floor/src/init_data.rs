//! pgbench's tables as text COPY rows, and the plan of which stream loads which rows.
//! Written from pgbench's documented row format; the bytes equal what `pgrush -i` sends.

use std::io::Write;

/// Accounts per branch (pgbench's `naccounts`).
pub const ACCOUNTS_PER_BRANCH: i64 = 100_000;
/// Tellers per branch (pgbench's `ntellers`).
pub const TELLERS_PER_BRANCH: i64 = 10;
/// Rows gathered into one CopyData message, as pgrush batches them: rows are appended
/// until the message holds at least this many bytes.
pub const MESSAGE_BYTES: usize = 64 * 1024;

/// One of the three tables with generated rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowTable {
    /// `bid \t 0 \t \N`.
    Branches,
    /// `tid \t bid \t 0 \t \N`.
    Tellers,
    /// `aid \t bid \t 0 \t` (an empty filler).
    Accounts,
}

/// Appends the text COPY row of `table` with 1-based id `id`.
pub fn push_row(out: &mut Vec<u8>, table: RowTable, id: i64) {
    // Writing into a Vec cannot fail.
    let _ = match table {
        RowTable::Branches => writeln!(out, "{id}\t0\t\\N"),
        RowTable::Tellers => writeln!(out, "{id}\t{}\t0\t\\N", (id - 1) / TELLERS_PER_BRANCH + 1),
        RowTable::Accounts => writeln!(out, "{id}\t{}\t0\t", (id - 1) / ACCOUNTS_PER_BRANCH + 1),
    };
}

/// The rows `lo..=hi` of `table` as plain text (a file for `COPY ... FROM 'file'`).
pub fn rows_text(table: RowTable, lo: i64, hi: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(((hi - lo + 1).max(0) as usize) * 16);
    for id in lo..=hi {
        push_row(&mut out, table, id);
    }
    out
}

/// The rows `lo..=hi` of `table` framed as CopyData messages of about
/// [`MESSAGE_BYTES`] each, followed by `tail` (e.g. pgbench's `\.` line) in the last one,
/// and a CopyDone: everything a COPY FROM STDIN sends after the server's CopyInResponse.
pub fn copy_messages(table: RowTable, lo: i64, hi: i64, tail: &[u8]) -> Vec<u8> {
    let rows = (hi - lo + 1).max(0) as usize;
    let mut out = Vec::with_capacity(rows * 16 + rows * 16 / MESSAGE_BYTES * 5 + 64);
    let mut start = begin_message(&mut out);
    for id in lo..=hi {
        push_row(&mut out, table, id);
        if out.len() - start - 5 >= MESSAGE_BYTES {
            end_message(&mut out, start);
            start = begin_message(&mut out);
        }
    }
    out.extend_from_slice(tail);
    if out.len() - start > 5 {
        end_message(&mut out, start);
    } else {
        out.truncate(start);
    }
    out.extend_from_slice(&[b'c', 0, 0, 0, 4]);
    out
}

fn begin_message(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[b'd', 0, 0, 0, 0]);
    start
}

fn end_message(out: &mut [u8], start: usize) {
    let len = u32::try_from(out.len() - start - 1).unwrap_or(u32::MAX);
    out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
}

/// Where one stream's accounts go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// First aid.
    pub lo: i64,
    /// Last aid (inclusive).
    pub hi: i64,
    /// The range partition (1-based) it fills whole, truncated and loaded with FREEZE;
    /// `None`: pgbench_accounts itself, plain COPY.
    pub partition: Option<u32>,
}

/// pgbench's range partition `p` of `parts` for `accounts` rows: its first and last aid.
pub fn partition_rows(accounts: i64, parts: u32, p: u32) -> (i64, i64) {
    let size = (accounts + i64::from(parts) - 1) / i64::from(parts);
    let lo = (i64::from(p) - 1) * size + 1;
    let hi = if p == parts {
        accounts
    } else {
        i64::from(p) * size
    };
    (lo, hi)
}

/// The chunks of concurrent streams: one per partition, or `jobs` nearly equal ranges
/// of an ordinary table.
pub fn plan(accounts: i64, jobs: u32, partitions: u32) -> Vec<Chunk> {
    if partitions > 0 {
        return (1..=partitions)
            .map(|p| {
                let (lo, hi) = partition_rows(accounts, partitions, p);
                Chunk {
                    lo,
                    hi,
                    partition: Some(p),
                }
            })
            .filter(|c| c.lo <= c.hi)
            .collect();
    }
    let jobs = i64::from(jobs.max(1)).min(accounts.max(1));
    let (base, extra) = (accounts / jobs, accounts % jobs);
    let mut lo = 1;
    (0..jobs)
        .map(|i| {
            let len = base + i64::from(i < extra);
            let c = Chunk {
                lo,
                hi: lo + len - 1,
                partition: None,
            };
            lo += len;
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_pgbench_rows() {
        let mut b = Vec::new();
        push_row(&mut b, RowTable::Branches, 3);
        push_row(&mut b, RowTable::Tellers, 10);
        push_row(&mut b, RowTable::Tellers, 11);
        push_row(&mut b, RowTable::Accounts, 100_000);
        push_row(&mut b, RowTable::Accounts, 100_001);
        assert_eq!(
            b,
            b"3\t0\t\\N\n10\t1\t0\t\\N\n11\t2\t0\t\\N\n100000\t1\t0\t\n100001\t2\t0\t\n"
        );
    }

    /// The payloads, in order, of the CopyData messages in `framed`, and whether it
    /// ends with a CopyDone.
    fn payloads(framed: &[u8]) -> (Vec<&[u8]>, bool) {
        let (mut out, mut at) = (Vec::new(), 0);
        while at < framed.len() {
            let len = u32::from_be_bytes(framed[at + 1..at + 5].try_into().unwrap()) as usize;
            if framed[at] == b'c' {
                assert_eq!((len, at + 5), (4, framed.len()));
                return (out, true);
            }
            assert_eq!(framed[at], b'd');
            out.push(&framed[at + 5..at + 1 + len]);
            at += 1 + len;
        }
        (out, false)
    }

    #[test]
    fn messages_hold_the_rows_in_batches() {
        let framed = copy_messages(RowTable::Accounts, 1, 20_000, b"\\.\n");
        let (parts, done) = payloads(&framed);
        assert!(done);
        assert!(parts.len() > 1);
        for p in &parts[..parts.len() - 1] {
            assert!(p.len() >= MESSAGE_BYTES && p.len() < MESSAGE_BYTES + 32);
            assert_eq!(p.last(), Some(&b'\n'));
        }
        let mut all = rows_text(RowTable::Accounts, 1, 20_000);
        all.extend_from_slice(b"\\.\n");
        assert_eq!(parts.concat(), all);
        let empty = copy_messages(RowTable::Accounts, 5, 4, b"");
        let (none, done) = payloads(&empty);
        assert!(none.is_empty() && done);
    }

    #[test]
    fn plans_cover_every_row_once() {
        for (accounts, jobs, parts) in [
            (300_000, 1, 0),
            (300_000, 7, 0),
            (300_000, 4, 4),
            (5, 16, 0),
        ] {
            let chunks = plan(accounts, jobs, parts);
            let mut next = 1;
            for c in &chunks {
                assert_eq!(c.lo, next);
                assert!(c.hi >= c.lo);
                next = c.hi + 1;
            }
            assert_eq!(next, accounts + 1);
        }
        assert_eq!(partition_rows(3_000_000, 16, 1), (1, 187_500));
        assert_eq!(partition_rows(3_000_000, 16, 16), (2_812_501, 3_000_000));
    }
}
