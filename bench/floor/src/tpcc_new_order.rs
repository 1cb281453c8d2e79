//! The New-Order of pgrush's TPC-C-like client mode (`-b tpcc-client-new-order`): the
//! statements of the builtin script `tpcc-client-new-order`, round trip by round trip,
//! as pgrush sends them in simple mode (the values written into the SQL text), with the
//! inputs drawn by the floor's own generator. The order id and the item prices are read
//! from the responses, as the script's `\gset` reads them; a New-Order whose `rbk` is 1
//! looks up the unused item 100001 last, finds no price and sends ROLLBACK.
//!
//! Each statement is written into one reused buffer just before it is sent: the least a
//! client can do for statements whose number and values change with every order.

use std::io::Write;

use crate::response::row_field;
use crate::workload::XorShift;

/// Lines an order can have (§2.4.1.3: 5 to 15).
const MAX_LINES: usize = 15;
/// The unused item id of a rolled-back order.
const UNUSED_ITEM: u32 = 100_001;
/// The run's NURand constants (any values in range: the floor needs no particular one).
const C_ID: u32 = 259;
const C_ITEM: u32 = 7911;

/// The round trip a New-Order is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Begin,
    Warehouse,
    District,
    Customer,
    Order,
    NewOrderRow,
    LockStock,
    /// The item of line `n` (0-based) looked up.
    Item(usize),
    /// The stock of line `n` updated.
    Stock(usize),
    /// The order line `n` inserted.
    Line(usize),
    /// ROLLBACK (an unused item) or END.
    Finish,
}

/// One New-Order's inputs (§2.4.1).
#[derive(Debug, Clone, Default)]
struct Inputs {
    district: u32,
    customer: u32,
    lines: usize,
    rollback: bool,
    items: [u32; MAX_LINES],
    supply: [u32; MAX_LINES],
    quantity: [u32; MAX_LINES],
}

/// One client's New-Orders.
#[derive(Debug)]
pub struct NewOrder {
    home: u32,
    warehouses: u32,
    rng: XorShift,
    inputs: Inputs,
    step: Step,
    /// The order id and the current line's price, as the server wrote them.
    order_id: Vec<u8>,
    price: Vec<u8>,
    /// The Query message of the current round trip.
    message: Vec<u8>,
}

impl NewOrder {
    /// The New-Orders of client `client` of `warehouses` (its home warehouse is
    /// `client % warehouses + 1`, as pgrush's), drawn from `seed`.
    pub fn new(client: usize, warehouses: u64, seed: u64) -> NewOrder {
        let warehouses = u32::try_from(warehouses.max(1)).unwrap_or(u32::MAX);
        NewOrder {
            home: (client as u64 % u64::from(warehouses)) as u32 + 1,
            warehouses,
            rng: XorShift::new(seed),
            inputs: Inputs::default(),
            step: Step::Begin,
            order_id: Vec::with_capacity(16),
            price: Vec::with_capacity(16),
            message: Vec::with_capacity(1024),
        }
    }

    /// The bytes of the current round trip.
    pub fn bytes(&self) -> &[u8] {
        &self.message
    }

    /// Draws the next order's inputs and writes its first round trip.
    pub fn draw(&mut self) {
        let i = &mut self.inputs;
        let rng = &mut self.rng;
        let mut random = |lo: u32, hi: u32| lo + rng.below(u64::from(hi - lo + 1)) as u32;
        i.district = random(1, 10);
        i.customer = ((random(0, 1023) | random(1, 3000)) + C_ID) % 3000 + 1;
        i.lines = random(5, 15) as usize;
        i.rollback = random(1, 100) == 1;
        for n in 0..MAX_LINES {
            i.items[n] = ((random(0, 8191) | random(1, 100_000)) + C_ITEM) % 100_000 + 1;
            i.supply[n] = if random(1, 100) == 1 && self.warehouses > 1 {
                (self.home + random(1, self.warehouses - 1) - 1) % self.warehouses + 1
            } else {
                self.home
            };
            i.quantity[n] = random(1, 10);
        }
        self.step = Step::Begin;
        self.write_step();
    }

