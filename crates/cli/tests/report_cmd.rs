//! `pgrush report`: rendering a saved run as HTML and comparing saved runs (no server).

use pgrush_report::document::{ClientInfo, RunContext, RunDocument};
use pgrush_report::percentiles::PercentileList;
use pgrush_stats::{
    QueryMode, RunConfig, RunLimit, RunSummary, ScriptInfo, ThreadStats, TxOutcome, TxRecord,
};
use std::path::Path;
use std::process::Command;

fn run_doc(latency_scale: f64, clients: u32) -> RunDocument {
    run_doc_with(latency_scale, clients, b"SELECT 1;")
}

/// A saved run of a script whose second command is `statement`.
fn run_doc_with(latency_scale: f64, clients: u32, statement: &[u8]) -> RunDocument {
    let config = RunConfig {
        scale: 10,
        partitioning: None,
        query_mode: QueryMode::Simple,
        clients,
        threads: 1,
        max_tries: 1,
        limit: RunLimit::Transactions(100),
        rate: None,
        latency_limit_us: None,
        progress_s: Some(1),
        connect_per_tx: false,
        failures_detailed: false,
        per_command: true,
        continue_on_error: false,
        warmup_s: None,
        reconnect: false,
    };
    let scripts = vec![ScriptInfo {
        desc: b"<builtin: select only>".to_vec(),
        weight: 1,
        commands: vec![
            b"\\set aid random(1, 100000 * :scale)".to_vec(),
            statement.to_vec(),
        ],
    }];
    let mut sum = RunSummary::empty(config, scripts);
    let mut t = ThreadStats::new(&sum.layout()).with_series(0, 1_000_000);
    for i in 1..=(100 * u64::from(clients)) {
        let rec = TxRecord {
            script: 0,
            outcome: TxOutcome::Success,
            latency_us: i as f64 * latency_scale,
            lag_us: 0.0,
            tries: 1,
        };
        t.record_tx_at(&rec, i as i64 * 10_000);
        t.record_command(0, 1, i as f64 * latency_scale);
    }
    sum.absorb(&t);
    sum.bench_duration_us = 1_000_000 * u64::from(clients);
    let ctx = RunContext {
        command_line: vec!["pgrush".into(), "-S".into()],
        start_time_unix_us: 1_800_000_000_000_000,
        server: None,
        client: ClientInfo::detect(),
        percentiles: PercentileList::default(),
        warnings: Vec::new(),
    };
    RunDocument::build(&sum, &ctx)
}

fn pgrush(args: &[&str], dir: &Path) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_pgrush"))
        .arg("report")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run pgrush: {e}"));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn saved_runs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("a.json"), run_doc(1.0, 1).to_json())
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("b.json"), run_doc(3.0, 2).to_json())
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("bad.json"), "{\"format\": 1}")
        .unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn row<'a>(text: &'a str, metric: &str) -> Vec<&'a str> {
    text.lines()
        .find(|l| l.starts_with(metric))
        .unwrap_or_else(|| panic!("no {metric} in\n{text}"))[metric.len()..]
        .split_whitespace()
        .collect()
}

#[test]
fn compares_saved_runs() {
    let dir = saved_runs();
    let (out, err, code) = pgrush(&["a.json", "b.json"], dir.path());
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(row(&out, "metric"), ["a.json", "b.json"]);
    assert_eq!(row(&out, "tps "), ["100.000", "100.000"]);
    assert_eq!(row(&out, "p50 (ms)"), ["0.050", "0.300"]);
    // Averages: 50.5 µs and 301.5 µs.
    assert_eq!(row(&out, "SELECT 1; (ms)"), ["0.051", "0.301"]);
    assert_eq!(row(&out, "clients"), ["1", "2"]);
    let (md, _, code) = pgrush(&["--markdown", "a.json", "b.json"], dir.path());
    assert_eq!(code, 0);
    assert!(md.starts_with("| section | metric | a.json | b.json |\n|---|---|---:|---:|\n"));
    assert!(md.contains("| settings | clients | 1 | 2 |"), "{md}");
    let (csv, _, code) = pgrush(&["a.json", "b.json", "--csv"], dir.path());
    assert_eq!(code, 0);
    assert!(csv.starts_with("section,metric,a.json,b.json\n"));
    assert!(csv.contains("\nlatency,p99 (ms),0.099,0.594\n"), "{csv}");
}

