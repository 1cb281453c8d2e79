//! The nine TPC-C tables (§1.3): their definitions, primary keys, the two secondary
//! indexes the transactions need, foreign keys, and the COPY statements.

/// The nine tables, in the order they are created (and dropped in reverse).
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// `d`: drops the nine tables and the transaction functions.
pub const DROP_TABLES: &str = "drop table if exists warehouse, district, customer, history, new_order, orders, order_line, item, stock cascade";

/// Column definitions of each table (ids as integers, money as exact numerics, text
/// as varchar/char of the specification's lengths, dates as timestamp).
const COLUMNS: [(&str, &str); 9] = [
    (
        "warehouse",
        "w_id int not null, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2)",
    ),
    (
        "district",
        "d_id int not null, d_w_id int not null, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int",
    ),
    (
        "customer",
        "c_id int not null, c_d_id int not null, c_w_id int not null, c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp, c_credit char(2), c_credit_lim numeric(12,2), c_discount numeric(4,4), c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500)",
    ),
    (
        "history",
        "h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date timestamp, h_amount numeric(6,2), h_data varchar(24)",
    ),
    (
        "new_order",
        "no_o_id int not null, no_d_id int not null, no_w_id int not null",
    ),
    (
        "orders",
        "o_id int not null, o_d_id int not null, o_w_id int not null, o_c_id int, o_entry_d timestamp, o_carrier_id int, o_ol_cnt int, o_all_local int",
    ),
    (
        "order_line",
        "ol_o_id int not null, ol_d_id int not null, ol_w_id int not null, ol_number int not null, ol_i_id int, ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6,2), ol_dist_info char(24)",
    ),
    (
        "item",
        "i_id int not null, i_im_id int, i_name varchar(24), i_price numeric(5,2), i_data varchar(50)",
    ),
    (
        "stock",
        "s_i_id int not null, s_w_id int not null, s_quantity int, s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int, s_data varchar(50)",
    ),
];

/// Table options shared with pgbench's `-i`: `--unlogged-tables`, `--tablespace`,
/// `--index-tablespace`, `-F`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// `create unlogged table`.
    pub unlogged: bool,
    /// The tables' tablespace.
    pub tablespace: Option<String>,
    /// The indexes' tablespace.
    pub index_tablespace: Option<String>,
    /// `fillfactor` of every table (100: none written).
    pub fillfactor: u32,
}

/// A quoted identifier (for tablespace names).
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `t`: one `create table` per table.
pub fn create_tables(layout: &Layout) -> Vec<String> {
    COLUMNS
        .iter()
        .map(|(table, columns)| {
            let mut sql = format!(
                "create{} table {table} ({columns})",
                if layout.unlogged { " unlogged" } else { "" }
            );
            if layout.fillfactor != 100 && layout.fillfactor != 0 {
                sql.push_str(&format!(" with (fillfactor={})", layout.fillfactor));
            }
            if let Some(ts) = &layout.tablespace {
                sql.push_str(&format!(" tablespace {}", quote_ident(ts)));
            }
            sql
        })
        .collect()
}

/// The primary keys (§1.3.1; HISTORY has none), largest tables first, then the
/// customer-by-name and orders-by-customer indexes of Payment and Order-Status.
pub fn keys_and_indexes(layout: &Layout) -> Vec<String> {
    let ts = match &layout.index_tablespace {
        Some(t) => format!(" using index tablespace {}", quote_ident(t)),
        None => String::new(),
    };
    let index_ts = match &layout.index_tablespace {
        Some(t) => format!(" tablespace {}", quote_ident(t)),
        None => String::new(),
    };
    let pk = |table: &str, cols: &str| format!("alter table {table} add primary key ({cols}){ts}");
    vec![
        pk("order_line", "ol_w_id, ol_d_id, ol_o_id, ol_number"),
        pk("stock", "s_w_id, s_i_id"),
        pk("customer", "c_w_id, c_d_id, c_id"),
        format!(
            "create index customer_name on customer (c_w_id, c_d_id, c_last, c_first){index_ts}"
        ),
        pk("orders", "o_w_id, o_d_id, o_id"),
        format!("create index orders_customer on orders (o_w_id, o_d_id, o_c_id, o_id){index_ts}"),
        pk("item", "i_id"),
        pk("new_order", "no_w_id, no_d_id, no_o_id"),
        pk("district", "d_w_id, d_id"),
        pk("warehouse", "w_id"),
    ]
}

