//! The TPC-C-like workload at more than one scale, on the shared sandbox cluster: a sweep
//! over the number of warehouses (`--vary warehouses=1,2`: the tables loaded again per
//! cell, NOPM and TPM per cell), then on two warehouses two shards that take one home
//! warehouse each and merge into one result with NOPM and TPM (and `--assert nopm` on
//! it), a run of its own whose clients keep `:client_id % :scale + 1`, and more shards
//! than warehouses refused.

use pgrush_testkit::{self as testkit, Output};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command};

/// pgrush with `args` against the shared cluster, without launcher variables.
fn command(args: &[&str]) -> Command {
    let cluster = testkit::shared();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    testkit::clear_launcher_env(&mut cmd);
    cmd.envs(cluster.env()).args(args);
    cmd
}

fn pgrush(args: &[&str]) -> Output {
    testkit::run(&mut command(args))
}

fn spawn(args: &[&str]) -> Child {
    testkit::spawn(&mut command(args))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn warehouses(db: &str) -> String {
    testkit::shared()
        .psql_db(db, "select count(*) from warehouse")
        .unwrap()
}

/// The sum of the next order ids of the districts of warehouse `w`.
fn next_order_ids(db: &str, w: u32) -> i64 {
    let sql = format!("select sum(d_next_o_id) from district where d_w_id = {w}");
    testkit::shared()
        .psql_db(db, &sql)
        .unwrap()
        .parse()
        .unwrap()
}

/// One test (one process, one cluster): the sweep's loads leave the tables the shards
/// run on.
#[test]
fn sweep_then_shards_over_two_warehouses() {
    let db = format!("tpcc_scale_{}", std::process::id());
    testkit::shared()
        .create_database(&db)
        .unwrap_or_else(|e| panic!("create database {db}: {e}"));
    sweep_loads_each_cell_and_reports_nopm(&db);
    if warehouses(&db) != "2" {
        let out = pgrush(&[
            "-i",
            "--workload",
            "tpcc",
            "-s",
            "2",
            "--random-seed",
            "5",
            &db,
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let dir = tempfile::tempdir().unwrap();
    two_shards_take_a_warehouse_each_and_merge(&db, dir.path());
    a_run_of_its_own_keeps_its_homes(&db);
    more_shards_than_warehouses_are_refused(&db);
}

/// `--vary warehouses=1,2`: each cell runs on its own number of warehouses (the run
/// document's scale), and the table, the JSON and the console show NOPM and TPM.
fn sweep_loads_each_cell_and_reports_nopm(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let json = dir.path().join("summary.json");
    let out = pgrush(&[
        "sweep",
        "--vary",
        "warehouses=1,2",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--seed",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--workload",
        "tpcc",
        "--random-seed",
        "5",
        "-c",
        "2",
        "-t",
        "20",
        db,
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let row = |label: &str| -> Vec<String> {
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} row:\n{}", out.stdout));
        line[label.len()..]
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(row("warehouses"), ["1", "2"]);
    let summary = read_json(&json);
    let schema: Value =
        serde_json::from_str(include_str!("../../../schema/pgrush-sweep.v1.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    if let Some(e) = validator.iter_errors(&summary).next() {
        panic!("not valid: {e} at {}", e.instance_path());
    }
    let cells = summary["cells"].as_array().unwrap();
    let nopm_row = row("NOPM (New-Orders per minute)");
    let tpm_row = row("TPM (transactions per minute)");
    for (k, cell) in cells.iter().enumerate() {
        let w = &cell["values"][0];
        let record = &cell["runs"][0];
        let doc = read_json(&out_dir.join(record["document"].as_str().unwrap()));
        assert_eq!(doc["config"]["scale"].to_string(), w.as_str().unwrap());
        assert_eq!(doc["results"]["transactions"]["processed"], 40);
        let tables: BTreeSet<&str> = record["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["table"].as_str().unwrap())
            .collect();
        assert!(
            tables.contains("warehouse") && tables.len() == 9,
            "{tables:?}"
        );
        let nopm = cell["nopm"]["estimate"].as_f64().unwrap();
        let tpm = cell["tpm"]["estimate"].as_f64().unwrap();
        assert_eq!(nopm, doc["tpcc"]["nopm"].as_f64().unwrap());
        assert_eq!(tpm, doc["tpcc"]["tpm"].as_f64().unwrap());
        assert!(nopm > 0.0 && tpm > nopm, "{cell}");
        assert_eq!(nopm_row[k], format!("{nopm:.1}"));
        assert_eq!(tpm_row[k], format!("{tpm:.1}"));
    }
    assert!(
        out.stdout.contains(" tps, ") && out.stdout.contains(" NOPM"),
        "{}",
        out.stdout
    );
    // The last cell's load is what the database holds now.
    let plan = read_json(&out_dir.join("sweep.json"));
    let last = plan["steps"].as_array().unwrap().last().unwrap()["cell"]
        .as_u64()
        .unwrap();
    assert_eq!(
        warehouses(db),
        cells[last as usize]["values"][0].as_str().unwrap()
    );
}

/// The first argument (the home warehouse) of each `tpcc_*` call `--debug` shows, per
/// client.
fn homes_by_client(stderr: &str) -> BTreeMap<u32, BTreeSet<u32>> {
    let mut out: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for line in stderr.lines() {
        let Some((head, call)) = line.split_once(" sending SELECT tpcc_") else {
            continue;
        };
        let client = head.rsplit(' ').next().unwrap().parse().unwrap();
        let args = call.split_once('(').unwrap().1;
        let home = args
            .split([',', ')'])
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        out.entry(client).or_default().insert(home);
    }
    out
}

/// Shards 0 and 1 of 2 (two clients each) on two warehouses: shard 0's clients work for
/// warehouse 1 only, shard 1's for warehouse 2; merged, the New-Orders are the sum of
/// the shards' and NOPM and TPM are per minute of the merged interval; `--assert nopm`
/// reads the merged document. With `--check`, each shard's New-Order count covers its
/// own warehouse: the orders added there, all of them its clients' commits.
fn two_shards_take_a_warehouse_each_and_merge(db: &str, dir: &Path) {
    let before = [next_order_ids(db, 1), next_order_ids(db, 2)];
    // Each shard writes `run.shard<INDEX>.json`.
    let json = format!("--json={}", dir.join("run.json").display());
    let docs: Vec<String> = (0..2)
        .map(|i| dir.join(format!("run.shard{i}.json")).display().to_string())
        .collect();
    let children: Vec<Child> = (0..2)
        .map(|i| {
            let shard = format!("{i}/2");
            spawn(&[
                "--workload",
                "tpcc",
                "-c",
                "2",
                "-t",
                "20",
                "--random-seed",
                "7",
                "--debug",
                "--shard",
                &shard,
                "--shard-timeout",
                "30",
                "--check",
                &json,
                db,
            ])
        })
        .collect();
    let outs: Vec<Output> = children.into_iter().map(testkit::finish).collect();
    let mut new_orders = 0;
    for (i, out) in outs.iter().enumerate() {
        assert_eq!(out.code, 0, "shard {i}: {}", out.stderr);
        let w = i as u32 + 1;
        let line = format!("shard {i} of 2: home warehouses {w} to {w} of 2\n");
        assert!(out.stderr.contains(&line), "{}", out.stderr);
        let homes = homes_by_client(&out.stderr);
        let first = 2 * i as u32;
        assert_eq!(
            homes.keys().copied().collect::<Vec<_>>(),
            [first, first + 1]
        );
        for (client, set) in &homes {
            assert_eq!(*set, BTreeSet::from([w]), "client {client} of shard {i}");
        }
        let added = next_order_ids(db, w) - before[i];
        let count = format!(
            "New-Order count (growth of sum(D_NEXT_O_ID) = New-Orders committed by the clients): ok, {added} orders added, {added} committed by the clients\n"
        );
        assert!(
            added > 0 && out.stdout.contains(&count),
            "{count}{}",
            out.stdout
        );
        let doc = read_json(Path::new(&docs[i]));
        assert!(doc["tpcc"]["server"].is_null(), "{}", doc["tpcc"]);
        new_orders += doc["tpcc"]["new_orders"].as_u64().unwrap();
    }
    let merged_path = dir.join("merged.json");
    let merged_arg = merged_path.display().to_string();
    let out = pgrush(&["merge", &docs[0], &docs[1], "--json", &merged_arg]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let merged = read_json(&merged_path);
    let tpcc = &merged["tpcc"];
    assert_eq!(tpcc["new_orders"].as_u64().unwrap(), new_orders, "{tpcc}");
    let duration = merged["results"]["duration_s"].as_f64().unwrap();
    let processed = merged["results"]["transactions"]["processed"]
        .as_u64()
        .unwrap();
    assert_eq!(processed, 80);
    let nopm = tpcc["nopm"].as_f64().unwrap();
    let tpm = tpcc["tpm"].as_f64().unwrap();
    assert!((nopm - new_orders as f64 * 60.0 / duration).abs() < 1e-6 * nopm);
    assert!((tpm - processed as f64 * 60.0 / duration).abs() < 1e-6 * tpm);
    assert!(tpcc["server"].is_null());
    let line = format!("New-Order transactions per minute (NOPM) = {nopm:.1}\n");
    assert!(out.stdout.contains(&line), "{}", out.stdout);
    let gate = pgrush(&[
        "report",
        &merged_arg,
        "--assert",
        "nopm>=1",
        "--assert",
        "nopm>1000000000",
    ]);
    assert_eq!(gate.code, 3, "{}{}", gate.stdout, gate.stderr);
    for line in [
        "assertion passed: nopm >= 1 (measured ",
        "assertion FAILED: nopm > 1000000000 (measured ",
    ] {
        let measured: f64 = gate
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(line))
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{line}: {}", gate.stdout))
            .parse()
            .unwrap();
        assert!((measured - nopm).abs() < 0.001, "{measured} vs {nopm}");
    }
}

/// Without shards, client `c` of three works for warehouse `c % 2 + 1`, as before
/// shards had ranges.
fn a_run_of_its_own_keeps_its_homes(db: &str) {
    let out = pgrush(&["--workload", "tpcc", "-c", "3", "-t", "10", "--debug", db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let homes = homes_by_client(&out.stderr);
    assert_eq!(homes.len(), 3);
    for (client, set) in &homes {
        assert_eq!(*set, BTreeSet::from([client % 2 + 1]), "client {client}");
    }
    assert!(!out.stderr.contains("home warehouses"), "{}", out.stderr);
}

/// Three shards need three warehouses: each says so at once (no wait at the barrier).
fn more_shards_than_warehouses_are_refused(db: &str) {
    let out = pgrush(&[
        "--workload",
        "tpcc",
        "-t",
        "1",
        "--shard",
        "2/3",
        "--shard-timeout",
        "30",
        db,
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "pgrush: error: 3 shards need at least 3 warehouses (each shard's clients take their own), but the database has 2\n\
             pgrush: hint: Load more warehouses (\"pgrush -i --workload tpcc -s WAREHOUSES\") or run fewer shards.\n"
        ),
        "{}",
        out.stderr
    );
}