#[test]
fn the_text_table_fits_100_columns_and_one_run_is_not_compared_with_itself() {
    let dir = saved_runs();
    // A long statement with multi-byte characters: columns are counted as characters.
    let statement = format!(
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND filler <> 'ünïcødé' {}",
        "AND bid IS NOT NULL ".repeat(5)
    );
    for (name, scale) in [("long-a.json", 1.0), ("long-b.json", 3.0)] {
        let doc = run_doc_with(scale, 1, statement.as_bytes());
        std::fs::write(dir.path().join(name), doc.to_json()).unwrap_or_else(|e| panic!("{e}"));
    }
    let (out, err, code) = pgrush(&["long-a.json", "long-b.json"], dir.path());
    assert_eq!((code, err.as_str()), (0, ""));
    for line in out.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // The statement is shortened with "…" (its unit kept), its averages still beside it.
    let statement_row = out
        .lines()
        .find(|l| l.starts_with("SELECT abalance FROM"))
        .unwrap_or_else(|| panic!("{out}"));
    let (_, cells) = statement_row
        .split_once("… (ms) ")
        .unwrap_or_else(|| panic!("not shortened: {statement_row}"));
    let cells: Vec<&str> = cells.split_whitespace().collect();
    assert_eq!(cells.len(), 2, "{statement_row}");
    assert_eq!(cells[0], "0.051", "{statement_row}");
    assert!(out.contains("tps vs first run (%)"), "{out}");
    // One run alone: no comparison with itself.
    let (out, _, code) = pgrush(&["a.json"], dir.path());
    assert_eq!(code, 0);
    assert!(out.contains("\ntps "), "{out}");
    assert!(!out.contains("vs first run"), "{out}");
}

#[test]
fn renders_a_saved_run_as_html() {
    let dir = saved_runs();
    let (out, err, code) = pgrush(&["b.json", "--html=b.html"], dir.path());
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    let page = std::fs::read_to_string(dir.path().join("b.html")).unwrap_or_default();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<svg").count(), 3);
    assert!(page.contains("select only"));
    // Only the inline hover script: nothing is loaded.
    assert!(!page.contains("<script ") && !page.contains("src="));
    // Several runs: a comparison page.
    let (_, err, code) = pgrush(&["a.json", "b.json", "--html=cmp.html"], dir.path());
    assert_eq!((code, err.as_str()), (0, ""));
    let page = std::fs::read_to_string(dir.path().join("cmp.html")).unwrap_or_default();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("comparison of 2 runs"));
    assert_eq!(page.matches("<svg").count(), 3);
    assert!(page.contains("<th>a.json</th><th>b.json</th>"));
    assert!(page.contains(
        "<tr><td>p50 (ms)</td><td class=\"n\">0.050</td><td class=\"n\">0.300</td></tr>"
    ));
    // Only the inline hover script: nothing is loaded.
    assert!(!page.contains("<script ") && !page.contains("src="));
    // To stdout with `-`.
    let (out, _, code) = pgrush(&["--html", "-", "a.json"], dir.path());
    assert_eq!(code, 0);
    assert!(out.starts_with("<!DOCTYPE html>"));
}

#[test]
fn errors() {
    let dir = saved_runs();
    let (out, err, code) = pgrush(&["nope.json"], dir.path());
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "pgrush: error: could not open file \"nope.json\": No such file or directory\n"
    );
    let (_, err, code) = pgrush(&["bad.json"], dir.path());
    assert_eq!(code, 1);
    assert!(
        err.starts_with("pgrush: error: \"bad.json\": not a pgrush run"),
        "{err}"
    );
    let (_, err, code) = pgrush(&["--html=x.html", "--markdown", "a.json"], dir.path());
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "pgrush: error: --html cannot be combined with --markdown or --csv\npgrush: hint: Try \"pgrush report --help\" for more information.\n"
    );
    let (_, err, code) = pgrush(&["--frobnicate", "a.json"], dir.path());
    assert_eq!(code, 1);
    assert!(
        err.ends_with(": unrecognized option '--frobnicate'\npgrush: hint: Try \"pgrush report --help\" for more information.\n"),
        "{err}"
    );
    let (out, _, code) = pgrush(&["--help"], dir.path());
    assert_eq!(code, 0);
    assert!(out.contains("pgrush report RUN.json --html=FILE"));
}