/// `f`: the foreign keys of §1.3.1, on one connection (each locks both tables).
pub const FOREIGN_KEYS: [&str; 10] = [
    "alter table district add constraint district_warehouse foreign key (d_w_id) references warehouse",
    "alter table customer add constraint customer_district foreign key (c_w_id, c_d_id) references district",
    "alter table history add constraint history_customer foreign key (h_c_w_id, h_c_d_id, h_c_id) references customer",
    "alter table history add constraint history_district foreign key (h_w_id, h_d_id) references district",
    "alter table orders add constraint orders_customer foreign key (o_w_id, o_d_id, o_c_id) references customer",
    "alter table new_order add constraint new_order_orders foreign key (no_w_id, no_d_id, no_o_id) references orders",
    "alter table order_line add constraint order_line_orders foreign key (ol_w_id, ol_d_id, ol_o_id) references orders",
    "alter table order_line add constraint order_line_stock foreign key (ol_supply_w_id, ol_i_id) references stock",
    "alter table stock add constraint stock_warehouse foreign key (s_w_id) references warehouse",
    "alter table stock add constraint stock_item foreign key (s_i_id) references item",
];

/// `truncate` of every table (before a load split among connections).
pub const TRUNCATE_TABLES: &str = "truncate table warehouse, district, customer, history, new_order, orders, order_line, item, stock";

/// `d`: the statements that drop the workload's objects.
pub fn drop_statements() -> Vec<String> {
    vec![
        // Sixteen "does not exist, skipping" notices on a first load say nothing.
        "set client_min_messages = warning".to_string(),
        super::functions::DROP_FUNCTIONS.to_string(),
        DROP_TABLES.to_string(),
        "reset client_min_messages".to_string(),
    ]
}

/// `t`: the statements that create the workload's objects.
pub fn create_statements(layout: &Layout) -> Vec<String> {
    let mut out = create_tables(layout);
    out.extend(super::functions::CREATE_FUNCTIONS.map(String::from));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_created_and_keyed() {
        let layout = Layout {
            fillfactor: 100,
            ..Layout::default()
        };
        let create = create_tables(&layout);
        assert_eq!(create.len(), 9);
        for (sql, table) in create.iter().zip(TABLES) {
            assert!(sql.starts_with(&format!("create table {table} (")), "{sql}");
            assert!(DROP_TABLES.contains(table) && TRUNCATE_TABLES.contains(table));
        }
        let keys = keys_and_indexes(&layout);
        for table in TABLES.iter().filter(|t| **t != "history") {
            assert!(
                keys.iter()
                    .any(|k| k.starts_with(&format!("alter table {table} add primary key"))),
                "{table}"
            );
        }
    }

    #[test]
    fn layout_options_are_written() {
        let layout = Layout {
            unlogged: true,
            tablespace: Some("fast".into()),
            index_tablespace: Some("idx".into()),
            fillfactor: 90,
        };
        let create = create_tables(&layout);
        assert!(create[0].starts_with("create unlogged table warehouse ("));
        assert!(create[0].ends_with(") with (fillfactor=90) tablespace \"fast\""));
        let keys = keys_and_indexes(&layout);
        assert!(keys[0].ends_with(" using index tablespace \"idx\""));
        assert!(keys[3].ends_with(" tablespace \"idx\""));
    }
}
