//! The initial rows of each TPC-C table (§4.3.3.1) as text COPY data. Every table's rows
//! of one warehouse come from that warehouse's own generator stream, so the data is the
//! same however the warehouses are split among connections.

use super::random::{C_LAST_LOAD, Stream, TpccRng, push_last_name, push_money, push_rate, stream};
use crate::rows::push_int;
use crate::session::DbFailure;
use crate::steps::RowBatches;

/// Items (§4.3.3.1): fixed, independent of the warehouses.
pub const ITEMS: i64 = 100_000;
/// Districts per warehouse.
pub const DISTRICTS: i64 = 10;
/// Customers per district.
pub const CUSTOMERS: i64 = 3_000;
/// Orders per district.
pub const ORDERS: i64 = 3_000;
/// The first undelivered order of a district (the last 900 have new_order rows).
pub const FIRST_NEW_ORDER: i64 = 2_101;

/// Which table a COPY stream fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// WAREHOUSE.
    Warehouse,
    /// DISTRICT.
    District,
    /// CUSTOMER.
    Customer,
    /// HISTORY.
    History,
    /// NEW-ORDER.
    NewOrder,
    /// ORDER.
    Orders,
    /// ORDER-LINE.
    OrderLine,
    /// ITEM.
    Item,
    /// STOCK.
    Stock,
}

impl Table {
    /// Every table, largest first (the order a parallel load starts them in).
    pub const BY_SIZE: [Table; 9] = [
        Table::Stock,
        Table::OrderLine,
        Table::Customer,
        Table::Item,
        Table::History,
        Table::Orders,
        Table::NewOrder,
        Table::District,
        Table::Warehouse,
    ];

    /// The table's name.
    pub fn name(self) -> &'static str {
        match self {
            Table::Warehouse => "warehouse",
            Table::District => "district",
            Table::Customer => "customer",
            Table::History => "history",
            Table::NewOrder => "new_order",
            Table::Orders => "orders",
            Table::OrderLine => "order_line",
            Table::Item => "item",
            Table::Stock => "stock",
        }
    }

    /// True for ITEM, the one table not split by warehouse.
    pub fn global(self) -> bool {
        self == Table::Item
    }

    /// The rows of one warehouse (of the whole table for ITEM); ORDER-LINE's count is
    /// only known once generated, [`ORDERS`] × 10 lines on average.
    pub fn rows_per_warehouse(self) -> i64 {
        match self {
            Table::Warehouse => 1,
            Table::District => DISTRICTS,
            Table::Customer | Table::History | Table::Orders => DISTRICTS * CUSTOMERS,
            Table::NewOrder => DISTRICTS * (ORDERS - FIRST_NEW_ORDER + 1),
            Table::OrderLine => DISTRICTS * ORDERS * 10,
            Table::Item | Table::Stock => ITEMS,
        }
    }
}

/// What every generator needs: the seed and the load time (C_SINCE, H_DATE, O_ENTRY_D,
/// OL_DELIVERY_D), as the server's text.
#[derive(Debug, Clone)]
pub struct Generation {
    /// The data seed (`--random-seed`).
    pub seed: u64,
    /// The load time as `timestamp` text.
    pub now: Vec<u8>,
}

/// Field separators of text COPY.
const TAB: u8 = b'\t';
const NULL: &[u8] = b"\\N";

fn field_int(buf: &mut Vec<u8>, v: i64) {
    push_int(buf, v);
    buf.push(TAB);
}

fn field_bytes(buf: &mut Vec<u8>, v: &[u8]) {
    buf.extend_from_slice(v);
    buf.push(TAB);
}

/// Ends a row: replaces the last tab with a newline.
fn end_row(buf: &mut [u8]) {
    if let Some(last) = buf.last_mut() {
        *last = b'\n';
    }
}

/// Name and address of a warehouse or district: name a[6..10], two streets and a city
/// a[10..20], state, zip.
fn push_name_and_address(rng: &mut TpccRng, buf: &mut Vec<u8>) {
    rng.push_a_string(buf, 6, 10);
    buf.push(TAB);
    push_address(rng, buf);
}

/// Two streets and a city a[10..20], state, zip, each followed by a tab.
fn push_address(rng: &mut TpccRng, buf: &mut Vec<u8>) {
    for _ in 0..3 {
        rng.push_a_string(buf, 10, 20);
        buf.push(TAB);
    }
    rng.push_state(buf);
    buf.push(TAB);
    rng.push_zip(buf);
    buf.push(TAB);
}

