//! `pgrush sweep` summaries (`sweep.json`, read back by `pgrush report DIR`): any bytes
//! must be read or refused, never panic; a summary that is read renders as a table, its
//! comparisons and a page.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgrush_lab::sweep::SweepSummary;
use pgrush_lab::sweep::output::{TableFormat, comparisons_text, render_table};

fuzz_target!(|data: &[u8]| {
    let Ok(summary) = serde_json::from_slice::<SweepSummary>(data) else {
        return;
    };
    for format in [TableFormat::Text, TableFormat::Markdown, TableFormat::Csv] {
        let _ = render_table(&summary, format);
    }
    let _ = comparisons_text(&summary);
    let _ = pgrush_lab::sweep::html::render(&summary);
});
