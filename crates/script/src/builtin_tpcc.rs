//! The TPC-C-like workload's five transactions (`--workload tpcc`): each script draws
//! its inputs with pgbench's generator (NURand with the run's C constants, taken from
//! `:random_seed`) and calls the transaction's function, created by
//! `pgrush -i --workload tpcc`. Every client works for its home warehouse
//! `:w_first + :client_id % :w_count`, in the range of warehouses of its run (`:w_first`
//! and `:w_count`, set by the run: all `:scale` warehouses, or a shard's own range;
//! `:scale` is the number of warehouses). These scripts are not in pgbench's `-b` list:
//! `--workload tpcc` selects them.

use crate::builtin::Builtin;

/// The client's home warehouse, in its run's range of `:w_count` warehouses from
/// `:w_first` (`1` and `:scale` for a run of its own: `:client_id % :scale + 1`).
macro_rules! home {
    () => {
        "\\set w_id :w_first + :client_id % :w_count\n"
    };
}

/// The home warehouse, a district, and a customer by NURand(1023, 1, 3000) with the
/// run's C (from `:random_seed`).
macro_rules! home_and_customer {
    () => {
        concat!(
            home!(),
            "\\set d_id random(1, 10)\n\
\\set c_id ((random(0, 1023) | random(1, 3000)) + abs(:random_seed / 8192 % 1024)) % 3000 + 1\n"
        )
    };
}

/// A last name's number by NURand(255, 0, 999) with the run's C_LAST constant: 157 (the
/// load's) minus a difference in 65..=119 other than 96 and 112 (§2.1.6.1), chosen by
/// `:random_seed`.
macro_rules! c_last {
    () => {
        "\\set k abs(:random_seed % 53)\n\
\\set delta 65 + :k + case when 65 + :k >= 96 then 1 else 0 end\n\
\\set delta :delta + case when :delta >= 112 then 1 else 0 end\n\
\\set c_last ((random(0, 255) | random(0, 999)) + 157 - :delta) % 1000\n"
    };
}

/// Order line `n` of a New-Order: an item by NURand(8191, 1, 100000) with the run's C,
/// its supplying warehouse (another one for 1% of the lines, when there is one) and a
/// quantity.
macro_rules! order_line {
    ($n:literal) => {
        concat!(
            "\\set i", stringify!($n),
            " ((random(0, 8191) | random(1, 100000)) + abs(:random_seed % 8192)) % 100000 + 1\n",
            "\\set s", stringify!($n),
            " case when random(1, 100) = 1 then (:w_id + random(1, greatest(:scale - 1, 1)) - 1) % :scale + 1 else :w_id end\n",
            "\\set q", stringify!($n), " random(1, 10)\n",
        )
    };
}

/// New-Order's inputs (§2.4.1): district, customer, 5–15 lines, `rbk` (at 1 the last
/// line's item is the unused id 100001) and fifteen lines drawn (`i`, `s`, `q` 1–15;
/// those beyond `ol_cnt` unused). Both modes draw their inputs with the same lines, so
/// a `--random-seed` gives the same inputs in either.
macro_rules! new_order_inputs {
    () => {
        concat!(
            home_and_customer!(),
            "\\set ol_cnt random(5, 15)\n\\set rbk random(1, 100)\n",
            order_line!(1),
            order_line!(2),
            order_line!(3),
            order_line!(4),
            order_line!(5),
            order_line!(6),
            order_line!(7),
            order_line!(8),
            order_line!(9),
            order_line!(10),
            order_line!(11),
            order_line!(12),
            order_line!(13),
            order_line!(14),
            order_line!(15),
        )
    };
}