/// Sends the rows of `table` for warehouse `w` (all items for ITEM).
pub fn send_table(
    rows: &mut RowBatches<'_>,
    table: Table,
    w: i64,
    g: &Generation,
) -> Result<(), DbFailure> {
    match table {
        Table::Warehouse => warehouse(rows, w, g),
        Table::District => district(rows, w, g),
        Table::Customer => customer(rows, w, g),
        Table::History => history(rows, w, g),
        Table::NewOrder => new_order(rows, w),
        Table::Orders => orders(rows, w, g),
        Table::OrderLine => order_line(rows, w, g),
        Table::Item => item(rows, g),
        Table::Stock => stock(rows, w, g),
    }
}

fn warehouse(rows: &mut RowBatches<'_>, w: i64, g: &Generation) -> Result<(), DbFailure> {
    let mut rng = stream(g.seed, Stream::Warehouse, w);
    let buf = &mut rows.buf;
    field_int(buf, w);
    push_name_and_address(&mut rng, buf);
    push_rate(buf, rng.uniform(0, 2000));
    buf.push(TAB);
    push_money(buf, 30_000_000);
    buf.push(b'\n');
    rows.row_done()
}

fn district(rows: &mut RowBatches<'_>, w: i64, g: &Generation) -> Result<(), DbFailure> {
    let mut rng = stream(g.seed, Stream::District, w);
    for d in 1..=DISTRICTS {
        let buf = &mut rows.buf;
        field_int(buf, d);
        field_int(buf, w);
        push_name_and_address(&mut rng, buf);
        push_rate(buf, rng.uniform(0, 2000));
        buf.push(TAB);
        push_money(buf, 3_000_000);
        buf.push(TAB);
        field_int(buf, ORDERS + 1);
        end_row(buf);
        rows.row_done()?;
    }
    Ok(())
}

fn customer(rows: &mut RowBatches<'_>, w: i64, g: &Generation) -> Result<(), DbFailure> {
    let mut rng = stream(g.seed, Stream::Customer, w);
    for d in 1..=DISTRICTS {
        for c in 1..=CUSTOMERS {
            let buf = &mut rows.buf;
            field_int(buf, c);
            field_int(buf, d);
            field_int(buf, w);
            rng.push_a_string(buf, 8, 16);
            buf.push(TAB);
            field_bytes(buf, b"OE");
            let last = if c <= 1000 {
                c - 1
            } else {
                rng.nurand(255, 0, 999, C_LAST_LOAD)
            };
            push_last_name(buf, last);
            buf.push(TAB);
            push_address(&mut rng, buf);
            rng.push_n_string(buf, 16);
            buf.push(TAB);
            field_bytes(buf, &g.now);
            let credit: &[u8] = if rng.uniform(1, 10) == 1 {
                b"BC"
            } else {
                b"GC"
            };
            field_bytes(buf, credit);
            field_bytes(buf, b"50000.00");
            push_rate(buf, rng.uniform(0, 5000));
            buf.push(TAB);
            field_bytes(buf, b"-10.00\t10.00\t1\t0");
            rng.push_a_string(buf, 300, 500);
            buf.push(b'\n');
            rows.row_done()?;
        }
    }
    Ok(())
}

fn history(rows: &mut RowBatches<'_>, w: i64, g: &Generation) -> Result<(), DbFailure> {
    let mut rng = stream(g.seed, Stream::History, w);
    for d in 1..=DISTRICTS {
        for c in 1..=CUSTOMERS {
            let buf = &mut rows.buf;
            for v in [c, d, w, d, w] {
                field_int(buf, v);
            }
            field_bytes(buf, &g.now);
            field_bytes(buf, b"10.00");
            rng.push_a_string(buf, 12, 24);
            buf.push(b'\n');
            rows.row_done()?;
        }
    }
    Ok(())
}

fn new_order(rows: &mut RowBatches<'_>, w: i64) -> Result<(), DbFailure> {
    for d in 1..=DISTRICTS {
        for o in FIRST_NEW_ORDER..=ORDERS {
            let buf = &mut rows.buf;
            for v in [o, d, w] {
                field_int(buf, v);
            }
            end_row(buf);
            rows.row_done()?;
        }
    }
    Ok(())
}

/// One initial order of a district: its customer, line count and carrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderPlan {
    /// O_C_ID.
    pub customer: i64,
    /// O_OL_CNT, 5..=15.
    pub lines: i64,
    /// O_CARRIER_ID (None for the last 900).
    pub carrier: Option<i64>,
}

