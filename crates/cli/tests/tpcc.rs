//! The TPC-C-like workload (`--workload tpcc`) on the shared sandbox cluster: one
//! warehouse loaded twice with the same seed (with two connections and with one),
//! the tables' cardinalities and contents, the consistency check (`pgrush check`) on a
//! fresh load and after UPDATEs that break conditions, and a short run of the five
//! transactions with `--check`, in both modes (`--tpcc-mode`), also with the spec's
//! keying and think times (`--tpcc-think`); the New-Order count check of `--check`,
//! passing, and failing on an order added behind the clients' back.

use pgrush_testkit::{self as testkit, Output};
use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The seed of both loads.
const SEED: &str = "5";

/// Runs pgrush with `args` against the shared cluster.
fn pgrush(args: &[&str]) -> Output {
    let cluster = testkit::shared();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    testkit::clear_launcher_env(&mut cmd);
    cmd.envs(cluster.env()).args(args);
    testkit::run(&mut cmd)
}

/// One value (or `|`-separated row) of `sql` in `db`.
fn query(db: &str, sql: &str) -> String {
    testkit::shared()
        .psql_db(db, sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// A digest of the generated columns of five tables (the load time is left out: it
/// is the server's clock).
fn digest(db: &str) -> String {
    query(
        db,
        "select md5(string_agg(x, ',')) from (
           (select 'c' || string_agg(concat_ws('|', c_id, c_d_id, c_first, c_last, c_street_1, c_zip, c_phone, c_credit, c_discount, c_data), ',' order by c_w_id, c_d_id, c_id) as x from customer)
           union all (select 's' || string_agg(concat_ws('|', s_i_id, s_quantity, s_dist_05, s_data), ',' order by s_w_id, s_i_id) from stock)
           union all (select 'i' || string_agg(concat_ws('|', i_id, i_im_id, i_name, i_price, i_data), ',' order by i_id) from item)
           union all (select 'o' || string_agg(concat_ws('|', o_id, o_d_id, o_c_id, o_carrier_id, o_ol_cnt), ',' order by o_w_id, o_d_id, o_id) from orders)
           union all (select 'l' || string_agg(concat_ws('|', ol_o_id, ol_number, ol_i_id, ol_amount, ol_dist_info), ',' order by ol_w_id, ol_d_id, ol_o_id, ol_number) from order_line)
         ) t",
    )
}

/// A fresh database loaded with one warehouse: its name, the load's stderr and the
/// digest taken right after the load.
fn load(tag: &str, jobs: &str) -> (String, Output, String) {
    let db = format!("tpcc_{tag}_{}", std::process::id());
    testkit::shared()
        .create_database(&db)
        .unwrap_or_else(|e| panic!("create database {db}: {e}"));
    let out = pgrush(&[
        "-i",
        "--workload",
        "tpcc",
        "-s",
        "1",
        "-j",
        jobs,
        "--random-seed",
        SEED,
        &db,
    ]);
    assert_eq!(out.code, 0, "load failed: {}", out.stderr);
    let sum = digest(&db);
    (db, out, sum)
}

/// Checks the cardinalities of the `-j 2` load in `db` (its stderr in `out`).
fn check_cardinalities(db: &str, out: &Output) {
    for step in [
        "creating tables and functions...",
        "generating data (client-side)...",
        "vacuuming...",
        "creating primary keys...",
    ] {
        assert!(out.stderr.contains(step), "{step}: {}", out.stderr);
    }
    let counts = query(
        db,
        "select concat_ws(' ', (select count(*) from warehouse), (select count(*) from district),
            (select count(*) from customer), (select count(*) from history),
            (select count(*) from orders), (select count(*) from new_order),
            (select count(*) from item), (select count(*) from stock))",
    );
    assert_eq!(counts, "1 10 30000 30000 30000 9000 100000 100000");
    // o_ol_cnt is uniform in 5..15: about 300,000 lines, within the spec's 1%.
    let lines: i64 = query(db, "select count(*) from order_line")
        .parse()
        .unwrap();
    assert!((297_000..=303_000).contains(&lines), "{lines} order lines");
    let per_order = query(
        db,
        "select count(*) from orders o where o_ol_cnt <> (select count(*) from order_line where ol_w_id = o.o_w_id and ol_d_id = o.o_d_id and ol_o_id = o.o_id)",
    );
    assert_eq!(per_order, "0");
    // Every district has all 1,000 last names, and the last 900 orders are undelivered.
    let names = query(
        db,
        "select min(n) from (select count(distinct c_last) n from customer group by c_d_id) t",
    );
    assert_eq!(names, "1000");
    let undelivered = query(
        db,
        "select count(*) from orders where (o_carrier_id is null) <> (o_id >= 2101)",
    );
    assert_eq!(undelivered, "0");
    let originals: i64 = query(
        db,
        "select count(*) from item where i_data like '%ORIGINAL%'",
    )
    .parse()
    .unwrap();
    assert!((9_000..=11_000).contains(&originals), "{originals}");
}

