//! Run documents (`pgrush report`, `pgrush merge`, `--baseline`): any bytes must be read
//! or refused with an error, never panic, hang or allocate far beyond their size; a
//! document that is read must render (text, HTML, comparison) and merge with itself
//! as a shard of one run (or be refused).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgrush_report::compare::{Comparison, Format};
use pgrush_report::{RunDocument, html};

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = RunDocument::from_reader(data) else {
        return;
    };
    let _ = html::render(&doc);
    let runs = vec![
        ("a.json".to_string(), doc.clone()),
        ("b.json".to_string(), doc),
    ];
    let _ = Comparison::build(&runs).render(Format::Text);
    let _ = html::render_comparison(&runs);
    if let Ok(merged) = pgrush_report::merge::merge(&runs) {
        let _ = html::render(&merged.document);
    }
});
