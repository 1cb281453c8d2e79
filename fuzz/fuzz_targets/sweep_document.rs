//! `pgrush sweep` documents: the saved plan (`plan.json`, read back by `pgrush report DIR`
//! and on resume) and the summary (`sweep.json`). Any bytes must be read or refused,
//! never panic; a plan that is read is checked, a summary that is read renders as a
//! table, its comparisons and a page.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgrush_lab::sweep::output::{TableFormat, comparisons_text, render_table};
use pgrush_lab::sweep::{Plan, SweepSummary};

fuzz_target!(|data: &[u8]| {
    if let Ok(plan) = serde_json::from_slice::<Plan>(data) {
        let _ = plan.check("plan.json");
    }
    let Ok(summary) = serde_json::from_slice::<SweepSummary>(data) else {
        return;
    };
    for format in [TableFormat::Text, TableFormat::Markdown, TableFormat::Csv] {
        let _ = render_table(&summary, format);
    }
    let _ = comparisons_text(&summary);
    let _ = pgrush_lab::sweep::html::render(&summary);
});