/// The orders of warehouse `w`, district by district, o_id 1..=3000 each: customers
/// from a random permutation, 5 to 15 lines, a carrier for the delivered ones. Both
/// the ORDER and the ORDER-LINE streams derive the line counts from here.
pub fn order_plan(seed: u64, w: i64) -> Vec<OrderPlan> {
    let mut rng = stream(seed, Stream::Orders, w);
    let mut out = Vec::with_capacity((DISTRICTS * ORDERS) as usize);
    for _ in 1..=DISTRICTS {
        let mut customers: Vec<i64> = (1..=CUSTOMERS).collect();
        rng.shuffle(&mut customers);
        for (o, customer) in (1..=ORDERS).zip(customers) {
            let lines = rng.uniform(5, 15);
            let carrier = (o < FIRST_NEW_ORDER).then(|| rng.uniform(1, 10));
            out.push(OrderPlan {
                customer,
                lines,
                carrier,
            });
        }
    }
    out
}

/// The district (1-based) and o_id of the `i`-th (0-based) entry of an [`order_plan`].
fn order_key(i: usize) -> (i64, i64) {
    let i = i as i64;
    (i / ORDERS + 1, i % ORDERS + 1)
}

fn orders(rows: &mut RowBatches<'_>, w: i64, g: &Generation) -> Result<(), DbFailure> {
    for (i, plan) in order_plan(g.seed, w).iter().enumerate() {
        let (d, o) = order_key(i);
        let buf = &mut rows.buf;
        for v in [o, d, w, plan.customer] {
            field_int(buf, v);
        }
        field_bytes(buf, &g.now);
        match plan.carrier {
            Some(c) => field_int(buf, c),
            None => field_bytes(buf, NULL),
        }
        field_int(buf, plan.lines);
        field_int(buf, 1);
        end_row(buf);
        rows.row_done()?;
    }
    Ok(())
}

fn order_line(rows: &mut RowBatches<'_>, w: i64, g: &Generation) -> Result<(), DbFailure> {
    let mut rng = stream(g.seed, Stream::OrderLine, w);
    for (i, plan) in order_plan(g.seed, w).iter().enumerate() {
        let (d, o) = order_key(i);
        let delivered = o < FIRST_NEW_ORDER;
        for n in 1..=plan.lines {
            let buf = &mut rows.buf;
            for v in [o, d, w, n, rng.uniform(1, ITEMS), w] {
                field_int(buf, v);
            }
            field_bytes(buf, if delivered { &g.now } else { NULL });
            field_int(buf, 5);
            let amount = if delivered {
                0
            } else {
                rng.uniform(1, 999_999)
            };
            push_money(buf, amount);
            buf.push(TAB);
            rng.push_a_string(buf, 24, 24);
            buf.push(b'\n');
            rows.row_done()?;
        }
    }
    Ok(())
}

fn item(rows: &mut RowBatches<'_>, g: &Generation) -> Result<(), DbFailure> {
    let mut rng = stream(g.seed, Stream::Item, 0);
    for i in 1..=ITEMS {
        let buf = &mut rows.buf;
        field_int(buf, i);
        field_int(buf, rng.uniform(1, 10_000));
        rng.push_a_string(buf, 14, 24);
        buf.push(TAB);
        push_money(buf, rng.uniform(100, 10_000));
        buf.push(TAB);
        rng.push_data_with_original(buf);
        buf.push(b'\n');
        rows.row_done()?;
    }
    Ok(())
}