/// Payment's inputs (§2.5.1): district; the customer's warehouse and district (15%
/// remote); the customer by id and by last name, `y` (by name when at most 60); the
/// amount in cents.
macro_rules! payment_inputs {
    () => {
        concat!(
            home!(),
            "\\set d_id random(1, 10)\n\
\\set x random(1, 100)\n\
\\set c_d_id case when :x <= 85 then :d_id else random(1, 10) end\n\
\\set c_w_id case when :x <= 85 then :w_id else (:w_id + random(1, greatest(:scale - 1, 1)) - 1) % :scale + 1 end\n\
\\set c_id ((random(0, 1023) | random(1, 3000)) + abs(:random_seed / 8192 % 1024)) % 3000 + 1\n\
",
            c_last!(),
            "\\set y random(1, 100)\n\\set cents random(100, 500000)\n"
        )
    };
}

/// Order-Status's inputs (§2.6.1): district, the customer by id and by last name, `y`.
macro_rules! order_status_inputs {
    () => {
        concat!(home_and_customer!(), c_last!(), "\\set y random(1, 100)\n")
    };
}

/// Delivery's inputs (§2.7.1): the carrier.
macro_rules! delivery_inputs {
    () => {
        concat!(home!(), "\\set carrier random(1, 10)\n")
    };
}

/// Stock-Level's inputs (§2.8.1): the client's fixed district and a threshold.
macro_rules! stock_level_inputs {
    () => {
        concat!(
            home!(),
            "\\set d_id :client_id / :w_count % 10 + 1\n\\set threshold random(10, 20)\n"
        )
    };
}

/// The client variable counting the New-Orders whose COMMIT the client sent (or was
/// about to send): one more before each New-Order's `END`. Set to 0 by the run.
pub const NEW_ORDER_COMMITS_SENT: &str = "new_order_commits_sent";
/// The client variable counting the New-Orders whose COMMIT the server acknowledged:
/// one more after each New-Order's `END` succeeded. Set to 0 by the run. What a run ends
/// with in [`NEW_ORDER_COMMITS_SENT`] beyond this one are commits whose outcome the
/// client did not see (the connection was lost, or the COMMIT failed and was retried).
pub const NEW_ORDER_COMMITS: &str = "new_order_commits";

/// The end of a New-Order that commits: its COMMIT counted as sent, sent, and counted
/// as acknowledged ([`NEW_ORDER_COMMITS_SENT`], [`NEW_ORDER_COMMITS`]).
macro_rules! new_order_commit {
    () => {
        "\\set new_order_commits_sent :new_order_commits_sent + 1\nEND;\n\\set new_order_commits :new_order_commits + 1\n"
    };
}

// The input macros expand to the helpers above: a user imports both.
pub(crate) use {
    c_last, delivery_inputs, home, home_and_customer, new_order_commit, new_order_inputs,
    order_line, order_status_inputs, payment_inputs, stock_level_inputs,
};

/// The weights of the mix (§5.2.3 minimums; New-Order the rest), in [`TPCC_SCRIPTS`]' order.
pub const TPCC_WEIGHTS: [u32; 5] = [45, 43, 4, 4, 4];