/// A saved run holding a percentile `--percentiles` refuses (in its list, or as a stored
/// value's `p`) is refused as the option refuses it, with exit status 1.
#[test]
fn refuses_percentiles_out_of_range() {
    let dir = saved_runs();
    let good = run_doc(1.0, 1).to_json();
    let save = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut doc: serde_json::Value =
            serde_json::from_str(&good).unwrap_or_else(|e| panic!("{e}"));
        edit(&mut doc);
        std::fs::write(dir.path().join(name), doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
    };
    let refused = |p: &str| {
        format!(
            "invalid --percentiles value \"{p}\": must be a number greater than 0 and at most 100"
        )
    };
    for (value, shown) in [("-5", "-5"), ("101", "101"), ("1e308", "1e308"), ("0", "0")] {
        let list: serde_json::Value =
            serde_json::from_str(&format!("[50, {value}]")).unwrap_or_else(|e| panic!("{e}"));
        save("list.json", &|doc| doc["percentiles"] = list.clone());
        for args in [&["list.json"][..], &["list.json", "--html=x.html"]] {
            let (out, err, code) = pgrush(args, dir.path());
            assert_eq!((code, out.as_str()), (1, ""), "{args:?}: {err}");
            assert_eq!(
                err,
                format!(
                    "pgrush: error: \"list.json\": \"percentiles\": {}\n",
                    refused(shown)
                )
            );
        }
        // The main command's option says the same.
        let out = Command::new(env!("CARGO_BIN_EXE_pgrush"))
            .arg(format!("--percentiles=50,{value}"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run pgrush: {e}"));
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("pgrush: error: {}\n", refused(value))
        );
    }
    save("stored.json", &|doc| {
        doc["latency"]["percentiles"][0]["p"] = 101.into()
    });
    let (_, err, code) = pgrush(&["stored.json"], dir.path());
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "pgrush: error: \"stored.json\": \"p\": {}\n",
            refused("101")
        )
    );
    // The bounds themselves: 100 is a percentile.
    save("hundred.json", &|doc| {
        doc["percentiles"] = serde_json::json!([0.001, 100])
    });
    let (out, err, code) = pgrush(&["hundred.json"], dir.path());
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(row(&out, "p100 (ms)").len(), 1);
}

/// `text`'s bytes as standard base64.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= c.len() {
                A[(n >> (18 - 6 * i)) as usize & 63] as char
            } else {
                '='
            });
        }
    }
    out
}

