//! Run documents that are damaged or hostile are refused with an error, never a panic:
//! bytes flipped anywhere in a real document, truncations, and histograms replaced by
//! arbitrary bytes. A document that still reads renders (HTML, comparison) and merges.

mod common;

use common::{Shape, context, summary};
use pgrush_report::compare::{Comparison, Format};
use pgrush_report::document::{DocumentError, RunDocument};
use pgrush_report::percentiles::PercentileList;
use pgrush_report::{hdr, html};
use proptest::prelude::*;

fn document_json() -> String {
    let sum = summary(&Shape::default());
    RunDocument::build(&sum, &context(PercentileList::default())).to_json()
}

/// Everything a reader does with a document it accepted.
fn use_document(doc: RunDocument) {
    let _ = html::render(&doc);
    let runs = vec![("a".to_string(), doc.clone()), ("b".to_string(), doc)];
    let _ = Comparison::build(&runs).render(Format::Text);
    if let Ok(merged) = pgrush_report::merge::merge(&runs) {
        let _ = html::render(&merged.document);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn flipped_bytes_read_or_fail_cleanly(at in 0usize..1_000_000, byte in any::<u8>()) {
        let mut bytes = document_json().into_bytes();
        let n = bytes.len();
        bytes[at % n] = byte;
        if let Ok(doc) = RunDocument::from_reader(bytes.as_slice()) {
            use_document(doc);
        }
    }

    #[test]
    fn truncated_documents_are_errors(keep in 0usize..1_000_000) {
        let json = document_json();
        let cut = &json.as_bytes()[..keep % (json.len() - 2)];
        prop_assert!(RunDocument::from_reader(cut).is_err());
    }

    #[test]
    fn arbitrary_histograms_are_errors_naming_the_field(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut doc = RunDocument::from_json(&document_json()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let text = hdr::base64_encode(&data);
        let readable = hdr::check(&text).is_ok() || text.is_empty();
        if let Some(d) = doc.latency.as_mut() {
            d.hdr_histogram = text;
        }
        match RunDocument::from_json(&doc.to_json()) {
            Ok(back) => {
                prop_assert!(readable);
                use_document(back);
            }
            Err(DocumentError::Histogram { field, .. }) => {
                prop_assert!(!readable);
                prop_assert_eq!(field, "latency.hdr_histogram");
            }
            Err(e) => prop_assert!(false, "{e}"),
        }
    }

    #[test]
    fn ops_results_read_or_fail_cleanly(text in "\\PC{0,200}", schema in any::<bool>()) {
        let text = if schema {
            format!("{{\"schema\": \"pgrush-ops/1\", {}", text)
        } else {
            text
        };
        let _ = pgrush_report::assertion::ops::is_ops_text(&text);
        let _ = pgrush_report::assertion::ops::is_ops_reader(text.as_bytes());
        let _ = pgrush_report::assertion::ops::parse_results(&text);
    }
}

#[test]
fn a_damaged_interval_script_histogram_is_an_error_naming_it() {
    let mut doc = RunDocument::from_json(&document_json()).unwrap_or_else(|e| panic!("{e}"));
    let series = doc
        .time_series
        .as_mut()
        .unwrap_or_else(|| panic!("no series"));
    let (i, interval) = series
        .intervals
        .iter_mut()
        .enumerate()
        .find(|(_, iv)| !iv.scripts.is_empty())
        .unwrap_or_else(|| panic!("no interval with per-script figures"));
    interval.scripts[0].latency.latency_histogram = Some(hdr::base64_encode(b"HISTF\xff\xff"));
    match RunDocument::from_json(&doc.to_json()) {
        Err(DocumentError::Histogram { field, .. }) => assert_eq!(
            field,
            format!("time_series.intervals[{i}].scripts[0].latency_histogram")
        ),
        other => panic!("{other:?}"),
    }
}