/// New-Order, Payment, Order-Status, Delivery, Stock-Level.
pub const TPCC_SCRIPTS: [Builtin; 5] = [
    Builtin {
        name: "tpcc-new-order",
        desc: "<builtin: TPC-C New-Order>",
        text: concat!(
            new_order_inputs!(),
            "BEGIN;\n\
SELECT tpcc_new_order(:w_id, :d_id, :c_id, :ol_cnt, :rbk, ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10, :i11, :i12, :i13, :i14, :i15]::int[], ARRAY[:s1, :s2, :s3, :s4, :s5, :s6, :s7, :s8, :s9, :s10, :s11, :s12, :s13, :s14, :s15]::int[], ARRAY[:q1, :q2, :q3, :q4, :q5, :q6, :q7, :q8, :q9, :q10, :q11, :q12, :q13, :q14, :q15]::int[]) AS committed \\gset\n\
\\if :committed\n",
            new_order_commit!(),
            "\\else\n\
ROLLBACK;\n\
\\endif\n"
        ),
    },
    Builtin {
        name: "tpcc-payment",
        desc: "<builtin: TPC-C Payment>",
        text: concat!(
            payment_inputs!(),
            "SELECT tpcc_payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :c_last, :y <= 60, :cents);\n"
        ),
    },
    Builtin {
        name: "tpcc-order-status",
        desc: "<builtin: TPC-C Order-Status>",
        text: concat!(
            order_status_inputs!(),
            "SELECT tpcc_order_status(:w_id, :d_id, :c_id, :c_last, :y <= 60);\n"
        ),
    },
    Builtin {
        name: "tpcc-delivery",
        desc: "<builtin: TPC-C Delivery>",
        text: concat!(
            delivery_inputs!(),
            "SELECT tpcc_delivery(:w_id, :carrier);\n"
        ),
    },
    Builtin {
        name: "tpcc-stock-level",
        desc: "<builtin: TPC-C Stock-Level>",
        text: concat!(
            stock_level_inputs!(),
            "SELECT tpcc_stock_level(:w_id, :d_id, :threshold);\n"
        ),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_loads_and_calls_its_function() {
        for (b, weight) in TPCC_SCRIPTS.iter().zip(TPCC_WEIGHTS) {
            let script = b.load(weight).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert_eq!(script.weight, weight);
            let function = b.name.replace('-', "_");
            assert!(
                b.text.contains(&format!("SELECT {function}(")),
                "{}",
                b.name
            );
        }
        assert_eq!(TPCC_WEIGHTS.iter().sum::<u32>(), 100);
        let new_order = TPCC_SCRIPTS[0].text;
        assert!(
            new_order.contains("\\set q14 random(1, 10)\n\\set i15 "),
            "{new_order}"
        );
        assert!(!new_order.contains("\\set q16"));
    }

    /// Both modes' New-Order count the COMMIT sent just before it, and the COMMIT
    /// acknowledged just after it; the ROLLBACK is counted by neither.
    #[test]
    fn new_order_counts_its_commits_around_the_end() {
        let around = format!(
            "\\set {NEW_ORDER_COMMITS_SENT} :{NEW_ORDER_COMMITS_SENT} + 1\nEND;\n\\set {NEW_ORDER_COMMITS} :{NEW_ORDER_COMMITS} + 1\n"
        );
        for text in [TPCC_SCRIPTS[0].text, crate::TPCC_CLIENT_SCRIPTS[0].text] {
            assert_eq!(text.matches(&around).count(), 1, "{text}");
            assert_eq!(text.matches("END;").count(), 1, "{text}");
            assert_eq!(text.matches(NEW_ORDER_COMMITS_SENT).count(), 2, "{text}");
        }
    }

    /// New-Order's `rbk` (its unused item id when 1, so a rollback): over 20,000 draws
    /// of the script's own expression, 1% ± 0.5 point of the orders.
    #[test]
    fn one_new_order_in_a_hundred_rolls_back() {
        use crate::{CommandKind, EvalContext, Prng, Value, Variables};
        let script = TPCC_SCRIPTS[0].load(1).unwrap();
        let rbk = script
            .commands
            .iter()
            .find_map(|c| match &c.kind {
                CommandKind::Set { var, expr, .. } if &*var.name == b"rbk" => Some(expr),
                _ => None,
            })
            .expect("\\set rbk");
        let vars = Variables::new();
        let mut rng = Prng::from_seed(2);
        let mut debug_out = Vec::new();
        let draws = 20_000;
        let rollbacks = (0..draws)
            .filter(|_| {
                let mut ctx = EvalContext {
                    vars: &vars,
                    rng: &mut rng,
                    script: 0,
                    command: 0,
                    debug_out: &mut debug_out,
                };
                rbk.eval(&mut ctx).unwrap() == Value::Int(1)
            })
            .count();
        let share = 100.0 * rollbacks as f64 / f64::from(draws);
        assert!((share - 1.0).abs() <= 0.5, "{rollbacks} of {draws}");
        assert!(rollbacks > 0);
    }
}
