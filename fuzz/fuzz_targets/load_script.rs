//! Lexer + parser: any bytes must load or fail with an error, never panic or hang,
//! and a loaded script's SQL helpers must work on it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgrush_script::{CommandKind, RawMessage, Variables, load_script};

fuzz_target!(|data: &[u8]| {
    match load_script("fuzz.sql", data, 1) {
        Ok(script) => {
            let vars = Variables::new();
            for c in &script.commands {
                if let CommandKind::Sql(s) = &c.kind {
                    let mut out = Vec::new();
                    s.write_simple(&vars, &mut out);
                    assert_eq!(out, s.text, "no variable defined: text unchanged");
                }
            }
            let _ = script.check_parameters();
        }
        Err(e) => {
            let _ = e.to_string();
            let _ = e.to_bytes();
        }
    }
});