/// One test (one process, one cluster) so that the warehouse is loaded only twice: with
/// two connections, then with one and the same seed.
#[test]
fn load_one_warehouse_twice() {
    let (db, out, want) = load("par", "2");
    check_cardinalities(&db, &out);
    let started = std::time::Instant::now();
    let (one, _, got) = load("one", "1");
    eprintln!(
        "one-connection load of one warehouse: {:?}",
        started.elapsed()
    );
    assert_eq!(got, want, "same seed, same data");
    check_passes_then_names_a_broken_condition(&one);
    run_keeps_the_database_consistent(&db);
    client_mode_keeps_the_database_consistent(&db);
    client_mode_rolls_back_the_same_orders(&db);
    each_client_deals_the_exact_mix(&db);
    think_times_lengthen_each_transaction(&db);
    commits_lost_with_the_connection_are_unknown(&db);
    an_order_behind_the_clients_back_fails_the_count(&db);
    a_crash_mid_run_leaves_the_database_consistent(&db);
}

/// `pgrush check --workload tpcc` on `db`.
fn check(db: &str) -> Output {
    pgrush(&["check", "--workload", "tpcc", db])
}

/// Asserts that the four conditions hold in `db`.
fn assert_consistent(db: &str) {
    let out = check(db);
    assert_eq!(out.code, 0, "check failed: {}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout.matches("): ok\n").count(), 4, "{}", out.stdout);
}

/// The check passes on a fresh load, and after an UPDATE breaks a condition it names
/// the condition, warehouse and district, with exit status 1.
fn check_passes_then_names_a_broken_condition(db: &str) {
    assert_consistent(db);
    query(
        db,
        "update district set d_next_o_id = d_next_o_id + 1 where d_w_id = 1 and d_id = 3",
    );
    query(db, "update warehouse set w_ytd = w_ytd + 5");
    let out = check(db);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "condition 1 (W_YTD = sum(D_YTD)) fails for warehouse 1: w_ytd 300005.00, sum(d_ytd) 300000.00\n\
         condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)) fails for warehouse 1, district 3: d_next_o_id 3002, max(o_id) 3000, max(no_o_id) 3000\n\
         condition 3 (max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW-ORDER rows): ok\n\
         condition 4 (sum(O_OL_CNT) = number of ORDER-LINE rows): ok\n"
    );
    assert_eq!(
        out.stderr,
        "pgrush: error: the database is not consistent\n"
    );
    query(
        db,
        "delete from order_line where ol_w_id = 1 and ol_d_id = 7 and ol_o_id = 10 and ol_number = 1",
    );
    let out = check(db);
    assert!(
        out.stdout.contains("condition 4 (sum(O_OL_CNT) = number of ORDER-LINE rows) fails for warehouse 1, district 7: "),
        "{}",
        out.stdout
    );
}

/// The number after `prefix` on a line of `text`.
fn number_after(text: &str, prefix: &str) -> f64 {
    let rest = text
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in {text}"));
    let end = rest.find([' ', '/']).unwrap_or(rest.len());
    rest[..end].parse().unwrap_or_else(|_| panic!("{rest}"))
}