fn stock(rows: &mut RowBatches<'_>, w: i64, g: &Generation) -> Result<(), DbFailure> {
    let mut rng = stream(g.seed, Stream::Stock, w);
    for i in 1..=ITEMS {
        let buf = &mut rows.buf;
        field_int(buf, i);
        field_int(buf, w);
        field_int(buf, rng.uniform(10, 100));
        for _ in 0..10 {
            rng.push_a_string(buf, 24, 24);
            buf.push(TAB);
        }
        field_bytes(buf, b"0\t0\t0");
        rng.push_data_with_original(buf);
        buf.push(b'\n');
        rows.row_done()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::CopySink;

    /// Collects COPY data; once it holds `limit` bytes it refuses more, which stops the
    /// generator (the unit tests run unoptimized: whole warehouses of the large tables
    /// would take seconds each).
    struct Collect {
        data: Vec<u8>,
        limit: usize,
    }

    impl CopySink for Collect {
        fn send(&mut self, data: &[u8]) -> Result<(), DbFailure> {
            if self.data.len() >= self.limit {
                return Err(DbFailure {
                    message: b"enough".to_vec(),
                });
            }
            self.data.extend_from_slice(data);
            Ok(())
        }
    }

    /// The rows of `table` for warehouse `w`, at most about `limit` bytes of them.
    fn text_upto(table: Table, w: i64, seed: u64, limit: usize) -> String {
        let g = Generation {
            seed,
            now: b"2026-01-01 00:00:00".to_vec(),
        };
        let mut sink = Collect {
            data: Vec::new(),
            limit,
        };
        let mut ignore = |_| {};
        let mut rows = RowBatches::new(&mut sink, &mut ignore);
        // Refused data ends the generation early: what was taken is what is checked.
        let _ = send_table(&mut rows, table, w, &g).and_then(|()| rows.finish());
        String::from_utf8(sink.data).unwrap()
    }

    /// All the rows of `table` for warehouse `w`.
    fn text(table: Table, w: i64, seed: u64) -> String {
        text_upto(table, w, seed, usize::MAX)
    }

    fn rows_in(text: &str) -> i64 {
        text.bytes().filter(|b| *b == b'\n').count() as i64
    }

    /// The column count of each table's definition.
    fn columns(table: Table) -> usize {
        match table {
            Table::Warehouse => 9,
            Table::District => 11,
            Table::Customer => 21,
            Table::History => 8,
            Table::NewOrder => 3,
            Table::Orders => 8,
            Table::OrderLine => 10,
            Table::Item => 5,
            Table::Stock => 17,
        }
    }

    #[test]
    fn every_row_has_every_column_and_counts_match() {
        for table in Table::BY_SIZE {
            let out = text_upto(table, 2, 11, 200_000);
            for line in out.lines() {
                assert_eq!(
                    line.split('\t').count(),
                    columns(table),
                    "{table:?}: {line}"
                );
            }
        }
        // Whole warehouses of the small tables (the large ones: the cli's `tpcc` test).
        for table in [
            Table::Warehouse,
            Table::District,
            Table::NewOrder,
            Table::Orders,
        ] {
            assert_eq!(
                rows_in(&text(table, 2, 11)),
                table.rows_per_warehouse(),
                "{table:?}"
            );
        }
    }

    #[test]
    fn same_seed_same_rows() {
        let customers = |w, seed| text_upto(Table::Customer, w, seed, 100_000);
        assert_eq!(customers(1, 5), customers(1, 5));
        assert_ne!(customers(1, 5), customers(1, 6));
        assert_ne!(customers(1, 5), customers(2, 5));
        assert_eq!(text(Table::District, 1, 5), text(Table::District, 1, 5));
    }

    #[test]
    fn order_lines_follow_the_order_plan() {
        let plan = order_plan(9, 1);
        assert_eq!(plan.len(), 30_000);
        let lines: i64 = plan.iter().map(|p| p.lines).sum();
        // Only the first district's lines: the generator follows the plan line for line.
        let first: i64 = plan[..3000].iter().map(|p| p.lines).sum();
        let copied = text_upto(Table::OrderLine, 1, 9, 100_000);
        let numbers: Vec<i64> = copied
            .lines()
            .map(|l| l.split('\t').nth(3).unwrap().parse().unwrap())
            .collect();
        let mut expected = Vec::new();
        for p in &plan {
            expected.extend(1..=p.lines);
        }
        assert_eq!(numbers, expected[..numbers.len()]);
        assert!(numbers.len() > 1000 && (numbers.len() as i64) < first);
        assert!((27_000..=33_000).contains(&first), "{first}");
        assert!((297_000..=303_000).contains(&lines), "{lines}");
        for (i, p) in plan.iter().enumerate() {
            let (_, o) = order_key(i);
            assert_eq!(p.carrier.is_none(), o >= FIRST_NEW_ORDER);
            assert!((5..=15).contains(&p.lines));
        }
        let mut first: Vec<i64> = plan[..3000].iter().map(|p| p.customer).collect();
        first.sort_unstable();
        assert_eq!(first, (1..=3000).collect::<Vec<_>>());
    }

    #[test]
    fn customers_have_every_last_name_in_each_district() {
        let out = text(Table::Customer, 1, 3);
        assert_eq!(rows_in(&out), Table::Customer.rows_per_warehouse());
        let first = out.lines().next().unwrap();
        let f: Vec<&str> = first.split('\t').collect();
        assert_eq!(&f[..3], ["1", "1", "1"]);
        assert_eq!(f[5], "BARBARBAR");
        assert_eq!(&f[16..20], ["-10.00", "10.00", "1", "0"]);
        let bc = out
            .lines()
            .filter(|l| l.split('\t').nth(13) == Some("BC"))
            .count();
        assert!((2500..=3500).contains(&bc), "{bc}");
    }
}
