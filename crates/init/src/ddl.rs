//! The SQL text pgbench 18 sends for each initialization step, byte for byte.

use crate::config::{InitConfig, NACCOUNTS, NTELLERS, Partitioning};

/// `d`: the drop statement.
pub const DROP_TABLES: &str =
    "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// `g`/`G`: the truncate statement run inside the loading transaction.
pub const TRUNCATE_TABLES: &str =
    "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// The relkind query pgbench 18 runs (extended protocol, one text parameter) before each COPY.
pub const RELKIND_QUERY: &str =
    "SELECT relkind FROM pg_catalog.pg_class WHERE oid=$1::pg_catalog.regclass";

/// `v`: the tables vacuumed, in pgbench's order.
pub const VACUUM_TABLES: [&str; 4] = [
    "pgbench_branches",
    "pgbench_tellers",
    "pgbench_accounts",
    "pgbench_history",
];

/// `f`: the foreign key statements, in pgbench's order.
pub const FOREIGN_KEYS: [&str; 5] = [
    "alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
    "alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
];

/// pgbench builds the primary key statements in a 256-byte buffer (255 usable bytes).
const PKEY_BUFFER_BYTES: usize = 255;

struct TableDdl {
    name: &'static str,
    small_cols: &'static str,
    big_cols: &'static str,
    fillfactor: bool,
}

const TABLES: [TableDdl; 4] = [
    TableDdl {
        name: "pgbench_history",
        small_cols: "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)",
        big_cols: "tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)",
        fillfactor: false,
    },
    TableDdl {
        name: "pgbench_tellers",
        small_cols: "tid int not null,bid int,tbalance int,filler char(84)",
        big_cols: "tid int not null,bid int,tbalance int,filler char(84)",
        fillfactor: true,
    },
    TableDdl {
        name: "pgbench_accounts",
        small_cols: "aid    int not null,bid int,abalance int,filler char(84)",
        big_cols: "aid bigint not null,bid int,abalance int,filler char(84)",
        fillfactor: true,
    },
    TableDdl {
        name: "pgbench_branches",
        small_cols: "bid int not null,bbalance int,filler char(88)",
        big_cols: "bid int not null,bbalance int,filler char(88)",
        fillfactor: true,
    },
];