/// NOPM and TPM agree with the report: TPM = 60 × tps, NOPM = TPM × the New-Order
/// script's share of the transactions.
fn check_rates(stdout: &str) {
    let tps = number_after(stdout, "tps = ");
    let tpm = number_after(stdout, "transactions per minute (TPM) = ");
    let nopm = number_after(stdout, "New-Order transactions per minute (NOPM) = ");
    let total = number_after(stdout, "number of transactions actually processed: ");
    let new_orders = number_after(stdout, " - number of transactions actually processed: ");
    assert!((tpm - 60.0 * tps).abs() < 0.1, "{tpm} vs {tps}");
    assert!(
        (nopm - tpm * new_orders / total).abs() < 0.2,
        "{nopm} {tpm} {new_orders}"
    );
    assert!(nopm > 0.0);
}

/// A short run of the five transactions on `db` in `mode` (4 clients on its one
/// warehouse), with `--check` after it: per-transaction results, no failure, the four
/// conditions hold, NOPM and TPM agree with the report.
fn short_checked_run(db: &str, mode: &str) -> Output {
    let before = next_order_ids(testkit::shared(), db);
    let out = pgrush(&[
        "--workload",
        "tpcc",
        "--tpcc-mode",
        mode,
        "-c",
        "4",
        "-j",
        "2",
        "-t",
        "50",
        "--random-seed",
        "3",
        "--check",
        db,
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let suffix = if mode == "client" { " (client)" } else { "" };
    for (n, name) in [
        "New-Order",
        "Payment",
        "Order-Status",
        "Delivery",
        "Stock-Level",
    ]
    .iter()
    .enumerate()
    {
        let line = format!("SQL script {}: <builtin: TPC-C {name}{suffix}>\n", n + 1);
        assert!(out.stdout.contains(&line), "{line}: {}", out.stdout);
    }
    assert_all_done_and_checked(&out.stdout, 200);
    check_rates(&out.stdout);
    // The New-Order script's processed count also holds the ~1% rolled back.
    let (added, processed) = assert_counted(db, before, &out.stdout);
    assert!(
        added > 0 && added as f64 <= processed,
        "{added} {processed}"
    );
    out
}

/// Asserts that the New-Order count line of `stdout` holds: the orders the districts
/// of `db` added since `before` are the New-Orders the clients saw commit. Returns
/// them, and the New-Order script's processed count.
fn assert_counted(db: &str, before: i64, stdout: &str) -> (i64, f64) {
    let added = next_order_ids(testkit::shared(), db) - before;
    assert_eq!(
        new_order_count(stdout),
        (true, added, added, added),
        "{stdout}"
    );
    let processed = number_after(stdout, " - number of transactions actually processed: ");
    (added, processed)
}

/// The New-Order count line of a `--check` run's output: whether it holds, the orders
/// added, and the least and most New-Orders the clients committed (the same number
/// unless some commits' outcome is unknown).
fn new_order_count(stdout: &str) -> (bool, i64, i64, i64) {
    const START: &str =
        "New-Order count (growth of sum(D_NEXT_O_ID) = New-Orders committed by the clients)";
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(START))
        .unwrap_or_else(|| panic!("no New-Order count line in {stdout}"));
    let (ok, figures) = match line.strip_prefix(": ok, ") {
        Some(rest) => (true, rest),
        None => (false, line.split_once(": ").map_or("", |(_, rest)| rest)),
    };
    let (added, rest) = figures
        .split_once(" orders added, ")
        .unwrap_or_else(|| panic!("{line}"));
    let (committed, _) = rest
        .split_once(" committed by the clients")
        .unwrap_or_else(|| panic!("{line}"));
    let number = |n: &str| -> i64 { n.parse().unwrap_or_else(|_| panic!("{n} in {line}")) };
    let (least, most) = committed
        .split_once(" to ")
        .unwrap_or((committed, committed));
    (ok, number(added), number(least), number(most))
}

/// New-Orders whose COMMIT loses the connection under `--reconnect` (a deferred
/// trigger ends the session at the commit of every order of district 3, which is then
/// not committed): the clients cannot know their outcome, so the count check passes
/// with the range it cannot decide, and says how many New-Orders were unknown.
fn commits_lost_with_the_connection_are_unknown(db: &str) {
    query(
        db,
        "create function end_session_at_commit() returns trigger language plpgsql as $$ \
         begin perform pg_terminate_backend(pg_backend_pid()); return null; end $$; \
         create constraint trigger end_session_at_commit after insert on new_order \
         deferrable initially deferred for each row when (new.no_d_id = 3) \
         execute function end_session_at_commit()",
    );
    let before = next_order_ids(testkit::shared(), db);
    let out = pgrush(&[
        "--workload",
        "tpcc",
        "--reconnect",
        "-c",
        "2",
        "-t",
        "40",
        "--random-seed",
        "3",
        "--check",
        db,
    ]);
    query(
        db,
        "drop trigger end_session_at_commit on new_order; drop function end_session_at_commit()",
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // Every New-Order of district 3 lost its connection at COMMIT, and none of them
    // committed: the orders added are those the clients saw commit, and the range
    // reaches as far as the New-Orders ended by a lost connection.
    let lost = number_after(&out.stdout, " - number of connection failures: ") as i64;
    assert!(lost > 0, "{}", out.stdout);
    let added = next_order_ids(testkit::shared(), db) - before;
    assert_eq!(
        new_order_count(&out.stdout),
        (true, added, added, added + lost),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "committed by the clients ({lost} New-Orders of unknown outcome: the connection was lost before the COMMIT's result)\n"
        )),
        "{}",
        out.stdout
    );
}

