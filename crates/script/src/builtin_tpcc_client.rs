//! The TPC-C-like workload's client mode (`--workload tpcc --tpcc-mode client`): the five
//! transactions as plain SQL statements sent one round trip at a time, as an application
//! would send them, instead of one call of a server function each. Each script draws its
//! inputs with the same lines as the procedures mode ([`crate::TPCC_SCRIPTS`]), so a
//! `--random-seed` gives the same inputs in both modes.
//!
//! pgbench's language has no loops: New-Order's 5–15 lines are fifteen `\if :ol_cnt >= K`
//! blocks and Delivery's ten districts ten blocks. Values read with `\gset` are sent
//! back only when they are numbers: pgbench writes a variable into the SQL text unquoted
//! (simple mode), so a text read from the server (a name, a `s_dist_NN`) is read again by
//! a subquery where a statement needs it.

use crate::builtin::Builtin;
use crate::builtin_tpcc::{
    c_last, delivery_inputs, home, home_and_customer, new_order_commit, new_order_inputs,
    order_line, order_status_inputs, payment_inputs, stock_level_inputs,
};

/// Order line `K` of a New-Order: the item looked up (the last line's is the unused id
/// 100001 when `rbk` is 1: the lookup then finds no row and reads a price of -1), then,
/// when it exists, its stock updated and the order line inserted.
macro_rules! client_line {
    ($k:literal) => {
        concat!(
            "\\if :ol_cnt >= ", stringify!($k), "\n",
            "\\set item case when :rbk = 1 and :ol_cnt = ", stringify!($k),
            " then 100001 else :i", stringify!($k), " end\n",
            "SELECT coalesce(max(i_price), -1) AS i_price, max(i_name) AS i_name, max(i_data) AS i_data FROM item WHERE i_id = :item \\gset\n",
            "\\if :i_price >= 0\n",
            "UPDATE stock SET s_quantity = CASE WHEN s_quantity - :q", stringify!($k),
            " >= 10 THEN s_quantity - :q", stringify!($k),
            " ELSE s_quantity - :q", stringify!($k),
            " + 91 END, s_ytd = s_ytd + :q", stringify!($k),
            ", s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + CASE WHEN :s", stringify!($k),
            "::int <> :w_id::int THEN 1 ELSE 0 END WHERE s_w_id = :s", stringify!($k),
            " AND s_i_id = :item RETURNING s_quantity, s_data \\gset\n",
            "INSERT INTO order_line VALUES (:o_id, :d_id, :w_id, ", stringify!($k),
            ", :item, :s", stringify!($k), ", NULL, :q", stringify!($k),
            ", :q", stringify!($k), " * :i_price::numeric, (SELECT CASE :d_id::int WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END FROM stock WHERE s_w_id = :s", stringify!($k),
            " AND s_i_id = :item));\n",
            "\\endif\n\\endif\n",
        )
    };
}

/// The customer of (`$w`, `$d`) chosen by last name when `y` ≤ 60 (§2.5.2.2, §2.6.2.2):
/// of the customers with the name, ordered by c_first, the one at position ⌈n/2⌉ (a
/// count, then the row at offset (n − 1) / 2); it replaces `:c_id`. The name is built
/// from its number by the server's `tpcc_last_name` (pgbench's expressions have no text).
macro_rules! customer_by_name {
    ($w:literal, $d:literal) => {
        concat!(
            "\\if :y <= 60\n",
            "SELECT count(*) AS name_count FROM customer WHERE c_w_id = ", $w, " AND c_d_id = ", $d,
            " AND c_last = tpcc_last_name(:c_last) \\gset\n",
            "SELECT c_id FROM customer WHERE c_w_id = ", $w, " AND c_d_id = ", $d,
            " AND c_last = tpcc_last_name(:c_last) ORDER BY c_first OFFSET (:name_count - 1) / 2 LIMIT 1 \\gset\n",
            "\\endif\n",
        )
    };
}

/// District `D` of a Delivery (§2.7.4.2): its oldest undelivered order taken (0 when
/// there is none, or another Delivery took it: the district is skipped), the order's
/// carrier set, its lines delivered and their amount added to the customer's balance.
macro_rules! delivery_district {
    ($d:literal) => {
        concat!(
            "WITH n AS (DELETE FROM new_order WHERE no_w_id = :w_id AND no_d_id = ", stringify!($d),
            " AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = ", stringify!($d),
            ") RETURNING no_o_id) SELECT coalesce(max(no_o_id), 0) AS no_o_id FROM n \\gset\n",
            "\\if :no_o_id > 0\n",
            "UPDATE orders SET o_carrier_id = :carrier WHERE o_w_id = :w_id AND o_d_id = ", stringify!($d),
            " AND o_id = :no_o_id RETURNING o_c_id \\gset\n",
            "WITH l AS (UPDATE order_line SET ol_delivery_d = localtimestamp WHERE ol_w_id = :w_id AND ol_d_id = ", stringify!($d),
            " AND ol_o_id = :no_o_id RETURNING ol_amount) SELECT coalesce(sum(ol_amount), 0) AS ol_total FROM l \\gset\n",
            "UPDATE customer SET c_balance = c_balance + :ol_total, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = :w_id AND c_d_id = ", stringify!($d),
            " AND c_id = :o_c_id;\n",
            "\\endif\n",
        )
    };
}