/// Quotes an identifier as libpq's `PQescapeIdentifier` does.
pub fn quote_ident(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `t`: the four `create table` statements, in pgbench's order.
pub fn create_tables(cfg: &InitConfig) -> Vec<String> {
    let partitioned = cfg.partitioning != Partitioning::None;
    TABLES
        .iter()
        .map(|t| {
            let mut sql = format!(
                "create{} table {}({})",
                if cfg.unlogged && !partitioned {
                    " unlogged"
                } else {
                    ""
                },
                t.name,
                if cfg.big_ids() {
                    t.big_cols
                } else {
                    t.small_cols
                }
            );
            match cfg.partitioning.method() {
                Some(method) if t.name == "pgbench_accounts" => {
                    sql.push_str(&format!(" partition by {method} (aid)"));
                }
                _ if t.fillfactor => {
                    sql.push_str(&format!(" with (fillfactor={})", cfg.fillfactor))
                }
                _ => {}
            }
            if let Some(ts) = &cfg.tablespace {
                sql.push_str(" tablespace ");
                sql.push_str(&quote_ident(ts));
            }
            sql
        })
        .collect()
}

/// The size of each range partition (pgbench rounds up).
pub fn range_partition_size(cfg: &InitConfig) -> i64 {
    let parts = i64::from(cfg.partitioning.count().max(1));
    (cfg.accounts() + parts - 1) / parts
}

/// The account id range `[lo, hi]` that range partition `p` (1-based) holds among the
/// generated rows; empty (`lo > hi`) when the partition gets no rows.
pub fn range_partition_rows(cfg: &InitConfig, p: u32) -> (i64, i64) {
    let size = range_partition_size(cfg);
    let parts = cfg.partitioning.count();
    let lo = (i64::from(p) - 1) * size + 1;
    let hi = if p < parts {
        i64::from(p) * size
    } else {
        cfg.accounts()
    };
    (lo, hi.min(cfg.accounts()))
}

/// The name of partition `p` (1-based).
pub fn partition_name(p: u32) -> String {
    format!("pgbench_accounts_{p}")
}

/// `t` with partitions: the `create table ... partition of` statements.
pub fn create_partitions(cfg: &InitConfig) -> Vec<String> {
    let parts = cfg.partitioning.count();
    let unlogged = if cfg.unlogged { " unlogged" } else { "" };
    (1..=parts)
        .map(|p| {
            let bounds = match cfg.partitioning {
                Partitioning::Hash(_) => {
                    format!("for values with (modulus {parts}, remainder {})", p - 1)
                }
                _ => {
                    let size = range_partition_size(cfg);
                    let lo = if p == 1 {
                        "minvalue".to_string()
                    } else {
                        ((i64::from(p) - 1) * size + 1).to_string()
                    };
                    let hi = if p < parts {
                        (i64::from(p) * size + 1).to_string()
                    } else {
                        "maxvalue".to_string()
                    };
                    format!("for values from ({lo}) to ({hi})")
                }
            };
            format!(
                "create{unlogged} table {}\n  partition of pgbench_accounts\n  {bounds} with (fillfactor={})",
                partition_name(p),
                cfg.fillfactor
            )
        })
        .collect()
}

/// `p`: the primary key statements (branches, tellers, accounts).
pub fn primary_keys(cfg: &InitConfig) -> Vec<String> {
    [
        "pgbench_branches (bid)",
        "pgbench_tellers (tid)",
        "pgbench_accounts (aid)",
    ]
    .iter()
    .map(|t| {
        let (table, col) = t.split_once(' ').unwrap_or((t, ""));
        let base = format!("alter table {table} add primary key {col}");
        with_index_tablespace(base, cfg)
    })
    .collect()
}

/// The primary key statement of one accounts partition (used by parallel loads).
pub fn partition_primary_key(cfg: &InitConfig, p: u32) -> String {
    with_index_tablespace(
        format!("alter table {} add primary key (aid)", partition_name(p)),
        cfg,
    )
}

fn with_index_tablespace(mut sql: String, cfg: &InitConfig) -> String {
    if let Some(ts) = &cfg.index_tablespace {
        sql.push_str(" using index tablespace ");
        sql.push_str(&quote_ident(ts));
        if sql.len() > PKEY_BUFFER_BYTES {
            let mut cut = PKEY_BUFFER_BYTES;
            while !sql.is_char_boundary(cut) {
                cut -= 1;
            }
            sql.truncate(cut);
        }
    }
    sql
}

/// `G`: the three server-side insert statements (branches, tellers, accounts).
pub fn server_side_inserts(cfg: &InitConfig) -> [String; 3] {
    [
        format!(
            "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, {}) as bid",
            cfg.branches()
        ),
        format!(
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / {NTELLERS} + 1, 0 from generate_series(1, {}) as tid",
            cfg.tellers()
        ),
        accounts_insert(1, cfg.accounts()),
    ]
}

/// The server-side insert of accounts `lo..=hi` (pgbench's statement when the range is everything).
pub fn accounts_insert(lo: i64, hi: i64) -> String {
    format!(
        "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / {NACCOUNTS} + 1, 0, '' from generate_series({lo}, {hi}) as aid"
    )
}

/// The COPY statement pgbench 18 uses for `table` (`freeze` when relkind is `r` on v14+).
pub fn copy_statement(table: &str, freeze: bool) -> String {
    if freeze {
        format!("copy {table} from stdin with (freeze on)")
    } else {
        format!("copy {table} from stdin")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> InitConfig {
        InitConfig::default()
    }

    #[test]
    fn default_tables_match_pgbench() {
        assert_eq!(
            create_tables(&cfg()),
            vec![
                "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))",
                "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)",
                "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)",
                "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)",
            ]
        );
    }

    #[test]
    fn big_scale_unlogged_tablespace() {
        let c = InitConfig {
            scale: 20_000,
            unlogged: true,
            fillfactor: 90,
            tablespace: Some("my\"ts".into()),
            ..cfg()
        };
        let t = create_tables(&c);
        assert_eq!(
            t[0],
            "create unlogged table pgbench_history(tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)) tablespace \"my\"\"ts\""
        );
        assert_eq!(
            t[2],
            "create unlogged table pgbench_accounts(aid bigint not null,bid int,abalance int,filler char(84)) with (fillfactor=90) tablespace \"my\"\"ts\""
        );
    }

    #[test]
    fn partitioned_parent_is_logged_and_partitions_unlogged() {
        let c = InitConfig {
            scale: 2,
            unlogged: true,
            fillfactor: 90,
            partitioning: Partitioning::Range(3),
            ..cfg()
        };
        let t = create_tables(&c);
        assert_eq!(
            t[2],
            "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) partition by range (aid)"
        );
        assert!(t[1].starts_with("create table pgbench_tellers("));
        assert_eq!(
            create_partitions(&c),
            vec![
                "create unlogged table pgbench_accounts_1\n  partition of pgbench_accounts\n  for values from (minvalue) to (66668) with (fillfactor=90)",
                "create unlogged table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values from (66668) to (133335) with (fillfactor=90)",
                "create unlogged table pgbench_accounts_3\n  partition of pgbench_accounts\n  for values from (133335) to (maxvalue) with (fillfactor=90)",
            ]
        );
        assert_eq!(range_partition_rows(&c, 1), (1, 66667));
        assert_eq!(range_partition_rows(&c, 3), (133335, 200000));
    }

    #[test]
    fn hash_partitions() {
        let c = InitConfig {
            partitioning: Partitioning::Hash(2),
            ..cfg()
        };
        assert!(create_tables(&c)[2].ends_with(") partition by hash (aid)"));
        assert_eq!(
            create_partitions(&c)[1],
            "create table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values with (modulus 2, remainder 1) with (fillfactor=100)"
        );
    }

    #[test]
    fn primary_keys_with_index_tablespace() {
        let c = InitConfig {
            index_tablespace: Some("pg_default".into()),
            ..cfg()
        };
        assert_eq!(
            primary_keys(&c),
            vec![
                "alter table pgbench_branches add primary key (bid) using index tablespace \"pg_default\"",
                "alter table pgbench_tellers add primary key (tid) using index tablespace \"pg_default\"",
                "alter table pgbench_accounts add primary key (aid) using index tablespace \"pg_default\"",
            ]
        );
        let long = InitConfig {
            index_tablespace: Some("x".repeat(400)),
            ..cfg()
        };
        assert!(primary_keys(&long).iter().all(|s| s.len() == 255));
        assert_eq!(
            primary_keys(&cfg())[0],
            "alter table pgbench_branches add primary key (bid)"
        );
    }

    #[test]
    fn server_side_statements() {
        let c = InitConfig { scale: 2, ..cfg() };
        let s = server_side_inserts(&c);
        assert_eq!(
            s[0],
            "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, 2) as bid"
        );
        assert_eq!(
            s[1],
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / 10 + 1, 0 from generate_series(1, 20) as tid"
        );
        assert_eq!(
            s[2],
            "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / 100000 + 1, 0, '' from generate_series(1, 200000) as aid"
        );
        assert_eq!(
            copy_statement("pgbench_tellers", true),
            "copy pgbench_tellers from stdin with (freeze on)"
        );
    }
}
