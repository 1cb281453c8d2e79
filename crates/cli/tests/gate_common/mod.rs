//! Shared by the `--assert` gate tests (runs, sweeps, ops results): `pgrush report`
//! without a server, the verdict lines of its output, and the test cases of a JUnit file.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use pgrush_testkit::{self as testkit, Output};
use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};

/// `pgrush report ARGS` in `dir`, with no `PG*` environment (no server).
pub fn report(args: &[&str], dir: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgrush"));
    testkit::clear_pg_env(&mut cmd);
    testkit::run(cmd.arg("report").args(args).current_dir(dir))
}

/// The verdict lines of an output (`assertion passed: …`, `assertion FAILED: …`).
pub fn verdict_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.starts_with("assertion "))
        .collect()
}

/// The test cases of a JUnit file: (name, has a failure element), and the suite's
/// `system-out` text.
pub fn junit_cases(path: &Path) -> (Vec<(String, bool)>, String) {
    let xml = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut reader = Reader::from_str(&xml);
    let (mut cases, mut out, mut in_out) = (Vec::new(), String::new(), false);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.name().as_ref() == "testcase" => {
                let name = e
                    .try_get_attribute("name")
                    .ok()
                    .flatten()
                    .and_then(|a| {
                        a.normalized_value(XmlVersion::default())
                            .ok()
                            .map(|v| v.into_owned())
                    })
                    .unwrap_or_default();
                cases.push((name, false));
            }
            Ok(Event::Start(e)) if e.name().as_ref() == "failure" => {
                if let Some(last) = cases.last_mut() {
                    last.1 = true;
                }
            }
            Ok(Event::Start(e)) if e.name().as_ref() == "system-out" => in_out = true,
            Ok(Event::End(e)) if e.name().as_ref() == "system-out" => in_out = false,
            Ok(Event::Text(t)) if in_out => {
                out.push_str(&t.into_inner());
            }
            Ok(Event::GeneralRef(r)) if in_out => {
                let name = r.into_inner();
                out.push_str(match name.as_ref() {
                    "lt" => "<",
                    "gt" => ">",
                    "amp" => "&",
                    "quot" => "\"",
                    _ => "'",
                });
            }
            Ok(Event::Eof) => break,
            Err(e) => panic!("{path:?} is not well-formed XML: {e}\n{xml}"),
            _ => {}
        }
    }
    (cases, out)
}
