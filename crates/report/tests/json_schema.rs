//! Every JSON document pgrush writes validates against `schema/pgrush-run.v1.schema.json`,
//! and reads back to the same document.

mod common;

use common::{Shape, context, summary};
use pgrush_report::document::RunDocument;
use pgrush_report::machine::{MachineDoc, MachineIntervalDoc};
use pgrush_report::percentiles::PercentileList;
use serde_json::Value;

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-run.v1.schema.json"
));

fn errors(instance: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap_or(Value::Null);
    let validator = match jsonschema::validator_for(&schema) {
        Ok(v) => v,
        Err(e) => panic!("the schema itself is invalid: {e}"),
    };
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn shapes() -> Vec<Shape> {
    vec![
        Shape::default(),
        Shape {
            scripts: 3,
            per_command: false,
            rate: Some(50.0),
            ..Shape::default()
        },
        Shape {
            connect_per_tx: true,
            failures: true,
            ..Shape::default()
        },
        Shape {
            transactions: 0,
            ..Shape::default()
        },
        Shape {
            transactions: 5,
            latency_scale: 12_345.6,
            rate: Some(1.0),
            ..Shape::default()
        },
    ]
}

#[test]
fn documents_validate_and_round_trip() {
    for shape in shapes() {
        let sum = summary(&shape);
        let doc = RunDocument::build(&sum, &context(PercentileList::default()));
        let json = doc.to_json();
        let value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
        let errs = errors(&value);
        assert!(errs.is_empty(), "{shape:?}: {errs:#?}");
        let back = RunDocument::from_json(&json);
        assert_eq!(back.as_ref(), Ok(&doc), "{shape:?}");
        assert_eq!(
            doc.report_text,
            pgrush_report::text::render_report_lossy(&sum)
        );
    }
}

/// The client machine's series validates, reads back, and a share over 100% is refused.
#[test]
fn the_client_machine_series() {
    let mut doc = common::document(&Shape::default());
    let interval = MachineIntervalDoc {
        start_s: 0.0,
        duration_s: 1.002,
        cpu_user_pct: 41.5,
        cpu_system_pct: 12.25,
        cpu_iowait_pct: 0.5,
        cpu_steal_pct: 0.0,
        busiest_core_pct: 63.0,
        run_queue: 3,
        context_switches_per_s: 51234.5,
        net_in_bytes_per_s: 120.0,
        net_out_bytes_per_s: 80.0,
        loopback_bytes_per_s: 0.0,
    };
    doc.machine = Some(MachineDoc {
        same_machine_as_server: true,
        cores: 2,
        interval_s: 1.0,
        intervals: vec![interval],
        server_machine: pgrush_report::machine::server_machine_label(true).into(),
    });
    let json = doc.to_json();
    let mut value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
    assert_eq!(errors(&value), Vec::<String>::new());
    assert_eq!(RunDocument::from_json(&json).as_ref(), Ok(&doc));
    value["machine"]["intervals"][0]["cpu_user_pct"] = Value::from(101.0);
    assert_eq!(errors(&value).len(), 1);
}

#[test]
fn a_warmup_is_recorded_only_when_given() {
    let mut sum = summary(&Shape::default());
    let plain = RunDocument::build(&sum, &context(PercentileList::default())).to_json();
    let plain: Value = serde_json::from_str(&plain).unwrap_or(Value::Null);
    assert!(
        plain["config"].get("warmup_s").is_none(),
        "{}",
        plain["config"]
    );
    sum.config.warmup_s = Some(30);
    let doc = RunDocument::build(&sum, &context(PercentileList::default()));
    let json = doc.to_json();
    let value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
    assert_eq!(errors(&value), Vec::<String>::new());
    assert_eq!(value["config"]["warmup_s"], 30);
    assert_eq!(RunDocument::from_json(&json).as_ref(), Ok(&doc));
}

#[test]
fn document_content() {
    let doc = common::document(&Shape {
        failures: true,
        ..Shape::default()
    });
    let v: Value = serde_json::from_str(&doc.to_json()).unwrap_or(Value::Null);
    assert_eq!(v["format"], "pgrush-run");
    assert_eq!(v["format_version"], 1);
    assert_eq!(v["start_time"], "2026-11-22T10:24:46.006Z");
    assert_eq!(v["server"]["settings"]["shared_buffers"], "128MB");
    assert_eq!(v["client"]["cpus"], 2);
    assert_eq!(v["results"]["transactions"]["processed"], 900);
    assert_eq!(v["results"]["transactions"]["serialization_failures"], 100);
    assert_eq!(v["results"]["transactions"]["retries"], 200);
    assert_eq!(v["results"]["tps"], 360.0);
    assert_eq!(v["results"]["expected_transactions"], Value::Null);
    assert_eq!(
        v["percentiles"],
        serde_json::json!([50.0, 90.0, 99.0, 99.9, 99.99])
    );
    assert_eq!(v["latency"]["count"], 900);
    assert_eq!(v["latency"]["percentiles"][0]["p"], 50.0);
    assert!(
        v["latency"]["hdr_histogram"]
            .as_str()
            .is_some_and(|s| s.starts_with("HISTF"))
    );
    assert_eq!(v["scripts"][0]["commands"][1]["failures"], 100);
    // Time series: 1 s intervals over 2.5 s.
    let iv = &v["time_series"]["intervals"];
    assert_eq!(iv.as_array().map(Vec::len), Some(3));
    assert_eq!(iv[2]["start_s"], 2.0);
    // Durations count benchmark time only: the first interval starts after the initial
    // connections (1.234 ms), the last ends with the run (2.5 s later).
    let dur = |i: usize| iv[i]["duration_s"].as_f64().unwrap_or(-1.0);
    assert!((dur(0) - 0.998_766).abs() < 1e-9, "{}", dur(0));
    assert_eq!(dur(1), 1.0);
    assert!((dur(2) - 0.501_234).abs() < 1e-9, "{}", dur(2));
    let processed: u64 = (0..3)
        .map(|i| iv[i]["transactions"]["processed"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(processed, 900);
    assert_eq!(
        iv[1]["tps"].as_f64(),
        iv[1]["transactions"]["processed"].as_f64()
    );
    // The HDR histogram decodes back (successes: 1..=1000 without multiples of 10).
    let dist = doc.latency.clone();
    let h = dist.map(|d| d.histogram()).unwrap_or_default();
    assert_eq!(h.len(), 900);
    assert_eq!(
        pgrush_report::percentiles::value_at_percentile(&h, 50.0),
        Some(499)
    );
}

#[test]
fn schema_rejects_bad_documents() {
    let doc = common::document(&Shape::default());
    let good: Value = serde_json::from_str(&doc.to_json()).unwrap_or(Value::Null);
    assert!(errors(&good).is_empty());
    let mut bad = good.clone();
    bad["format"] = "something".into();
    assert!(!errors(&bad).is_empty());
    let mut bad = good.clone();
    bad["results"]["transactions"]["processed"] = (-1).into();
    assert!(!errors(&bad).is_empty());
    let mut bad = good.clone();
    if let Some(o) = bad.as_object_mut() {
        o.remove("time_series");
    }
    assert!(!errors(&bad).is_empty());
    let mut bad = good;
    bad["server"]["settings"]["work_mem"] = "4MB".into();
    assert!(!errors(&bad).is_empty());
    assert!(RunDocument::from_json("{\"format\": \"x\"}").is_err());
}

/// `--reconnect`'s outages (windows, client outages with their servers) validate
/// and read back; the text report has the connection failures and the windows
/// with the servers before and after, the HTML page a table of them.
#[test]
fn the_outages_of_a_run_with_reconnect() {
    use pgrush_stats::{ClientOutage, ServerIdentity};
    let mut sum = summary(&Shape::default());
    sum.config.reconnect = true;
    sum.stats.total.counters.connection_failures = 2;
    let server = ServerIdentity {
        host: "/tmp".into(),
        port: "5432".into(),
        in_recovery: Some(false),
        system_identifier: Some("7312345678901234567".into()),
    };
    sum.stats.outages = vec![
        ClientOutage {
            client: 0,
            start_us: 1_000_000,
            end_us: Some(1_400_000),
            failures: 1,
            sqlstate: Some("57P01".into()),
            before: Some(server.clone()),
            after: Some(server.clone()),
        },
        ClientOutage {
            client: 1,
            start_us: 1_100_000,
            end_us: None,
            failures: 1,
            sqlstate: None,
            before: Some(server),
            after: None,
        },
    ];
    let doc = RunDocument::build(&sum, &context(PercentileList::default()));
    let json = doc.to_json();
    let value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
    let errs = errors(&value);
    assert!(errs.is_empty(), "{errs:#?}");
    assert_eq!(RunDocument::from_json(&json).as_ref(), Ok(&doc));
    let outages = doc.outages.as_ref().expect("outages");
    assert_eq!(outages.windows.len(), 1);
    let w = &outages.windows[0];
    assert_eq!((w.start_s, w.end_s, w.clients, w.open), (1.0, 2.5, 2, true));
    assert_eq!(w.failures_by_sqlstate_class.get("57"), Some(&1));
    assert_eq!(w.failures_by_sqlstate_class.get("08"), Some(&1));
    let text = &doc.report_text;
    assert!(
        text.contains("number of connection failures: 2 ("),
        "{text}"
    );
    assert!(
        text.contains(" - window 1: from 1.000 s to 2.500 s (1500.0 ms, open at the end), 2 clients, 2 connection failures"),
        "{text}"
    );
    let primary = "/tmp:5432 (primary), system 7312345678901234567";
    assert!(
        text.contains(&format!("   servers: {primary} -> ? (1 client outages)")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "   servers: {primary} -> {primary} (1 client outages)"
        )),
        "{text}"
    );
    assert_eq!(w.servers.len(), 2, "{:?}", w.servers);
    // The page: the table of the windows, with the servers.
    let page = pgrush_report::html::render(&doc);
    assert!(page.contains("<table id=\"outages\">"), "{page}");
    assert!(
        page.contains(&format!("{primary} → ? (1 client outages)")),
        "{page}"
    );
}

/// `--target`'s figures: the document's `targets` validate and read back, each the
/// merge of its scripts', and the text report gains its `per target:` block.
#[test]
fn per_target_figures() {
    let shape = Shape {
        scripts: 3,
        ..Shape::default()
    };
    let mut sum = summary(&shape);
    let plain = pgrush_report::text::render_report_lossy(&sum);
    assert!(!plain.contains("per target:"), "{plain}");
    sum.targets = vec![
        pgrush_stats::TargetInfo {
            name: "default".to_string(),
            scripts: vec![0, 2],
        },
        pgrush_stats::TargetInfo {
            name: "host=r1,r2 load_balance_hosts=random".to_string(),
            scripts: vec![1],
        },
    ];
    let doc = RunDocument::build(&sum, &context(PercentileList::default()));
    let json = doc.to_json();
    let value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
    assert_eq!(errors(&value), Vec::<String>::new());
    assert_eq!(RunDocument::from_json(&json).as_ref(), Ok(&doc));
    let targets = doc.targets.as_ref().expect("targets");
    let processed = |i: usize| doc.scripts[i].transactions.processed;
    assert_eq!(targets[0].scripts, [1, 3]);
    assert_eq!(
        targets[0].transactions.processed,
        processed(0) + processed(2)
    );
    assert_eq!(targets[1].transactions.processed, processed(1));
    let text = &doc.report_text;
    let block = text.split("per target:\n").nth(1).expect(text);
    assert!(
        block.starts_with(" - target 1: default (SQL script 1, 3)\n"),
        "{block}"
    );
    assert!(
        block.contains(" - target 2: host=r1,r2 load_balance_hosts=random (SQL script 2)\n"),
        "{block}"
    );
    assert!(text.find("per target:") > text.find("SQL script 3:"));
}
