//! Assertions measured on synthetic run documents: values, units, scripts, baselines,
//! and documents carrying verdicts still validate against the schema.

mod common;

use common::{Shape, document};
use pgrush_report::assertion::{Assertion, RunFacts, Verdict, evaluate};
use pgrush_report::document::RunDocument;
use serde_json::Value;

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schema/pgrush-run.v1.schema.json"
));

fn facts(doc: &RunDocument, baseline: bool) -> RunFacts {
    RunFacts {
        rate: doc.config.rate_tps.is_some(),
        latency_limit: doc.config.latency_limit_ms.is_some(),
        baseline,
        scripts: doc
            .scripts
            .iter()
            .map(|s| vec![s.description.clone()])
            .collect(),
        stages: doc.stages.as_ref().map_or(0, Vec::len),
    }
}

fn verdict(text: &str, doc: &RunDocument, baseline: Option<&RunDocument>) -> Verdict {
    let a = Assertion::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let script = a
        .check(&facts(doc, baseline.is_some()))
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    evaluate(&a, script, doc, baseline)
}

#[test]
fn measures_run_metrics_in_the_unit_written() {
    // 1000 transactions of i µs (i = 1..1000) over 2.5 s.
    let doc = document(&Shape::default());
    let v = verdict("tps>=400", &doc, None);
    assert!(v.passed, "{v:?}");
    assert_eq!(v.measured, Some(400.0));
    assert_eq!(v.line(), "assertion passed: tps >= 400 (measured 400)");
    let v = verdict("max<1ms", &doc, None);
    assert!(!v.passed);
    assert_eq!(
        v.line(),
        "assertion FAILED: latency-max < 1 ms (measured 1.000 ms)"
    );
    let v = verdict("max<=1000us", &doc, None);
    assert!(v.passed && v.measured == Some(1000.0), "{v:?}");
    let v = verdict("p50<0.6", &doc, None);
    assert!(v.passed, "{v:?}");
    assert!((v.measured.unwrap_or(0.0) - 0.5).abs() < 0.01, "{v:?}");
    let v = verdict("p99.9 > 0.0009 s", &doc, None);
    assert!(v.passed && v.unit == "s", "{v:?}");
    assert!(verdict("failed==0", &doc, None).passed);
    assert!(verdict("connection-time<2", &doc, None).passed);
    // Without -R/-P/-L the report's average is derived from the duration: 2.5 s × 4
    // clients / 1000 transactions.
    let v = verdict("avg<10.001", &doc, None);
    assert!(v.passed && v.measured > Some(9.999), "{v:?}");
}

#[test]
fn counts_and_shares_of_failures() {
    let doc = document(&Shape {
        failures: true,
        ..Shape::default()
    });
    let v = verdict("failed==0", &doc, None);
    assert!(!v.passed);
    assert_eq!(v.line(), "assertion FAILED: failed == 0 (measured 100)");
    let v = verdict("failed<=10%", &doc, None);
    assert!(v.passed && v.measured == Some(10.0), "{v:?}");
    assert!(!verdict("retried<1%", &doc, None).passed);
}

#[test]
fn per_script_values() {
    let doc = document(&Shape {
        scripts: 2,
        ..Shape::default()
    });
    let whole = verdict("tps>0", &doc, None).measured.unwrap_or(0.0);
    let first = verdict("1:tps>0", &doc, None).measured.unwrap_or(0.0);
    let second = verdict("custom1.sql:tps>0", &doc, None)
        .measured
        .unwrap_or(0.0);
    assert!(first > 0.0 && second > 0.0);
    assert!(
        (first + second - whole).abs() < 1e-9,
        "{first} + {second} != {whole}"
    );
}

#[test]
fn baselines_scale_the_saved_value() {
    let base = document(&Shape::default());
    let slower = document(&Shape {
        latency_scale: 2.0,
        ..Shape::default()
    });
    let v = verdict("p99<=1.1*baseline", &slower, Some(&base));
    assert!(!v.passed, "{v:?}");
    assert!(v.line().contains(", baseline "), "{}", v.line());
    assert!(verdict("p99<=2.1*baseline", &slower, Some(&base)).passed);
    assert!(verdict("tps>=0.95*baseline", &slower, Some(&base)).passed);
    assert!(verdict("tps==baseline", &slower, Some(&base)).passed);
}

#[test]
fn missing_values_fail_with_a_reason() {
    let doc = document(&Shape {
        transactions: 0,
        ..Shape::default()
    });
    let v = verdict("p99<5", &doc, None);
    assert!(!v.passed && v.measured.is_none());
    assert!(
        v.line()
            .contains("not measured: no successful transactions"),
        "{}",
        v.line()
    );
}

#[test]
fn documents_with_verdicts_validate_and_round_trip() {
    let mut doc = document(&Shape::default());
    let base = doc.clone();
    doc.assertions = Some(vec![
        verdict("tps>=400", &doc, None),
        verdict("p99<=1.1*baseline", &doc, Some(&base)),
        verdict("failed<1%", &doc, None),
    ]);
    let json = doc.to_json();
    let instance: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
    let schema: Value = serde_json::from_str(SCHEMA).unwrap_or(Value::Null);
    let validator =
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("invalid schema: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(RunDocument::from_json(&json), Ok(doc));
    // Without assertions the field is absent, as before.
    assert!(!base.to_json().contains("\"assertions\""));
}
