//! A run in stages in every output of the report crate: the text report's stage blocks
//! after the run's report, the document's `stages` (valid against the schema) and the
//! HTML page's shaded stages.

mod common;

use common::{Shape, context, summary};
use pgrush_report::document::RunDocument;
use pgrush_report::percentiles::PercentileList;
use pgrush_stats::stages::{StageSpec, resolve};
use pgrush_stats::{RunSummary, StageSummary};

/// The common summary cut into two stages (the first one holding the run's statistics,
/// the second nothing).
fn staged() -> RunSummary {
    let mut sum = summary(&Shape {
        rate: Some(50.0),
        ..Shape::default()
    });
    let specs = [
        StageSpec::parse("2s,clients=1,label=low").unwrap(),
        StageSpec::parse("1s,clients=3,rate=80,ramp").unwrap(),
    ];
    let stages = resolve(&specs, 3, 50.0).unwrap();
    let empty = pgrush_stats::ThreadStats::new(&sum.layout());
    sum.stages = vec![
        StageSummary {
            stage: stages[0].clone(),
            stats: sum.stats.clone(),
        },
        StageSummary {
            stage: stages[1].clone(),
            stats: empty,
        },
    ];
    sum
}

#[test]
fn the_text_report_ends_with_a_block_per_stage() {
    let sum = staged();
    let text = String::from_utf8(pgrush_report::text::render_report(&sum)).unwrap();
    let whole = pgrush_report::text::render_report(&summary(&Shape {
        rate: Some(50.0),
        ..Shape::default()
    }));
    // The run's report is unchanged, the stages follow.
    let (run, stages) = text.split_at(whole.len());
    assert_eq!(run.as_bytes(), whole.as_slice());
    let n = sum.stats.total.counters.successful;
    let lines: Vec<&str> = stages.lines().collect();
    assert_eq!(lines[0], "stage 1 \"low\": 2 s, clients 1, rate 50 tps");
    assert_eq!(
        lines[1],
        format!("number of transactions actually processed: {n}")
    );
    assert!(lines[2].starts_with("number of failed transactions: 0 (0.000%)"));
    assert!(lines[3].starts_with("latency average = "));
    assert!(lines[4].starts_with("latency stddev = "));
    assert!(lines[5].starts_with("rate limit schedule lag: avg "));
    assert_eq!(lines[6], format!("tps = {:.6}", n as f64 / 2.0));
    // A stage without transactions says so and nothing more.
    assert_eq!(
        &lines[7..],
        [
            "stage 2: 1 s, clients 1->3, rate 50 tps->80 tps",
            "number of transactions actually processed: 0",
        ]
    );
}

#[test]
fn the_document_and_the_page_have_the_stages() {
    let sum = staged();
    let doc = RunDocument::build(&sum, &context(PercentileList::default()));
    let stages = doc.stages.as_ref().expect("stages");
    assert_eq!(stages.len(), 2);
    assert_eq!((stages[1].start_s, stages[1].end_s), (2.0, 3.0));
    assert_eq!((stages[1].clients_start, stages[1].clients_end), (1, 3));
    assert_eq!(stages[1].rate_end_tps, Some(80.0));
    assert!(stages[1].latency.is_none());
    assert_eq!(stages[0].transactions, doc.results.transactions);
    // Reads back, and a document without stages has no such field.
    let json = doc.to_json();
    assert_eq!(RunDocument::from_json(&json).unwrap(), doc);
    let plain = RunDocument::build(
        &summary(&Shape::default()),
        &context(PercentileList::default()),
    );
    assert!(!plain.to_json().contains("\"stages\""));
    let page = pgrush_report::html::render(&doc);
    assert!(
        page.contains("<title>stage 1 low</title>"),
        "no shaded stage 1"
    );
    assert!(page.contains("<title>stage 2</title>"), "no shaded stage 2");
    assert!(!pgrush_report::html::render(&plain).contains("<title>stage"));
}

/// A closed-loop stage (`rate=0`) of a throttled run has no schedule: its block has
/// no lag line, while a throttled stage's has.
#[test]
fn a_closed_loop_stage_has_no_lag_line() {
    let mut sum = staged();
    let specs = [
        StageSpec::parse("2s").unwrap(),
        StageSpec::parse("1s,rate=0").unwrap(),
    ];
    let stages = resolve(&specs, 3, 50.0).unwrap();
    assert!(stages[1].closed_loop());
    for (summary, stage) in sum.stages.iter_mut().zip(stages) {
        summary.stage = stage;
        summary.stats = sum.stats.clone();
    }
    let text = String::from_utf8(pgrush_report::text::render_report(&sum)).unwrap();
    let blocks: Vec<&str> = text.split("\nstage ").skip(1).collect();
    assert_eq!(blocks.len(), 2, "{text}");
    assert!(
        blocks[0].contains("rate limit schedule lag"),
        "{}",
        blocks[0]
    );
    assert!(
        !blocks[1].contains("rate limit schedule lag"),
        "{}",
        blocks[1]
    );
}

/// `pgrush report` compares runs stage by stage: each stage's tps, p99 and failures,
/// no value where a run has no such stage.
#[test]
fn comparisons_have_a_row_per_stage_and_figure() {
    use pgrush_report::compare::{Comparison, Format};
    let ctx = context(PercentileList::default());
    let staged = RunDocument::build(&staged(), &ctx);
    let plain = RunDocument::build(&summary(&Shape::default()), &ctx);
    let tps = staged.stages.as_ref().unwrap()[0].tps.unwrap();
    let text = Comparison::build(&[("a".into(), staged), ("b".into(), plain)]).render(Format::Csv);
    let row = |metric: &str| {
        text.lines()
            .find(|l| l.contains(metric))
            .unwrap_or_else(|| panic!("no {metric:?} in\n{text}"))
            .to_string()
    };
    assert!(
        row("stage 1 low: tps").ends_with(&format!(",{tps:.3},-")),
        "{text}"
    );
    assert!(row("stage 1 low: failed").ends_with(",0,-"), "{text}");
    assert!(row("stage 2: p99 (ms)").ends_with(",-,-"), "{text}");
}