/// An order added behind the clients' back (a New-Order of another program, on the
/// home warehouse's district 3, with its order and new-order rows so that the four
/// conditions still hold) while a `--check` run goes on: the count check fails and
/// names both numbers, exit status 1.
fn an_order_behind_the_clients_back_fails_the_count(db: &str) {
    let cluster = testkit::shared();
    let before = next_order_ids(cluster, db);
    // Once a New-Order of the run committed, its districts were read.
    let child = spawn_until_orders(
        db,
        &["--workload", "tpcc", "-c", "2", "-T", "2", "--check", db],
        Stdio::piped(),
        1,
    );
    query(
        db,
        "with d as (update district set d_next_o_id = d_next_o_id + 1 where d_w_id = 1 and d_id = 3 returning d_next_o_id - 1 as o_id),          o as (insert into orders select o_id, 3, 1, 1, localtimestamp, null, 0, 1 from d returning o_id)          insert into new_order select o_id, 3, 1 from o",
    );
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(stderr, "pgrush: error: the database is not consistent\n");
    assert_eq!(stdout.matches("): ok\n").count(), 4, "{stdout}");
    let added = next_order_ids(cluster, db) - before;
    assert_eq!(
        new_order_count(&stdout),
        (false, added, added - 1, added - 1),
        "{stdout}"
    );
    assert!(
        stdout.contains(") fails for warehouses 1 to 1: "),
        "{stdout}"
    );
}