/// An uncompressed V2 HDR histogram header (3 digits, 1 µs to an hour) claiming a
/// 2^31-byte payload, with no payload.
fn huge_payload_claim() -> String {
    let mut b = Vec::new();
    b.extend_from_slice(&(0x1c84_9303u32 | 0x10).to_be_bytes());
    b.extend_from_slice(&(1u32 << 31).to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b.extend_from_slice(&3u32.to_be_bytes());
    b.extend_from_slice(&1u64.to_be_bytes());
    b.extend_from_slice(&3_600_000_000u64.to_be_bytes());
    b.extend_from_slice(&1.0f64.to_be_bytes());
    base64(&b)
}

/// A run file whose histograms cannot be read back (a header claiming 2 GiB, text that
/// is not a histogram) is refused by `report` and `merge` with the field named, exit
/// status 1: never rendered as "no successful transactions", never inflated in memory.
#[test]
fn unreadable_histograms_are_errors_naming_the_field() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut doc = run_doc(1.0, 1);
    if let Some(d) = doc.latency.as_mut() {
        d.hdr_histogram = huge_payload_claim();
    }
    std::fs::write(dir.path().join("huge.json"), doc.to_json()).unwrap_or_else(|e| panic!("{e}"));
    let mut doc = run_doc(1.0, 1);
    if let Some(iv) = doc
        .time_series
        .as_mut()
        .and_then(|t| t.intervals.first_mut())
    {
        iv.latency_histogram = Some("bm90IGEgaGlzdG9ncmFt".to_string());
    }
    std::fs::write(dir.path().join("junk.json"), doc.to_json()).unwrap_or_else(|e| panic!("{e}"));

    let (out, err, code) = pgrush(&["huge.json", "--html=x.html"], dir.path());
    assert_eq!((out.as_str(), code), ("", 1), "{err}");
    assert!(
        err.starts_with(
            "pgrush: error: \"huge.json\": latency histogram \"latency.hdr_histogram\": invalid HDR histogram: payload of 2147483648 bytes is longer than"
        ),
        "{err}"
    );
    assert!(!dir.path().join("x.html").exists());
    let (_, err, code) = pgrush(&["junk.json"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(
        err.starts_with(
            "pgrush: error: \"junk.json\": latency histogram \"time_series.intervals[0].latency_histogram\": invalid HDR histogram:"
        ),
        "{err}"
    );
    let merged = Command::new(env!("CARGO_BIN_EXE_pgrush"))
        .args(["merge", "huge.json", "junk.json", "--json=m.json"])
        .current_dir(dir.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&merged.stderr);
    assert_eq!(merged.status.code(), Some(1), "{err}");
    assert!(
        err.contains("latency histogram \"latency.hdr_histogram\""),
        "{err}"
    );
    assert!(!dir.path().join("m.json").exists());
}

/// A saved capacity search (schema `pgrush-capacity/1`) that held up to `good` tps and
/// failed at `bad`.
fn capacity_doc(good: f64, bad: f64, p99_at_good: f64) -> String {
    let step = |n: usize, rate: f64, held: bool, p99: f64| {
        serde_json::json!({
            "step": n, "offered_tps": rate, "rounds": 1, "duration_s": 4.0,
            "transactions": (rate * 4.0) as u64, "delivered_tps": rate,
            "latency_average_ms": p99 / 2.0, "lag_average_ms": 0.1, "p50_ms": p99 / 3.0,
            "p99_ms": p99, "p99_9_ms": p99 * 1.5, "lag_growth_ms_per_s": 0.0,
            "delivered": held,
            "slos": [{"slo": "p99 < 10 ms", "holds": held, "measured": p99, "unit": "ms",
                      "k": 1, "n": 400, "limit": 0.01, "interval": [0.0, 0.01],
                      "decided": true}],
            "held": held,
            "failure": if held { serde_json::Value::Null } else { "p99 < 10 ms".into() },
        })
    };
    let doc = serde_json::json!({
        "schema": "pgrush-capacity/1",
        "pgrush_version": "test",
        "settings": {"slos": ["p99 < 10 ms"], "start_rate": good / 2.0, "precision": 0.05,
                     "step_s": 4, "max_step_s": 8, "warmup_s": 1,
                     "run_args": ["-c", "4", "-S"]},
        "probe": null,
        "capacity_tps": good,
        "first_failing_tps": bad,
        "first_failure": "p99 < 10 ms",
        "bracket_width": (bad - good) / good,
        "steps": [step(1, good / 2.0, true, 2.0), step(2, bad, false, 30.0),
                  step(3, good, true, p99_at_good)],
        "complete": true,
        "interrupted": false,
    });
    doc.to_string()
}

#[test]
fn reads_compares_and_gates_saved_capacity_searches() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |name: &str, text: String| {
        std::fs::write(dir.path().join(name), text).unwrap_or_else(|e| panic!("{e}"));
    };
    write("pg15.json", capacity_doc(800.0, 840.0, 6.5));
    write("pg18.json", capacity_doc(1000.0, 1040.0, 7.25));
    // One search: its table and verdict again.
    let (out, err, code) = pgrush(&["pg15.json"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("sustainable rate: 800 tps (p99 < 10 ms held)"),
        "{out}"
    );
    assert!(out.contains("the capacity lies in [800, 840) tps"), "{out}");
    // Two: side by side, with the ratio of the capacities.
    let (out, err, code) = pgrush(&["pg15.json", "pg18.json"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        row(&out, "sustainable rate (tps)"),
        ["800", "1000", "1.250"],
        "{out}"
    );
    assert_eq!(
        row(&out, "p99 at capacity (ms)"),
        ["6.500", "7.250"],
        "{out}"
    );
    let (csv, _, code) = pgrush(&["pg15.json", "pg18.json", "--csv"], dir.path());
    assert_eq!(code, 0);
    assert!(csv.starts_with(",pg15.json,pg18.json,B/A\n"), "{csv}");
    assert!(csv.contains("\nSLOs,p99 < 10 ms,p99 < 10 ms,\n"), "{csv}");
    // One page overlaying both curves.
    let (_, err, code) = pgrush(&["pg15.json", "pg18.json", "--html", "c.html"], dir.path());
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(dir.path().join("c.html")).unwrap_or_default();
    assert!(page.contains("pg15.json p99") && page.contains("pg18.json p99"));
    // Gates: a rate, and a share of the baseline's capacity.
    let (out, err, code) = pgrush(
        &[
            "--baseline",
            "pg15.json",
            "pg18.json",
            "--assert",
            "capacity>=1.2*baseline",
            "--assert",
            "capacity>=1100",
            "--junit",
            "j.xml",
        ],
        dir.path(),
    );
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(
        out.contains(
            "assertion passed: capacity >= 1.2 * baseline (measured 1000, baseline 800, limit 960)"
        ),
        "{out}"
    );
    assert!(
        out.contains("assertion FAILED: capacity >= 1100 (measured 1000)"),
        "{out}"
    );
    let junit = std::fs::read_to_string(dir.path().join("j.xml")).unwrap_or_default();
    assert!(junit.contains("failures=\"1\""), "{junit}");
    // A baseline expression needs a baseline; a unit is refused.
    for (args, says) in [
        (
            &["pg18.json", "--assert", "capacity>=baseline"][..],
            "no baseline here",
        ),
        (&["pg18.json", "--assert", "capacity>=5ms"], "no unit"),
    ] {
        let (_, err, code) = pgrush(args, dir.path());
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A capacity search among other files: named in the error.
    write("broken.json", "{\"schema\": \"pgrush-capacity/1\"}".into());
    let (_, err, code) = pgrush(&["pg15.json", "broken.json"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("broken.json: not a pgrush capacity result"),
        "{err}"
    );
}
