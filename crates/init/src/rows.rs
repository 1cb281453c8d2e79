//! Row generation for client-side loading: pgbench's text COPY rows.

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
}