    /// After the response to the current round trip (its first DataRow `row`): moves to
    /// the next one and writes it; returns false when the order has ended.
    pub fn after_response(&mut self, row: &[u8]) -> bool {
        let last = self.inputs.lines - 1;
        self.step = match self.step {
            Step::Begin => Step::Warehouse,
            Step::Warehouse => Step::District,
            Step::District => {
                copy_field(row, 1, &mut self.order_id);
                Step::Customer
            }
            Step::Customer => Step::Order,
            Step::Order => Step::NewOrderRow,
            Step::NewOrderRow => Step::LockStock,
            Step::LockStock => Step::Item(0),
            Step::Item(n) => {
                copy_field(row, 0, &mut self.price);
                if self.price.first() == Some(&b'-') {
                    Step::Finish
                } else {
                    Step::Stock(n)
                }
            }
            Step::Stock(n) => Step::Line(n),
            Step::Line(n) if n < last => Step::Item(n + 1),
            Step::Line(_) => Step::Finish,
            Step::Finish => return false,
        };
        self.write_step();
        true
    }

    /// The item of line `n`: the unused id on the last line of an order rolled back.
    fn item(&self, n: usize) -> u32 {
        if self.inputs.rollback && n + 1 == self.inputs.lines {
            UNUSED_ITEM
        } else {
            self.inputs.items[n]
        }
    }

    /// Writes the current round trip's Query message.
    fn write_step(&mut self) {
        let mut m = std::mem::take(&mut self.message);
        m.clear();
        m.extend_from_slice(b"Q\0\0\0\0");
        // Writing into a Vec cannot fail.
        let _ = self.write_sql(&mut m);
        m.push(0);
        let len = (m.len() - 1) as u32;
        m[1..5].copy_from_slice(&len.to_be_bytes());
        self.message = m;
    }

    fn write_sql(&self, m: &mut Vec<u8>) -> std::io::Result<()> {
        let i = &self.inputs;
        let (w, d, c) = (self.home, i.district, i.customer);
        match self.step {
            Step::Begin => m.extend_from_slice(b"BEGIN;"),
            Step::Warehouse => write!(m, "SELECT w_tax FROM warehouse WHERE w_id = {w} ")?,
            Step::District => write!(
                m,
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = {w} AND d_id = {d} RETURNING d_tax, d_next_o_id - 1 AS o_id "
            )?,
            Step::Customer => write!(
                m,
                "SELECT c_discount, c_last AS c_last_name, c_credit FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c} "
            )?,
            Step::Order => {
                let local = i.supply[..i.lines].iter().all(|&s| s == w);
                m.extend_from_slice(b"INSERT INTO orders VALUES (");
                m.extend_from_slice(&self.order_id);
                write!(
                    m,
                    ", {d}, {w}, {c}, localtimestamp, NULL, {}, {});",
                    i.lines,
                    u8::from(local)
                )?;
            }
            Step::NewOrderRow => {
                m.extend_from_slice(b"INSERT INTO new_order VALUES (");
                m.extend_from_slice(&self.order_id);
                write!(m, ", {d}, {w});")?;
            }
            Step::LockStock => {
                m.extend_from_slice(
                    b"SELECT s_i_id FROM stock WHERE (s_w_id, s_i_id) IN (SELECT * FROM unnest((ARRAY[",
                );
                write_list(m, &i.supply)?;
                write!(m, "]::int[])[1:({})], (ARRAY[", i.lines)?;
                write_list(m, &i.items)?;
                write!(
                    m,
                    "]::int[])[1:({})])) ORDER BY s_w_id, s_i_id FOR UPDATE;",
                    i.lines
                )?;
            }
            Step::Item(n) => write!(
                m,
                "SELECT coalesce(max(i_price), -1) AS i_price, max(i_name) AS i_name, max(i_data) AS i_data FROM item WHERE i_id = {} ",
                self.item(n)
            )?,
            Step::Stock(n) => {
                let (q, s) = (i.quantity[n], i.supply[n]);
                write!(
                    m,
                    "UPDATE stock SET s_quantity = CASE WHEN s_quantity - {q} >= 10 THEN s_quantity - {q} ELSE s_quantity - {q} + 91 END, s_ytd = s_ytd + {q}, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + CASE WHEN {s}::int <> {w}::int THEN 1 ELSE 0 END WHERE s_w_id = {s} AND s_i_id = {} RETURNING s_quantity, s_data ",
                    self.item(n)
                )?;
            }
            Step::Line(n) => {
                let (q, s, item) = (i.quantity[n], i.supply[n], self.item(n));
                m.extend_from_slice(b"INSERT INTO order_line VALUES (");
                m.extend_from_slice(&self.order_id);
                write!(m, ", {d}, {w}, {}, {item}, {s}, NULL, {q}, {q} * ", n + 1)?;
                m.extend_from_slice(&self.price);
                write!(
                    m,
                    "::numeric, (SELECT CASE {d}::int WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END FROM stock WHERE s_w_id = {s} AND s_i_id = {item}));"
                )?;
            }
            Step::Finish if self.price.first() == Some(&b'-') => m.extend_from_slice(b"ROLLBACK;"),
            Step::Finish => m.extend_from_slice(b"END;"),
        }
        Ok(())
    }
}