/// The report in `stdout` processed `n` transactions out of `n`, none failed, and the
/// four consistency conditions hold after the run.
fn assert_all_done_and_checked(stdout: &str, n: u32) {
    let processed = format!("number of transactions actually processed: {n}/{n}\n");
    assert!(
        stdout.contains(&processed)
            && stdout.contains("number of failed transactions: 0 (0.000%)\n"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("): ok\n").count(), 4, "{stdout}");
}

/// The procedures mode's short run (the default mode: `--tpcc-mode procedures` is
/// what a run without it does), then new orders and payments are in the tables.
fn run_keeps_the_database_consistent(db: &str) {
    let out = short_checked_run(db, "procedures");
    assert!(out.stdout.contains("scaling factor: 1\n"));
    let grown = query(
        db,
        "select (select count(*) from orders) > 30000 and (select count(*) from history) > 30000",
    );
    assert_eq!(grown, "t");
    // Parameters sent apart from the statements (their type unknown to the server).
    let out = pgrush(&[
        "--workload",
        "tpcc",
        "-M",
        "prepared",
        "-c",
        "2",
        "-t",
        "25",
        db,
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("number of failed transactions: 0 (0.000%)\n")
    );
    assert_consistent(db);
    // Without the tables: pgbench's message and hint, with the workload's -i.
    let out = pgrush(&["--workload", "tpcc", "-t", "1", "postgres"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "pgrush: error: could not count number of warehouses: ERROR:  relation \"warehouse\" does not exist"
        ) && out.stderr.contains(
            "pgrush: hint: Perhaps you need to do initialization (\"pgrush -i --workload tpcc\") in database \"postgres\"."
        ),
        "{}",
        out.stderr
    );
}

/// The weights of the mix, in script order (New-Order, Payment, Order-Status, Delivery,
/// Stock-Level).
const MIX: [u64; 5] = [45, 43, 4, 4, 4];

/// Per client, the number of transactions of each script in the `-l` logs under `dir`.
fn mix_per_client(dir: &std::path::Path) -> BTreeMap<u64, [u64; 5]> {
    let mut mix = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            let fields: Vec<u64> = line
                .split(' ')
                .take(4)
                .map(|f| f.parse().unwrap_or_else(|_| panic!("{line}")))
                .collect();
            let counts: &mut [u64; 5] = mix.entry(fields[0]).or_default();
            counts[fields[3] as usize] += 1;
        }
    }
    mix
}

