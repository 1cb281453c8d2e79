//! `pgrush ops` result documents (`pgrush report OPS.json`, `--assert` on ops results):
//! any bytes must be read or refused, never panic; a document that is read renders.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgrush_lab::ops::OpsDocument;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = pgrush_report::assertion::ops::is_ops_reader(data);
    let _ = pgrush_report::assertion::ops::parse_results(text);
    if let Ok(doc) = serde_json::from_str::<OpsDocument>(text) {
        let _ = pgrush_lab::ops::html::render(&doc);
        let docs = vec![
            ("a.json".to_string(), doc.clone()),
            ("b.json".to_string(), doc),
        ];
        let _ = pgrush_lab::ops::compare::Comparison::build(&docs).render();
    }
});
