//! A password given on the command line reaches the server and nothing else: run
//! documents and pages (keyword/value and URI forms, a `NAME=value` argument), `pgrush
//! merge` and `pgrush report` of documents an older pgrush wrote with the password in
//! them, every file of a sweep; and `pgrush ops` hands it to pg_dump and pg_restore
//! without a command line of theirs showing it. Each test runs on a cluster of its own
//! that asks for a SCRAM password over TCP.

mod ops_common;

use std::path::Path;
use std::process::Command;

use ops_common::{Sandbox, step, steps_of};
use pgrush_cluster::{Auth, Cluster};
use pgrush_testkit::{Output, clear_pg_env, run};
use serde_json::{Value, json};

/// The password of the role the tests connect as.
const SECRET: &str = "S3cret-pw";
/// That role.
const ROLE: &str = "bob";

/// A cluster where `ROLE` must give `SECRET` over TCP.
fn password_cluster() -> Cluster {
    Cluster::builder()
        .auth(Auth::Scram)
        .user(ROLE, SECRET)
        .start()
        .expect("cluster")
}

/// `pgrush ARGS` in `dir`, with no password but the one on the command line.
fn pgrush(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    clear_pg_env(&mut cmd);
    cmd.current_dir(dir)
        .env("PGPASSFILE", dir.join("no-such-pgpass"))
        .args(args);
    run(&mut cmd)
}

fn assert_ok(what: &str, out: &Output) {
    assert_eq!(out.code, 0, "{what}:\n{}\n{}", out.stdout, out.stderr);
}

/// Fails when `SECRET` is in the file or in the output.
fn assert_no_secret(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        !text.contains(SECRET),
        "{} holds the password",
        path.display()
    );
}

fn assert_quiet(what: &str, out: &Output) {
    assert!(
        !out.stdout.contains(SECRET) && !out.stderr.contains(SECRET),
        "{what} printed the password:\n{}\n{}",
        out.stdout,
        out.stderr
    );
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `doc` as shard `index` of two, with the command line an older pgrush wrote.
fn old_shard(doc: &Value, command_line: &[&str], index: u32) -> Value {
    let mut doc = doc.clone();
    doc["command_line"] = json!(command_line);
    doc["shard"] = json!({
        "index": index,
        "count": 2,
        "source": "option",
        "first_client": index * 2,
        "clients_total": 4,
        "benchmark_id": "0123456789abcdef",
        "start_unix_us": 1_795_343_086_000_000_i64,
        "clock_offset_ms": 0.0,
        "clock_offset_uncertainty_ms": 0.1,
        "start_method": "start_at",
    });
    doc["start_time_unix"] = json!(1_795_343_086.0);
    doc["client"]["hostname"] = json!(format!("host{index}"));
    doc
}

#[test]
fn run_documents_pages_merges_and_reports_hold_no_password() {
    let cluster = password_cluster();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("one.sql"), "select 1;\n").expect("script");
    let port = cluster.port().to_string();
    let keyword_value =
        format!("host=127.0.0.1 port={port} user={ROLE} password = '{SECRET}' dbname=postgres");
    let variable = format!("PGPASSWORD={SECRET}");
    let bench = ["-n", "-t", "3", "-c", "2", "-f", "one.sql"];
    let mut args = bench.to_vec();
    args.extend([
        "-D",
        &variable,
        "--json=kv.json",
        "--html=kv.html",
        &keyword_value,
    ]);
    let out = pgrush(dir, &args);
    assert_ok("keyword/value run", &out);
    assert_quiet("keyword/value run", &out);
    let uri = format!("postgresql://{ROLE}:{SECRET}@127.0.0.1:{port}/postgres?sslmode=disable");
    let mut uri_args = bench.to_vec();
    uri_args.extend(["--json=uri.json", "--html=uri.html", &uri]);
    assert_ok("URI run", &pgrush(dir, &uri_args));
    for file in ["kv.json", "kv.html", "uri.json", "uri.html"] {
        assert_no_secret(&dir.join(file));
    }
    let doc = read_json(&dir.join("kv.json"));
    let words: Vec<&str> = doc["command_line"]
        .as_array()
        .expect("command_line")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        words.contains(&"PGPASSWORD=***")
            && words.contains(
                &keyword_value
                    .replace(&format!("'{SECRET}'"), "***")
                    .as_str()
            ),
        "{words:?}"
    );

    // Documents of an older pgrush, the password in their command line.
    let mut old_line = vec!["pgrush"];
    old_line.extend(&args);
    for i in 0..2 {
        let shard = old_shard(&doc, &old_line, i);
        let text = serde_json::to_string_pretty(&shard).expect("json");
        std::fs::write(dir.join(format!("old{i}.json")), text).expect("write");
    }
    let merged = pgrush(
        dir,
        &[
            "merge",
            "old0.json",
            "old1.json",
            "--json=m.json",
            "--html=m.html",
        ],
    );
    assert_ok("merge", &merged);
    assert_quiet("merge", &merged);
    let rendered = pgrush(dir, &["report", "old0.json", "--html=r.html"]);
    assert_ok("report --html", &rendered);
    let compared = pgrush(dir, &["report", "old0.json", "old1.json", "--html=c.html"]);
    assert_ok("report of two runs", &compared);
    assert_quiet("report of two runs", &compared);
    for file in ["m.json", "m.html", "r.html", "c.html"] {
        assert_no_secret(&dir.join(file));
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn sweep_files_hold_no_password() {
    let cluster = password_cluster();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let out_dir = dir.join("sweep");
    let conninfo = format!(
        "host=127.0.0.1 port={} user={ROLE} password='{SECRET}' dbname=postgres",
        cluster.port()
    );
    let out = pgrush(
        dir,
        &[
            "sweep",
            "--vary",
            "clients=1,2",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--out",
            out_dir.to_str().expect("utf-8"),
            "--json",
            "s.json",
            "--html",
            "s.html",
            "-s",
            "1",
            "-t",
            "5",
            &conninfo,
        ],
    );
    assert_ok("sweep", &out);
    assert_quiet("sweep", &out);
    let files = files_under(&out_dir);
    assert!(files.len() >= 4, "{files:?}");
    for file in files
        .iter()
        .chain(&[dir.join("s.json"), dir.join("s.html")])
    {
        assert_no_secret(file);
    }
    assert!(
        std::fs::read_to_string(out_dir.join("sweep.log"))
            .expect("sweep.log")
            .contains("password=***"),
        "the children's command lines are logged, redacted"
    );
}

#[test]
fn ops_hands_the_connection_string_password_to_dump_and_restore() {
    let cluster = password_cluster();
    let sandbox = Sandbox::new();
    let json = sandbox.json_path();
    let conninfo = format!(
        "host=127.0.0.1 port={} user={ROLE} password={SECRET} dbname=postgres",
        cluster.port()
    );
    let mut cmd = sandbox.command(
        Some(cluster.bin_dir()),
        &[
            "--scale",
            "1",
            "--steps",
            "dump,restore",
            "--json",
            json.to_str().expect("utf-8"),
            &conninfo,
        ],
    );
    cmd.env("PGPASSFILE", sandbox.path().join("no-such-pgpass"));
    let out = run(&mut cmd);
    assert_ok("ops", &out);
    assert_quiet("ops", &out);
    let doc = sandbox.document();
    let steps = steps_of(&doc, 1);
    for name in ["dump", "restore"] {
        assert!(
            step(&steps, name)["seconds"].as_f64().is_some(),
            "{name}: {}",
            step(&steps, name)
        );
    }
    assert_no_secret(&json);
}
