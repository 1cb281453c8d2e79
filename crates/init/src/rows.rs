//! Row generation for client-side loading: pgbench's text COPY rows and an equivalent
//! binary COPY encoding (same logical values).

use crate::config::{NACCOUNTS, NTELLERS};

/// Which pgbench table a row stream fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// pgbench_branches: `bid, 0, NULL`.
    Branches,
    /// pgbench_tellers: `tid, bid, 0, NULL`.
    Tellers,
    /// pgbench_accounts: `aid, bid, 0, ''`.
    Accounts,
}

impl Table {
    /// The table name.
    pub fn name(self) -> &'static str {
        match self {
            Table::Branches => "pgbench_branches",
            Table::Tellers => "pgbench_tellers",
            Table::Accounts => "pgbench_accounts",
        }
    }
}

/// The COPY data format a stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    /// pgbench's text format (tab separated, `\N` for NULL).
    Text,
    /// PostgreSQL's binary COPY format (accounts only); `big_ids` makes aid an int8.
    Binary {
        /// Encode aid as int8 (scale >= 20000).
        big_ids: bool,
    },
}

/// The signature, flags and header extension length that start a binary COPY stream.
pub const BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// The file trailer of a binary COPY stream (a field count of -1).
pub const BINARY_TRAILER: &[u8] = &[0xff, 0xff];

/// Appends the decimal text of `v` to `buf` (faster than `write!`).
pub fn push_int(buf: &mut Vec<u8>, v: i64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let neg = v < 0;
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if neg {
        buf.push(b'-');
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends the text COPY row with 1-based id `id` of `table`, exactly as pgbench writes it.
pub fn push_text_row(buf: &mut Vec<u8>, table: Table, id: i64) {
    match table {
        Table::Branches => {
            push_int(buf, id);
            buf.extend_from_slice(b"\t0\t\\N\n");
        }
        Table::Tellers => {
            push_int(buf, id);
            buf.push(b'\t');
            push_int(buf, (id - 1) / NTELLERS + 1);
            buf.extend_from_slice(b"\t0\t\\N\n");
        }
        Table::Accounts => {
            push_int(buf, id);
            buf.push(b'\t');
            push_int(buf, (id - 1) / NACCOUNTS + 1);
            buf.extend_from_slice(b"\t0\t\n");
        }
    }
}

/// Appends one binary COPY tuple of pgbench_accounts for account `aid`.
pub fn push_binary_account(buf: &mut Vec<u8>, aid: i64, big_ids: bool) {
    buf.extend_from_slice(&4i16.to_be_bytes());
    if big_ids {
        buf.extend_from_slice(&8i32.to_be_bytes());
        buf.extend_from_slice(&aid.to_be_bytes());
    } else {
        buf.extend_from_slice(&4i32.to_be_bytes());
        // Ids below the bigint threshold always fit an int4.
        buf.extend_from_slice(&(aid as i32).to_be_bytes());
    }
    let bid = ((aid - 1) / NACCOUNTS + 1) as i32;
    buf.extend_from_slice(&4i32.to_be_bytes());
    buf.extend_from_slice(&bid.to_be_bytes());
    buf.extend_from_slice(&4i32.to_be_bytes());
    buf.extend_from_slice(&0i32.to_be_bytes());
    // filler: an empty string, blank-padded by the server like the text ''.
    buf.extend_from_slice(&0i32.to_be_bytes());
}

/// Appends row `id` of `table` in `format` (binary is used for accounts only).
pub fn push_row(buf: &mut Vec<u8>, table: Table, id: i64, format: CopyFormat) {
    match format {
        CopyFormat::Binary { big_ids } if table == Table::Accounts => {
            push_binary_account(buf, id, big_ids)
        }
        _ => push_text_row(buf, table, id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints() {
        for v in [0i64, 7, 10, 99999, 100000, -42, i64::MAX, i64::MIN] {
            let mut b = Vec::new();
            push_int(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }

    #[test]
    fn text_rows_match_pgbench() {
        let mut b = Vec::new();
        push_text_row(&mut b, Table::Branches, 3);
        push_text_row(&mut b, Table::Tellers, 10);
        push_text_row(&mut b, Table::Tellers, 11);
        push_text_row(&mut b, Table::Accounts, 100000);
        push_text_row(&mut b, Table::Accounts, 100001);
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "3\t0\t\\N\n10\t1\t0\t\\N\n11\t2\t0\t\\N\n100000\t1\t0\t\n100001\t2\t0\t\n"
        );
    }

    #[test]
    fn binary_account_rows() {
        let mut b = Vec::new();
        push_row(
            &mut b,
            Table::Accounts,
            100001,
            CopyFormat::Binary { big_ids: false },
        );
        assert_eq!(
            b,
            [
                0, 4, 0, 0, 0, 4, 0, 1, 0x86, 0xa1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0,
                0, 0, 0, 0
            ]
        );
        let mut big = Vec::new();
        push_binary_account(&mut big, 5, true);
        assert_eq!(&big[2..14], &[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(BINARY_HEADER.len(), 19);
    }
}