/// New-Order, Payment, Order-Status, Delivery, Stock-Level, in the order and with the
/// weights of [`crate::TPCC_SCRIPTS`].
pub const TPCC_CLIENT_SCRIPTS: [Builtin; 5] = [
    Builtin {
        name: "tpcc-client-new-order",
        desc: "<builtin: TPC-C New-Order (client)>",
        text: concat!(
            new_order_inputs!(),
            "\\set all_local case when :s1 = :w_id and :s2 = :w_id and :s3 = :w_id and :s4 = :w_id and :s5 = :w_id and (:ol_cnt < 6 or :s6 = :w_id) and (:ol_cnt < 7 or :s7 = :w_id) and (:ol_cnt < 8 or :s8 = :w_id) and (:ol_cnt < 9 or :s9 = :w_id) and (:ol_cnt < 10 or :s10 = :w_id) and (:ol_cnt < 11 or :s11 = :w_id) and (:ol_cnt < 12 or :s12 = :w_id) and (:ol_cnt < 13 or :s13 = :w_id) and (:ol_cnt < 14 or :s14 = :w_id) and (:ol_cnt < 15 or :s15 = :w_id) then 1 else 0 end\n\
BEGIN;\n\
SELECT w_tax FROM warehouse WHERE w_id = :w_id \\gset\n\
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = :w_id AND d_id = :d_id RETURNING d_tax, d_next_o_id - 1 AS o_id \\gset\n\
SELECT c_discount, c_last AS c_last_name, c_credit FROM customer WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id \\gset\n\
INSERT INTO orders VALUES (:o_id, :d_id, :w_id, :c_id, localtimestamp, NULL, :ol_cnt, :all_local);\n\
INSERT INTO new_order VALUES (:o_id, :d_id, :w_id);\n\
SELECT s_i_id FROM stock WHERE (s_w_id, s_i_id) IN (SELECT * FROM unnest((ARRAY[:s1, :s2, :s3, :s4, :s5, :s6, :s7, :s8, :s9, :s10, :s11, :s12, :s13, :s14, :s15]::int[])[1:(:ol_cnt)], (ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10, :i11, :i12, :i13, :i14, :i15]::int[])[1:(:ol_cnt)])) ORDER BY s_w_id, s_i_id FOR UPDATE;\n",
            client_line!(1),
            client_line!(2),
            client_line!(3),
            client_line!(4),
            client_line!(5),
            client_line!(6),
            client_line!(7),
            client_line!(8),
            client_line!(9),
            client_line!(10),
            client_line!(11),
            client_line!(12),
            client_line!(13),
            client_line!(14),
            client_line!(15),
            "\\if :i_price < 0\n\
ROLLBACK;\n\
\\else\n",
            new_order_commit!(),
            "\\endif\n"
        ),
    },
    Builtin {
        name: "tpcc-client-payment",
        desc: "<builtin: TPC-C Payment (client)>",
        text: concat!(
            payment_inputs!(),
            "BEGIN;\n\
UPDATE warehouse SET w_ytd = w_ytd + :cents::numeric / 100 WHERE w_id = :w_id RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip \\gset\n\
UPDATE district SET d_ytd = d_ytd + :cents::numeric / 100 WHERE d_w_id = :w_id AND d_id = :d_id RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip \\gset\n",
            customer_by_name!(":c_w_id", ":c_d_id"),
            "SELECT c_first, c_middle, c_last AS c_last_name, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id AND c_id = :c_id FOR UPDATE \\gset\n\
UPDATE customer SET c_balance = c_balance - :cents::numeric / 100, c_ytd_payment = c_ytd_payment + :cents::numeric / 100, c_payment_cnt = c_payment_cnt + 1, c_data = CASE WHEN c_credit = 'BC' THEN left(format('%s %s %s %s %s %s | ', c_id, c_d_id, c_w_id, :d_id::int, :w_id::int, :cents::numeric / 100) || c_data, 500) ELSE c_data END WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id AND c_id = :c_id;\n\
INSERT INTO history VALUES (:c_id, :c_d_id, :c_w_id, :d_id, :w_id, localtimestamp, :cents::numeric / 100, (SELECT w_name FROM warehouse WHERE w_id = :w_id) || '    ' || (SELECT d_name FROM district WHERE d_w_id = :w_id AND d_id = :d_id));\n\
END;\n"
        ),
    },
    Builtin {
        name: "tpcc-client-order-status",
        desc: "<builtin: TPC-C Order-Status (client)>",
        text: concat!(
            order_status_inputs!(),
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;\n",
            customer_by_name!(":w_id", ":d_id"),
            "SELECT c_balance, c_first, c_middle, c_last AS c_last_name FROM customer WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id \\gset\n\
SELECT o_id, o_entry_d, coalesce(o_carrier_id, 0) AS o_carrier_id FROM orders WHERE o_w_id = :w_id AND o_d_id = :d_id AND o_c_id = :c_id ORDER BY o_id DESC LIMIT 1 \\gset\n\
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = :w_id AND ol_d_id = :d_id AND ol_o_id = :o_id;\n\
END;\n"
        ),
    },
    Builtin {
        name: "tpcc-client-delivery",
        desc: "<builtin: TPC-C Delivery (client)>",
        text: concat!(
            delivery_inputs!(),
            "BEGIN;\n",
            delivery_district!(1),
            delivery_district!(2),
            delivery_district!(3),
            delivery_district!(4),
            delivery_district!(5),
            delivery_district!(6),
            delivery_district!(7),
            delivery_district!(8),
            delivery_district!(9),
            delivery_district!(10),
            "END;\n"
        ),
    },
    Builtin {
        name: "tpcc-client-stock-level",
        desc: "<builtin: TPC-C Stock-Level (client)>",
        text: concat!(
            stock_level_inputs!(),
            "SELECT d_next_o_id FROM district WHERE d_w_id = :w_id AND d_id = :d_id \\gset\n\
SELECT count(DISTINCT s_i_id) AS low_stock FROM order_line, stock WHERE ol_w_id = :w_id AND ol_d_id = :d_id AND ol_o_id < :d_next_o_id AND ol_o_id >= :d_next_o_id - 20 AND s_w_id = :w_id AND s_i_id = ol_i_id AND s_quantity < :threshold \\gset\n"
        ),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TPCC_SCRIPTS, TPCC_WEIGHTS};

    /// The `\set` lines of `text` (the input draws) before its first other line.
    fn leading_sets(text: &str) -> Vec<&str> {
        text.lines()
            .take_while(|l| l.starts_with("\\set "))
            .collect()
    }

    /// Each client script loads, and draws exactly the procedures script's inputs: the
    /// same `\set` lines first, then no other `random(` (so the same generator draws, and
    /// a `--random-seed` gives the same inputs in both modes).
    #[test]
    fn client_scripts_load_and_draw_what_the_procedures_draw() {
        for ((client, procedures), weight) in TPCC_CLIENT_SCRIPTS
            .iter()
            .zip(&TPCC_SCRIPTS)
            .zip(TPCC_WEIGHTS)
        {
            client
                .load(weight)
                .unwrap_or_else(|e| panic!("{}: {e}", client.name));
            let draws = leading_sets(procedures.text);
            assert!(!draws.is_empty(), "{}", procedures.name);
            let lines: Vec<&str> = client.text.lines().collect();
            assert_eq!(lines[..draws.len()], draws[..], "{}", client.name);
            let rest = lines[draws.len()..].join("\n");
            assert!(!rest.contains("random("), "{}: {rest}", client.name);
            assert!(!rest.contains("tpcc_new_order"), "{}", client.name);
            assert_eq!(
                client.name.replace("tpcc-client-", "tpcc-"),
                procedures.name
            );
        }
        assert_eq!(
            crate::builtin_by_name("tpcc-client-delivery"),
            Some(&TPCC_CLIENT_SCRIPTS[3])
        );
        // `--show-script` shows them by their exact names (pgbench's builtins by prefix).
        let shown = crate::show_any_script_text("tpcc-client-new-order").unwrap();
        assert_eq!(
            shown,
            format!(
                "-- tpcc-client-new-order: <builtin: TPC-C New-Order (client)>\n{}\n",
                TPCC_CLIENT_SCRIPTS[0].text
            )
        );
        assert!(
            crate::show_any_script_text("sel")
                .unwrap()
                .starts_with("-- select-only: ")
        );
        assert!(crate::show_any_script_text("tpcc-client").is_err());
    }

    /// New-Order unrolls its fifteen lines, each an item lookup that may roll back;
    /// Delivery its ten districts; the stock rows are locked first, in key order.
    #[test]
    fn loops_are_unrolled() {
        let new_order = TPCC_CLIENT_SCRIPTS[0].text;
        for k in 1..=15 {
            assert!(new_order.contains(&format!("\\if :ol_cnt >= {k}\n")), "{k}");
        }
        assert!(!new_order.contains("\\if :ol_cnt >= 16"));
        assert_eq!(
            new_order.matches("FROM item WHERE i_id = :item").count(),
            15
        );
        assert_eq!(new_order.matches("INSERT INTO order_line").count(), 15);
        let lock = new_order.find("FOR UPDATE").unwrap();
        assert!(lock < new_order.find("UPDATE stock").unwrap());
        assert!(new_order[..lock].contains("ORDER BY s_w_id, s_i_id"));
        assert!(new_order.ends_with(concat!(
            "\\if :i_price < 0\nROLLBACK;\n\\else\n",
            "\\set new_order_commits_sent :new_order_commits_sent + 1\nEND;\n",
            "\\set new_order_commits :new_order_commits + 1\n\\endif\n"
        )));
        let delivery = TPCC_CLIENT_SCRIPTS[3].text;
        for d in 1..=10 {
            assert!(
                delivery.contains(&format!("no_d_id = {d} AND no_o_id = (SELECT")),
                "{d}"
            );
        }
        assert_eq!(delivery.matches("DELETE FROM new_order").count(), 10);
    }
}