/// `a, b, c` of all the values.
fn write_list(m: &mut Vec<u8>, values: &[u32]) -> std::io::Result<()> {
    for (n, v) in values.iter().enumerate() {
        if n > 0 {
            m.extend_from_slice(b", ");
        }
        write!(m, "{v}")?;
    }
    Ok(())
}

/// Copies field `index` of `row` into `out` (empty when missing).
fn copy_field(row: &[u8], index: usize, out: &mut Vec<u8>) {
    out.clear();
    if let Some(value) = row_field(row, index) {
        out.extend_from_slice(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DataRow body of text fields.
    fn row(fields: &[&str]) -> Vec<u8> {
        let mut r = (fields.len() as u16).to_be_bytes().to_vec();
        for f in fields {
            r.extend_from_slice(&(f.len() as i32).to_be_bytes());
            r.extend_from_slice(f.as_bytes());
        }
        r
    }

    /// The SQL of the current round trip.
    fn sql(o: &NewOrder) -> String {
        let m = o.bytes();
        assert_eq!(m[0], b'Q');
        assert_eq!(
            u32::from_be_bytes(m[1..5].try_into().unwrap()) as usize,
            m.len() - 1
        );
        String::from_utf8(m[5..m.len() - 1].to_vec()).unwrap()
    }

    /// Runs one order, answering each item lookup with `price` (and the district with
    /// order id 3001); returns the statements sent.
    fn one_order(o: &mut NewOrder, price: impl Fn(&str) -> &'static str) -> Vec<String> {
        o.draw();
        let mut sent = vec![sql(o)];
        loop {
            let last = sent.last().unwrap().clone();
            let answer = if last.starts_with("UPDATE district") {
                row(&["0.1000", "3001"])
            } else if last.contains("FROM item") {
                row(&[price(&last), "name", "data"])
            } else {
                Vec::new()
            };
            if !o.after_response(&answer) {
                return sent;
            }
            sent.push(sql(o));
        }
    }

    #[test]
    fn an_order_sends_the_lines_then_commits() {
        let mut o = NewOrder::new(0, 1, 5);
        for _ in 0..50 {
            let sent = one_order(&mut o, |_| "12.34");
            let lines = o.inputs.lines;
            assert_eq!(sent.len(), 8 + 3 * lines, "{sent:#?}");
            assert_eq!(sent[0], "BEGIN;");
            assert!(
                sent[4].starts_with("INSERT INTO orders VALUES (3001, "),
                "{}",
                sent[4]
            );
            assert!(sent[4].ends_with(&format!(", localtimestamp, NULL, {lines}, 1);")));
            assert!(sent[6].ends_with(&format!(
                "[1:({lines})])) ORDER BY s_w_id, s_i_id FOR UPDATE;"
            )));
            assert!(
                sent[9].contains(", 1, ") && sent[9].contains(" * 12.34::numeric, "),
                "{}",
                sent[9]
            );
            assert_eq!(sent.last().unwrap(), "END;");
        }
    }

    #[test]
    fn an_unused_item_rolls_the_order_back() {
        let mut o = NewOrder::new(3, 2, 9);
        let mut rolled_back = 0;
        for _ in 0..2_000 {
            let sent = one_order(&mut o, |q| {
                if q.ends_with("= 100001 ") {
                    "-1"
                } else {
                    "5.00"
                }
            });
            if sent.last().unwrap() == "ROLLBACK;" {
                rolled_back += 1;
                assert!(o.inputs.rollback);
                assert_eq!(sent.len(), 8 + 3 * o.inputs.lines - 2);
            }
            assert_eq!(sent[1], "SELECT w_tax FROM warehouse WHERE w_id = 2 ");
        }
        assert!((8..=40).contains(&rolled_back), "{rolled_back}");
    }
}
