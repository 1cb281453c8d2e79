//! `pgrush merge` refuses what cannot be one benchmark, with messages that say why.

mod merge_common;

use merge_common::*;
use pgrush_report::merge::{MergeError, merge};

fn message(docs: &[(String, pgrush_report::RunDocument)]) -> String {
    match merge(docs) {
        Ok(_) => panic!("merge accepted what it should refuse"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn missing_shards_are_named() {
    let docs = shards(4);
    assert_eq!(message(&docs[..2]), "missing shards: 2, 3 of 4");
    assert_eq!(
        message(&[docs[1].clone(), docs[3].clone()]),
        "missing shards: 0, 2 of 4"
    );
    assert!(matches!(merge(&[]), Err(MergeError::NoShards)));
}

#[test]
fn a_document_that_is_not_a_shard_is_refused() {
    let mut docs = shards(2);
    docs[1].1.shard = None;
    assert_eq!(
        message(&docs),
        "\"shard1.json\" is not a shard: its run has no shard block (run with --shard INDEX/COUNT)"
    );
}

#[test]
fn shards_of_another_benchmark_are_refused() {
    let base = shards(4);
    let mut other = base.clone();
    if let Some(s) = other[2].1.shard.as_mut() {
        s.benchmark_id = "0ther".to_string();
    }
    assert_eq!(
        message(&other),
        "\"shard2.json\" is a shard of another benchmark than \"shard0.json\": benchmark_id differs"
    );
    let mut other = base.clone();
    other[1].1.config.clients = 5;
    assert!(message(&other).ends_with("configuration differs"));
    let mut other = base.clone();
    other[3].1.scripts[0].weight = 7;
    assert!(message(&other).ends_with("scripts differs"));
    let mut other = base.clone();
    if let Some(s) = other[3].1.shard.as_mut() {
        s.count = 5;
    }
    assert!(message(&other).ends_with("shard count differs"));
}

#[test]
fn duplicate_and_out_of_range_indexes_are_refused() {
    let mut docs = shards(4);
    docs[3] = ("again.json".to_string(), docs[1].1.clone());
    assert_eq!(
        message(&docs),
        "\"shard1.json\" and \"again.json\" are both shard 1"
    );
    let mut docs = shards(2);
    if let Some(s) = docs[1].1.shard.as_mut() {
        s.index = 2;
    }
    assert_eq!(
        message(&docs),
        "\"shard1.json\": shard index 2 is not below the shard count 2"
    );
}

#[test]
fn a_corrupt_histogram_is_reported() {
    let mut docs = shards(2);
    if let Some(l) = docs[1].1.latency.as_mut() {
        l.hdr_histogram = "HISTFAAAAA".to_string();
    }
    let msg = message(&docs);
    assert!(msg.starts_with("\"shard1.json\": "), "{msg}");
}

#[test]
fn shards_too_far_apart_are_refused_without_a_huge_series() {
    let mut docs = shards(2);
    // 100 days later: more intervals than any run has.
    docs[1].1.start_time_unix += 8_640_000.0;
    let msg = message(&docs);
    assert!(
        msg.starts_with("\"shard1.json\": its time series would end 8640000 + "),
        "{msg}"
    );
    assert!(msg.ends_with("too far apart to be one run"), "{msg}");
}

#[test]
fn the_merged_page_lists_the_shards() {
    let merged = merge(&shards(4)).unwrap_or_else(|e| panic!("merge: {e}"));
    let page = pgrush_report::html::render(&merged.document);
    assert!(
        page.contains("<h2>Shards</h2><p>Merged from 4 shards"),
        "shards section"
    );
    assert!(
        page.contains("<td>node2</td><td class=\"n\">8–11</td><td class=\"n\">-3.250 ± 0.050</td>")
    );
}

#[test]
fn a_histogram_that_does_not_hold_its_count_is_refused() {
    let mut docs = shards(2);
    if let Some(l) = docs[0].1.latency.as_mut() {
        l.count += 1;
    }
    let msg = message(&docs);
    assert!(
        msg.starts_with("\"shard0.json\": a histogram holds "),
        "{msg}"
    );
}