/// Each client deals its transactions from its own deck of 100 cards (45/43/4/4/4), so
/// after 400 transactions its mix is exact (a draw with replacement would be off by
/// several transactions); the clients' New-Orders, minus the 1% rolled back at an
/// unused item, are the New-Orders the server's districts committed; `--assert` reads
/// NOPM and TPM.
fn each_client_deals_the_exact_mix(db: &str) {
    let logs = tempfile::tempdir().unwrap();
    let prefix = logs.path().join("tpcc_log");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let html = dir.path().join("run.html");
    let out = pgrush(&[
        "--workload",
        "tpcc",
        "-c",
        "5",
        "-j",
        "2",
        "-t",
        "400",
        "--random-seed",
        "11",
        "-l",
        &format!("--log-prefix={}", prefix.display()),
        &format!("--json={}", json.display()),
        &format!("--html={}", html.display()),
        "-P",
        "1",
        "--assert",
        "nopm>=1",
        "--assert",
        "tpm>1000000000",
        db,
    ]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    for line in [
        "assertion passed: nopm >= 1 (measured ",
        "assertion FAILED: tpm > 1000000000 (measured ",
    ] {
        assert!(out.stdout.contains(line), "{line}: {}", out.stdout);
    }
    let mix = mix_per_client(logs.path());
    assert_eq!(mix.len(), 5, "{mix:?}");
    for (client, counts) in &mix {
        assert_eq!(*counts, MIX.map(|w| w * 4), "client {client}");
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../schema/pgrush-run.v1.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    if let Some(e) = validator.iter_errors(&doc).next() {
        panic!("not valid: {e} at {}", e.instance_path());
    }
    let tpcc = &doc["tpcc"];
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<tr><th>NOPM (server, d_next_o_id)</th>"),
        "{page}"
    );
    let new_orders = tpcc["new_orders"].as_u64().unwrap();
    assert_eq!(new_orders, 5 * 4 * 45, "{tpcc}");
    let committed = tpcc["server"]["new_orders_committed"].as_u64().unwrap();
    let rolled_back = new_orders - committed;
    let share = 100.0 * rolled_back as f64 / new_orders as f64;
    assert!(
        (share - 1.0).abs() <= 0.5,
        "{rolled_back} of {new_orders} rolled back"
    );
    assert!(
        out.stdout.contains(&format!(
            "(server NOPM) = {:.1} ({committed} in ",
            tpcc["server"]["nopm"].as_f64().unwrap()
        )),
        "{}",
        out.stdout
    );
    assert!(tpcc["server"]["transactions"].as_u64().unwrap() >= 5 * 400);
    // Per type and per -P interval: transactions and latency percentiles.
    let mut per_type = [0u64; 5];
    for interval in doc["time_series"]["intervals"].as_array().unwrap() {
        for entry in interval["scripts"].as_array().unwrap() {
            let ended = entry["transactions"]["processed"].as_u64().unwrap();
            per_type[entry["script"].as_u64().unwrap() as usize] += ended;
            let percentiles = entry["latency_percentiles"].as_array().unwrap();
            assert!(ended == 0 || !percentiles.is_empty(), "{entry}");
        }
    }
    assert_eq!(per_type, MIX.map(|w| w * 4 * 5), "{}", doc["time_series"]);
}

/// The five transactions sent as statements (`--tpcc-mode client`): the report names
/// them, no transaction fails and the consistency check passes after the run, also with
/// parameters sent apart from the statements (`-M prepared`), and after a `--warmup`,
/// whose New-Orders the count check counts on both sides (the districts are read before
/// it).
fn client_mode_keeps_the_database_consistent(db: &str) {
    short_checked_run(db, "client");
    let before = next_order_ids(testkit::shared(), db);
    let out = pgrush(&[
        "--workload",
        "tpcc",
        "--tpcc-mode=client",
        "-M",
        "prepared",
        "-c",
        "2",
        "-t",
        "25",
        "--warmup=1",
        "--check",
        db,
    ]);
    let (added, measured) = assert_counted(db, before, &out.stdout);
    assert!(added as f64 > measured, "{added} {measured}");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("number of failed transactions: 0 (0.000%)\n"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("): ok\n").count(), 4, "{}", out.stdout);
}

/// New-Orders run by 5 clients, 100 transactions each, with `--random-seed 11` in
/// `mode`: (processed, rolled back: processed minus those the districts committed).
fn new_orders_rolled_back(db: &str, mode: &str) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = pgrush(&[
        "--workload",
        "tpcc",
        "--tpcc-mode",
        mode,
        "-c",
        "5",
        "-j",
        "2",
        "-t",
        "100",
        "--random-seed",
        "11",
        &format!("--json={}", json.display()),
        db,
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("number of failed transactions: 0 (0.000%)\n"),
        "{}",
        out.stdout
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let tpcc = &doc["tpcc"];
    let new_orders = tpcc["new_orders"].as_u64().unwrap();
    let committed = tpcc["server"]["new_orders_committed"].as_u64().unwrap();
    (new_orders, new_orders - committed)
}

/// The client mode draws the procedures mode's inputs: with the same seed and clients
/// it runs as many New-Orders and rolls back exactly as many (those whose last item is
/// the unused one: about 1%, a share the procedures mode's run of 900 New-Orders
/// checks), each by a ROLLBACK after the item lookup found nothing: no order of them
/// is left, and no line with the unused item.
fn client_mode_rolls_back_the_same_orders(db: &str) {
    let procedures = new_orders_rolled_back(db, "procedures");
    let client = new_orders_rolled_back(db, "client");
    assert_eq!(client, procedures);
    let (new_orders, rolled_back) = client;
    assert_eq!(new_orders, 5 * 45, "a pass of each client's deck");
    assert!(rolled_back > 0, "{client:?}");
    let share = 100.0 * rolled_back as f64 / new_orders as f64;
    assert!((share - 1.0).abs() <= 1.0, "{client:?}");
    let unused = query(db, "select count(*) from order_line where ol_i_id > 100000");
    assert_eq!(unused, "0");
    assert_consistent(db);
}

/// The sum of the districts' next order ids of `db`.
fn next_order_ids(cluster: &pgrush_cluster::Cluster, db: &str) -> i64 {
    let sum = cluster
        .psql_db(db, "select sum(d_next_o_id) from district")
        .unwrap();
    sum.parse().unwrap()
}

/// Starts pgrush with `args` (its stdout to `stdout`, its stderr piped) and returns
/// once the districts of `db` took `orders` more order ids than when it started (at
/// most 30 s).
fn spawn_until_orders(db: &str, args: &[&str], stdout: Stdio, orders: i64) -> Child {
    let cluster = testkit::shared();
    let before = next_order_ids(cluster, db);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    testkit::clear_launcher_env(&mut cmd);
    cmd.envs(cluster.env())
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    while next_order_ids(cluster, db) < before + orders {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no New-Order committed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// A run whose server is killed (SIGKILL of the postmaster) once New-Orders commit ends
/// with its clients aborted; after crash recovery the four conditions hold.
fn a_crash_mid_run_leaves_the_database_consistent(db: &str) {
    let cluster = testkit::shared();
    let before = next_order_ids(cluster, db);
    let child = spawn_until_orders(
        db,
        &["--workload", "tpcc", "-c", "4", "-T", "60", db],
        Stdio::null(),
        20,
    );
    cluster.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("aborted"), "{stderr}");
    cluster.start_server().unwrap();
    assert!(next_order_ids(cluster, db) > before);
    assert_consistent(db);
}

/// The spec's keying times and mean think times in seconds (§5.2.5.2, §5.2.5.7), in
/// script order.
const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
const THINK_MEAN_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

/// Per script, (transactions, latency average in ms) from the report's script blocks
/// (0, 0 for a script that ran none).
fn per_script(stdout: &str) -> Vec<(f64, f64)> {
    stdout
        .split("SQL script ")
        .skip(1)
        .map(|block| {
            if block.contains("\n - 0 transactions (") {
                return (0.0, 0.0);
            }
            let count = number_after(block, " - number of transactions actually processed: ");
            let latency = number_after(block, " - latency average = ");
            (count, latency)
        })
        .collect()
}

/// A run of 2 clients × 20 transactions with `--random-seed 3` on `db`, `extra` added:
/// it passes `--check`; its report's latency average (ms) and per-script blocks.
fn short_run_latency(db: &str, extra: &[&str]) -> (f64, Vec<(f64, f64)>) {
    let fixed = [
        "--workload=tpcc",
        "-c2",
        "-t20",
        "--random-seed=3",
        "--check",
    ];
    let out = pgrush(&[&fixed[..], extra, &[db]].concat());
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_all_done_and_checked(&out.stdout, 40);
    let blocks = per_script(&out.stdout);
    assert_eq!(blocks.len(), 5, "{}", out.stdout);
    (number_after(&out.stdout, "latency average = "), blocks)
}

/// `--tpcc-think=0.005`: every transaction sleeps its keying time before and its think
/// time after, both scaled to 1/200 of the spec's, and the report's latencies include
/// them: each script's average is at least its scaled keying time, and the run's
/// average at least the mix's scaled keying plus mean think time (the draws are the
/// same for every run with this seed). The same run without the option (the same
/// transactions) is faster by most of that: its average is below the first's less
/// half the sleeps (the server's time would have to differ by 50 ms a transaction
/// between two runs of 40 for this to fail; an absolute bound would depend on the
/// machine).
fn think_times_lengthen_each_transaction(db: &str) {
    const SCALE: f64 = 0.005;
    let expected_ms = |blocks: &[(f64, f64)]| {
        let total: f64 = blocks.iter().map(|b| b.0).sum();
        blocks
            .iter()
            .enumerate()
            .map(|(i, b)| b.0 * (KEYING_S[i] + THINK_MEAN_S[i]) * SCALE * 1000.0)
            .sum::<f64>()
            / total
    };
    let (average, blocks) = short_run_latency(db, &["--tpcc-think=0.005"]);
    for (i, (count, latency)) in blocks.iter().enumerate() {
        assert!(
            *count == 0.0 || *latency >= KEYING_S[i] * SCALE * 1000.0,
            "script {i}: {latency} ms"
        );
    }
    let bound = expected_ms(&blocks);
    eprintln!(
        "--tpcc-think=0.005: latency average {average} ms, keying + mean think {bound:.3} ms"
    );
    assert!(average >= bound, "{average} ms < {bound} ms");
    let (plain, _) = short_run_latency(db, &[]);
    eprintln!("no --tpcc-think: latency average {plain} ms");
    assert!(
        plain < average - bound / 2.0,
        "{plain} ms without against {average} ms with sleeps of {bound:.3} ms"
    );
}
