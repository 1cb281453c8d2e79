//! Side-by-side comparison of saved runs (`pgrush report A.json B.json`).

mod common;

use common::{Shape, context, summary};
use pgrush_report::compare::{Comparison, Format};
use pgrush_report::document::RunDocument;
use pgrush_report::percentiles::PercentileList;

fn runs() -> Vec<(String, RunDocument)> {
    let a = RunDocument::build(
        &summary(&Shape::default()),
        &context(PercentileList::default()),
    );
    // B: twice the latencies, failures, another server setting, a different percentile
    // list, a warm-up.
    let mut ctx = context(PercentileList::parse("50,99.5").unwrap_or_default());
    if let Some(s) = ctx.server.as_mut() {
        s.settings.insert("fsync".into(), "off".into());
    }
    let b_shape = Shape {
        latency_scale: 2.0,
        failures: true,
        ..Shape::default()
    };
    let mut b_summary = summary(&b_shape);
    b_summary.config.warmup_s = Some(10);
    let b = RunDocument::build(&b_summary, &ctx);
    // Through JSON, as `pgrush report` reads them.
    let a = RunDocument::from_json(&a.to_json()).unwrap_or_else(|e| panic!("{e}"));
    let b = RunDocument::from_json(&b.to_json()).unwrap_or_else(|e| panic!("{e}"));
    vec![
        ("logged.json".to_string(), a),
        ("unlogged.json".to_string(), b),
    ]
}

#[test]
fn text_table() {
    let text = Comparison::build(&runs()).render(Format::Text);
    let lines: Vec<&str> = text.lines().collect();
    let find = |prefix: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| panic!("no line {prefix:?} in\n{text}"))
    };
    assert!(lines[0].starts_with("metric"));
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["metric", "logged.json", "unlogged.json"]
    );
    assert_eq!(find("tps "), "tps 400.000 360.000");
    assert_eq!(find("tps vs first run"), "tps vs first run (%) base -10.0");
    assert_eq!(find("failed transactions"), "failed transactions 0 100");
    // Each kind of failure has its row (pgbench 19's three kinds).
    assert_eq!(
        find("serialization failures"),
        "serialization failures 0 100"
    );
    assert_eq!(find("deadlock failures"), "deadlock failures 0 0");
    assert_eq!(find("other failures"), "other failures 0 0");
    // The union of the percentile lists; B's p90 comes from its HDR histogram.
    assert_eq!(find("p50 (ms)"), "p50 (ms) 0.500 0.998");
    assert_eq!(find("p90 (ms)"), "p90 (ms) 0.900 1.798");
    assert_eq!(find("p99.5 (ms)"), "p99.5 (ms) 0.995 1.990");
    assert_eq!(
        find("\\set aid"),
        "\\set aid random(1, 100000 * :scale) (ms) 0.167 0.334"
    );
    // Statements are shortened to keep the table within 100 columns; their unit stays.
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{text}");
    assert_eq!(
        find("SELECT abalance FROM pgbench_accounts WHER… (ms)"),
        "SELECT abalance FROM pgbench_accounts WHER… (ms) 0.334 0.667"
    );
    assert_eq!(
        find("SELECT abalance FROM pgbench_a… failures/retries"),
        "SELECT abalance FROM pgbench_a… failures/retries 0/0 100/0"
    );
    // Not measured per transaction: pgbench's duration-derived average, no stddev.
    assert_eq!(find("average (ms)"), "average (ms) 10.000 10.000");
    assert_eq!(find("stddev (ms)"), "stddev (ms) - -");
    // Only the settings that differ.
    assert!(lines.contains(&"settings:"));
    assert_eq!(find("fsync"), "fsync on off");
    assert_eq!(
        find("maximum number of tries"),
        "maximum number of tries 1 3"
    );
    assert_eq!(find("warm-up (s)"), "warm-up (s) - 10");
    assert!(!text.contains("shared_buffers"));
    assert!(!text.contains("query mode"));
}

#[test]
fn markdown_and_csv() {
    let cmp = Comparison::build(&runs());
    let md = cmp.render(Format::Markdown);
    let md_lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        md_lines[0],
        "| section | metric | logged.json | unlogged.json |"
    );
    assert_eq!(md_lines[1], "|---|---|---:|---:|");
    assert!(md_lines.contains(&"| results | tps | 400.000 | 360.000 |"));
    assert!(md_lines.contains(&"| settings | fsync | on | off |"));
    assert!(md.lines().all(|l| l.starts_with('|') && l.ends_with('|')));
    let csv = cmp.render(Format::Csv);
    let csv_lines: Vec<&str> = csv.lines().collect();
    assert_eq!(csv_lines[0], "section,metric,logged.json,unlogged.json");
    assert!(csv_lines.contains(&"results,tps,400.000,360.000"));
    assert!(csv_lines.contains(&"latency,p99.5 (ms),0.995,1.990"));
    // Fields with commas are quoted.
    assert!(
        csv_lines.contains(&"commands,\"\\set aid random(1, 100000 * :scale) (ms)\",0.167,0.334")
    );
    assert_eq!(md_lines.len(), csv_lines.len() + 1);
}
